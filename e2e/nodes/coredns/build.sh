#!/usr/bin/env bash
# Builds CoreDNS from the Go module proxy into the cache (tools/go-build-cache.sh). Prints
# `coredns=path`; progress on stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "nodes: $*" >&2; }
source "$here/../../../tools/go-build-cache.sh"

v=$(awk '$1 == "github.com/coredns/coredns" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
go_cache_begin nodes-coredns "$v" coredns
if ((go_cache_cold)); then
  go_cache_build coredns github.com/coredns/coredns "-s -w"
  go_cache_commit
fi
echo "coredns=$bin_dir/coredns"
