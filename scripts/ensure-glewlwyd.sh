#!/bin/sh
# Makes sure Debian's glewlwyd (an OpenID Connect provider written in C, 2.7.5 on bookworm) is
# installed for the sign-in tests against an identity provider fastsvc's authors did not write
# (test/helpers/glewlwyd.ts starts a throwaway instance on SQLite); quiet unless it installs.
exec sh "$(dirname "$0")/ensure-debian-package.sh" ensure-glewlwyd glewlwyd "the sign-in tests against glewlwyd" 'test -x /usr/bin/glewlwyd && test -f /usr/lib/glewlwyd/plugin/libprotocol_oidc.so'
