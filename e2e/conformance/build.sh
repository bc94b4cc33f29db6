#!/usr/bin/env bash
# Builds the upstream MCS conformance suite (kubernetes-sigs/mcs-api `conformance/`, a Ginkgo
# test package) into a test binary cached outside the clone:
#   $CLOUDMAP_MCS_CACHE/mcs-conformance/<commit>-<key>/bin/mcs-conformance.test
# <commit> names the mcs-api commit (git, or the README of the folder that keeps the copy);
# <key> hashes every file of the mcs-api tree (the suite replaces sigs.k8s.io/mcs-api with
# `..`), this script and the Go toolchain, so an edited tree or another Go rebuilds.
#
# The source is referred to by path, never copied: $MCS_API_UPSTREAM, a checkout of
# kubernetes-sigs/mcs-api. The MCS_API_UPSTREAM default, ../shared/upstream/mcs-api, is where CI keeps that
# checkout beside the clone (an override default for the suite's source, not a document this
# repository relies on; a relative path is taken from the repository root). It is read-only in
# CI, so the build writes nothing there: `go test -c -o <cache>`, -mod=readonly (go.mod/go.sum
# are not updated), -buildvcs=false (no VCS stamping), GOWORK=off; modules go to the usual
# module cache.
#
# Prints the binary's path on stdout and writes suite.env next to it (MCS_SUITE_COMMIT,
# MCS_SUITE_TREE, MCS_SUITE_GO, MCS_SUITE_SOURCE). Progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
say() { echo "conformance-build: $*" >&2; }
# Shares the lock-and-commit steps with the other Go builds; its go_cache_begin keys on a
# wrapper go.mod, which this build has none of, so the key is computed here.
source "$repo/tools/go-build-cache.sh"

upstream=${MCS_API_UPSTREAM:-../shared/upstream/mcs-api}
[[ "$upstream" = /* ]] || upstream="$repo/$upstream"
if [[ ! -f "$upstream/conformance/go.mod" ]]; then
  say "no conformance suite at $upstream/conformance (set MCS_API_UPSTREAM to a kubernetes-sigs/mcs-api tree)"
  exit 2
fi
upstream=$(cd "$upstream" && pwd)

# The suite's commit: from git when the tree is a clean checkout, otherwise from the README of
# the folder that keeps unmodified copies ("`mcs-api/` | ... at commit `<sha>`").
suite_commit() {
  local sha
  if sha=$(git -C "$upstream" rev-parse HEAD 2>/dev/null) &&
    [[ -z "$(git -C "$upstream" status --porcelain 2>/dev/null)" ]]; then
    echo "$sha"
    return
  fi
  if [[ -f "$upstream/../README.md" ]]; then
    sha=$(grep -F "\`$(basename "$upstream")/\`" "$upstream/../README.md" | grep -oE '\b[0-9a-f]{40}\b' | head -1 || true)
    [[ -n "$sha" ]] && { echo "$sha"; return; }
  fi
  echo unknown
}

commit=$(suite_commit)
tree=$(cd "$upstream" && find . -path ./.git -prune -o -type f -print | LC_ALL=C sort |
  xargs -d '\n' sha256sum | sha256sum | cut -c1-12)
go_version=$(go env GOVERSION)
key=$(printf '%s\n' "$tree" | cat - "$0" "$go_cache_lib" <(go env GOVERSION GOOS GOARCH) | sha256sum | cut -c1-12)
out="$go_cache_root/mcs-conformance/${commit:0:12}-$key"
bin_dir="$out/bin"
go_cache_bins=(mcs-conformance.test)

write_env() {
  cat >"$1/suite.env" <<ENV
MCS_SUITE_COMMIT=$commit
MCS_SUITE_TREE=$tree
MCS_SUITE_GO=$go_version
MCS_SUITE_SOURCE=$upstream
ENV
}

if ! go_cache_warm; then
  mkdir -p "$out"
  exec 9>"$out/.lock"
  if ! flock -n 9; then
    say "another build of the suite is running; waiting for it"
    flock 9
  fi
  if ! go_cache_warm; then
    go_cache_tmp="$out/bin.tmp"
    rm -rf "$go_cache_tmp"
    mkdir -p "$go_cache_tmp"
    start=$SECONDS
    say "building the suite from $upstream/conformance (mcs-api ${commit:0:12}, $go_version)"
    (cd "$upstream/conformance" &&
      GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false ${GOFLAGS:-}" CGO_ENABLED=0 \
        go test -c -trimpath -o "$go_cache_tmp/mcs-conformance.test" .)
    write_env "$go_cache_tmp"
    go_cache_commit
    say "built the suite in $((SECONDS - start))s"
  fi
fi
echo "$bin_dir/mcs-conformance.test"
