#!/usr/bin/env bash
# Builds (or reuses) every binary the harness's real nodes need, from the Go module proxy,
# each wrapper module cached on its own (keyed by version, go.mod/go.sum, its build.sh and the
# Go version; see tools/go-build-cache.sh):
#   k8s/      kubelet, kube-proxy          (the control plane's Kubernetes version)
#   coredns/  coredns                      (>= 1.12.2: clusterset.local via `multicluster`)
#   progs/    pause, echo, connect-proxy, nc (the harness's own programs)
# Prints one `name=path` line per binary on stdout; progress goes to stderr.
set -euo pipefail
nodes=$(cd "$(dirname "$0")" && pwd)
"$nodes/progs/build.sh"
"$nodes/coredns/build.sh"
"$nodes/k8s/build.sh"
