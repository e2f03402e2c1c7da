#!/bin/sh
# Makes sure Debian's valgrind is installed for instructions.mjs beside it (instructions per
# request, counted by callgrind) and its smoke test (bench/test/); quiet unless it installs.
# Nothing in npm test runs it.
exec sh "$(dirname "$0")/../../scripts/ensure-debian-package.sh" ensure-valgrind valgrind "the instruction-count bench" 'command -v valgrind && command -v callgrind_control'
