#!/usr/bin/env bash
# Builds helm from the Go module proxy through this wrapper module (go.mod pins
# helm.sh/helm/v3) into a cache outside the clone (tools/go-build-cache.sh):
#   $CLOUDMAP_MCS_CACHE/helm/<version>-<key>/bin/helm   (default cache ~/.cache/cloudmap-mcs)
# where <key> hashes go.mod, go.sum, this script, tools/go-build-cache.sh and the Go
# toolchain. A warm cache does no rebuild. Prints the binary's path on stdout; progress
# goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "helm: $*" >&2; }
source "$here/../../../tools/go-build-cache.sh"

version=$(awk '$1 == "helm.sh/helm/v3" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
[[ -n "$version" ]] || { say "go.mod does not require helm.sh/helm/v3"; exit 1; }
go_cache_begin helm "$version" helm
if ((go_cache_cold)); then
  k8s_minor=$(go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)
  flags="-s -w -X helm.sh/helm/v3/internal/version.version=$version -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    flags+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$k8s_minor"
  done
  say "helm $version: a cold build takes a few CPU-minutes"
  go_cache_build helm helm.sh/helm/v3/cmd/helm "$flags"
  go_cache_commit
fi
echo "$bin_dir/helm"
