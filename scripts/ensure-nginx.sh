#!/bin/sh
# Makes sure Debian's nginx (the nginx-light package: /usr/sbin/nginx) is installed for the tests that put
# a plain round-robin proxy in front of replicas (test/helpers/nginx.ts); quiet unless it installs.
exec sh "$(dirname "$0")/ensure-debian-package.sh" ensure-nginx nginx-light "the proxy in front of the replicas' tests" 'test -x /usr/sbin/nginx'
