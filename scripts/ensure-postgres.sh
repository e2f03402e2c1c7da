#!/bin/sh
# Makes sure Debian's PostgreSQL server binaries (initdb, pg_ctl, postgres under
# /usr/lib/postgresql/<version>/bin) are installed for the PostgreSQL provider's tests
# (test/helpers/postgres.ts starts a throwaway cluster from them); quiet unless it installs.
exec sh "$(dirname "$0")/ensure-debian-package.sh" ensure-postgres postgresql "the PostgreSQL tests" 'ls /usr/lib/postgresql/*/bin/initdb'
