#!/usr/bin/env bash
# Ensures a Python venv with moto's server (the reference the Cloud Map emulator's contract
# suite is checked against) and prints the path of its `moto_server` executable.
#
# - The venv lives in $CLOUDMAP_MCS_CACHE (default ~/.cache/cloudmap-mcs)/moto-<version>,
#   outside the clone, keyed by version: a warm machine does nothing and downloads nothing.
# - A venv records its absolute path in its scripts, so it is built in place; the marker
#   file .complete is written only after pip succeeded, and a venv without it is rebuilt,
#   so an interrupted install never looks warm.
# - Needs python3 >= 3.10 with the venv module (moto's own minimum) and PyPI.
# Usage: tools/moto.sh --print-bin   (progress on stderr, moto_server path on stdout)
set -euo pipefail

MOTO_VERSION=${MOTO_VERSION:-5.2.5}
cache=${CLOUDMAP_MCS_CACHE:-$HOME/.cache/cloudmap-mcs}
venv="$cache/moto-$MOTO_VERSION"
say() { echo "moto: $*" >&2; }

mkdir -p "$cache"
# Two suites starting at once must not build the same venv together.
if command -v flock >/dev/null; then
  exec 9>"$cache/moto-$MOTO_VERSION.lock"
  flock 9
fi

if [[ ! -f "$venv/.complete" ]]; then
  python=$(command -v python3 || true)
  [[ -n "$python" ]] || { say "python3 is not installed; install Python >= 3.10"; exit 1; }
  "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || { say "moto $MOTO_VERSION needs Python >= 3.10, found $("$python" --version)"; exit 1; }
  rm -rf "$venv"
  say "creating $venv with moto[server]==$MOTO_VERSION from PyPI"
  "$python" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "moto[server]==$MOTO_VERSION" >&2
  "$venv/bin/moto_server" --help >/dev/null
  touch "$venv/.complete"
fi

if [[ "${1:-}" == "--print-bin" ]]; then
  echo "$venv/bin/moto_server"
fi
