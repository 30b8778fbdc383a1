#!/bin/sh
# import.sh - `prof import` end to end on the real binary, and the other
# commands reading traces in place: the project's torch.profiler fixtures
# of every schema era (testdata/kineto/), recognised by their content,
# default and explicit output names, several traces of one job as ranks,
# a cut trace read up to its damage, what is not a trace, an unwritable
# output, and no temporary file left behind. With ../shared/traces/ beside
# the checkout, the real traces there are imported and analysed too.
# Run from the repository root with PROF=path/to/prof, as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
K=testdata/kineto
cli_tmp import
mkdir -p "$tmp/scratch"
TMPDIR=$tmp/scratch
export TMPDIR

# ---- help ---------------------------------------------------------------------
run import --help
out_has help "usage: prof import [--python-stacks] [-o OUT] TRACE..."
run help
out_has help-lists-import "  import    convert torch.profiler"
[ -f man/prof-import.1 ] && ok man-page || not_ok man-page "man/prof-import.1 missing"

# ---- every era, converted and read back -----------------------------------------
for era in 2021 2022 2023 2024 rocm; do
    run import "$K/$era.json" -o "$tmp/$era.prof"
    if status_is "import-$era" 0; then
        if ! has "$err" "$K/$era.json (kineto): " || ! has "$err" "-> $tmp/$era.prof"; then
            not_ok "import-$era" "no summary line: $(cat "$err")"
        elif [ -s "$out" ]; then
            not_ok "import-$era" "stdout not empty"
        else
            ok "import-$era"
        fi
    fi
    run info "$tmp/$era.prof"
    out_has "info-$era" "closed cleanly"
done

# the gzip copy imports to the same events as the plain file
run import "$K/2024.json.gz" -o "$tmp/gz.prof"
status_is import-gzip 0 && {
    "$PROF" export "$tmp/gz.prof" --format csv -o "$tmp/gz.csv" &&
        "$PROF" export "$tmp/2024.prof" --format csv -o "$tmp/plain.csv"
    if [ -s "$tmp/gz.csv" ] && cmp -s "$tmp/gz.csv" "$tmp/plain.csv"; then ok import-gzip-same; else
        not_ok import-gzip-same "2024.json.gz and 2024.json import differently"
    fi
}

# default name: the trace's ending replaced, in the current directory
(cd "$tmp" && "$PROF" import "$OLDPWD/$K/2024.json.gz" >/dev/null 2>&1)
[ -f "$tmp/2024.prof" ] && ok default-name || not_ok default-name "no $tmp/2024.prof"

# standard output
run import "$K/2023.json" -o -
status_is stdout 0 && {
    if head -c 5 "$out" | od -An -c | grep -q 'P   R   O   F'; then ok stdout-profile; else
        not_ok stdout-profile "stdout is not a profile"
    fi
}

# ---- several traces: a directory, ranks of one job ---------------------------------
mkdir "$tmp/job"
run import -o "$tmp/job" "$K/2023.json" "$K/2024.json"
status_is several 0 && {
    if [ -f "$tmp/job/2023.prof" ] && [ -f "$tmp/job/2024.prof" ]; then ok several-files; else
        not_ok several-files "$(ls "$tmp/job")"
    fi
}
run import -o "$tmp/not-a-dir.prof" "$K/2023.json" "$K/2024.json"
error_like several-need-dir 2 "several traces need -o to name a directory"
run import
error_like no-trace 2 "no trace given"

