#!/usr/bin/env bash
# Builds the AWS Cloud Map MCS controller for Kubernetes (the predecessor `make bench` runs
# side by side with our agents) from the Go module proxy through this wrapper module (go.mod
# pins github.com/aws/aws-cloud-map-mcs-controller-for-k8s) into a cache outside the clone
# (tools/go-build-cache.sh):
#   $CLOUDMAP_MCS_CACHE/aws-mcs-controller/<version>-<key>/bin/aws-mcs-controller
# where <key> hashes go.mod, go.sum, this script, tools/go-build-cache.sh and the Go
# toolchain. A warm cache does no rebuild. Prints the binary's path on stdout; progress goes
# to stderr. The module's go.mod says go 1.19, so its packages keep Go 1.19 semantics here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "aws-mcs-controller: $*" >&2; }
source "$here/../../tools/go-build-cache.sh"

module=github.com/aws/aws-cloud-map-mcs-controller-for-k8s
version=$(awk -v m="$module" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
[[ -n "$version" ]] || { say "go.mod does not require $module"; exit 1; }
go_cache_begin aws-mcs-controller "$version" aws-mcs-controller
if ((go_cache_cold)); then
  say "$version: a cold build takes a few CPU-minutes"
  # The same version stamp the project's own Makefile sets (it logs it at start).
  go_cache_build aws-mcs-controller "$module" "-s -w -X $module/pkg/version.GitVersion=$version"
  go_cache_commit
fi
echo "$bin_dir/aws-mcs-controller"
