#!/usr/bin/env bash
# Builds promtool or prometheus (the server) from the Go module proxy through this wrapper
# module (go.mod pins github.com/prometheus/prometheus; both binaries come from that one
# version, so the module download and Go's build cache are shared) into a cache outside the
# clone (tools/go-build-cache.sh):
#   $CLOUDMAP_MCS_CACHE/<bin>/<version>-<key>/bin/<bin>   (default ~/.cache/cloudmap-mcs)
# where <key> hashes go.mod, go.sum, this script, tools/go-build-cache.sh and the Go
# toolchain. A warm cache does no rebuild. Prints the binary's path on stdout; progress
# goes to stderr.
#   build.sh             promtool: the alert-rule tests (deploy/test/*.promtool.test.ts)
#   build.sh prometheus  the server the real-nodes alert test and `make demo` run
#                        (e2e/src/nodes/prometheus.ts). The web UI's JavaScript is not in the
#                        Go module (upstream builds it with npm into release tarballs), so
#                        this binary serves the HTTP API (/api/v1/...) but no UI pages.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-promtool}
case "$bin" in
  promtool | prometheus) ;;
  *) echo "usage: $0 [promtool|prometheus]" >&2; exit 2 ;;
esac
say() { echo "$bin: $*" >&2; }
source "$here/../../../tools/go-build-cache.sh"

# The Go module is github.com/prometheus/prometheus v0.3MM.P for Prometheus 3.MM.P.
version=$(awk '$1 == "github.com/prometheus/prometheus" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
[[ -n "$version" ]] || { say "go.mod does not require github.com/prometheus/prometheus"; exit 1; }
go_cache_begin "$bin" "$version" "$bin"
if ((go_cache_cold)); then
  say "$bin $version: a cold build takes a few CPU-minutes"
  go_cache_build "$bin" "github.com/prometheus/prometheus/cmd/$bin" \
    "-s -w -X github.com/prometheus/common/version.Version=$version"
  go_cache_commit
fi
echo "$bin_dir/$bin"
