#!/bin/sh
# compare_busy.sh - `prof compare` on real runs of a busy machine, stored in
# testdata/busy (tests/bench/busy_runs.sh: tests/python/cnn.py as it is in
# base/, with a forward pass about 30% heavier in heavier/, while 0, 1 or 2
# busy loops competed for the cores; in each set (the N of N-runRRR.prof),
# round RRR ran base under RRR mod 3 loops and heavier under RRR + 1 mod 3). Each operation is tested against its
# runs' speed (formats/rules.md §6.3), so: the heavier forward is found,
# at its size, among runs whose speeds differ by half again, and fails the
# check; identical sides are quiet; and base runs on a quiet machine against
# base runs beside two busy loops flag no operation, a note saying that
# every operation moved alike. The rates over many draws are
# tests/bench/compare_busy.c's (make bench).
# Run from the repository root with PROF, as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
cli_tmp compare-busy
data=testdata/busy
PYTHON=${PYTHON:-python3}

# side NAME DIR RUN...: a directory of links to DIR's 2-runRRR.prof (the
# second set, recorded with nothing else running on the machine)
side() {
    d=$tmp/$1
    from=$2
    shift 2
    mkdir -p "$d" || exit 1
    for r in "$@"; do
        ln -s "$PWD/$data/$from/2-run$r.prof" "$d/run$r.prof" || exit 1
    done
}

# check NAME SCRIPT: runs SCRIPT (Python) on the JSON in $out
check() {
    if "$PYTHON" -c "$2" "$out" >"$tmp/check" 2>&1; then ok "$1"; else
        not_ok "$1" "$(head -c 600 "$tmp/check")"
    fi
}

# five runs a side, each side under every load
side base "base" 000 001 002 003 004
side heavier "heavier" 005 006 007 008 009
side base2 "base" 010 011 012 013 014
side quiet "base" 000 003 006 009 012   # no busy loop
side busy "base" 002 005 008 011 014    # two busy loops on two cores

run compare --fail-on-regression 10 "$tmp/base" "$tmp/heavier"
if [ "$rc" -eq 1 ] && grep -q "vs run" "$out" &&
    grep -q "^  forward .* slower$" "$out" &&
    grep -q "^  forward .* slower (p .*, against the runs' speed)$" "$out"; then
    ok heavier-forward-fails
else
    not_ok heavier-forward-fails "status $rc: $(grep -E 'forward|FAILED|vs run' "$out" | head -c 600)"
fi

run compare --format json --fail-on-regression 10 "$tmp/base" "$tmp/heavier"
check heavier-forward-json '
import json, sys
c = json.load(open(sys.argv[1]))
ops = {o["name"]: o for o in c["operations"]}
f = ops["forward"]
assert f["method"] == "speed_adjusted" and f["status"] == "slower", f
assert 0.2 < f["relative_to_run"] < 0.45, f["relative_to_run"]
assert f["relative_low"] > 0.05 and f["p_value"] < f["alpha"], f
flagged = [o["name"] for o in c["operations"] if o["significant"]]
assert flagged == ["forward"], flagged
t = c["operation_tests"]
assert t["reference_operations"] >= 20 and t["speed_adjusted"] == t["tested"], t
assert [r["name"] for r in c["regression"]["reasons"] if r["what"] == "operation"] == ["forward"]
spread = [max(c[s]["run_step_means_ns"]) / min(c[s]["run_step_means_ns"]) for s in ("before", "after")]
assert max(spread) > 1.3, spread    # the machine changed speed between runs
'

run compare --format json --fail-on-regression 10 "$tmp/base" "$tmp/base2"
check identical-quiet '
import json, sys
c = json.load(open(sys.argv[1]))
assert not [o["name"] for o in c["operations"] if o["significant"]]
assert not c["regression"]["regressed"], c["regression"]
'

run compare --format json "$tmp/quiet" "$tmp/busy"
check busy-side-flags-no-operation '
import json, sys
c = json.load(open(sys.argv[1]))
assert not [o["name"] for o in c["operations"] if o["significant"]]
t = c["operation_tests"]
assert t["speed_change"] > 0.2, t
assert any("moved alike" in n for n in c["notes"]), c["notes"]
slower = [o for o in c["operations"] if o["relative"] is not None and o["relative"] > 0.2]
assert len(slower) > len(c["operations"]) / 2, len(slower)   # as measured, most ran slower
'
run compare "$tmp/quiet" "$tmp/busy"
if [ "$rc" -eq 0 ] && grep -q "moved alike by +" "$out"; then ok busy-side-note-text; else
    not_ok busy-side-note-text "status $rc: $(head -c 800 "$out")"
fi

[ $fails -eq 0 ]
