#!/usr/bin/env bash
# Builds helm from the Go module proxy through this wrapper module (go.mod pins
# helm.sh/helm/v3) into a cache outside the clone:
#   $CLOUDMAP_MCS_CACHE/helm-<version>/<key>/helm   (default cache ~/.cache/cloudmap-mcs)
# where <key> hashes go.mod, go.sum, this script and the Go toolchain. A warm cache does no
# rebuild. Prints the binary's path on stdout; progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${CLOUDMAP_MCS_CACHE:-$HOME/.cache/cloudmap-mcs}
say() { echo "helm: $*" >&2; }

version=$(awk '$1 == "helm.sh/helm/v3" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
[[ -n "$version" ]] || { say "go.mod does not require helm.sh/helm/v3"; exit 1; }
key=$(cat "$here/go.mod" "$here/go.sum" "$here/build.sh" <(go env GOVERSION GOOS GOARCH) | sha256sum | cut -c1-12)
out="$cache/helm-$version/$key"

if [[ -x "$out/helm" ]]; then
  say "using cached $out/helm"
  echo "$out/helm"
  exit 0
fi

cd "$here"
k8s_minor=$(go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)
flags="-s -w -X helm.sh/helm/v3/internal/version.version=$version -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  flags+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$k8s_minor"
done
say "building helm $version (cold: a few CPU-minutes)"
start=$SECONDS
mkdir -p "$out"
tmp=$(mktemp "$out/helm.XXXXXX")
trap 'rm -f "$tmp"' EXIT
go mod download
CGO_ENABLED=0 go build -trimpath -ldflags "$flags" -o "$tmp" helm.sh/helm/v3/cmd/helm
chmod 0755 "$tmp"
mv "$tmp" "$out/helm"
say "built helm $version in $((SECONDS - start))s"
echo "$out/helm"
