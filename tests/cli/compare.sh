#!/bin/sh
# compare.sh - `prof compare` end to end on the real binary, over profiles
# written by make_compare: the same run shows no change beyond the noise floor, an
# operation 30% slower is flagged and --fail-on-regression 10 exits 1, 2%
# slower and a slower small operation do not fail, operations that appear
# or disappear, different step counts, sampling and commands are said, a
# new leak is shown; JSON matches formats/compare.schema.json, CSV has its
# rows; colour only on a terminal; every failure has its DESIGN §5 status
# and one line on stderr, and a failed -o leaves no file.
# Run from the repository root with PROF and TEST_BIN, as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
cli_tmp compare
fx=$tmp/fx

# expect NAME STATUS TEXT...: prof exited with STATUS, stdout has every
# TEXT, stderr is empty.
expect() {
    name=$1
    want=$2
    shift 2
    status_is "$name" "$want" || return
    for text in "$@"; do
        if ! has "$out" "$text"; then
            not_ok "$name" "stdout lacks '$text': $(head -c 400 "$out")"
            return
        fi
    done
    if [ -s "$err" ]; then not_ok "$name" "stderr: $(head -c 300 "$err")"; else ok "$name"; fi
}

# lacks NAME TEXT: after expect, stdout must not have TEXT
lacks() {
    if has "$out" "$2"; then not_ok "$1" "stdout has '$2'"; else ok "$1"; fi
}

mkdir "$fx" || exit 1
if ! "$TEST_BIN/make_compare" "$fx" >"$err" 2>&1; then
    not_ok make-compare "$TEST_BIN/make_compare failed: $(cat "$err")"
    exit 1
fi

# ---- the same program ----------------------------------------------------------
run compare --fail-on-regression 10 "$fx/base.prof" "$fx/base.prof"
expect identical 0 "prof compare $fx/base.prof -> $fx/base.prof" "no change beyond the noise floor (p = 1.000)" \
    "Regression check (--fail-on-regression 10%): passed"
# one run a side: the only note says what the test cannot know
if grep -c '^  - ' "$out" | grep -qx 1 && has "$out" "run-to-run variation is unknown"; then
    ok identical-one-note
else
    not_ok identical-one-note "$(sed -n '/^Notes/,/^$/p' "$out")"
fi

run compare --fail-on-regression 10 --format csv "$fx/base.prof" "$fx/rerun.prof"
expect rerun-not-significant 0 "operation,backward,compute,unchanged,"
lacks rerun-nothing-significant ",true"

# ---- slower ------------------------------------------------------------------------
run compare --fail-on-regression 10 "$fx/base.prof" "$fx/slow30.prof"
expect slow30-fails 1 "Regression check (--fail-on-regression 10%): FAILED" "slower (p < 0.001)"
if grep -q '^  backward .* +[23][0-9]\.[0-9]%  *<0\.001  slower$' "$out"; then ok slow30-row; else
    not_ok slow30-row "$(grep '^  backward' "$out")"
fi

run compare "$fx/base.prof" "$fx/slow30.prof"
expect slow30-without-threshold 0 "slower"
lacks slow30-no-check "Regression check"

run compare --fail-on-regression 40 --format csv "$fx/base.prof" "$fx/slow30.prof"
expect slow30-under-40 0 "operation,backward,compute,slower,ns,"

run compare --fail-on-regression 10 --format csv "$fx/base.prof" "$fx/slow2.prof"
expect slow2-not-significant 0 "operation,backward,compute,unchanged,ns,"

run compare --fail-on-regression 10 --format csv "$fx/base.prof" "$fx/small50.prof"
expect small-op-does-not-fail 0 "operation,log_metrics,compute,slower,ns,"

run compare --fail-on-regression 10 "$fx/slow30.prof" "$fx/base.prof"
expect faster 0 "faster" "passed"

