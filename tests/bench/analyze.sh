#!/bin/sh
# analyze.sh - the reading targets of DESIGN §7, measured in one run by
# `make bench` (tests/bench/run.sh):
#
#   1. `prof analyze` of a 10-million-event profile (tests/support/bin/
#      make_big) against `zstd -d` of the same compressed bytes. A .prof file
#      is not one zstd stream but a zstd frame per block between block
#      headers; tests/bench/prof_frames.py copies those frames back to back
#      into one multi-frame .zst file, which is exactly what prof has to
#      decompress. Target: prof ≤ 2× zstd -d. Measured again on one thread
#      (PROF_THREADS=1), to show what the second core gives.
#   2. The same regions as a Chrome trace JSON, loaded with Python's json and
#      aggregated per operation with pandas (tests/bench/pandas_aggregate.py).
#      Target: prof ≥ 100× faster. Needs pandas (make bench installs
#      python3-pandas); with less than 16 GiB of memory available the
#      comparison is made at 1 million events instead, and says so.
#      The floor itself is also measured in process: one thread
#      decompressing every frame in memory, file read and output left out
#      (tests/support/bin/zstd_frames); analyze is given against it too,
#      with its events per second. So is prof's reader alone, handing out
#      events that nothing uses (tests/support/bin/read_floor), to show how
#      much of analyze is reading and how much building the model.
#   3. prof's peak resident memory at 1 million and at 10 million events.
#      Target: about the same (the model does not grow with events, nor,
#      past 65,536 steps, with steps: rules.md §1, long runs). The
#      10-million-event run is measured twice: over the same number of
#      steps as the 1-million one (a model 10x as deep, make_big -s), and
#      as the 10x longer run of item 1, with 10x the steps. The same again
#      for runs of short steps, where steps dominate (19 events a step:
#      about 52,000 and 523,000 steps, the second past the limit).
#   4. A serving or RL loop (make_big -r: a dozen short outermost regions
#      a step, 15 events, 66,000 and 664,000 steps): analyze at 10 million
#      events against the in-process decompression of its own frames
#      (target <= 2x), and its peak memory against 1 million (about 1).
#
# Times are of whole processes with their output thrown away, the least of
# ROUNDS (3) runs (tests/support/bin/run_measured): wall time, and CPU time
# (user + system), which a busy machine disturbs less; both ratios are
# printed. The sides of the in-process ratio are measured in turns (TURNS,
# below). BENCH_EVENTS changes the size.
B=${B:-build}
PROF=$B/prof
BIN=$B/rel/tests/bin
EVENTS=${BENCH_EVENTS:-10000000}
ROUNDS=3
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-bench-analyze.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

BENCH=analyze
. tests/bench/measure.sh
# ratios LABEL A B TARGET: A/B in wall and in CPU time
ratios() {
    echo "  $1 $(ratio "$(val "$2" s)" "$(val "$3" s)")x wall," \
        "$(ratio "$(val "$2" cpu)" "$(val "$3" cpu)")x CPU (target $4)"
}

has_pandas=0
"$PYTHON" -c 'import pandas' 2>/dev/null && has_pandas=1
avail_kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null)
py_events=$EVENTS
[ "${avail_kib:-0}" -lt $((16 * 1024 * 1024)) ] && py_events=1000000

# The trace goes with the profile the pandas script is compared against.
if [ $has_pandas = 0 ]; then
    n_small=$("$BIN/make_big" 1000000 "$tmp/small.prof") || exit 1
    n_big=$("$BIN/make_big" "$EVENTS" "$tmp/big.prof") || exit 1
elif [ "$py_events" = "$EVENTS" ]; then
    n_small=$("$BIN/make_big" 1000000 "$tmp/small.prof") || exit 1
    n_big=$("$BIN/make_big" "$EVENTS" "$tmp/big.prof" "$tmp/trace.json") || exit 1
else
    n_small=$("$BIN/make_big" 1000000 "$tmp/small.prof" "$tmp/trace.json") || exit 1
    n_big=$("$BIN/make_big" "$EVENTS" "$tmp/big.prof") || exit 1
