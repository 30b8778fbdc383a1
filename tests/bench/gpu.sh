#!/bin/sh
# gpu.sh - GPU time at scale, measured in one run by `make bench`
# (tests/bench/run.sh): `prof analyze` of RECORDS (default 5 million) GPU
# kernels on 8 streams listed stream by stream as Kineto writes them, each
# with its launch call, under 1,000 steps (tests/support/bin/make_gpu):
#
#   overlapping  the streams run at once: their unions stay small;
#   disjoint     no two records overlap: every record stays an interval of
#                its class's union, the model's worst case for memory.
#
# Peak resident memory of each, and per GPU record over the peak of the
# same profile at a hundredth of the records; time, the least of ROUNDS.
# The unions are exact (rules.md §3); these figures say what that costs.
B=${B:-build}
PROF=$B/prof
BIN=$B/rel/tests/bin
RECORDS=${BENCH_GPU_RECORDS:-5000000}
ROUNDS=3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-bench-gpu.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

BENCH=gpu
. tests/bench/measure.sh

small=$((RECORDS / 100))
for shape in overlapping disjoint; do
    "$BIN/make_gpu" "$RECORDS" $shape "$tmp/$shape.prof" || exit 1
    "$BIN/make_gpu" "$small" $shape "$tmp/$shape-small.prof" || exit 1
    measure big "$PROF" analyze "$tmp/$shape.prof"
    measure little "$PROF" analyze "$tmp/$shape-small.prof"
    printf '%-46s %8.3f s (%.3f s CPU)  peak %s\n' \
        "prof analyze, $RECORDS records, $shape" "$big_s" "$big_cpu" "$(mib "$big_kib")"
    awk -v b="$big_kib" -v l="$little_kib" -v n="$RECORDS" -v m="$small" 'BEGIN {
        printf "  per GPU record:                  %.1f bytes (peak over %d records: %.1f MiB)\n",
            (b - l) * 1024 / (n - m), m, l / 1024 }'
    rm -f "$tmp/$shape.prof" "$tmp/$shape-small.prof"
done
