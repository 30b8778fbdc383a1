#!/bin/sh
# python.sh - the Python binding and its PyTorch helpers end to end: real
# training runs through $B/python/prof (built by `make test-bins`), their
# profiles read back with $PROF and $TEST_BIN/dump_events. The tests are
# tests/python/test_*.py; they print the ok / not ok lines themselves.
# PYTHON (default /usr/bin/python3, with Debian's python3-torch) runs them.
B=${B:-build}
PROF=${PROF:-$B/prof}
TEST_BIN=${TEST_BIN:-$B/rel/tests/bin}
PYTHON=${PYTHON:-/usr/bin/python3}

if ! [ -x "$PYTHON" ] || ! [ -f "$B/python/prof/__init__.py" ]; then
    echo "ok python # skip no $PYTHON or no $B/python/prof (make test-bins builds it)"
    exit 0
fi
PYTHONDONTWRITEBYTECODE=1 B=$B PROF=$PROF TEST_BIN=$TEST_BIN "$PYTHON" tests/python/run.py
