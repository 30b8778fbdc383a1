#!/bin/sh
# ranks_dask.sh - the per-rank step on a distributed engine: examples/
# dask_ranks.py maps `prof analyze --summary` over a job's ranks on a Dask
# LocalCluster (Debian's python3-dask and python3-distributed) and merges
# the summaries with prof analyze. The merge must give the report of
# `prof analyze DIR` of the profiles byte for byte: JSON, and the ranks
# table as CSV.
# variants: rel
# Run from the repository root with PROF and TEST_BIN set, as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
cli_tmp ranks-dask
PY=/usr/bin/python3

if ! "$PY" -c 'import dask, distributed' 2>/dev/null; then
    echo "ok dask # skip python3-dask and python3-distributed are not installed (make deps)"
    exit 0
fi
mkdir -p "$tmp/job"
# six ranks on two hosts: the merge carries the straggler and the clocks
"$TEST_BIN/make_ranks" "$tmp/job" 6 6000 2 2>"$err" || { not_ok fixture "$(cat "$err")"; exit 1; }
for f in "json" "csv --table ranks"; do
    name=$(echo "$f" | tr ' ' '-')
    # shellcheck disable=SC2086 # the format and its table, split on purpose
    "$PROF" analyze --format $f "$tmp/job" >"$tmp/profiles.$name" 2>"$err" ||
        not_ok "dask-$name" "prof analyze: $(cat "$err")"
    # shellcheck disable=SC2086
    PROF="$PROF" timeout 120 "$PY" examples/dask_ranks.py "$tmp/job" "$tmp/sums-$name" \
        --format $f >"$out" 2>"$err"
    rc=$?
    if [ $rc -eq 0 ] && cmp -s "$out" "$tmp/profiles.$name" &&
       [ "$(ls "$tmp/sums-$name" | wc -l)" -eq 6 ] && grep -q "^6 rank summaries in " "$err"; then
        ok "dask-$name"
    else
        not_ok "dask-$name" "exit $rc: $(tail -n 3 "$err") $(diff "$out" "$tmp/profiles.$name" | head -n 4)"
    fi
done
# a rank that cannot be read fails the map, and the example says which
cp "$tmp/job/rank0.prof" "$tmp/rank0.keep"
head -c 200 "$tmp/rank0.keep" >"$tmp/job/rank0.prof"
PROF="$PROF" timeout 120 "$PY" examples/dask_ranks.py "$tmp/job" "$tmp/sums-bad" >"$out" 2>"$err"
rc=$?
if [ $rc -ne 0 ] && grep -q "rank0.prof" "$err"; then ok dask-broken-rank
else not_ok dask-broken-rank "exit $rc: $(tail -n 3 "$err")"; fi
[ $fails -eq 0 ]