# ---- what differs -----------------------------------------------------------------------
run compare --format csv "$fx/base.prof" "$fx/renamed.prof"
expect renamed-csv 0 "operation,optimizer_step,compute,removed,ns," \
    "operation,fused_optimizer,compute,added,ns," \
    "bottleneck,optimizer_step,hot_operation,fixed,severity," \
    "bottleneck,fused_optimizer,hot_operation,new,severity,"
run compare "$fx/base.prof" "$fx/renamed.prof"
expect renamed-text 0 "Operations only in after (1)" "Operations only in before (1)" \
    "  fused_optimizer  300 calls"

run compare "$fx/base.prof" "$fx/half.prof"
expect step-counts 0 "step counts differ: 300 before, 150 after"
run compare "$fx/base.prof" "$fx/sampled.prof"
expect sampling 0 "sampling differs: 100% of steps kept their events before, 25% after" \
    "300 steps (75 sampled)"
run compare "$fx/base.prof" "$fx/other.prof"
expect commands 0 "the runs come from different commands ('train.py' before, 'bench.py' after)"
run compare "$fx/base.prof" "$fx/leaky.prof"
expect leak-new 0 "[memory_leak]"
if grep -q '^  slope gpu.allocated .*/step.*new leak$' "$out"; then ok leak-row; else
    not_ok leak-row "$(grep 'slope gpu' "$out")"
fi

PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}

# ---- directories of repeated runs ------------------------------------------------------------
# base and rerun are two runs of one program; slow30 twice is the slower one.
mkdir "$tmp/same" "$tmp/slow" "$tmp/ranks"
cp "$fx/base.prof" "$fx/rerun.prof" "$tmp/same/"
cp "$fx/slow30.prof" "$tmp/slow/a.prof"
cp "$fx/slow30.prof" "$tmp/slow/b.prof"
printf 'not a profile\n' >"$tmp/same/notes.txt"
run compare --fail-on-regression 10 "$tmp/same" "$tmp/slow"
expect dirs-slower 1 "before   $tmp/same (2 runs, steady step " "after    $tmp/slow (2 runs, steady step " \
    "2 runs before, 2 after: changes are tested against the variation between runs" \
    "Regression check (--fail-on-regression 10%): FAILED"
if grep -q '^  backward .* +[23][0-9]\.[0-9]% .* slower$' "$out"; then ok dirs-backward-row; else
    not_ok dirs-backward-row "$(grep '^  backward' "$out")"
fi
run compare --fail-on-regression 10 "$tmp/same" "$tmp/same"
expect dirs-same 0 "no change beyond the noise floor" "passed"
lacks dirs-same-nothing-slower "  slower"
run compare --format json "$tmp/same" "$fx/rerun.prof"
expect dirs-against-one 0 '"method": "between_runs"' '"runs": 2' '"runs": 1'
# each run's steady step time, as its own analysis gives it, in the order of run_paths
cp "$out" "$tmp/dirs.json"
"$PYTHON" - "$tmp/dirs.json" "$PROF" >"$err" 2>&1 <<'PY'
import json, subprocess, sys
c = json.load(open(sys.argv[1]))
for side in ("before", "after"):
    run = c[side]
    assert len(run["run_step_means_ns"]) == len(run["run_paths"]) == run["runs"], run
    for path, mean in zip(run["run_paths"], run["run_step_means_ns"]):
        r = json.loads(subprocess.run([sys.argv[2], "analyze", "--format", "json", path],
                                      stdout=subprocess.PIPE, check=True).stdout)
        want = r["summary"]["step_time"]["steady"]["mean_ns"]
        assert abs(mean - want) <= 1e-9 * want, (path, mean, want)
PY
if [ -s "$err" ]; then not_ok dirs-run-step-means "$(head -c 600 "$err")"; else ok dirs-run-step-means; fi
"$TEST_BIN/make_analyze" "$tmp/ranks" >"$err" 2>&1 || not_ok make-analyze "$(cat "$err")"
rm -f "$tmp/ranks/rank1-of-4.prof"
cp "$fx/base.prof" "$tmp/ranks/"
run compare --format json "$tmp/ranks" "$fx/base.prof"
if status_is ranks-form-one-run 0; then
    "$PYTHON" - "$out" "$tmp/ranks" >"$err" 2>&1 <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
