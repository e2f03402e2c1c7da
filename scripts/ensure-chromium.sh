#!/bin/sh
# Makes sure Debian's headless-capable Chromium is at /usr/bin/chromium for the
# browser tests (test/e2e/oauth-pages.test.ts). Idempotent: does nothing when it is
# already there; otherwise runs apt-get update and installs the `chromium` package.
set -eu
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium
/usr/bin/chromium --version
