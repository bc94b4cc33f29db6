# Sourced by the scripts that install Debian packages the harness or the image build needs
# (e2e/nodes/packages.sh, deploy/docker/packages.sh): one rule for "present", for `--check`,
# for non-root callers and for machines without apt-get.
#
#   say() { ...; }                        # set by the caller before sourcing
#   ensure_debian_packages <mode> <needed-for> <package>=<file it installs>...
#
# <mode> is `--check` (install nothing: list what is missing and exit 1 if anything is) or
# anything else (install what is missing; needs root, otherwise say what to run and exit 2).
# "Present" is checked by a file the package installs: dpkg may be absent (minimal images).
# Returns 0 when everything is present or was installed. Callers may define
# `before_debian_install` (e.g. to keep a package's postinst from starting a service).

ensure_debian_packages() {
  local mode=$1 needed_for=$2 spec
  shift 2
  local -a missing=()
  for spec in "$@"; do
    [[ -x ${spec#*=} ]] || missing+=("${spec%%=*}")
  done
  ((${#missing[@]} == 0)) && return 0
  if [[ $mode == --check ]]; then
    say "missing packages: ${missing[*]}"
    exit 1
  fi
  if [[ $(id -u) != 0 ]]; then
    say "$needed_for needs the Debian packages ${missing[*]}; run as root: apt-get install -y ${missing[*]}"
    exit 2
  fi
  if ! command -v apt-get >/dev/null; then
    say "$needed_for needs ${missing[*]} and there is no apt-get on this machine; install them by hand"
    exit 2
  fi
  say "installing ${missing[*]}"
  if declare -F before_debian_install >/dev/null; then before_debian_install; fi
  # A stale package index (a fresh machine) makes the first install fail: update once, retry.
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
    { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
}
