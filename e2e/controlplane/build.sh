#!/usr/bin/env bash
# Builds the local control-plane binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) from the Go module proxy through this wrapper module, into a cache
# outside the clone keyed by the module's go.mod/go.sum and the Go version. A warm cache
# does no rebuild. Prints the bin directory on stdout; progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${CLOUDMAP_MCS_CACHE:-$HOME/.cache/cloudmap-mcs}
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
key=$(cat "$here/go.mod" "$here/go.sum" "$here/build.sh" <(go env GOVERSION GOOS GOARCH) | sha256sum | cut -c1-12)
out="$cache/controlplane/$k8s_version-$key"
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
say() { echo "controlplane: $*" >&2; }

cached() {
  local b
  for b in "${bins[@]}"; do [[ -x "$out/bin/$b" ]] || return 1; done
  say "using cached binaries in $out/bin"
  echo "$out/bin"
}
cached && exit 0

# Several harnesses or engineers may ask at once: one builds, the others wait for it.
mkdir -p "$out"
exec 9>"$out/.lock"
if ! flock -n 9; then
  say "another build of $k8s_version is running; waiting for it"
  flock 9
fi
cached && exit 0

rm -rf "$out/bin.tmp" && mkdir -p "$out/bin.tmp"
cd "$here"
minor=${k8s_version#v1.}; minor=${minor%%.*}
# The module proxy knows no commit hash; the release time of the module stands in as build date.
released=$(go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
stamp="-s -w"
for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  stamp+=" -X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=$minor"
  stamp+=" -X $v.gitTreeState=clean -X $v.buildDate=$released"
done
kwok_version=$(go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
declare -A pkg=(
  [etcd]=go.etcd.io/etcd/server/v3
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kwok]=sigs.k8s.io/kwok/cmd/kwok
)
say "downloading modules (Kubernetes $k8s_version; first run fetches ~1 GB)"
go mod download
i=0
for b in "${bins[@]}"; do
  i=$((i + 1))
  start=$SECONDS
  say "[$i/${#bins[@]}] building $b (a cold build of the first Kubernetes binary takes 10+ minutes on 2 cores)"
  flags="$stamp"
  [[ $b == kwok ]] && flags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${kwok_version#v}"
  CGO_ENABLED=0 go build -trimpath -ldflags "$flags" -o "$out/bin.tmp/$b" "${pkg[$b]}"
  say "[$i/${#bins[@]}] built $b in $((SECONDS - start))s"
done
rm -rf "$out/bin" && mv "$out/bin.tmp" "$out/bin"
echo "$out/bin"
