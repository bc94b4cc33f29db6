#!/usr/bin/env bash
# Installs the Debian packages a real node of the harness needs (containerd, runc, the CNI
# plugins, busybox-static and socat for the stand-in images, nftables for kube-proxy, iproute2
# for the harness's own `ip netns`/`ip link` calls: minimal images such as debian:*-slim lack
# it), only those missing. `--check` installs nothing (exit 1 if anything is missing); without
# root it says what to run and exits 2 (tools/debian-packages.sh).
set -euo pipefail
say() { echo "nodes: $*" >&2; }
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/debian-packages.sh"

# containerd's package enables a system service; the harness runs its own instances and never
# uses it, so the package's postinst must not start one (policy-rc.d 101 = action forbidden).
policy=/usr/sbin/policy-rc.d
own_policy=0
trap '((own_policy)) && rm -f "$policy"' EXIT
before_debian_install() {
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
  fi
}

ensure_debian_packages "${1:-}" "real nodes" \
  containerd=/usr/bin/containerd \
  runc=/usr/sbin/runc \
  containernetworking-plugins=/usr/lib/cni/bridge \
  busybox-static=/bin/busybox \
  socat=/usr/bin/socat \
  nftables=/usr/sbin/nft \
  iproute2=/sbin/ip