# ---- the other commands read traces in place ------------------------------------------
run analyze "$K/2024.json"
status_is analyze-trace 0 && {
    if has "$out" "prof analyze $K/2024.json:" && ! has "$out" "/proc/self/fd"; then
        ok analyze-names-trace
    else
        not_ok analyze-names-trace "$(head -3 "$out")"
    fi
    has "$out" "rank 0 of 2" && ok analyze-rank || not_ok analyze-rank "$(head -3 "$out")"
}
run analyze "$K/2024.json.gz" --format json
status_is analyze-gzip-json 0
run export "$K/2023.json" --format chrome-trace -o "$tmp/t.json"
status_is export-trace 0 && {
    if "${PYTHON:-/usr/bin/python3}" -c 'import json,sys; json.load(open(sys.argv[1]))' \
        "$tmp/t.json" 2>/dev/null; then ok export-trace-json; else
        not_ok export-trace-json "not JSON"
    fi
}
run info "$K/2022.json"
out_has info-trace "file       $K/2022.json"
run compare "$K/2024.json" "$K/2024.json.gz"
status_is compare-traces 0
mkdir "$tmp/side"
cp "$K/2023.json" "$K/2024.json" "$tmp/side/"
run compare "$tmp/side" "$tmp/side"
status_is compare-trace-dirs 0
run view "$K/2024.json" --html "$tmp/v.html"
status_is view-html-trace 0 && {
    [ -s "$tmp/v.html" ] && ok view-html-written || not_ok view-html-written "empty page"
}
if [ -z "$(ls -A "$tmp/scratch")" ]; then ok no-temporaries; else
    not_ok no-temporaries "left in TMPDIR: $(ls -A "$tmp/scratch")"
fi

# ---- damage, unknown kinds, not a trace -------------------------------------------------
run import "$K/cut.json" -o "$tmp/cut.prof"
status_is cut 0 && {
    if has "$err" "warning: '$K/cut.json' is cut short or damaged"; then ok cut-warned; else
        not_ok cut-warned "$(cat "$err")"
    fi
}
run analyze "$K/cut.json"
status_is cut-analyze 0 && {
    has "$out" "the imported trace is cut short or damaged" && ok cut-note ||
        not_ok cut-note "no note in the report"
    # the header says where it was cut, not "closed cleanly"
    head -n 1 "$out" | grep -q "imported from a trace cut short or damaged (the file ends inside the JSON document at byte [0-9]*): what came before" &&
        ! head -n 1 "$out" | grep -q "closed cleanly" && ok cut-header ||
        not_ok cut-header "$(head -n 1 "$out")"
}
# the GPU findings of a cut trace say they cover what was read; a whole one's do not
run analyze --format json "$K/cut.json"
status_is cut-json 0 && {
    why=$(python3 - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if not r["profiles"][0]["source_damaged"].startswith("the file ends inside the JSON document"):
    print("source_damaged: %r" % r["profiles"][0]["source_damaged"])
gpu = [b for b in r["bottlenecks"] if b["rule"] in ("gpu_idle", "exposed_comm")]
if not gpu:
    print("no GPU finding")
for b in gpu:
    if b["evidence"].get("partial") is not True or not b["recommendation"].startswith("The profile is cut short"):
        print("%s: %s" % (b["rule"], b["recommendation"][:80]))
PY
)
    [ -z "$why" ] && ok cut-gpu-partial || not_ok cut-gpu-partial "$why"
}
run analyze --format json "$K/2024.json"
status_is whole-json 0 && {
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert r["profiles"][0]["source_damaged"] == ""
assert all(b["evidence"]["partial"] is False for b in r["bottlenecks"] if b["rule"] in ("gpu_idle", "exposed_comm"))
assert not any(b["recommendation"].startswith("The profile is cut") for b in r["bottlenecks"])' "$out" &&
        ok whole-not-partial || not_ok whole-not-partial "$(head -c 300 "$out")"
}
run import "$K/unknown.json" -o "$tmp/unknown.prof"
status_is unknown 0 && {
    has "$err" "of kinds prof does not know were left out" && ok unknown-noted ||
        not_ok unknown-noted "$(cat "$err")"
}
printf 'just some text\n' >"$tmp/text.txt"
run import "$tmp/text.txt" -o "$tmp/x.prof"
error_like not-a-trace 3 "not a trace prof imports"
printf '{"schemaVersion": 1, "other": []}\n' >"$tmp/other.json"
run import "$tmp/other.json" -o "$tmp/x.prof"
error_like json-not-kineto 3 "cannot import '$tmp/other.json'"
[ -e "$tmp/x.prof" ] && not_ok no-output-on-error "x.prof left behind" || ok no-output-on-error
run import "$tmp/missing.json" -o "$tmp/x.prof"
error_like missing 3 "cannot"
run import "$K/2024.json" -o "$tmp/nodir/x.prof"
error_like unwritable 4 "$tmp/nodir"
run analyze "$tmp/other.json"
error_like analyze-not-kineto 3 "cannot import '$tmp/other.json'"

