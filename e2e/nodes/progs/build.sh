#!/usr/bin/env bash
# Builds the harness's own node programs (pause, echo, connect-proxy, nc) into the cache
# (tools/go-build-cache.sh; the key also covers their sources). Prints `name=path` lines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "nodes: $*" >&2; }
source "$here/../../../tools/go-build-cache.sh"

progs=(pause echo connect-proxy nc)
src=$(for p in "${progs[@]}"; do cat "$here/$p"/*.go; done | sha256sum | cut -c1-12)
go_cache_begin nodes-progs "src-$src" "${progs[@]}"
if ((go_cache_cold)); then
  for p in "${progs[@]}"; do go_cache_build "$p" "./$p" "-s -w"; done
  go_cache_commit
fi
for p in "${progs[@]}"; do echo "$p=$bin_dir/$p"; done
