#!/usr/bin/env bash
# Installs the Debian packages deploy/docker/build-images.sh needs to build the agent images
# from Dockerfile.export / Dockerfile.import without a container daemon or registry: buildah
# (runs the Dockerfiles: root, no daemon, chroot isolation) and debootstrap (makes the
# Node.js base image locally). Only those missing; `--check` installs nothing (exit 1 if
# anything is missing); without root it says what to run and exits 2 (tools/debian-packages.sh).
set -euo pipefail
say() { echo "images: $*" >&2; }
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/debian-packages.sh"

ensure_debian_packages "${1:-}" "building the agent images" \
  buildah=/usr/bin/buildah \
  debootstrap=/usr/sbin/debootstrap