fi
frames=$("$PYTHON" tests/bench/prof_frames.py "$tmp/big.prof" "$tmp/big.zst") || exit 1
steps_of() { # the number of steps of a profile, complete or not
    "$PROF" analyze --format json "$1" | "$PYTHON" -c 'import json, sys
s = json.load(sys.stdin)["summary"]
print(int(s["steps"] + s["incomplete_steps"]))'
}
small_steps=$(steps_of "$tmp/small.prof")
big_steps=$(steps_of "$tmp/big.prof")
n_deep=$("$BIN/make_big" -s "$small_steps" "$EVENTS" "$tmp/deep.prof") || exit 1
deep_steps=$(steps_of "$tmp/deep.prof")
# short steps: one layer, 19 events a step
n_few=$("$BIN/make_big" -s $((EVENTS / 150)) $((EVENTS / 10)) "$tmp/few.prof") || exit 1
n_many=$("$BIN/make_big" -s $((EVENTS / 15)) "$EVENTS" "$tmp/many.prof") || exit 1
few_steps=$(steps_of "$tmp/few.prof")
many_steps=$(steps_of "$tmp/many.prof")
# a serving or RL loop: a dozen short outermost regions a step, 15 events
n_rl1=$("$BIN/make_big" -r $((EVENTS / 10)) "$tmp/rl1.prof") || exit 1
n_rl=$("$BIN/make_big" -r "$EVENTS" "$tmp/rl.prof") || exit 1
"$PYTHON" tests/bench/prof_frames.py "$tmp/rl.prof" "$tmp/rl.zst" >/dev/null || exit 1
rl1_steps=$(steps_of "$tmp/rl1.prof")
rl_steps=$(steps_of "$tmp/rl.prof")
# The ratio's sides - in-process decompression, the reader alone and
# analyze - are measured in turns, TURNS times, each keeping its least
# (peak memory too, as run_measured does): on shared cores whose speed
# changes over seconds, measuring one side after the other can catch one
# in a slow phase and the other in a fast one, and decide the ratio by
# that. (The figures first into a variable: `set -- $(...)` has set's
# status, not the command's.)
TURNS=7
least() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
zin_s='' read_s='' readslim_s='' prof_big_s='' prof_big_cpu='' prof_big_kib=''
zrl_s='' prof_rl_s='' prof_rl_cpu='' prof_rl_kib=''
turn=0
while [ $turn -lt $TURNS ]; do
    turn=$((turn + 1))
    floor=$("$BIN/zstd_frames" 1 "$tmp/big.zst") || exit 1
    # shellcheck disable=SC2086 # three numbers, split on purpose
    set -- $floor
    zin_s=$(least "$zin_s" "$1")
    floor=$("$BIN/zstd_frames" 1 "$tmp/rl.zst") || exit 1
    # shellcheck disable=SC2086 # three numbers, split on purpose
    set -- $floor
    zrl_s=$(least "$zrl_s" "$1")
    measure one "$PROF" analyze "$tmp/rl.prof"
    prof_rl_s=$(least "$prof_rl_s" "$one_s") prof_rl_cpu=$(least "$prof_rl_cpu" "$one_cpu")
    prof_rl_kib=$(least "$prof_rl_kib" "$one_kib")
    floor=$("$BIN/read_floor" 1 "$tmp/big.prof") || exit 1
    # shellcheck disable=SC2086 # three numbers, split on purpose
    set -- $floor
    read_s=$(least "$read_s" "$1") readslim_s=$(least "$readslim_s" "$2")
    measure one "$PROF" analyze "$tmp/big.prof"
    prof_big_s=$(least "$prof_big_s" "$one_s") prof_big_cpu=$(least "$prof_big_cpu" "$one_cpu")
    prof_big_kib=$(least "$prof_big_kib" "$one_kib")
done

measure prof_big1 env PROF_THREADS=1 "$PROF" analyze "$tmp/big.prof"
measure zstd_big zstd -d -q -c "$tmp/big.zst"
measure prof_small "$PROF" analyze "$tmp/small.prof"
measure prof_deep "$PROF" analyze "$tmp/deep.prof"
measure prof_few "$PROF" analyze "$tmp/few.prof"
measure prof_many "$PROF" analyze "$tmp/many.prof"
measure prof_rl1 "$PROF" analyze "$tmp/rl1.prof"
measure cmp_few "$PROF" compare "$tmp/few.prof" "$tmp/few.prof"
measure cmp_many "$PROF" compare "$tmp/many.prof" "$tmp/many.prof"
measure view_few "$PROF" view --html "$tmp/few.html" "$tmp/few.prof"
measure view_many "$PROF" view --html "$tmp/many.html" "$tmp/many.prof"

size=$(wc -c <"$tmp/big.prof")
echo "profile: $n_big events, $size bytes, $frames zstd frames"
line "prof analyze ($n_big events)" prof_big
line "zstd -d of the same frames" zstd_big
ratios "prof analyze / zstd -d:" prof_big zstd_big "<= 2"
printf '%-46s %8.3f s (one thread, in memory)\n' "zstd frames decompressed in process" "$zin_s"
echo "  prof analyze / in-process decompression: $(ratio "$prof_big_s" "$zin_s")x wall," \
    "$(ratio "$prof_big_cpu" "$zin_s")x CPU (target <= 2; analyze's figure includes its" \
    "process start, file reads and report)"
