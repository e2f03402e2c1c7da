#!/bin/sh
# ensure-debian-package.sh NAME PACKAGE PURPOSE CHECK: makes sure a Debian package a test or
# bench needs is installed, CHECK (a shell command) telling whether it is. Idempotent and quiet:
# prints nothing when CHECK passes; otherwise one line saying what it does, then apt-get runs
# quietly with its output kept in a temporary file that is shown only if it fails; exit 1 when
# the install fails or CHECK still fails after it. NAME prefixes the messages. Installs are taken
# one at a time (flock on /tmp/fastsvc-apt.lock: tests run side by side may ask at once), and CHECK
# is asked again once the lock is held. Used by the ensure-*.sh scripts beside it and by
# bench/investigate/ensure-valgrind.sh.
set -eu
NAME=$1 PACKAGE=$2 PURPOSE=$3 CHECK=$4
if sh -c "$CHECK" >/dev/null 2>&1; then
  exit 0
fi
exec 9>/tmp/fastsvc-apt.lock
flock 9
if sh -c "$CHECK" >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "$NAME: installing Debian's $PACKAGE package for $PURPOSE (apt-get update && apt-get install $PACKAGE)..."
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
if ! { $SUDO apt-get -qq update && DEBIAN_FRONTEND=noninteractive $SUDO apt-get -qq install -y --no-install-recommends "$PACKAGE"; } >"$LOG" 2>&1; then
  cat "$LOG" >&2
  echo "$NAME: installing $PACKAGE failed (apt-get output above)" >&2
  exit 1
fi
if ! sh -c "$CHECK" >/dev/null 2>&1; then
  echo "$NAME: the $PACKAGE package is installed but this check still fails: $CHECK" >&2
  exit 1
fi
