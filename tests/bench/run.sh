#!/bin/sh
# run.sh - `make bench`: runs every benchmark program in one go, so that the
# ratios they print compare figures measured on the same machine, in the
# same minutes. Absolute numbers vary between runs on shared machines;
# the ratios are what the targets of DESIGN §7 are about.
B=${B:-build}
status=0
for b in "$B"/rel/tests/bench/*; do
    case "$b" in *.o|*.d) continue ;; esac
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" || status=1
    echo
done
exit $status