echo "  events/s: $(awk -v n="$n_big" -v s="$prof_big_s" 'BEGIN { printf "%.1f M", n / s / 1e6 }')" \
    "wall, $(awk -v n="$n_big" -v s="$prof_big_cpu" 'BEGIN { printf "%.1f M", n / s / 1e6 }') per CPU second"
printf '%-46s %8.3f s (%sx decompression)\n' "the reader alone, events handed out unused" "$read_s" \
    "$(ratio "$read_s" "$zin_s")"
printf '%-46s %8.3f s (%sx decompression)\n' "  read slim, its thread decoding alone" \
    "$readslim_s" "$(ratio "$readslim_s" "$zin_s")"
echo "  (tests/support/bin/read_floor, in process: the rest of analyze's time is building" \
    "the model; the second figure, decompression and decoding on one thread, is the least" \
    "the reader's thread takes for analyze)"
line "prof analyze, one thread (PROF_THREADS=1)" prof_big1
echo "  two threads / one: $(ratio "$prof_big_s" "$prof_big1_s")x wall," \
    "$(ratio "$prof_big_cpu" "$prof_big1_cpu")x CPU (each block is decoded once, on the" \
    "reader's thread: src/format/reader_int.h)"
line "prof analyze ($n_small events)" prof_small
line "prof analyze ($n_deep events, deep)" prof_deep
echo "  peak RSS $n_deep events over $deep_steps steps / $n_small over $small_steps:" \
    "$(ratio "$(val prof_deep kib)" "$(val prof_small kib)")x (target about 1)"
echo "  peak RSS $n_big events over $big_steps steps / $n_small over $small_steps:" \
    "$(ratio "$(val prof_big kib)" "$(val prof_small kib)")x, $(awk -v a="$(val prof_big kib)" \
    -v b="$(val prof_small kib)" -v n="$big_steps" -v m="$small_steps" \
    'BEGIN { if (n > m) printf "%.0f", (a - b) * 1024 / (n - m); else printf "-" }') bytes per extra step"
line "prof analyze ($n_few events, short steps)" prof_few
line "prof analyze ($n_many events, short steps)" prof_many
echo "  peak RSS $n_many events over $many_steps steps / $n_few over $few_steps:" \
    "$(ratio "$(val prof_many kib)" "$(val prof_few kib)")x, $(awk -v a="$(val prof_many kib)" \
    -v b="$(val prof_few kib)" -v n="$many_steps" -v m="$few_steps" \
    'BEGIN { if (n > m) printf "%.0f", (a - b) * 1024 / (n - m); else printf "-" }') bytes per extra step" \
    "(target about 1)"
line "prof analyze ($n_rl1 events, serving/RL steps)" prof_rl1
line "prof analyze ($n_rl events, serving/RL steps)" prof_rl
printf '%-46s %8.3f s (one thread, in memory)\n' "  its zstd frames decompressed in process" "$zrl_s"
echo "  prof analyze / in-process decompression: $(ratio "$prof_rl_s" "$zrl_s")x wall," \
    "$(ratio "$prof_rl_cpu" "$zrl_s")x CPU (target <= 2)"
echo "  peak RSS $n_rl events over $rl_steps steps / $n_rl1 over $rl1_steps:" \
    "$(ratio "$(val prof_rl kib)" "$(val prof_rl1 kib)")x (target about 1)"
line "prof compare, a run with itself ($n_few events)" cmp_few
line "prof compare, a run with itself ($n_many events)" cmp_many
echo "  peak RSS of compare over $many_steps steps / over $few_steps:" \
    "$(ratio "$(val cmp_many kib)" "$(val cmp_few kib)")x (target about 1)"
line "prof view --html ($n_few events)" view_few
line "prof view --html ($n_many events)" view_many
echo "  peak RSS of the dashboard's first page over $many_steps steps / over $few_steps:" \
    "$(ratio "$(val view_many kib)" "$(val view_few kib)")x (target about 1)"

if [ $has_pandas = 0 ]; then
    echo "json + pandas: skipped ($PYTHON has no pandas; make bench installs python3-pandas)"
    exit 0
fi
ROUNDS=1 # minutes per round; one is enough against a 100x target
measure pandas "$PYTHON" tests/bench/pandas_aggregate.py "$tmp/trace.json"
ref=prof_big
if [ "$py_events" != "$EVENTS" ]; then
    ref=prof_small
    echo "(json + pandas at $n_small events: under 16 GiB of memory available)"
fi
echo "Chrome trace JSON of the same regions: $(wc -c <"$tmp/trace.json") bytes"
line "json + pandas, per-op aggregation" pandas
ratios "json + pandas / prof analyze:" pandas $ref ">= 100"
