#!/bin/sh
# gpu_join.sh - GPU time per operation (rules.md §3.2) on generated
# torch.profiler traces whose answer is known: each trace of
# tests/support/gen_kineto_gpu.py is imported and analysed, joined apart by
# tests/support/gpu_join.py, and the two compared by
# tests/support/check_gpu_join.py (every operation's GPU self and total
# time within 0.5% and its kernels exactly, the records joined, the time
# outside every region, HTA's launch counts exactly, their means within
# 0.01%, quartiles within 2%). Small traces in Kineto's order, shuffled,
# with two threads, graph launches, unjoined records and launches outside
# every region, launch-bound; then two past the model's bounds: more than
# 262,144 launches, and more than 65,536 launches on one thread waiting for
# a region (launched before its first region, so merging them is exact).
# The large ones are skipped under ASan.
# Run from the repository root with PROF, TEST_BIN and B, as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
cli_tmp gpu_join
S=tests/support

# py FILE EXPR: EXPR of the JSON object in FILE (as r), printed
py() {
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# join_case NAME TRACE GEN-OPTIONS...: generates TRACE (in $tmp), imports
# and analyses it, joins it apart, compares; keeps $tmp/NAME.rep.json and
# $tmp/NAME.join.json, removes the trace
join_case() {
    name=$1
    t=$tmp/$2
    shift 2
    if ! python3 "$S"/gen_kineto_gpu.py "$@" -o "$t" >"$out" 2>"$err"; then
        not_ok "$name" "gen_kineto_gpu.py $*: $(head -c 300 "$err")"
        return 1
    fi
    run import "$t" -o "$tmp/$name.prof"
    status_is "$name" 0 || return 1
    if ! "$PROF" analyze --format json --top 0 "$tmp/$name.prof" >"$tmp/$name.rep.json" 2>"$err"; then
        not_ok "$name" "analyze: $(head -c 300 "$err")"
    elif ! python3 "$S"/gpu_join.py "$t" >"$tmp/$name.join.json" 2>"$err"; then
        not_ok "$name" "gpu_join.py: $(head -c 300 "$err")"
    elif ! python3 "$S"/check_gpu_join.py "$tmp/$name.rep.json" "$tmp/$name.join.json" >"$out" 2>&1; then
        not_ok "$name" "$(wc -l <"$out") mismatches: $(head -n 5 "$out" | tr '\n' ';')"
    else
        ok "$name ($(py "$tmp/$name.join.json" 'r["records"]') records)"
        rm -f "$t"
        return 0
    fi
    rm -f "$t"
    return 1
}

# ---- the generator: deterministic, gzip when asked ------------------------------------
python3 "$S"/gen_kineto_gpu.py --graph --threads 2 -o "$tmp/a.json" &&
    python3 "$S"/gen_kineto_gpu.py --graph --threads 2 -o "$tmp/b.json" &&
    python3 "$S"/gen_kineto_gpu.py --graph --threads 2 --seed 2 -o "$tmp/c.json"
cmp -s "$tmp/a.json" "$tmp/b.json" && ! cmp -s "$tmp/a.json" "$tmp/c.json" && ok gen-deterministic ||
    not_ok gen-deterministic "same seed differs, or another seed does not"
rm -f "$tmp/a.json" "$tmp/b.json" "$tmp/c.json"

# ---- small traces ------------------------------------------------------------------
join_case plain plain.json
join_case shuffle shuffle.json.gz --shuffle 7
join_case threads threads.json --threads 2 --steps 4
join_case graph graph.json --graph --steps 4
join_case flush flush.json --threads 2 --graph --steps 6 --flush 2
if join_case unjoined-outside unjoined.json --unjoined 50 --outside 30; then
    n=$(py "$tmp/unjoined-outside.rep.json" 'r["summary"]["launches"]["records"] - r["summary"]["launches"]["joined"]')
    o=$(py "$tmp/unjoined-outside.rep.json" 'r["summary"]["launches"]["outside_ns"] > 0')
    [ "$n" = 50 ] && [ "$o" = True ] && ok unjoined-outside-counted || not_ok unjoined-outside-counted "not joined $n, outside $o"
fi
if join_case launch-bound lb.json --launch-bound --steps 5 --ops-per-step 30; then
    # kernels start 1-3 µs after their call returns: the launch_bound rule says so
    d=$(py "$tmp/launch-bound.rep.json" 'round(r["summary"]["launches"]["all"]["delay"]["p50_ns"])')
    b=$(py "$tmp/launch-bound.rep.json" '" ".join(b["rule"] for b in r["bottlenecks"])')
    case " $b " in
    *" launch_bound "*) ok "launch-bound-found (delay p50 $d ns)" ;;
    *) not_ok launch-bound-found "bottlenecks: $b" ;;
    esac
