#!/usr/bin/env bash
# Produces the production tree of one agent: its compiled JavaScript plus production
# dependencies only (pnpm deploy --prod), self-contained under OUT (no links outside it).
# Dockerfile.export / Dockerfile.import run exactly this; deploy/test runs it too and starts
# the result with --help.
#
# Usage: deploy/docker/prune.sh [--install] [--arch amd64|arm64] <export-agent|import-agent> <OUT>
#   --install   pnpm install --frozen-lockfile first (the image build; a dev checkout has
#               already run `make install`)
#   --arch      target CPU for platform-specific optional dependencies (Docker's TARGETARCH),
#               so an amd64 builder can produce an arm64 tree without emulation
set -euo pipefail
install=false
arch=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --install) install=true; shift ;;
    --arch) arch=$2; shift 2 ;;
    *) break ;;
  esac
done
[[ $# -eq 2 ]] || { echo "usage: $0 [--install] [--arch amd64|arm64] <export-agent|import-agent> <OUT>" >&2; exit 2; }
agent=$1
out=$2
case $agent in
  export-agent | import-agent) ;;
  *) echo "prune: unknown agent '$agent' (export-agent or import-agent)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
say() { echo "prune: $*" >&2; }

cpu_flags=()
case $arch in
  "") ;;
  amd64 | x64) cpu_flags=(--cpu x64 --os linux --libc glibc) ;;
  arm64 | aarch64) cpu_flags=(--cpu arm64 --os linux --libc glibc) ;;
  *) say "unsupported --arch '$arch'"; exit 2 ;;
esac

if $install; then
  say "installing the workspace (frozen lockfile)"
  pnpm install --frozen-lockfile --reporter=append-only >&2
fi
say "compiling packages/$agent and its workspace dependencies"
pnpm exec tsc --build "packages/$agent"

[[ -e $out ]] && { [[ -d $out && -z $(ls -A "$out") ]] || { say "$out exists and is not empty"; exit 1; }; }
say "pnpm deploy --prod @cloudmap-mcs/$agent -> $out"
# The directory goes first: --cpu/--os/--libc take one or more values and would swallow it.
pnpm --filter "@cloudmap-mcs/$agent" deploy --prod "$out" "${cpu_flags[@]}" >&2

# Only the compiled output runs; sources, tests and build metadata stay behind.
rm -rf "$out/src" "$out/test" "$out/dist/test" "$out/tsconfig.json" "$out/pnpm-lock.yaml"
find "$out/dist" -name '*.tsbuildinfo' -delete
[[ -f $out/dist/src/main.js ]] || { say "$out/dist/src/main.js is missing (did packages/$agent compile?)"; exit 1; }
say "done: node $out/dist/src/main.js"
