#!/bin/sh
# analyze.sh - `prof analyze` end to end on the real binary: the text, JSON
# and CSV reports of testdata/demo.prof against testdata/golden/ (refresh
# with tests/support/update_golden.sh), the JSON against
# formats/report.schema.json, CSV quoting, terminal styling, ranks of one
# job, --fail-on, -o written whole or not at all, and every failure with its
# exit status (DESIGN §5) and one-line message.
# Run from the repository root with PROF, TEST_BIN (make_corpus,
# make_analyze) as tests/suite.sh does; PYTHON is an interpreter with the
# jsonschema package (default /usr/bin/python3, as `make deps` installs it).
. "$(dirname "$0")/../support/cli_lib.sh"
DEMO=testdata/demo.prof
GOLDEN=testdata/golden

cli_tmp analyze

# same_as NAME FILE: succeeded with stdout equal to FILE, stderr empty
same_as() {
    status_is "$1" 0 || return
    if ! cmp -s "$out" "$2"; then
        not_ok "$1" "output differs from $2: $(diff "$2" "$out" | head -n 20)"
    elif [ -s "$err" ]; then
        not_ok "$1" "stderr not empty: $(head -c 300 "$err")"
    else
        ok "$1"
    fi
}

# ---- the demo profile against the golden outputs ----------------------------------
run analyze "$DEMO"
same_as analyze-demo-text "$GOLDEN/analyze-demo.txt"
run analyze --format json "$DEMO"
same_as analyze-demo-json "$GOLDEN/analyze-demo.json"
run analyze --format csv "$DEMO"
same_as analyze-demo-csv "$GOLDEN/analyze-demo-ops.csv"
run analyze "$DEMO" --format=csv --table ops
same_as analyze-options-after-file "$GOLDEN/analyze-demo-ops.csv"

missing=""
for s in "prof analyze $DEMO: format 1.0, closed cleanly" Summary "step time" "memory peak" \
    "Top operations by self time" Bottlenecks Notes; do
    has "$GOLDEN/analyze-demo.txt" "$s" || missing="$missing [$s]"
done
if [ -z "$missing" ]; then ok analyze-demo-sections; else
    not_ok analyze-demo-sections "the golden text lacks$missing"
fi

# The JSON report validates against its schema.
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
run analyze --format json "$DEMO"
cp "$out" "$tmp/demo.json"
if ! "$PYTHON" -c 'import jsonschema' 2>/dev/null; then
    not_ok analyze-json-schema "$PYTHON has no jsonschema module (make deps installs python3-jsonschema)"
elif "$PYTHON" tests/support/validate_report.py formats/report.schema.json "$tmp/demo.json" >"$err" 2>&1; then
    ok analyze-json-schema
else
    not_ok analyze-json-schema "$(head -n 10 "$err")"
fi

# ---- CSV tables ----------------------------------------------------------------------------
# header NAME TABLE HEADER: the first line of --table TABLE, with its CRLF
header_is() {
    run analyze --format csv --table "$2" "$DEMO"
    status_is "$1" 0 || return
    first=$(head -n 1 "$out")
    if [ "$first" != "$(printf '%s\r' "$3")" ]; then
        not_ok "$1" "header '$first', want '$3' + CR"
    elif [ "$(wc -l <"$out")" -lt 2 ]; then
        not_ok "$1" "no rows"
    else
        ok "$1"
    fi
}
header_is csv-ops ops "name,kind,calls,self_ns,self_share,incl_ns,incl_share,mean_ns,stddev_ns,min_ns,max_ns,p50_ns,p95_ns,p99_ns,gpu_ns,gpu_self_ns,gpu_kernels"
header_is csv-steps steps "number,start_ns,dur_ns,sampled,outlier,incomplete"
header_is csv-memory memory "series,step,t_ns,bytes"
run analyze --format csv --table steps "$DEMO"
if [ "$(wc -l <"$out")" -eq 301 ]; then ok csv-steps-rows; else
    not_ok csv-steps-rows "$(wc -l <"$out") lines, want 301 (header + 300 steps)"
fi
run analyze --format csv --table bottlenecks "$DEMO"
if status_is csv-bottlenecks 0 && [ "$(head -n 1 "$out")" = "$(printf 'severity,rule,subject,impact_share,title,recommendation\r')" ]; then
    ok csv-bottlenecks
else
    not_ok csv-bottlenecks "header '$(head -n 1 "$out")'"
fi
run analyze --format csv --top 3 "$DEMO"
if status_is csv-top 0 && [ "$(wc -l <"$out")" -eq 4 ]; then ok csv-top; else
    not_ok csv-top "$(wc -l <"$out") lines, want 4"
fi