paths = [p.rsplit("/", 1)[1] for p in c["before"]["run_paths"]]
assert c["before"]["runs"] == len(paths), c["before"]
assert "rank0-of-2.prof" in paths and "rank1-of-2.prof" not in paths, paths
PY
    if [ -s "$err" ]; then not_ok ranks-grouped "$(cat "$err")"; else ok ranks-grouped; fi
fi

# ---- JSON -----------------------------------------------------------------------------
run compare --format json --fail-on-regression 10 "$fx/base.prof" "$fx/slow30.prof"
expect json 1 '"schema": "prof-compare"' '"regressed": true'
cp "$out" "$tmp/cmp.json"
if ! "$PYTHON" -c 'import jsonschema' 2>/dev/null; then
    echo "ok json-schema # skip $PYTHON has no jsonschema module"
elif "$PYTHON" tests/support/validate_report.py formats/compare.schema.json "$tmp/cmp.json" >"$err" 2>&1; then
    ok json-schema
else
    not_ok json-schema "$(head -c 600 "$err")"
fi

# ---- -o, colour ----------------------------------------------------------------------------
run compare -o "$tmp/cmp.txt" --fail-on-regression 10 "$fx/base.prof" "$fx/slow30.prof"
if status_is output-file 1; then
    if [ -s "$out" ] || [ -s "$err" ]; then not_ok output-file "stdout or stderr not empty"
    elif has "$tmp/cmp.txt" "FAILED"; then ok output-file
    else not_ok output-file "file lacks the check"; fi
fi

esc=$(printf '\033')
run compare "$fx/base.prof" "$fx/slow30.prof"
if grep -q "$esc" "$out"; then not_ok no-colour-in-pipe "escape codes in piped output"; else
    ok no-colour-in-pipe
fi
if command -v script >/dev/null 2>&1; then
    tty_run "$tmp/tty" "env -u NO_COLOR $PROF compare $fx/base.prof $fx/slow30.prof"
    if grep -q "${esc}\[31m" "$tmp/tty" && has "$tmp/tty" "$(printf '\342\206\222')"; then
        ok terminal-colour
    else
        not_ok terminal-colour "no colour on a terminal: $(head -c 300 "$tmp/tty")"
    fi
    tty_run "$tmp/tty" "NO_COLOR=1 $PROF compare $fx/base.prof $fx/slow30.prof"
    if grep -q "${esc}\[[0-9;]*m" "$tmp/tty"; then not_ok no-color-env "colour with NO_COLOR"; else
        ok no-color-env
    fi
    tty_run "$tmp/tty" "env -u NO_COLOR $PROF compare --no-color $fx/base.prof $fx/slow30.prof"
    if grep -q "${esc}\[[0-9;]*m" "$tmp/tty"; then not_ok no-color-option "colour with --no-color"; else
        ok no-color-option
    fi
else
    echo "ok terminal-colour # skip no script(1)"
fi

# ---- help ----------------------------------------------------------------------------------
for args in "compare --help" "help compare"; do
    # shellcheck disable=SC2086 # split on purpose
    run $args
    expect "help-$(echo "$args" | tr ' ' '_')" 0 "usage: prof compare BEFORE AFTER" \
        "directory of profiles of repeated runs" "--leak-threshold MIB"
done
run help
expect help-lists-compare 0 "  compare   compare two runs"

