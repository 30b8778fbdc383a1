#!/bin/sh
# import.sh - `prof import` of a torch.profiler (Kineto) trace, measured in
# one run by `make bench` (tests/bench/run.sh):
#
#   1. speed: MB of JSON per second (wall, and per CPU second: the import
#      reads on one thread and writes the profile on another), and the
#      time against Python's json.load of the same file alone (the first
#      step of Holistic Trace Analysis' loader), on a SMALL_MB trace;
#   2. memory: peak RSS importing a BIG_MB trace (default 2 GB) against the
#      SMALL_MB one: the import streams, so about the same (target: at most
#      100 MB at 2 GB); then the time and peak RSS of `prof analyze` of the
#      profile it made (its GPU records, launch calls and steps included),
#      and without the join of GPU work to its launches (PROF_MODEL_JOIN=0):
#      what the join costs;
#   3. the same speed against json.load on a SMALL_MB trace recorded with
#      record_shapes, profile_memory and with_stack (make_kineto.py
#      --stacks: call stacks, input shapes and [memory] events, whose long
#      args prof does not use).
# The traces repeat a real one (../shared/traces/, when this checkout has
# it beside it) or the project's 2024-schema fixture, shifted in time.
B=${B:-build}
PROF=$B/prof
BIN=$B/rel/tests/bin
PY=${PYTHON:-/usr/bin/python3}
BIG_MB=${BENCH_IMPORT_MB:-2000}
SMALL_MB=${BENCH_IMPORT_SMALL_MB:-200}
ROUNDS=3

template=../shared/traces/hta_nccl_data_a100_rank0of2.json.gz
[ -f "$template" ] || template=testdata/kineto/2024.json
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-bench-import.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

BENCH=import
. tests/bench/measure.sh

small_bytes=$("$PY" tests/bench/make_kineto.py "$template" "$tmp/small.json" "$SMALL_MB") || exit 1
measure small "$PROF" import "$tmp/small.json" -o "$tmp/small.prof"
measure json "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/small.json"
rm -f "$tmp/small.json"
stacks_bytes=$("$PY" tests/bench/make_kineto.py --stacks "$template" "$tmp/stacks.json" "$SMALL_MB") ||
    exit 1
measure stacks "$PROF" import "$tmp/stacks.json" -o "$tmp/stacks.prof"
measure stacks_json "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/stacks.json"
rm -f "$tmp/stacks.json" "$tmp/stacks.prof"
big_bytes=$("$PY" tests/bench/make_kineto.py "$template" "$tmp/big.json" "$BIG_MB") || exit 1
measure_n big 1 "$PROF" import "$tmp/big.json" -o "$tmp/big.prof"
rm -f "$tmp/big.json"
measure bigan "$PROF" analyze "$tmp/big.prof"
measure bigoff env PROF_MODEL_JOIN=0 "$PROF" analyze "$tmp/big.prof"

echo "template: $template"
printf '%-46s %8.3f s (%.3f s CPU)  peak %s\n' "prof import ($small_bytes bytes)" "$small_s" \
    "$small_cpu" "$(mib "$small_kib")"
printf '%-46s %8.3f s  peak %s\n' "python3 json.load alone (same file)" "$json_s" "$(mib "$json_kib")"
awk -v b="$small_bytes" -v w="$small_s" -v s="$small_cpu" 'BEGIN {
    printf "  throughput:                      %.0f MB/s of JSON, %.0f MB/s per CPU second\n",
        b / w / 1e6, b / s / 1e6 }'
echo "  json.load / prof import time:    $(ratio "$json_s" "$small_s")x (target at least 10)"
printf '%-46s %8.3f s (%.3f s CPU)  peak %s\n' "prof import, stacks and memory ($stacks_bytes bytes)" \
    "$stacks_s" "$stacks_cpu" "$(mib "$stacks_kib")"
printf '%-46s %8.3f s\n' "python3 json.load alone (same file)" "$stacks_json_s"
echo "  json.load / prof import time:    $(ratio "$stacks_json_s" "$stacks_s")x (target at least 10)"
printf '%-46s %8.3f s  peak %s\n' "prof import ($big_bytes bytes)" "$big_s" "$(mib "$big_kib")"
echo "  peak RSS $BIG_MB MB / $SMALL_MB MB trace:   $(ratio "$big_kib" "$small_kib")x (target about 1; at most 100 MiB)"
echo "  profile: $(wc -c <"$tmp/big.prof") bytes for $big_bytes bytes of JSON"
printf '%-46s %8.3f s (%.3f s CPU)  peak %s\n' "prof analyze of that profile" "$bigan_s" \
    "$bigan_cpu" "$(mib "$bigan_kib")"
printf '%-46s %8.3f s (%.3f s CPU)  peak %s\n' "  the same without the GPU join" "$bigoff_s" \
    "$bigoff_cpu" "$(mib "$bigoff_kib")"
echo "  the join (rules.md 3.2): $(ratio "$bigan_cpu" "$bigoff_cpu")x the CPU time, $(ratio "$bigan_kib" "$bigoff_kib")x the peak RSS"