# hta_check NAME TRACE: prof's HTA figures of TRACE against hta_breakdown.py's.
hta_check() {
    python3 tests/support/hta_breakdown.py "$2" >"$tmp/hta-want.json" ||
        { not_ok "$1" "hta_breakdown.py failed"; return; }
    run analyze --format json "$2"
    status_is "$1" 0 || return
    why=$(python3 - "$out" "$tmp/hta-want.json" <<'PY'
import json, sys
got = {str(d["device"]): d["hta"] for d in json.load(open(sys.argv[1]))["summary"]["gpu"]}
want = {str(d["device"]): d for d in json.load(open(sys.argv[2]))}
bits = {"computation": 1, "communication": 2, "memory": 4,
        "computation overlapping communication": 3, "computation overlapping memory": 5,
        "communication overlapping memory": 6,
        "computation overlapping communication overlapping memory": 7}
if set(got) != set(want):
    print("devices %s, independent %s" % (sorted(got), sorted(want)))
for dev, w in want.items():
    g = got.get(dev, {})
    for k in ("window_ns", "busy_ns", "idle_ns", "compute_ns", "non_compute_ns", "comm_ns",
              "comm_overlap_ns", "left_out", "final_step_left_out"):
        if g.get(k) != w[k]:
            print("device %s %s: %s, independent %s" % (dev, k, g.get(k), w[k]))
    for t in g.get("kernel_types", []):
        if t["ns"] != w["kernel_types"][str(bits[t["type"]])]:
            print("device %s %s: %s, independent %s"
                  % (dev, t["type"], t["ns"], w["kernel_types"][str(bits[t["type"]])]))
    for k in ("idle_share", "compute_share", "non_compute_share", "comm_overlap_share"):
        if abs(g.get(k, -1) - w[k]) > 0.001:
            print("device %s %s: %s, independent %.4f" % (dev, k, g.get(k), w[k]))
    if w["no_launch"]:
        print("device %s: %d records without a launch call" % (dev, w["no_launch"]))
PY
)
    [ -z "$why" ] && ok "$1" || not_ok "$1" "$why"
}

# long kernel names: shortened to what tells two of them apart, whole with --wide
long='void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>)'
python3 - "$tmp/long.json" "$long" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "kernel", "name": sys.argv[2].replace("add", "mul" if i else "add"), "pid": 0, "tid": 7,
       "ts": 1000 + 10 * i, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 1 + i}}
      for i in range(2)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
run analyze "$tmp/long.json"
status_is long-names 0 && {
    has "$out" "  vectorized_elem~d<~>, Array<~> >" && has "$out" "  vectorized_elem~l<~>, Array<~> >" &&
        ok long-names-short ||
        not_ok long-names-short "$(grep -A4 'Top kernels' "$out")"
}
run analyze --wide "$tmp/long.json"
status_is long-names-wide 0 && {
    has "$out" "  $long " && ok long-names-whole ||
        not_ok long-names-whole "$(grep -A4 'Top kernels' "$out")"
}

# HTA's breakdowns of every era's fixture, and the CSV table of them
for f in 2021 2022 2023 2024 rocm; do
    hta_check "hta-$f" "$K/$f.json"