# ---- failures ------------------------------------------------------------------------------
run compare "$fx/base.prof"
error_is one-profile 2 "prof: compare: needs two sides, BEFORE and AFTER (see 'prof compare --help')"
run compare "$fx/base.prof" "$fx/base.prof" "$fx/base.prof"
error_is three-profiles 2 "prof: compare: takes exactly two sides, BEFORE and AFTER (see 'prof compare --help')"
run compare --format html "$fx/base.prof" "$fx/base.prof"
error_is bad-format 2 "prof: compare: unknown format 'html': use text, json or csv (see 'prof compare --help')"
run compare --fail-on-regression ten "$fx/base.prof" "$fx/base.prof"
error_is bad-threshold 2 "prof: compare: --fail-on-regression takes a percentage, not 'ten' (see 'prof compare --help')"
run compare --noise -1 "$fx/base.prof" "$fx/base.prof"
error_is bad-noise 2 "prof: compare: --noise takes a percentage, not '-1' (see 'prof compare --help')"
run compare --bogus "$fx/base.prof" "$fx/base.prof"
error_is unknown-option 2 "prof: compare: unknown option '--bogus' (see 'prof compare --help')"

run compare "$fx/base.prof" "$tmp/missing.prof"
error_is missing-file 3 "prof: compare: cannot read '$tmp/missing.prof': cannot open: No such file or directory"
printf 'step,region,ms\n1,forward,12.5\n' >"$tmp/data.csv"
run compare "$tmp/data.csv" "$fx/base.prof"
error_is not-prof 3 "prof: compare: cannot read '$tmp/data.csv': not a prof file (bad magic)"

mkdir "$tmp/empty"
printf 'notes\n' >"$tmp/empty/README"
run compare "$tmp/empty" "$fx/base.prof"
error_is empty-directory 3 "prof: compare: no profiles in directory '$tmp/empty'"
run compare --leak-threshold lots "$fx/base.prof" "$fx/base.prof"
error_is bad-leak-threshold 2 "prof: compare: --leak-threshold takes MiB per step, not 'lots' (see 'prof compare --help')"

run compare -o "$tmp/no/such/dir/cmp.txt" "$fx/base.prof" "$fx/base.prof"
error_is output-unwritable-dir 4 "prof: compare: cannot create '$tmp/no/such/dir/cmp.txt': No such file or directory"
mkdir "$tmp/outdir"
run compare -o "$tmp/outdir" "$fx/base.prof" "$fx/base.prof"
status_is output-over-directory 4 && {
    left=$(ls "$tmp" | grep -c '^outdir\.tmp')
    if [ "$left" -ne 0 ]; then not_ok output-over-directory "temporary file left behind"
    elif [ "$(ls -A "$tmp/outdir")" ]; then not_ok output-over-directory "something written into the directory"
    else ok output-over-directory; fi
}
# Names that are not UTF-8: the CSV is valid UTF-8, bad bytes as U+FFFD.
if "$TEST_BIN/make_export_names" "$tmp/badnames.prof" 2>"$err"; then
    run compare --format csv "$tmp/badnames.prof" "$tmp/badnames.prof"
    if status_is csv-utf8 0; then
        if msg=$("$PYTHON" -c '
import sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
assert "\ufffd" in text, "no U+FFFD for the invalid bytes"' "$out" 2>&1); then ok csv-utf8
        else not_ok csv-utf8 "$msg"; fi
    fi
else
    not_ok csv-utf8 "make_export_names: $(cat "$err")"
fi
mkfifo "$tmp/cmp.fifo"
timeout 20 cat "$tmp/cmp.fifo" >"$tmp/fifo.txt" &
reader=$!
run compare -o "$tmp/cmp.fifo" "$fx/base.prof" "$fx/base.prof"
wait $reader
if status_is output-fifo 0 && [ -p "$tmp/cmp.fifo" ] && [ -s "$tmp/fifo.txt" ]; then ok output-fifo
else not_ok output-fifo "the FIFO was replaced or got nothing"; fi
if [ -w /dev/full ]; then
    "$PROF" compare "$fx/base.prof" "$fx/base.prof" >/dev/full 2>"$err"
    rc=$?
    if [ $rc -eq 4 ] && has "$err" "prof: compare: cannot write to standard output"; then
        ok stdout-full
    else
        not_ok stdout-full "exit status $rc: $(cat "$err")"
    fi
else
    echo "ok stdout-full # skip no /dev/full"
fi

[ $fails -eq 0 ]
