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
echo "== analyze"
sh tests/bench/analyze.sh || status=1
echo "== export"
sh tests/bench/export.sh || status=1
echo "== query"
sh tests/bench/query.sh || status=1
echo "== import"
sh tests/bench/import.sh || status=1
echo "== gpu"
sh tests/bench/gpu.sh || status=1
echo "== ranks"
sh tests/bench/ranks.sh || status=1
if [ -f "$B/python/prof/__init__.py" ] && [ -x "${PYTHON:-/usr/bin/python3}" ]; then
    echo "== bench_python"
    PYTHONPATH=$B/python "${PYTHON:-/usr/bin/python3}" tests/bench/bench_python.py || status=1
fi
exit $status
