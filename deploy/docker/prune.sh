#!/usr/bin/env bash
# Produces the production tree of one agent: its one-file ESM bundle (tools/bundle.mjs:
# esbuild over the compiled JavaScript and its production dependencies), the bundle's source
# map and the licence texts of the bundled packages — no node_modules. OUT holds:
#   main.mjs                 run as `node --enable-source-maps --max-semi-space-size=4 --optimize-for-size --single-threaded OUT/main.mjs` (the images do)
#   main.mjs.map             positions in the TypeScript sources, for stack traces
#   THIRD-PARTY-NOTICES.txt  the licences of everything bundled
# Bundling removes the ~85 MiB of RSS the unbundled @kubernetes/client-node module graph costs
# every agent (docs/benchmarks.md). Dockerfile.export / Dockerfile.import run exactly this;
# deploy/test runs it too and starts the result with --help.
#
# Usage: deploy/docker/prune.sh [--install] [--arch amd64|arm64] <export-agent|import-agent> <OUT>
#   --install   pnpm install --frozen-lockfile first (the image build; a dev checkout has
#               already run `make install`)
#   --arch      the target CPU (Docker's TARGETARCH), checked and otherwise unused: the bundle
#               is plain JavaScript with no platform-specific package, so an amd64 builder's
#               tree runs on arm64 as it is
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

case $arch in
  "" | amd64 | x64 | arm64 | aarch64) ;;
  *) say "unsupported --arch '$arch'"; exit 2 ;;
esac

if $install; then
  say "installing the workspace (frozen lockfile)"
  pnpm install --frozen-lockfile --reporter=append-only >&2
fi
say "compiling packages/$agent and its workspace dependencies"
pnpm exec tsc --build "packages/$agent"
say "bundling packages/$agent"
node tools/bundle.mjs "$agent"

[[ -e $out ]] && { [[ -d $out && -z $(ls -A "$out") ]] || { say "$out exists and is not empty"; exit 1; }; }
mkdir -p "$out"
bundle="packages/$agent/dist/bundle"
cp "$bundle/main.mjs" "$bundle/main.mjs.map" "$bundle/THIRD-PARTY-NOTICES.txt" "$out/"
[[ -f $out/main.mjs ]] || { say "$out/main.mjs is missing (did packages/$agent bundle?)"; exit 1; }
say "done: node --enable-source-maps --max-semi-space-size=4 --optimize-for-size --single-threaded $out/main.mjs"
