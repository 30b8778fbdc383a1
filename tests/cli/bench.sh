#!/bin/sh
# bench.sh - the reading, import, export, query and many-ranks benchmarks of
# `make bench` (tests/bench/analyze.sh, import.sh, export.sh, query.sh,
# ranks.sh) run end to end on a small profile or trace, and the comparison
# benchmarks (compare_aa, compare_busy) on a few pairs, so that a change to
# their helpers (make_big, make_kineto.py, run_measured, prof_frames.py,
# duckdb_query.mjs) cannot leave `make bench` broken until someone runs it.
# The figures themselves mean nothing at this size and are not checked.
# Plain build only: the benchmarks measure the plain prof in $B.
# variants: rel
# Run from the repository root with PROF, TEST_BIN and B, as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
case "$PROF" in
*/asan/*) exit 0 ;;
esac

cli_tmp bench

# bench NAME SCRIPT LINE...: the script succeeds and prints every LINE
bench() {
    name=$1
    script=$2
    shift 2
    BENCH_EVENTS=20000 B=${B:-build} TMPDIR=$tmp sh "$script" >"$out" 2>"$err"
    rc=$?
    if [ $rc -ne 0 ]; then
        not_ok "$name" "exit $rc: $(tail -n 3 "$err")"
        return
    fi
    for line in "$@"; do
        if ! grep -qF -- "$line" "$out"; then
            not_ok "$name" "no '$line' in: $(head -c 600 "$out")"
            return
        fi
    done
    ok "$name"
}

bench bench-analyze tests/bench/analyze.sh "prof analyze / zstd -d:" "(target <= 2)" \
    "peak RSS" "bytes per extra step" "json + pandas" "the reader alone" "serving/RL steps" \
    "its zstd frames decompressed in process"
BENCH_IMPORT_MB=3 BENCH_IMPORT_SMALL_MB=2
export BENCH_IMPORT_MB BENCH_IMPORT_SMALL_MB
bench bench-import tests/bench/import.sh "json.load / prof import time:" \
    "prof import, stacks and memory" "peak RSS 3 MB / 2 MB trace:"
bench bench-export tests/bench/export.sh "throughput:" "Chrome trace / .prof size:" \
    "(target about 1)"
# DuckDB only if a `make bench` already installed it: nothing is fetched
# from npm here, so the check stays fast and works offline
BENCH_DUCKDB=cached
export BENCH_DUCKDB
bench bench-query tests/bench/query.sh "prof query, GROUP BY name" \
    "(target about 1: it does not grow with the file)" "well under a second" \
    "prof export --format sqlite" "prof export --format csv" "DuckDB"
# (only ranks.sh reads these)
BENCH_RANKS=16 BENCH_RANKS_MID=12 BENCH_RANK_EVENTS=2000 BENCH_TRACE_COPIES=3
export BENCH_RANKS BENCH_RANKS_MID BENCH_RANK_EVENTS BENCH_TRACE_COPIES
bench bench-ranks tests/bench/ranks.sh "peak RSS, 16 ranks over 10:" "(target about 1: flat)" \
    "wall per rank, 16 ranks over 12:" "CPU over wall, 16 ranks:"

# compare_aa on 50 pairs a case: it runs and prints its table
if "${B:-build}/rel/tests/bench/compare_aa" 50 >"$out" 2>"$err" &&
    grep -q "A/A, 3 runs a side (false positives)" "$out" && grep -q "compare ratios:" "$out" &&
    grep -q "operations flagged, 5 runs a side" "$out"; then
    ok bench-compare
else
    not_ok bench-compare "$(head -c 600 "$out") $(head -c 300 "$err")"
fi

# compare_busy on 20 draws of the stored runs: it reads them all and prints its table
if "${B:-build}/rel/tests/bench/compare_busy" 20 >"$out" 2>"$err" &&
    grep -q "76 base, steady step" "$out" && grep -q "busy compare rates:" "$out" &&
    grep -q "^5  " "$out"; then
    ok bench-compare-busy
else
    not_ok bench-compare-busy "$(head -c 600 "$out") $(head -c 300 "$err")"
fi

[ $fails -eq 0 ]
