#!/bin/sh
# analyze_busy.sh - `prof analyze` on the real runs of a busy machine stored
# in testdata/busy (tests/bench/busy_runs.sh: a clean PyTorch loop while 0
# to 2 busy loops competed for the cores, and the machine's own speed
# jumped too). Nothing is wrong with the program, so: step_slowdown never
# fires (a rise that every operation shared, or bursts that left the
# fastest steps as fast, is the machine's: formats/rules.md §4.6, said in
# a note), and step_outliers fires at most low, for a single slow step or
# two (§4.7), never for a burst in which every operation ran slower.
# Before these checks, the same runs had 9 step_slowdown findings (up to
# high, "+59.0% over the run") and 41 step_outliers (3 high).
# Run from the repository root with PROF, as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
cli_tmp analyze-busy
PYTHON=${PYTHON:-python3}
n=0
for f in testdata/busy/base/*.prof testdata/busy/heavier/*.prof; do
    "$PROF" analyze --format json "$f" >"$tmp/$n.json" 2>"$err" || not_ok "analyze-$n" "$f: $(cat "$err")"
    n=$((n + 1))
done
if "$PYTHON" - "$tmp" "$n" >"$out" 2>&1 <<'PY'
import json, os, sys
tmp, n = sys.argv[1], int(sys.argv[2])
bad, notes = [], 0
for i in range(n):
    r = json.load(open(os.path.join(tmp, "%d.json" % i)))
    for b in r["bottlenecks"]:
        if b["rule"] == "step_slowdown" or (b["rule"] == "step_outliers" and b["severity"] != "low"):
            bad.append("%s %s: %s" % (r["profiles"][0].get("path", i), b["severity"], b["title"]))
        if b["rule"] == "step_outliers" and b["evidence"]["count"] > 2:
            bad.append("%d outliers low" % b["evidence"]["count"])
    notes += any("not a slowdown of the program" in x or "not flagged as outlier steps" in x
                 for x in r["notes"])
assert n == 152, n
assert not bad, bad[:5]
assert notes >= 20, notes   # the busy runs say why their slow steps were not flagged
print("ok", notes)
PY
then ok busy-runs-no-false-alarms; else not_ok busy-runs-no-false-alarms "$(head -c 800 "$out")"; fi

run analyze testdata/busy/base/1-run005.prof
if [ "$rc" -eq 0 ] && grep -q "with every operation alike" "$out" && ! grep -q "step_slowdown" "$out"; then
    ok busy-run-note
else
    not_ok busy-run-note "status $rc: $(grep -A3 'Notes' "$out" | head -c 600)"
fi

[ $fails -eq 0 ]
