#!/bin/sh
# Makes sure Debian's headless-capable Chromium is installed for the browser tests
# (test/e2e/oauth-pages.test.ts, which launches the real binary /usr/lib/chromium/chromium
# rather than the /usr/bin/chromium wrapper script); quiet unless it installs.
exec sh "$(dirname "$0")/ensure-debian-package.sh" ensure-chromium chromium "the browser tests" 'test -x /usr/lib/chromium/chromium'
