#!/usr/bin/env bash
# Builds the local control-plane binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) from the Go module proxy through this wrapper module, into a cache
# outside the clone keyed by the module's go.mod/go.sum, this script and the Go version
# (tools/go-build-cache.sh). A warm cache does no rebuild. Prints the bin directory on
# stdout; progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "controlplane: $*" >&2; }
source "$here/../../tools/go-build-cache.sh"

k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
go_cache_begin controlplane "$k8s_version" "${bins[@]}"
if ((go_cache_cold)); then
  minor=${k8s_version#v1.}; minor=${minor%%.*}
  # The module proxy knows no commit hash; the release time of the module stands in as build date.
  released=$(go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
  stamp="-s -w"
  for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    stamp+=" -X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=$minor"
    stamp+=" -X $v.gitTreeState=clean -X $v.buildDate=$released"
  done
  kwok_version=$(go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
  say "Kubernetes $k8s_version: the first run fetches ~1 GB of modules, and a cold build of the first Kubernetes binary takes 10+ minutes on 2 cores"
  go_cache_build etcd go.etcd.io/etcd/server/v3 "$stamp"
  go_cache_build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$stamp"
  go_cache_build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$stamp"
  go_cache_build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$stamp"
  go_cache_build kwok sigs.k8s.io/kwok/cmd/kwok \
    "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${kwok_version#v}"
  go_cache_commit
fi
echo "$bin_dir"