done
run analyze --format csv --table gpu "$K/2024.json"
status_is csv-gpu 0 && {
    head -n 1 "$out" | grep -q '^device,kernels,.*,hta_window_ns,.*,hta_computation_communication_memory_ns' &&
        [ "$(wc -l <"$out")" -eq 2 ] && ok csv-gpu-table || not_ok csv-gpu-table "$(head -c 300 "$out")"
}

# ---- the real traces, when they are beside this checkout ----------------------------------
if [ -d ../shared/traces ]; then
    for t in ../shared/traces/*.json.gz ../shared/traces/*.sqlite; do
        [ -f "$t" ] || continue
        name="real-$(basename "$t")"
        run analyze "$t"
        status_is "$name" 0 && {
            has "$out" "GPU            device 0" && ok "$name-gpu" || not_ok "$name-gpu" "no GPU"
        }
    done
    # GPU figures are exact whatever the order of the records: a real
    # trace's GPU records repeated 11 times (41,514, ten times the model's
    # batch of 4,096), in time order, stream by stream as Kineto writes
    # them, and shuffled, against the union of all of them sorted at once,
    # computed apart (tests/support/gpu_union.py), to the nanosecond.
    t=../shared/traces/hta_nccl_data_a100_rank0of2.json.gz
    if [ -f "$t" ]; then
        python3 tests/support/gpu_union.py "$t" "$tmp/tiled-time.json" 11 time &&
            python3 tests/support/gpu_union.py "$tmp/tiled-time.json" >"$tmp/exact.json"
        for order in time stream shuffle; do
            name=gpu-exact-$order
            [ $order = time ] ||
                python3 tests/support/gpu_union.py "$t" "$tmp/tiled-$order.json" 11 $order
            run analyze --format json "$tmp/tiled-$order.json"
            status_is "$name" 0 || continue
            why=$(python3 - "$out" "$tmp/exact.json" <<'PY'
import json, sys
got = {str(d["device"]): d for d in json.load(open(sys.argv[1]))["summary"]["gpu"]}
want = json.load(open(sys.argv[2]))
for dev, w in want.items():
    g = dict(got.get(dev, {}))
    g["longest_gaps"] = [x["dur_ns"] for x in g.get("longest_gaps", [])]
    for k, v in w.items():
        if g.get(k) != v:
            print("device %s %s: %s, exact %s" % (dev, k, g.get(k), v))
if set(got) != set(want):
    print("devices %s, exact %s" % (sorted(got), sorted(want)))
PY
)
            [ -z "$why" ] && ok "$name" || not_ok "$name" "$why"
        done
    else
        ok "gpu-exact # skip $t is not there"
    fi
    # HTA's breakdowns (rules.md §3.1) against a computation from the JSON
    # alone with HTA's definitions (tests/support/hta_breakdown.py): every
    # real Kineto trace as it is, and the NCCL trace's steps, launch calls
    # and GPU records repeated 11 times (33 steps, 96,140 calls, 41,514
    # records), the records stream by stream after the rest, or everything
    # shuffled; times to the ns, shares to 0.1 point.
    for t in ../shared/traces/*.json.gz; do
        [ -f "$t" ] && hta_check "hta-$(basename "$t")" "$t"
    done
    t=../shared/traces/hta_nccl_data_a100_rank0of2.json.gz
    for order in stream shuffle; do
        [ -f "$t" ] || continue
        python3 tests/support/hta_breakdown.py "$t" "$tmp/hta-$order.json" 11 $order &&
            hta_check "hta-tiled-$order" "$tmp/hta-$order.json"
    done
else
    ok "real-traces # skip ../shared/traces is not beside the checkout"
fi

# ---- two traces, one output (issue 39) --------------------------------------------
# Traces whose profiles would get one name are refused before anything is
# written, naming both traces and the profile, whatever their formats and
# wherever they stand on the command line; nothing of the others is written.
PROF_ABS=$(cd "$(dirname "$PROF")" && pwd)/$(basename "$PROF")
h=$tmp/same-name
mkdir -p "$h/a" "$h/b" "$h/out" "$h/cwd"
cp "$K/2023.json" "$h/a/x.json"
gzip -c "$K/2024.json" >"$h/b/x.json.gz"
cp "$K/2022.json" "$h/b/y.json"
cp tests/fuzz/corpus-import_nsys/fixture.sqlite "$h/b/x.sqlite"
# run_in DIR ARGS...: run, from DIR
run_in() {
    (d=$1 && shift && cd "$d" && "$PROF_ABS" "$@") >"$out" 2>"$err"
    rc=$?
}
run_in "$h" import a/x.json b/x.json.gz b/x.sqlite -o out
error_like same-name-dir 2 "'a/x.json' and 'b/x.json.gz' would both be written to 'out/x.prof'"
run_in "$h" import b/x.sqlite b/y.json a/x.json -o out
error_like same-name-formats 2 "'b/x.sqlite' and 'a/x.json' would both be written to 'out/x.prof'"
[ -z "$(ls -A "$h/out")" ] && ok same-name-writes-nothing ||
    not_ok same-name-writes-nothing "written: $(ls "$h/out")"
run_in "$h/cwd" import ../a/x.json ../b/x.sqlite
error_like same-name-cwd 2 "'../a/x.json' and '../b/x.sqlite' would both be written to 'x.prof'"
run_in "$h" import a/x.json a/x.json -o out
error_like same-name-twice 2 "'a/x.json' and 'a/x.json' would both be written to 'out/x.prof'"
[ -z "$(ls -A "$h/out")" ] && [ -z "$(ls -A "$h/cwd")" ] && ok same-name-nothing-left ||
    not_ok same-name-nothing-left "$(ls "$h/out" "$h/cwd")"
# distinct names still go together; one -o FILE per trace keeps both x
run_in "$h" import a/x.json b/y.json -o out
status_is same-name-distinct 0 && {
    [ -f "$h/out/x.prof" ] && [ -f "$h/out/y.prof" ] && ok same-name-distinct-files ||
        not_ok same-name-distinct-files "$(ls "$h/out")"
}
run_in "$h" import b/x.sqlite -o out/x-nsys.prof
status_is same-name-one-at-a-time 0 && ok same-name-one-at-a-time

# ---- a byte order mark before the document (issue 39) ---------------------------------
# passed over, plain and gzip: the same events as without it, imported and read in place
for era in 2021 2024; do
    printf '\357\273\277' >"$tmp/bom-$era.json"
    cat "$K/$era.json" >>"$tmp/bom-$era.json"
    gzip -c "$tmp/bom-$era.json" >"$tmp/bom-$era.json.gz"
    "$PROF" export "$K/$era.json" --format csv -o "$tmp/bom-want.csv" 2>/dev/null
    for t in "$tmp/bom-$era.json" "$tmp/bom-$era.json.gz"; do
        name=$(basename "$t")
        run import "$t" -o "$tmp/bom.prof"
        status_is "$name" 0 || continue
        run export "$tmp/bom.prof" --format csv -o "$tmp/bom-got.csv"
        cmp -s "$tmp/bom-got.csv" "$tmp/bom-want.csv" && ok "$name-same-events" ||
            not_ok "$name-same-events" "differs from $K/$era.json"
        run analyze "$t"
        status_is "$name-in-place" 0 && ok "$name-in-place"
    done
done

# ---- traces past what a profile holds (issue 39) ----------------------------------------
# formats/prof-format.md §9: 4,194,303 distinct names, 256 MiB of name text.
# The import stops at the first name past either, with one line naming the
# limit and status 3, and leaves no profile (an existing one untouched, no
# temporary file); reading the trace in place stops the same way. Before,
# both were written and every command then refused them. The traces are
# made by awk through gzip (24 MB with 4,194,304 names; 2 MB with 4,097
# names of 64 KiB, each among 64 short events, so that definitions are
# written between blocks as a long trace would have them). Exactly at the
# limits they import and read back: tests/unit/import_sink.c.
lim=$tmp/limits
mkdir -p "$lim"
awk 'BEGIN {
    printf "{\"traceEvents\": [\n"
    for (i = 0; i < 4194304; i++)
        printf "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%x\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1},\n", i, 2 * i
    printf "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}]}\n"
}' | gzip -1 >"$lim/names.json.gz"
awk 'BEGIN {
    pad = "x"
    while (length(pad) < 65528)
        pad = pad pad
    pad = substr(pad, 1, 65528)
    printf "{\"traceEvents\": [\n"
    for (i = 0; i < 4097; i++) {
        printf "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%08x%s\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1},\n", i, pad, 200 * i
        for (j = 0; j < 64; j++)
            printf "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1},\n", 200 * i + 2 + 2 * j
    }
    printf "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}]}\n"
}' | gzip -1 >"$lim/text.json.gz"
printf 'an earlier profile\n' >"$lim/keep.prof"
for c in "names more than 4194303 distinct names, the most a profile holds" \
    "text more than 268435456 bytes of names (256 MiB), the most a profile holds"; do
    t=${c%% *}
    says=${c#* }
    run import "$lim/$t.json.gz" -o "$lim/$t.prof"
    error_like "limit-$t" 3 "cannot import '$lim/$t.json.gz': $says"
    [ ! -e "$lim/$t.prof" ] && ok "limit-$t-no-profile" ||
        not_ok "limit-$t-no-profile" "$lim/$t.prof was written"
    [ "$t" = text ] || continue # the rest alike, on the trace that is quicker to read
    run import "$lim/$t.json.gz" -o "$lim/keep.prof"
    error_like "limit-$t-keeps" 3 "$says"
    [ "$(cat "$lim/keep.prof")" = "an earlier profile" ] && ok "limit-$t-keeps-earlier" ||
        not_ok "limit-$t-keeps-earlier" "keep.prof was replaced"
    run analyze "$lim/$t.json.gz"
    error_like "limit-$t-in-place" 3 "$says"
done
[ -z "$(ls -A "$TMPDIR")" ] && ok limit-no-temporary || not_ok limit-no-temporary "$(ls -A "$TMPDIR")"
rm -f "$lim"/*.json.gz

# ---- many threads: memory grows by under a KiB a thread, not 13 -----------------------
# 100,000 threads of one region each (a 0.5 MB .gz): the sink's per-thread
# state grows with what a thread holds (its open regions, its pending events,
# its block, each from one element), so the import stays under 1 KiB a
# thread (1.33 GB before: 13 KiB each; 243 MB with arrays of 8 first).
awk 'BEGIN {
    printf "{\"traceEvents\": [\n"
    for (t = 0; t < 100000; t++)
        printf "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":5}\n", t ? "," : "", t, t
    printf "]}\n"
}' | gzip -1 >"$lim/threads.json.gz"
case "$PROF" in */asan/*) bound=0 ;; *) bound=160 ;; esac # ASan's shadow memory: no bound
if "${PYTHON:-/usr/bin/python3}" - "$PROF" "$lim/threads.json.gz" "$lim/threads.prof" "$bound" \
    >"$out" 2>&1 <<'PY'
import resource, subprocess, sys
prof, trace, profile, bound = sys.argv[1:5]
rc = subprocess.run([prof, "import", trace, "-o", profile], capture_output=True).returncode
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
assert rc == 0, rc
assert int(bound) == 0 or peak < int(bound) * 2**20, "peak %.0f MiB for 100,000 threads" % (peak / 2**20)
print("peak %.0f MiB" % (peak / 2**20))
PY
then ok many-threads-memory; else not_ok many-threads-memory "$(cat "$out")"; fi
run info "$lim/threads.prof"
grep -q '^threads    100000' "$out" && ok many-threads-read || not_ok many-threads-read "$(head -c 300 "$out")"
rm -f "$lim"/threads.*
[ $fails -eq 0 ]
