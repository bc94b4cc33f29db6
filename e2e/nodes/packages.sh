#!/usr/bin/env bash
# Installs the Debian packages a real node of the harness needs (containerd, runc, the CNI
# plugins, busybox-static and socat for the stand-in images, nftables for kube-proxy, iproute2
# for the harness's own `ip netns`/`ip link` calls: minimal images such as debian:*-slim lack
# it), only those missing. `--check` installs nothing: it lists what is missing and exits 1 if anything
# is. Needs root for the install; otherwise it says what to run and exits 2.
set -euo pipefail
say() { echo "nodes: $*" >&2; }

# package -> a file it installs, which is how "present" is checked (dpkg may be absent).
declare -A probe=(
  [containerd]=/usr/bin/containerd
  [runc]=/usr/sbin/runc
  [containernetworking-plugins]=/usr/lib/cni/bridge
  [busybox-static]=/bin/busybox
  [socat]=/usr/bin/socat
  [nftables]=/usr/sbin/nft
  [iproute2]=/sbin/ip
)
missing=()
for p in containerd runc containernetworking-plugins busybox-static socat nftables iproute2; do
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
  say "real nodes need the Debian packages ${missing[*]}; run as root: apt-get install -y ${missing[*]}"
  exit 2
fi
if ! command -v apt-get >/dev/null; then
  say "real nodes need ${missing[*]} and there is no apt-get on this machine; install them by hand"
  exit 2
fi
say "installing ${missing[*]}"
# containerd's package enables a system service; the harness runs its own instances and never
# uses it, so the package's postinst must not start one (policy-rc.d 101 = action forbidden).
policy=/usr/sbin/policy-rc.d
own_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
fi
trap '((own_policy)) && rm -f "$policy"' EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
  { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
