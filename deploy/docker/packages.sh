#!/usr/bin/env bash
# Installs the Debian packages deploy/docker/build-images.sh needs to build the agent images
# from Dockerfile.export / Dockerfile.import without a container daemon or registry: buildah
# (runs the Dockerfiles: root, no daemon, chroot isolation) and debootstrap (makes the
# Node.js base image locally). Only those missing. `--check` installs nothing: it lists what
# is missing and exits 1 if anything is. Needs root for the install; otherwise it says what to
# run and exits 2.
set -euo pipefail
say() { echo "images: $*" >&2; }

# package -> a file it installs, which is how "present" is checked (dpkg may be absent).
declare -A probe=(
  [buildah]=/usr/bin/buildah
  [debootstrap]=/usr/sbin/debootstrap
)
missing=()
for p in buildah debootstrap; do
  [[ -x ${probe[$p]} ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [[ ${1:-} == --check ]]; then
  say "missing packages: ${missing[*]}"
  exit 1
fi
if [[ $(id -u) != 0 ]]; then
  say "building the agent images needs the Debian packages ${missing[*]}; run as root: apt-get install -y ${missing[*]}"
  exit 2
fi
if ! command -v apt-get >/dev/null; then
  say "building the agent images needs ${missing[*]} and there is no apt-get on this machine; install them by hand"
  exit 2
fi
say "installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
  { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
