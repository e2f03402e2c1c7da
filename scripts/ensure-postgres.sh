#!/bin/sh
# Makes sure Debian's PostgreSQL server binaries (initdb, pg_ctl, postgres under
# /usr/lib/postgresql/<version>/bin) are installed for the PostgreSQL provider's tests
# (test/helpers/postgres.ts starts a throwaway cluster from them). Idempotent and quiet:
# prints nothing when they are there; otherwise one line saying what it does, then
# apt-get runs quietly with its output kept in a temporary file shown only if it fails.
set -eu
have() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
if have; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "ensure-postgres: installing Debian's postgresql package for the PostgreSQL tests (apt-get update && apt-get install postgresql)..."
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
if ! { $SUDO apt-get -qq update && DEBIAN_FRONTEND=noninteractive $SUDO apt-get -qq install -y --no-install-recommends postgresql; } >"$LOG" 2>&1; then
  cat "$LOG" >&2
  echo "ensure-postgres: installing postgresql failed (apt-get output above)" >&2
  exit 1
fi
if ! have; then
  echo "ensure-postgres: the postgresql package is installed but no /usr/lib/postgresql/*/bin/initdb exists" >&2
  exit 1
fi
