#!/bin/sh
# man_examples.sh - the EXAMPLES (and every other "$ command" block) of the
# manual pages run against $PROF, as tests/support/man_examples.py says:
# each command exits as the page implies and prints what the page shows.
# Blocks that need a training script, a GPU or a network are marked in
# the page and listed as skipped.
# Run from the repository root with PROF, TEST_BIN and B, as tests/suite.sh
# does.
. "$(dirname "$0")/../support/cli_lib.sh"
B=${B:-build}

if ! command -v python3 >/dev/null 2>&1; then
    echo "ok man-examples # skip no python3"
    exit 0
fi
if ! [ -x "$TEST_BIN/make_man_fixtures" ] || ! [ -f "$B/libprof.a" ]; then
    echo "ok man-examples # skip no $TEST_BIN/make_man_fixtures or $B/libprof.a (make check builds them)"
    exit 0
fi
python3 tests/support/man_examples.py "$PROF" "$TEST_BIN" "$B/libprof.a" man/*.1 man/*.3 man/*.5