# A run longer than the report's point limit (2000): the JSON report keeps
# at most 2000 steps and memory points, the CSV tables every one of them.
if "$TEST_BIN/make_big" 500000 "$tmp/long.prof" >/dev/null 2>"$err"; then
    run analyze --format json "$tmp/long.prof"
    counts=$("$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
m = r["memory"][0]
print(r["summary"]["steps"], len(r["steps"]), m["points_total"], len(m["points"]))' "$out" 2>&1)
    set -- $counts
    if status_is long-run-json 0 && [ "$1" -gt 2000 ] && [ "$2" -le 2000 ] && [ "$3" -eq "$1" ] \
        && [ "$4" -le 2000 ]; then
        ok long-run-json
    else
        not_ok long-run-json "steps, listed, memory points, listed: $counts"
    fi
    steps=$1
    run analyze --format csv --table steps "$tmp/long.prof"
    if status_is long-run-csv 0 && [ "$(wc -l <"$out")" -eq $((steps + 1)) ]; then ok long-run-csv; else
        not_ok long-run-csv "$(wc -l <"$out") lines, want $((steps + 1)) (header + every step)"
    fi
    run analyze --format csv --table memory --points 100 "$tmp/long.prof"
    rows=$(($(wc -l <"$out") - 1))
    if status_is long-run-points 0 && [ "$rows" -gt 100 ] && [ "$rows" -le 200 ]; then
        ok long-run-points
    else
        not_ok long-run-points "$rows memory rows for two series at --points 100"
    fi
else
    not_ok make-big "$TEST_BIN/make_big failed: $(cat "$err")"
fi

if ! "$TEST_BIN/make_analyze" "$tmp" >"$err" 2>&1; then
    not_ok make-analyze "$TEST_BIN/make_analyze failed: $(cat "$err")"
    exit 1
fi

# Names with a comma, a quote and a newline read back whole through a CSV parser.
run analyze --format csv --top 0 "$tmp/names.prof"
if status_is csv-quoting 0; then
    names=$("$PYTHON" -c '
import csv, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.reader(f))
assert all(len(r) == 17 for r in rows), rows
print(sorted(r[0] for r in rows[1:]))' "$out" 2>&1)
    want="['a,b', 'plain', 'say \"hi\"', 'two\\nlines']"
    if [ "$names" = "$want" ]; then ok csv-quoting; else not_ok csv-quoting "names $names, want $want"; fi
    has "$out" '"say ""hi"""' || not_ok csv-quoting-raw "quote not doubled: $(cat "$out")"
fi

# Names that are not UTF-8 (make_export_names' fixture): every table valid
# UTF-8, the bad bytes as U+FFFD, as the export does.
if "$TEST_BIN/make_export_names" "$tmp/badnames.prof" 2>"$err"; then
    for table in ops steps memory bottlenecks; do
        run analyze --format csv --table $table "$tmp/badnames.prof"
        status_is csv-utf8-$table 0 || continue
        if msg=$("$PYTHON" -c '
import csv, io, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
rows = list(csv.reader(io.StringIO(text, newline="")))
assert len({len(r) for r in rows}) == 1, "ragged rows"
if sys.argv[2] == "ops":
    assert "\ufffd" in text, "no U+FFFD for the invalid bytes"' "$out" $table 2>&1); then
            ok csv-utf8-$table
        else
            not_ok csv-utf8-$table "$msg"
        fi
    done
else
    not_ok csv-utf8 "make_export_names: $(cat "$err")"
fi

# ---- terminal styling --------------------------------------------------------------------------
esc=$(printf '\033')
run analyze "$DEMO"
if grep -q "$esc" "$out"; then not_ok text-plain-off-terminal "escape codes in piped output"; else
    ok text-plain-off-terminal
fi
# On a pseudo-terminal (script(1)): colour, unless NO_COLOR or --no-color.
if command -v script >/dev/null 2>&1; then
    tty_run "$tmp/tty" "env -u NO_COLOR $PROF analyze $DEMO"
    if grep -q "${esc}\[" "$tmp/tty" && grep -q "$(printf '\342\226\210')" "$tmp/tty"; then
        ok text-terminal-colour
    else
        not_ok text-terminal-colour "no colour or bars on a terminal: $(head -c 300 "$tmp/tty")"
    fi
    tty_run "$tmp/tty" "NO_COLOR=1 $PROF analyze $DEMO"
    if grep -q "${esc}\[[0-9;]*m" "$tmp/tty"; then not_ok text-no-color-env "colour with NO_COLOR"; else
        ok text-no-color-env
    fi
    tty_run "$tmp/tty" "env -u NO_COLOR $PROF analyze --no-color $DEMO"
    if grep -q "${esc}\[[0-9;]*m" "$tmp/tty"; then not_ok text-no-color-option "colour with --no-color"; else
        ok text-no-color-option
    fi
else
    echo "ok text-terminal-colour # skip no script(1)"
fi

# ---- ranks of one job ---------------------------------------------------------------------------
run analyze "$tmp/rank0-of-2.prof" "$tmp/rank1-of-2.prof"
out_has ranks-of-one-job "Ranks"
run analyze "$tmp/rank0-of-2.prof" "$tmp/rank1-of-4.prof"
error_like ranks-different-world-size 2 "not ranks of one job"
run analyze "$DEMO" "$DEMO"
error_like ranks-duplicate-rank 2 "not ranks of one job"

# A directory is the ranks of one job in it; the report describes the
# slowest rank (rank 2 of job4: 115 ms steps against 90 ms, and the only
# one that runs rank2_only), or the one --rank names. Each rank's row has
# its GPU shares (a 45 ms kernel a step: 50.0% of 90 ms, 39.1% of 115 ms)
# and its peak of gpu.allocated ((rank + 1) GiB).
run analyze "$tmp/job4"
if status_is ranks-directory 0; then
    if ! has "$out" rank2_only; then
        not_ok ranks-directory "not rank 2 described: $(tail -n 12 "$out")"
    elif ! grep -q "^  2\*  *50  *115.00 ms  *115.00 ms  *39.1%  *60.9%  *0.0%  *3.0 GiB" "$out" ||
        ! grep -q "^  0  *50  *90.00 ms  *90.00 ms  *50.0%  *50.0%  *0.0%  *1.0 GiB" "$out"; then
        not_ok ranks-directory "rows: $(grep -A5 '^Ranks' "$out")"
    else ok ranks-directory; fi
fi
run analyze --rank 0 "$tmp/job4"
if status_is ranks-chosen 0; then
    if ! grep -q "^  rank2_only " "$out" && grep -q "^  0\* " "$out" && ! grep -q "^  2\*" "$out"; then
        ok ranks-chosen
    else not_ok ranks-chosen "$(grep -A6 '^Ranks' "$out")"; fi
fi
run analyze --format json -o "$tmp/job4.json" "$tmp/job4/rank3.prof" "$tmp/job4/rank1.prof" \
    "$tmp/job4/rank2.prof" "$tmp/job4/rank0.prof"
if status_is ranks-json 0 && "$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
rows = {k["rank"]: k for k in r["ranks"]}
assert sorted(rows) == [0, 1, 2, 3], rows.keys()
assert [k for k in rows if rows[k]["described"]] == [2]
assert abs(rows[2]["gpu_busy_share"] - 45 / 115) < 1e-9 and abs(rows[1]["gpu_idle_share"] - 0.5) < 1e-9
assert all(rows[k]["memory_peak_bytes"] == (k + 1) << 30 for k in rows)
assert {k["memory_peak_series"] for k in rows.values()} == {"gpu.allocated"}
assert r["profiles"][0]["rank"] == 3
assert any(n.startswith("4 ranks: every section but ranks describes rank 2 (") and
           n.endswith("rank2.prof), the slowest, by mean step time (--rank N describes another)")
           for n in r["notes"]), r["notes"]
' "$tmp/job4.json" 2>"$err" &&
    "$PYTHON" tests/support/validate_report.py formats/report.schema.json "$tmp/job4.json" >>"$err" 2>&1
then ok ranks-json; else not_ok ranks-json "$(tail -n 5 "$err")"; fi
run analyze --format csv --table ranks "$tmp/job4"
if status_is ranks-csv 0 && [ "$(head -n 1 "$out")" = "$(printf 'rank,path,described,steps,mean_step_ns,p50_step_ns,comm_ns_per_step,work_ns_per_step,gpu_busy_share,gpu_idle_share,comm_exposed_share,memory_peak_series,memory_peak_bytes,collectives,last_arrivals,wait_ns,caused_wait_ns,caused_wait_share,findings_high,findings_medium,findings_low,top_finding_rule,top_finding,clock_offset_ns\r')" ] &&
    [ "$(wc -l <"$out")" -eq 5 ] &&
    grep -q "^2,$tmp/job4/rank2.prof,true,50,115000000,115000000,0,115000000,0.39130434782608[0-9]*,0.6086956521739[0-9]*,0,gpu.allocated,3221225472,,,,,,3,1,0,hot_operation,gemm takes 100.0% of GPU busy time in its own code,.\$" "$out"
then ok ranks-csv; else not_ok ranks-csv "$(cat "$out")"; fi
# In a synchronised job every rank's steps last alike: the rank described
# is the one the others wait for in the collectives (make_ranks: rank 1
# computes 15% longer, 16 layers of 200 us: 480 us a step, 0.48 ms x 100).
mkdir -p "$tmp/sync4"
if "$TEST_BIN/make_ranks" "$tmp/sync4" 4 3800 2>"$err"; then
    run analyze --format json -o "$tmp/sync4.json" "$tmp/sync4"
    if status_is ranks-straggler-described 0 && "$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
rows = {k["rank"]: k for k in r["ranks"]}
assert [k for k in rows if rows[k]["described"]] == [1], rows
assert len({round(k["mean_step_ns"]) for k in rows.values()}) == 1
assert rows[1]["last_arrivals"] == rows[1]["collectives"] == 100, rows[1]
assert abs(rows[1]["caused_wait_ns"] / 100 - 480e3) < 0.05 * 480e3, rows[1]["caused_wait_ns"]
assert any("describes rank 1 (" in n and "the one the others wait for most" in n for n in r["notes"])
' "$tmp/sync4.json" 2>"$err"; then ok ranks-straggler-described
    else not_ok ranks-straggler-described "$(tail -n 3 "$err")"; fi
else
    not_ok ranks-straggler-described "make_ranks: $(cat "$err")"
fi

# Ranks on two hosts (make_ranks HOSTS: host 1's clock 1.500037 s ahead):
# their clocks are aligned by the collectives' ends, the offset found is
# said, and the straggler is the same as on one clock; on one host no
# offset is given.
mkdir -p "$tmp/hosts2"
if "$TEST_BIN/make_ranks" "$tmp/hosts2" 4 3800 2 2>"$err"; then
    run analyze --format json "$tmp/hosts2"
    if status_is ranks-clock-offset 0 && "$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
one = json.load(open(sys.argv[2]))
off = {k["rank"]: k["clock_offset_ns"] for k in r["ranks"]}
assert off == {0: 0, 1: 1500037000, 2: 0, 3: 1500037000}, off
assert [k["rank"] for k in r["ranks"] if k["described"]] == [1]
assert [k["caused_wait_ns"] for k in r["ranks"]] == [k["caused_wait_ns"] for k in one["ranks"]]
assert any("different hosts: their clocks were aligned by the ends of 100 collectives" in n and
           "rank 1\x27s, 1.500 s" in n for n in r["notes"]), r["notes"]
assert all("clock_offset_ns" not in k for k in one["ranks"])
' "$out" "$tmp/sync4.json" 2>"$err"; then ok ranks-clock-offset
    else not_ok ranks-clock-offset "$(tail -n 3 "$err")"; fi
else
    not_ok ranks-clock-offset "make_ranks: $(cat "$err")"
fi

# The slowest rank against the fastest (rules.md §4.12): the straggler's
# finding says where its extra work goes - make_ranks' rank 1 runs every
# layer 15% longer, so its two gemm kernels lead, 16 x 200 us x 15% / 2
# = 240 us a step each - and the straggler of job4 (no collectives) names
# the operation only it runs.
if "$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
s = [b for b in r["bottlenecks"] if b["rule"] == "straggler"]
assert len(s) == 1 and s[0]["evidence"]["rank"] == 1, s
e = s[0]["evidence"]
assert e["fastest_rank"] in (0, 2, 3), e
d = e["differences"]
assert {x["name"] for x in d[:2]} == {"gemm_fwd", "gemm_bwd"} and all(x["gpu"] for x in d[:2]), d
assert all(abs(x["ns_per_step"] - x["fastest_ns_per_step"] - 240e3) < 30e3 for x in d[:2]), d
assert not any(x["name"].startswith("nccl") or x["name"] == "allreduce" for x in d), d
assert "Against rank %d, the fastest, it does 1.1" % e["fastest_rank"] in s[0]["recommendation"]
assert "kernel gemm_" in s[0]["recommendation"]
assert not [b for b in r["bottlenecks"] if b["rule"] in ("rank_spread", "rank_outlier")]
' "$tmp/sync4.json" 2>"$err"; then ok ranks-spread-why
else not_ok ranks-spread-why "$(tail -n 3 "$err")"; fi
"$PROF" analyze --format json "$tmp/job4" >"$tmp/job4-all.json" 2>"$err"
if "$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
s = [b for b in r["bottlenecks"] if b["rule"] == "straggler"]
assert len(s) == 1 and s[0]["evidence"]["rank"] == 2, s
d = s[0]["evidence"]["differences"]
assert [x["name"] for x in d] == ["backward", "rank2_only"], d
assert d[1]["fastest_ns_per_step"] == 0 and d[1]["ns_per_step"] == 5e6, d
' "$tmp/job4-all.json" 2>>"$err"; then ok ranks-spread-work
else not_ok ranks-spread-work "$(tail -n 3 "$err")"; fi

# Ranks that stand out (rules.md §4.13): make_ranks ODD gives rank 5 of
# 16 kernels of half the time and 6 GiB; only it is named, once for its
# GPU idle time and once for its memory peak, and its step time, alike
# on every rank of a synchronised job, is not.
mkdir -p "$tmp/odd16"
if "$TEST_BIN/make_ranks" "$tmp/odd16" 16 1900 1 5 2>"$err"; then
    run analyze --format json "$tmp/odd16"
    if status_is ranks-outliers 0 && "$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
o = {b["evidence"]["figure"]: b for b in r["bottlenecks"] if b["rule"] == "rank_outlier"}
assert sorted(o) == ["gpu_idle_share", "memory_peak_bytes"], sorted(o)
for b in o.values():
    assert [k["rank"] for k in b["evidence"]["ranks"]] == [5], b
    assert b["evidence"]["ranks_with_figure"] == 16 and b["subject"] == b["evidence"]["figure"]
m = o["memory_peak_bytes"]
assert m["evidence"]["ranks"][0]["value"] == 6 << 30 and m["evidence"]["memory_peak_series"] == "gpu.allocated"
assert m["title"].startswith("rank 5 stands out in memory peak: 6.0 GiB against a median of 4.0 GiB"), m["title"]
rows = {k["rank"]: k for k in r["ranks"]}
assert o["gpu_idle_share"]["evidence"]["ranks"][0]["value"] == rows[5]["gpu_idle_share"]
' "$out" 2>"$err" && "$PYTHON" tests/support/validate_report.py formats/report.schema.json "$out" >"$err" 2>&1
    then ok ranks-outliers; else not_ok ranks-outliers "$(tail -n 3 "$err")"; fi
else
    not_ok ranks-outliers "make_ranks: $(cat "$err")"
fi

# The heat map's GPU idle time (rank_steps gpu_idle_share), one step a
# column here, against each step's idle time computed from the kernels
# prof export writes: the union of their intervals inside the step.
if "$PYTHON" - "$out" "$tmp/odd16" "$PROF" 2>"$err" <<'PY'
import json, subprocess, sys
r = json.load(open(sys.argv[1]))
rs = r["rank_steps"]
assert rs["steps_per_column"] == 1, rs["steps_per_column"]
for rank in (0, 5):
    lines = subprocess.run([sys.argv[3], "export", "--format", "json", "%s/rank%d.prof" % (sys.argv[2], rank)],
                           check=True, capture_output=True, text=True).stdout.splitlines()
    ev = [json.loads(l) for l in lines]
    kernels = sorted((e["start_ns"], e["start_ns"] + e["dur_ns"]) for e in ev if e["type"] == "gpu_kernel")
    want = {}
    for st in (e for e in ev if e["type"] == "step"):
        a, b = st["start_ns"], st["start_ns"] + st["dur_ns"]
        busy, end = 0, a
        for s, t in kernels:
            s, t = max(s, end), min(t, b)
            if t > s:
                busy += t - s
                end = t
        want[st["step"]] = 1 - busy / st["dur_ns"]
    got = next(x for x in rs["ranks"] if x["rank"] == rank)["gpu_idle_share"]
    for col, v in enumerate(got):
        step = rs["first_step"] + col
        assert abs(v - want[step]) < 1e-9, (rank, step, v, want[step])
PY
then ok ranks-heat-gpu-idle; else not_ok ranks-heat-gpu-idle "$(tail -n 3 "$err")"; fi

# ---- rank summaries, merged ------------------------------------------------------------------
# Each rank's summary (--summary), written as on the machine that holds
# the rank, merges into the report prof analyze gives of the profiles:
# byte for byte, in every format, from the files or their directory.
mkdir -p "$tmp/sums"
summaries_ok=1
for r in 0 1 2 3; do
    run analyze --summary "$tmp/sync4/rank$r.prof" -o "$tmp/sums/rank$r.summary.json"
    [ "$rc" -eq 0 ] || summaries_ok=0
done
if [ "$summaries_ok" = 1 ] && [ "$(head -n 2 "$tmp/sums/rank0.summary.json" | tr -d ' \n')" = '{"schema":"prof-rank-summary",' ]
then ok summary-written; else not_ok summary-written "$(cat "$err")"; fi
for f in json text csv; do
    "$PROF" analyze --format "$f" "$tmp/sync4" >"$tmp/profiles.$f" 2>"$err"
    run analyze --format "$f" "$tmp/sums"
    if status_is "summary-merge-$f" 0 && cmp -s "$out" "$tmp/profiles.$f"; then
        ok "summary-merge-$f"
    else not_ok "summary-merge-$f" "$(diff "$out" "$tmp/profiles.$f" | head -n 5)"; fi
done
"$PROF" analyze --format csv --table ranks "$tmp/sync4" >"$tmp/profiles.ranks" 2>"$err"
run analyze --format csv --table ranks "$tmp"/sums/rank3.summary.json "$tmp"/sums/rank1.summary.json \
    "$tmp"/sums/rank0.summary.json "$tmp"/sums/rank2.summary.json
if status_is summary-files-ranks 0 && [ "$(sort "$out")" = "$(sort "$tmp/profiles.ranks")" ]
then ok summary-files-ranks; else not_ok summary-files-ranks "$(diff "$out" "$tmp/profiles.ranks" | head -n 5)"; fi
"$PROF" analyze --format json "$tmp/sync4/rank2.prof" >"$tmp/one.json" 2>"$err"
run analyze --format json "$tmp/sums/rank2.summary.json"
if status_is summary-one 0 && cmp -s "$out" "$tmp/one.json"; then ok summary-one
else not_ok summary-one "$(diff "$out" "$tmp/one.json" | head -n 5)"; fi
run analyze --rank 3 --format json "$tmp/sums"
if status_is summary-rank 0 && "$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert [k["rank"] for k in r["ranks"] if k["described"]] == [3]
assert r["profiles"][3]["path"].endswith("rank3.prof")
assert all(k["findings_high"] + k["findings_medium"] + k["findings_low"] > 0 for k in r["ranks"])
' "$out" 2>"$err"; then ok summary-rank; else not_ok summary-rank "$(tail -n 3 "$err")"; fi
# A slowest rank that is no straggler (here rank 3's summary made to say
# 30% longer steps, its operations as the others'): the spread is its own
# finding, which says no operation kept accounts for it, and its step
# time standing out is not said twice.
mkdir -p "$tmp/sums-spread"
cp "$tmp/sums/"*.json "$tmp/sums-spread/"
"$PYTHON" -c '
import json, sys
p = sys.argv[1]
s = json.load(open(p))
s["steps"]["mean_ns"] *= 1.3
json.dump(s, open(p, "w"))
' "$tmp/sums-spread/rank3.summary.json"
run analyze --format json "$tmp/sums-spread"
if status_is summary-spread 0 && "$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
sp = [b for b in r["bottlenecks"] if b["rule"] == "rank_spread"]
assert len(sp) == 1 and sp[0]["subject"] == "rank 3", sp
e = sp[0]["evidence"]
assert e["rank"] == 3 and e["fastest_rank"] != 3 and e["differences"] == [], e
assert 1.3 < e["ratio"] < 1.6 and sp[0]["severity"] == "medium", e
assert "no one of its heaviest operations accounts for the difference" in sp[0]["recommendation"]
st = [b for b in r["bottlenecks"] if b["rule"] == "straggler"]
assert len(st) == 1 and st[0]["evidence"]["rank"] == 1 and "differences" not in st[0]["evidence"]
assert not [b for b in r["bottlenecks"] if b["rule"] == "rank_outlier"]
' "$out" 2>"$err"; then ok summary-spread; else not_ok summary-spread "$(tail -n 3 "$err")"; fi
run analyze --summary "$tmp/sync4/rank0.prof" "$tmp/sync4/rank1.prof"
error_like summary-one-profile 2 "--summary takes one profile"
run analyze --summary --format json "$tmp/sync4/rank0.prof"
error_like summary-no-format 2 "no --format, --fail-on or --rank"
run analyze "$tmp/sums/rank0.summary.json" "$tmp/sync4/rank1.prof"
error_like summary-not-mixed 2 "give profiles or rank summaries, not both"
head -c 2000 "$tmp/sums/rank1.summary.json" >"$tmp/cut.summary.json"
run analyze "$tmp/sums/rank0.summary.json" "$tmp/cut.summary.json"
error_like summary-cut-short 3 "not a rank summary prof reads: not JSON, or cut short"
sed 's/"collective_kernels": "[0-9]*/"collective_kernels": "x/' "$tmp/sums/rank1.summary.json" >"$tmp/bad.summary.json"
run analyze "$tmp/sums/rank0.summary.json" "$tmp/bad.summary.json"
error_like summary-bad-collective 3 "a collective that is not four numbers"
# A rank summary is JSON, but no torch.profiler trace: prof import says
# it is neither a profile nor a trace.
run import "$tmp/sums/rank0.summary.json" -o "$tmp/imported.prof"
error_like summary-not-imported 3 "not a trace prof imports"

# ---- many ranks: in parallel, memory by the ranks at once ---------------------------------
# The same report on one thread as on every core; a broken rank among
# many is named; memory does not grow with the ranks (each is summarised
# and freed, their collectives wait in a temporary file).
mkdir -p "$tmp/r8" "$tmp/r48"
if "$TEST_BIN/make_ranks" "$tmp/r8" 8 40000 2>"$err" &&
   "$TEST_BIN/make_ranks" "$tmp/r48" 48 40000 2>"$err"; then
    "$PROF" analyze --format json "$tmp/r48" >"$tmp/r48.json" 2>"$err"
    PROF_THREADS=1 "$PROF" analyze --format json "$tmp/r48" >"$tmp/r48-one.json" 2>>"$err"
    if cmp -s "$tmp/r48.json" "$tmp/r48-one.json" && [ -s "$tmp/r48.json" ]
    then ok ranks-threads-alike; else not_ok ranks-threads-alike "$(cat "$err")"; fi
    # PROF_THREADS=N is a count of cores, more than the machine's too; the
    # fast paths' switches change nothing; a value that is none of theirs is
    # warned of, once, and left at its default
    for env in PROF_THREADS=3 PROF_THREADS=64 PROF_READER_HELP=always PROF_READER_HELP=0 \
               PROF_MODEL_REPEAT=0; do
        env "$env" "$PROF" analyze --format json "$tmp/r48" >"$tmp/r48-env.json" 2>"$err"
        if cmp -s "$tmp/r48.json" "$tmp/r48-env.json" && [ ! -s "$err" ]
        then ok "ranks-alike-$env"; else not_ok "ranks-alike-$env" "$(head -c 300 "$err")"; fi
    done
    PROF_THREADS=lots PROF_MODEL_KEEP=8 "$PROF" analyze --format json "$tmp/r48" \
        >"$tmp/r48-env.json" 2>"$err"
    if cmp -s "$tmp/r48.json" "$tmp/r48-env.json" && [ "$(wc -l <"$err")" -eq 2 ] &&
        grep -qx "prof: analyze: warning: PROF_THREADS='lots' is not a number from 1 to 1024: left at its default" "$err" &&
        grep -qx "prof: analyze: warning: PROF_MODEL_KEEP='8' is not a number from 16 to 1073741824: left at its default" "$err"
    then ok tuning-bad-values-warned; else not_ok tuning-bad-values-warned "$(cat "$err")"; fi
    case "$PROF" in
    */asan/*) # AddressSanitizer holds freed memory in quarantine: no measure
        echo "ok ranks-memory-flat # skip peak memory is not measured under AddressSanitizer" ;;
    *)
    if "$PYTHON" - "$PROF" "$tmp/r8" "$tmp/r48" 2>"$err" <<'PY'
import subprocess, sys
# each in a process of its own: RUSAGE_CHILDREN is the peak of them all
MEASURE = ("import resource, subprocess, sys; "
           "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)")
def peak(d):
    out = subprocess.run([sys.executable, "-c", MEASURE, sys.argv[1], "analyze", d], check=True,
                         capture_output=True, text=True, env={"PROF_THREADS": "1"})
    return int(out.stdout)
small = peak(sys.argv[2])
large = peak(sys.argv[3])
# 40 more ranks: a few KB each, not the ~1.5 MB a loaded rank holds
assert large - small < 8 * 2**20, "8 ranks %.1f MiB, 48 ranks %.1f MiB" % (small / 2**20, large / 2**20)
PY
    then ok ranks-memory-flat; else not_ok ranks-memory-flat "$(tail -n 2 "$err")"; fi ;;
    esac
    cp "$tmp/r8/rank5.prof" "$tmp/r5.keep"
    head -c 100 "$tmp/r5.keep" >"$tmp/r8/rank5.prof"
    run analyze "$tmp/r8"
    error_like ranks-broken-one 3 "rank5.prof"
    cp "$tmp/r5.keep" "$tmp/r8/rank5.prof"
    TMPDIR="$tmp/no-such-dir" "$PROF" analyze "$tmp/r8" >"$out" 2>"$err"; rc=$?
    error_like ranks-tmpdir-missing 4 "point TMPDIR at a writable directory"
else
    not_ok ranks-parallel "make_ranks: $(cat "$err")"
fi
run analyze --rank 7 "$tmp/job4"
error_like ranks-rank-missing 2 "--rank 7: no profile of that rank among the 4 given"
run analyze --rank two "$tmp/job4"
error_like ranks-rank-not-a-number 2 "--rank takes a rank"
run analyze "$tmp/tworuns"
error_like ranks-directory-of-runs 2 "holds 2 runs, not the ranks of one job"
run analyze "$tmp/job4" "$tmp/hot.prof"
error_like ranks-directory-alone 2 "a directory is analyzed alone"

# ---- --fail-on ---------------------------------------------------------------------------------
# fail_on NAME FILE LEVEL STATUS: the status, and the report written anyway
fail_on() {
    run analyze --fail-on "$3" "$tmp/$2"
    if status_is "$1" "$4"; then
        if has "$out" "Bottlenecks" && ! [ -s "$err" ]; then ok "$1"; else
            not_ok "$1" "no report or stderr: $(head -c 200 "$err")"
        fi
    fi
}
fail_on fail-on-high-found hot.prof high 1
fail_on fail-on-medium-below-high warm.prof high 0
fail_on fail-on-medium-found warm.prof medium 1
fail_on fail-on-low-of-medium warm.prof low 1
fail_on fail-on-low-calm calm.prof low 0
run analyze --format json --fail-on high -o "$tmp/gate.json" "$tmp/hot.prof"
if status_is fail-on-with-output 1 && [ -s "$tmp/gate.json" ]; then ok fail-on-with-output; else
    not_ok fail-on-with-output "report not written"
fi

# ---- -o FILE ------------------------------------------------------------------------------------
run analyze -o "$tmp/report.txt" "$DEMO"
if status_is output-file 0 && ! [ -s "$out" ] && cmp -s "$tmp/report.txt" "$GOLDEN/analyze-demo.txt"; then
    ok output-file
else
    not_ok output-file "file differs from the golden text or stdout not empty"
fi
left=$(find "$tmp" -maxdepth 1 -name '*.tmp.*')
if [ -n "$left" ]; then not_ok output-no-temp "temporary left: $left"; else
    ok output-no-temp
fi
# -o into a FIFO is written through, as '>' does; a 0600 report stays 0600.
mkfifo "$tmp/report.fifo"
timeout 20 cat "$tmp/report.fifo" >"$tmp/fifo.txt" &
reader=$!
run analyze -o "$tmp/report.fifo" "$DEMO"
wait $reader
if status_is output-fifo 0 && [ -p "$tmp/report.fifo" ] && cmp -s "$tmp/fifo.txt" "$GOLDEN/analyze-demo.txt"; then
    ok output-fifo
else
    not_ok output-fifo "the FIFO was replaced or its reader got other bytes"
fi
# A device is written through too: one of our own (root only), never the
# system's /dev/null, which a wrong build would replace (export.sh tries
# /dev/null only after its own device survived).
if [ "$(id -u)" = 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
    run analyze -o "$tmp/null" "$DEMO"
    status_is output-device 0 && { [ -c "$tmp/null" ] && ok output-device || not_ok output-device "replaced by a file"; }
else
    echo "ok output-device # skip not root or no mknod"
fi
: >"$tmp/private.txt"
chmod 600 "$tmp/private.txt"
run analyze -o "$tmp/private.txt" "$DEMO"
if status_is output-keeps-mode 0 && [ "$(stat -c %a "$tmp/private.txt")" = 600 ]; then ok output-keeps-mode
else not_ok output-keeps-mode "mode $(stat -c %a "$tmp/private.txt")"; fi
run analyze -o - --format json "$DEMO"
same_as output-dash-stdout "$GOLDEN/analyze-demo.json"
run analyze --format html -o "$tmp/report.html" "$DEMO"
if status_is output-html 0 && grep -qi '<html' "$tmp/report.html" && has "$tmp/report.html" '"prof-report"'; then
    ok output-html
else
    not_ok output-html "no page with the report: $(head -c 200 "$tmp/report.html")"
fi

mkdir "$tmp/out"
run analyze -o "$tmp/out/missing-dir/report.txt" "$DEMO"
error_like output-missing-dir 4 "prof: analyze: cannot create '$tmp/out/missing-dir/report.txt': No such file or directory"
# Root writes anywhere a mode forbids: as root this runs as nobody.
mkdir "$tmp/ro" && chmod 555 "$tmp/ro" && chmod 755 "$tmp"
run_unprivileged analyze -o "$tmp/ro/report.txt" "$DEMO"
error_like output-unwritable-dir 4 "Permission denied"
if [ -n "$(ls -A "$tmp/ro")" ]; then not_ok output-unwritable-dir-empty "left: $(ls -A "$tmp/ro")"; else
    ok output-unwritable-dir-empty
fi
chmod 755 "$tmp/ro"
chmod 700 "$tmp"
# An input error leaves an existing output untouched.
echo old >"$tmp/keep.txt"
run analyze -o "$tmp/keep.txt" "$tmp/absent.prof"
if status_is output-kept-on-error 3 && [ "$(cat "$tmp/keep.txt")" = old ]; then ok output-kept-on-error; else
    not_ok output-kept-on-error "file now '$(head -c 100 "$tmp/keep.txt")'"
fi
if [ -w /dev/full ]; then
    "$PROF" analyze "$DEMO" >/dev/full 2>"$err"
    rc=$?
    if [ $rc -eq 4 ] && has "$err" "prof: analyze: cannot write to standard output"; then ok stdout-full; else
        not_ok stdout-full "status $rc, stderr: $(cat "$err")"
    fi
fi

# ---- cut short: analyzed, said so, status 0 -----------------------------------------------------
head -c 30000 "$DEMO" >"$tmp/cut.prof"
run analyze "$tmp/cut.prof"
if status_is truncated 0; then
    if has "$out" "cut short" && has "$out" "Notes" && ! [ -s "$err" ]; then ok truncated; else
        not_ok truncated "no mention of the cut: $(head -n 3 "$out")"
    fi
fi
run analyze --format csv "$tmp/cut.prof"
if status_is truncated-csv-warns 0 && has "$err" "prof: analyze: warning: '$tmp/cut.prof' was cut short" &&
    [ "$(wc -l <"$err")" -eq 1 ]; then
    ok truncated-csv-warns
else
    not_ok truncated-csv-warns "stderr: $(cat "$err")"
fi

# ---- unreadable input: status 3 ------------------------------------------------------------------
run analyze "$tmp/x.prof"
error_is missing-file 3 "prof: analyze: cannot read '$tmp/x.prof': cannot open: No such file or directory"
mkdir "$tmp/dir.prof"
run analyze "$tmp/dir.prof"
error_is directory 3 "prof: analyze: no profiles in directory '$tmp/dir.prof'"
: >"$tmp/empty.prof"
run analyze "$tmp/empty.prof"
error_is empty-file 3 "prof: analyze: cannot read '$tmp/empty.prof': empty file (0 bytes)"
printf 'step,region,ms\n1,forward,12.5\n' >"$tmp/data.csv"
run analyze "$tmp/data.csv"
error_is not-prof 3 "prof: analyze: cannot read '$tmp/data.csv': not a prof file (bad magic)"
run analyze "$DEMO" "$tmp/data.csv"
error_is second-not-prof 3 "prof: analyze: cannot read '$tmp/data.csv': not a prof file (bad magic)"
if "$TEST_BIN/make_corpus" "$tmp" >"$err" 2>&1; then
    run analyze "$tmp/version-2.0.prof"
    error_is newer-version 3 "prof: analyze: cannot read '$tmp/version-2.0.prof': written in format version 2.0; this prof reads 1.x: upgrade prof"
    run analyze "$tmp/flip-payload.prof"
    error_like corrupt-block 3 ": payload checksum mismatch"
else
    not_ok make-corpus "$TEST_BIN/make_corpus failed: $(cat "$err")"
fi

# ---- usage errors: status 2 ----------------------------------------------------------------------
run analyze
error_is no-argument 2 "prof: analyze: no profile given (see 'prof analyze --help')"
run analyze --bogus "$DEMO"
error_is unknown-option 2 "prof: analyze: unknown option '--bogus' (see 'prof analyze --help')"
run analyze --no-color -xq "$DEMO"
error_is unknown-short-option 2 "prof: analyze: unknown option '-x' (see 'prof analyze --help')"
run analyze --no-color=yes "$DEMO"
error_is option-takes-no-value 2 "prof: analyze: option '--no-color=yes' takes no value (see 'prof analyze --help')"
run analyze "$DEMO" --top
error_is missing-value 2 "prof: analyze: option '--top' needs a value (see 'prof analyze --help')"
run analyze --format xml "$DEMO"
error_is bad-format 2 "prof: analyze: unknown format 'xml': use text, json, csv or html (see 'prof analyze --help')"
run analyze --top -1 "$DEMO"
error_is bad-top 2 "prof: analyze: --top takes a whole number of operations, not '-1' (see 'prof analyze --help')"
run analyze --hot-threshold 120 "$DEMO"
error_is bad-hot-threshold 2 "prof: analyze: --hot-threshold takes a percentage (0 to 100), not '120' (see 'prof analyze --help')"
run analyze --leak-threshold lots "$DEMO"
error_is bad-leak-threshold 2 "prof: analyze: --leak-threshold takes MiB per step, not 'lots' (see 'prof analyze --help')"
run analyze --leak-horizon 0 "$DEMO"
error_is bad-leak-horizon 2 "prof: analyze: --leak-horizon takes a number of run lengths above 0, not '0' (see 'prof analyze --help')"
run analyze --capacity 16X "$DEMO"
error_is bad-capacity 2 "prof: analyze: --capacity takes a size such as 16G, not '16X' (see 'prof analyze --help')"
run analyze --format csv --table flops "$DEMO"
error_is bad-table 2 "prof: analyze: unknown table 'flops': use ops, steps, memory, bottlenecks, kernels, gpu or ranks (see 'prof analyze --help')"
run analyze --points 1 "$DEMO"
error_is bad-points 2 "prof: analyze: --points takes 0 (all) or a whole number of points from 2, not '1' (see 'prof analyze --help')"
run analyze --table steps "$DEMO"
error_is table-without-csv 2 "prof: analyze: --table applies to --format csv (see 'prof analyze --help')"
run analyze --fail-on critical "$DEMO"
error_is bad-fail-on 2 "prof: analyze: --fail-on takes high, medium or low, not 'critical' (see 'prof analyze --help')"

# Options that parse: capacity suffixes, thresholds.
run analyze --capacity 16GiB --hot-threshold 5 --leak-threshold 0.5 --leak-horizon 2.5 \
    --sync-threshold 1 "$DEMO"
out_has options-accepted "Bottlenecks"

# ---- help ---------------------------------------------------------------------------------------
for args in "analyze --help" "analyze -h" "help analyze"; do
    # shellcheck disable=SC2086 # split on purpose
    run $args
    out_has "help-$(echo "$args" | tr ' ' '_')" "usage: prof analyze RUN.prof [RUN2.prof ...]"
done
run help
out_has help-lists-analyze "  analyze   "

[ $fails -eq 0 ]
