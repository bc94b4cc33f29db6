#!/usr/bin/env bash
# Builds kustomize from the Go module proxy through this wrapper module (go.mod pins
# sigs.k8s.io/kustomize/kustomize/v5) into a cache outside the clone:
#   $CLOUDMAP_MCS_CACHE/kustomize-<version>/<key>/kustomize   (default ~/.cache/cloudmap-mcs)
# where <key> hashes go.mod, go.sum, this script and the Go toolchain. A warm cache does no
# rebuild. Prints the binary's path on stdout; progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${CLOUDMAP_MCS_CACHE:-$HOME/.cache/cloudmap-mcs}
say() { echo "kustomize: $*" >&2; }

version=$(awk '$1 == "sigs.k8s.io/kustomize/kustomize/v5" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
[[ -n "$version" ]] || { say "go.mod does not require sigs.k8s.io/kustomize/kustomize/v5"; exit 1; }
key=$(cat "$here/go.mod" "$here/go.sum" "$here/build.sh" <(go env GOVERSION GOOS GOARCH) | sha256sum | cut -c1-12)
out="$cache/kustomize-$version/$key"

if [[ -x "$out/kustomize" ]]; then
  say "using cached $out/kustomize"
  echo "$out/kustomize"
  exit 0
fi

cd "$here"
say "building kustomize $version"
start=$SECONDS
mkdir -p "$out"
tmp=$(mktemp "$out/kustomize.XXXXXX")
trap 'rm -f "$tmp"' EXIT
go mod download
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$version" \
  -o "$tmp" sigs.k8s.io/kustomize/kustomize/v5
chmod 0755 "$tmp"
mv "$tmp" "$out/kustomize"
say "built kustomize $version in $((SECONDS - start))s"
echo "$out/kustomize"
