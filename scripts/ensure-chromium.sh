#!/bin/sh
# Makes sure Debian's headless-capable Chromium is installed for the browser tests
# (test/e2e/oauth-pages.test.ts, which launches the real binary /usr/lib/chromium/chromium
# rather than the /usr/bin/chromium wrapper script). Idempotent and quiet: prints nothing
# when it is already there; otherwise one line saying what it does, then apt-get runs
# quietly with its output kept in a temporary file that is shown only if it fails.
set -eu
BIN=/usr/lib/chromium/chromium
if [ -x "$BIN" ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "ensure-chromium: installing Debian's chromium package for the browser tests (apt-get update && apt-get install chromium)..."
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
if ! { $SUDO apt-get -qq update && DEBIAN_FRONTEND=noninteractive $SUDO apt-get -qq install -y --no-install-recommends chromium; } >"$LOG" 2>&1; then
  cat "$LOG" >&2
  echo "ensure-chromium: installing chromium failed (apt-get output above)" >&2
  exit 1
fi
if [ ! -x "$BIN" ]; then
  echo "ensure-chromium: the chromium package is installed but $BIN is missing" >&2
  exit 1
fi
