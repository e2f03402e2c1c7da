#!/bin/sh
# Makes sure Debian's valgrind is installed for bench/instructions.mjs (instructions per
# request, counted by callgrind) and its smoke test; quiet unless it installs.
exec sh "$(dirname "$0")/ensure-debian-package.sh" ensure-valgrind valgrind "the instruction-count bench" 'command -v valgrind && command -v callgrind_control'
