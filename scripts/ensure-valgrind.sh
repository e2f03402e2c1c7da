#!/bin/sh
# Makes sure Debian's valgrind is installed for bench/instructions.mjs (instructions per
# request, counted by callgrind) and its smoke test. Idempotent and quiet: prints nothing
# when it is there; otherwise one line saying what it does, then apt-get runs quietly
# with its output kept in a temporary file shown only if it fails.
set -eu
have() { command -v valgrind >/dev/null 2>&1 && command -v callgrind_control >/dev/null 2>&1; }
if have; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "ensure-valgrind: installing Debian's valgrind package for the instruction-count bench (apt-get update && apt-get install valgrind)..."
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
if ! { $SUDO apt-get -qq update && DEBIAN_FRONTEND=noninteractive $SUDO apt-get -qq install -y --no-install-recommends valgrind; } >"$LOG" 2>&1; then
  cat "$LOG" >&2
  echo "ensure-valgrind: installing valgrind failed (apt-get output above)" >&2
  exit 1
fi
if ! have; then
  echo "ensure-valgrind: the valgrind package is installed but valgrind or callgrind_control is missing" >&2
  exit 1
fi
