#!/usr/bin/env bash
# Builds promtool from the Go module proxy through this wrapper module (go.mod pins
# github.com/prometheus/prometheus) into a cache outside the clone (tools/go-build-cache.sh):
#   $CLOUDMAP_MCS_CACHE/promtool/<version>-<key>/bin/promtool   (default ~/.cache/cloudmap-mcs)
# where <key> hashes go.mod, go.sum, this script, tools/go-build-cache.sh and the Go
# toolchain. A warm cache does no rebuild. Prints the binary's path on stdout; progress
# goes to stderr. The alert-rule tests (deploy/test/alerts.test.ts) run `promtool test rules`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "promtool: $*" >&2; }
source "$here/../../../tools/go-build-cache.sh"

# The Go module is github.com/prometheus/prometheus v0.3MM.P for Prometheus 3.MM.P.
version=$(awk '$1 == "github.com/prometheus/prometheus" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
[[ -n "$version" ]] || { say "go.mod does not require github.com/prometheus/prometheus"; exit 1; }
go_cache_begin promtool "$version" promtool
if ((go_cache_cold)); then
  say "promtool $version: a cold build takes a few CPU-minutes"
  go_cache_build promtool github.com/prometheus/prometheus/cmd/promtool \
    "-s -w -X github.com/prometheus/common/version.Version=$version"
  go_cache_commit
fi
echo "$bin_dir/promtool"
