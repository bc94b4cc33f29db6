#!/usr/bin/env bash
# Builds helm-docs from the Go module proxy through this wrapper module (go.mod pins
# github.com/norwoodj/helm-docs) into a cache outside the clone (tools/go-build-cache.sh):
#   $CLOUDMAP_MCS_CACHE/helm-docs/<version>-<key>/bin/helm-docs   (default ~/.cache/cloudmap-mcs)
# where <key> hashes go.mod, go.sum, this script, tools/go-build-cache.sh and the Go
# toolchain. A warm cache does no rebuild. Prints the binary's path on stdout; progress
# goes to stderr. `make chart-docs` regenerates the chart README with it; deploy/test checks
# the README is current.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "helm-docs: $*" >&2; }
source "$here/../../../tools/go-build-cache.sh"

version=$(awk '$1 == "github.com/norwoodj/helm-docs" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
[[ -n "$version" ]] || { say "go.mod does not require github.com/norwoodj/helm-docs"; exit 1; }
go_cache_begin helm-docs "$version" helm-docs
if ((go_cache_cold)); then
  go_cache_build helm-docs github.com/norwoodj/helm-docs/cmd/helm-docs \
    "-s -w -X main.version=$version"
  go_cache_commit
fi
echo "$bin_dir/helm-docs"
