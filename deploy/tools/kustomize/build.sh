#!/usr/bin/env bash
# Builds kustomize from the Go module proxy through this wrapper module (go.mod pins
# sigs.k8s.io/kustomize/kustomize/v5) into a cache outside the clone (tools/go-build-cache.sh):
#   $CLOUDMAP_MCS_CACHE/kustomize/<version>-<key>/bin/kustomize   (default ~/.cache/cloudmap-mcs)
# where <key> hashes go.mod, go.sum, this script, tools/go-build-cache.sh and the Go
# toolchain. A warm cache does no rebuild. Prints the binary's path on stdout; progress
# goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "kustomize: $*" >&2; }
source "$here/../../../tools/go-build-cache.sh"

version=$(awk '$1 == "sigs.k8s.io/kustomize/kustomize/v5" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
[[ -n "$version" ]] || { say "go.mod does not require sigs.k8s.io/kustomize/kustomize/v5"; exit 1; }
go_cache_begin kustomize "$version" kustomize
if ((go_cache_cold)); then
  go_cache_build kustomize sigs.k8s.io/kustomize/kustomize/v5 \
    "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$version"
  go_cache_commit
fi
echo "$bin_dir/kustomize"
