#!/bin/sh
# Makes sure Debian's wrk (a load generator in C: cheap enough per request that the server, not it, is what a
# two-core run saturates) is installed for bench/workers.mjs; quiet unless it installs.
exec sh "$(dirname "$0")/../scripts/ensure-debian-package.sh" ensure-wrk wrk "bench/workers.mjs's load generator" 'command -v wrk'
