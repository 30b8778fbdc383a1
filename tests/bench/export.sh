#!/bin/sh
# export.sh - `prof export --format chrome-trace` of a 10-million-event
# profile (tests/support/bin/make_big, the analyze benchmark's generator),
# measured in one run by `make bench` (tests/bench/run.sh):
#
#   1. throughput: MB of Chrome trace written per second and events per
#      second, the output thrown away (best of ROUNDS, tests/support/bin/
#      run_measured);
#   2. size: the .prof file against the Chrome trace of the same events;
#   3. peak resident memory at 1 million and at 10 million events: the
#      export streams, so about the same.
# BENCH_EVENTS changes the size.
B=${B:-build}
PROF=$B/prof
BIN=$B/rel/tests/bin
EVENTS=${BENCH_EVENTS:-10000000}
ROUNDS=3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-bench-export.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

BENCH=export
. tests/bench/measure.sh

n_small=$("$BIN/make_big" 1000000 "$tmp/small.prof") || exit 1
n_big=$("$BIN/make_big" "$EVENTS" "$tmp/big.prof") || exit 1

measure big "$PROF" export "$tmp/big.prof" --format chrome-trace
measure small "$PROF" export "$tmp/small.prof" --format chrome-trace
# The size, once, through a pipe (no file of gigabytes on disk).
trace_bytes=$("$PROF" export "$tmp/big.prof" --format chrome-trace | wc -c) || exit 1
prof_bytes=$(wc -c <"$tmp/big.prof")

echo "profile: $n_big events, $prof_bytes bytes"
printf '%-44s %8.3f s  peak %s\n' "prof export chrome-trace ($n_big events)" "$big_s" "$(mib "$big_kib")"
awk -v b="$trace_bytes" -v s="$big_s" -v n="$n_big" 'BEGIN {
    printf "  throughput:                    %.1f MB/s, %.2f M events/s\n", b / s / 1e6, n / s / 1e6 }'
echo "  Chrome trace:                  $trace_bytes bytes, $(ratio "$trace_bytes" "$n_big") bytes/event"
echo "  .prof:                         $prof_bytes bytes, $(ratio "$prof_bytes" "$n_big") bytes/event"
echo "  Chrome trace / .prof size:     $(ratio "$trace_bytes" "$prof_bytes")x"
printf '%-44s %8.3f s  peak %s\n' "prof export chrome-trace ($n_small events)" "$small_s" "$(mib "$small_kib")"
echo "  peak RSS $n_big / $n_small events: $(ratio "$big_kib" "$small_kib")x (target about 1)"
