#!/usr/bin/env bash
# Builds kubelet and kube-proxy (the control plane's Kubernetes version) from the Go module
# proxy into the cache (tools/go-build-cache.sh). Prints `name=path` lines; progress on stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "nodes: $*" >&2; }
source "$here/../../../tools/go-build-cache.sh"

v=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
go_cache_begin nodes-k8s "$v" kubelet kube-proxy
if ((go_cache_cold)); then
  minor=${v#v1.}; minor=${minor%%.*}
  # As e2e/controlplane/build.sh: the module's release time stands in as build date.
  released=$(go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
  stamp="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    stamp+=" -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    stamp+=" -X $p.gitTreeState=clean -X $p.buildDate=$released"
  done
  go_cache_build kubelet k8s.io/kubernetes/cmd/kubelet "$stamp"
  go_cache_build kube-proxy k8s.io/kubernetes/cmd/kube-proxy "$stamp"
  go_cache_commit
fi
echo "kubelet=$bin_dir/kubelet"
echo "kube-proxy=$bin_dir/kube-proxy"