fi

# ---- folded stacks of GPU time (export --format folded --gpu): each
# operation's lines (as the leaf frame) add up to its GPU self time, the
# outside line to the time launched outside every region, all of them to
# the time joined ------------------------------------------------------------------
for c in threads unjoined-outside; do
    run export "$tmp/$c.prof" --format folded --gpu
    if status_is "folded-gpu-$c" 0; then
        cp "$out" "$tmp/$c.folded"
        if python3 - "$tmp/$c.folded" "$tmp/$c.rep.json" >"$err" 2>&1 <<'PY'
import collections, json, sys
r = json.load(open(sys.argv[2]))
leaf, total = collections.Counter(), 0
for line in open(sys.argv[1]):
    stack, ns = line.rsplit(" ", 1)
    leaf[stack.split(";")[-1]] += int(ns)
    total += int(ns)
l = r["summary"]["launches"]
bad = [o["name"] for o in r["operations"] if o["kind"] != "gpu" and o["gpu_self_ns"] != leaf.get(o["name"], 0)]
assert not bad, bad
assert leaf.get("[outside regions]", 0) == l["outside_ns"], (leaf.get("[outside regions]"), l["outside_ns"])
assert total == l["joined_ns"], (total, l["joined_ns"])
PY
        then ok "folded-gpu-$c"; else not_ok "folded-gpu-$c" "$(tail -n 2 "$err" | tr '\n' ' ')"; fi
    fi
done
run export "$tmp/threads.prof" --format csv --gpu
status_is folded-gpu-usage 2 && ok folded-gpu-usage

# ---- real traces: torch.profiler on an H200 (testdata/gpu), the shared A100
# ones when this checkout has them beside it; the recorder's own H200 file,
# joined apart from its JSON-lines export -----------------------------------------
real_case() {
    name=$1
    trace=$2
    prof=$3
    if [ -z "$prof" ]; then
        prof=$tmp/$name.prof
        run import "$trace" -o "$prof"
        status_is "$name" 0 || return 1
    fi
    "$PROF" analyze --format json --top 0 "$prof" >"$tmp/$name.rep.json" 2>"$err" &&
        python3 "$S"/gpu_join.py "$trace" ${4:-} >"$tmp/$name.join.json" 2>>"$err" &&
        python3 "$S"/check_gpu_join.py ${self_only:-} "$tmp/$name.rep.json" "$tmp/$name.join.json" >"$out" 2>&1 &&
        ok "$name ($(py "$tmp/$name.join.json" 'r["records"]') records)" ||
        not_ok "$name" "$(head -n 5 "$out" "$err" | tr '\n' ';')"
}
real_case h200-kineto testdata/gpu/h200_torch_train.kineto.json.gz
"$PROF" export testdata/gpu/h200_cuda_train.prof --format json -o "$tmp/cuda_train.jsonl" 2>"$err" &&
    real_case h200-recorder "$tmp/cuda_train.jsonl" testdata/gpu/h200_cuda_train.prof --export
# the recorder's torch loop: NVTX ranges beside its regions, two nestings on
# one thread whose totals the call tree places by depth; self time is exact
"$PROF" export testdata/gpu/h200_torch_train.prof --format json -o "$tmp/torch_train.jsonl" 2>"$err" &&
    { self_only=--self-only; real_case h200-torch-recorder "$tmp/torch_train.jsonl" \
        testdata/gpu/h200_torch_train.prof --export; }
self_only=
for f in ../shared/traces/hta_alexnet_a100_sync.json.gz ../shared/traces/hta_nccl_data_a100_rank0of2.json.gz; do
    n=$(basename "$f" .json.gz)
    if [ -f "$f" ]; then real_case "$n" "$f"; else ok "$n # skip no ../shared/traces"; fi
done

# ---- past the bounds ----------------------------------------------------------------
case $PROF in
*/asan/*)
    ok "many-launches # skip large traces under ASan"
    ok "outside-pending # skip large traces under ASan"
    ;;
*)
    # more launch calls than the join's rings keep (262,144), in Kineto's order
    if join_case many-launches many.json --steps 4 --ops-per-step 50 --kernels-per-op 1400; then
        n=$(py "$tmp/many-launches.join.json" 'r["records"]')
        [ "$n" -gt 262144 ] && ok many-launches-past-ring || not_ok many-launches-past-ring "$n records"
    fi
    # 100,000 launches of thread 0 outside every region wait at once
    join_case outside-pending outside.json.gz --outside 100000 --threads 2 --steps 3 --ops-per-step 20
    ;;
esac

[ $fails -eq 0 ]
