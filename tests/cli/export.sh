#!/bin/sh
# export.sh - `prof export` end to end on the real binary: the Chrome trace
# of testdata/demo.prof read back by Python's json (event counts equal to
# `prof info`'s, complete events placed and nested per thread, counters
# numeric), names full of quotes, commas, newlines, control bytes and
# invalid UTF-8 surviving the Chrome trace, JSON lines and CSV (read back by
# Python's json and csv modules), folded stacks equal to self times that
# Python computes from the JSON export, a cut-short profile (one warning,
# status 0), every failure with its status: 2 usage, 3 input, 4 output
# with no file left behind, and the surroundings of -o: a FIFO and a device
# written through and left as they are, a 0600 target kept 0600, a
# read-only one refused, a 250-byte name, and SIGTERM, SIGINT and SIGHUP
# mid-write removing the temporary before prof dies by the signal.
# Run from the repository root with PROF=path/to/prof, TEST_BIN=dir of the
# helper binaries (make_export_names), as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
DEMO=testdata/demo.prof
PYTHON=${PYTHON:-python3}

cli_tmp export

# quiet_ok NAME: status 0 and nothing on stderr
quiet_ok() {
    status_is "$1" 0 || return 1
    if [ -s "$err" ]; then
        not_ok "$1" "stderr not empty: $(head -c 300 "$err")"
        return 1
    fi
    return 0
}

# py NAME SCRIPT ARGS...: runs a Python check; its output says what is wrong
py() {
    name=$1
    shift
    if msg=$("$PYTHON" -c "$@" 2>&1); then ok "$name"; else not_ok "$name" "$msg"; fi
}

# no_leftovers NAME DIR: no temporary output file remains in DIR
no_leftovers() {
    if ls -A "$2" | grep -q '\.tmp\.'; then not_ok "$1" "temporary file left: $(ls -A "$2")"; else
        ok "$1"
    fi
}

if ! "$PYTHON" -c 'import json, csv' 2>/dev/null; then
    echo "ok export # skip no $PYTHON"
    exit 0
fi

# ---- help ------------------------------------------------------------------------
run export --help
if quiet_ok export-help; then
    grep -q '^usage: prof export RUN.prof --format FORMAT' "$out" && ok export-help ||
        not_ok export-help "$(head -3 "$out")"
fi
run help export
if quiet_ok help-export; then
    cmp -s "$out" "$tmp/help" 2>/dev/null || "$PROF" export -h >"$tmp/help"
    cmp -s "$out" "$tmp/help" && ok help-export || not_ok help-export "differs from export -h"
fi

# ---- Chrome trace of the demo --------------------------------------------------------
"$PROF" info "$DEMO" >"$tmp/info.txt" 2>&1
mkdir "$tmp/o"
run export "$DEMO" --format chrome-trace -o "$tmp/o/demo.json"
if quiet_ok chrome-demo-written; then
    [ ! -s "$out" ] && [ -s "$tmp/o/demo.json" ] && ok chrome-demo-written ||
        not_ok chrome-demo-written "output on stdout or no file"
fi
no_leftovers chrome-demo-no-temp "$tmp/o"

CHECK_TRACE='
import json, re, sys, collections
trace = json.load(open(sys.argv[1], encoding="utf-8"))
info = open(sys.argv[2]).read() if len(sys.argv) > 2 else ""
ev = trace["traceEvents"]
assert trace["displayTimeUnit"] == "ns"
assert isinstance(trace["otherData"], dict)
cats = collections.Counter(e["cat"] for e in ev if e["ph"] not in "Msf")
for m in re.finditer(r"^  (\w+) +([\d,]+)$", info, re.M):
    want = int(m.group(2).replace(",", ""))
    got = cats.get({"region": "region"}.get(m.group(1), m.group(1)), 0)
    assert got == want, "%s: %d in the trace, prof info says %d" % (m.group(1), got, want)
tracks = collections.defaultdict(list)
for e in ev:
    assert isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int), e
    if e["ph"] == "X":
        for k in ("ts", "dur"):
            assert isinstance(e[k], (int, float)) and e[k] >= 0, e
        tracks[(e["pid"], e["tid"])].append((e["ts"], -e["dur"]))
    elif e["ph"] == "C":
        assert e["args"] and all(isinstance(v, (int, float)) for v in e["args"].values()), e
for key, slices in tracks.items():
    slices.sort()
    stack = []
    for ts, neg in slices:
        end = ts - neg
        while stack and ts >= stack[-1] - 0.0005:
            stack.pop()
        assert not stack or end <= stack[-1] + 0.0005, "overlap on %s at %.3f" % (key, ts)
        stack.append(end)
print(sum(cats.values()))
'
py chrome-demo-parses "$CHECK_TRACE" "$tmp/o/demo.json" "$tmp/info.txt"
grep -q '^  region       7,530$' "$tmp/info.txt" && ok chrome-demo-info-counts ||
    not_ok chrome-demo-info-counts "prof info of the demo changed: $(cat "$tmp/info.txt")"

# ---- names that need escaping and quoting ------------------------------------------------
if ! "$TEST_BIN/make_export_names" "$tmp/names.prof" 2>"$err"; then
    not_ok make-export-names "$(cat "$err")"
fi
NAMES='["say \"hi\"", "C:\\path\\to", "two\nlines\r\n", "a,b,\"c\"", "bell\x07 esc\x1b[0m",
        "bad \ufffd\ufffd utf8 \ufffd", "x;y z", "caf\u00e9"]'
run export "$tmp/names.prof" --format chrome-trace
quiet_ok chrome-names-run && py chrome-names "$CHECK_TRACE
names = $NAMES
got = [e[\"name\"] for e in ev if e[\"ph\"] == \"X\" and e[\"cat\"] == \"region\" and e[\"args\"][\"depth\"] == 0]
assert got == names, got
assert any(e[\"name\"] == \"gemm<\\\"f\\\\32\\\">\" for e in ev), [e[\"name\"] for e in ev]
flows = [e for e in ev if e[\"ph\"] in \"sf\"]
assert len(flows) == 6 and all(e[\"ph\"] == \"s\" or e[\"bp\"] == \"e\" for e in flows), flows
assert {e[\"id\"] for e in flows} == {1, 2, 3}
" "$out"

run export "$tmp/names.prof" --format json -o -
quiet_ok json-names-run && py json-names "
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding=\"utf-8\")]
assert lines[0][\"type\"] == \"profile\" and lines[-1][\"type\"] == \"end\", (lines[0], lines[-1])
events = [l for l in lines[1:-1] if l[\"type\"] != \"thread\"]
assert len(events) == lines[-1][\"events\"] == 27, len(events)
got = [l[\"name\"] for l in events if l[\"type\"] == \"region\" and l[\"depth\"] == 0]
assert got == $NAMES, got
assert [l[\"name\"] for l in lines if l[\"type\"] == \"thread\"] == [\"main, \\\"first\\\"\"]
" "$out"

run export "$tmp/names.prof" --format csv -o "$tmp/o/names.csv"
quiet_ok csv-names-run && py csv-roundtrip "
import csv, sys
with open(sys.argv[1], newline=\"\", encoding=\"utf-8\") as f:
    rows = list(csv.reader(f))
assert rows[0] == \"type,thread,thread_name,start_ns,dur_ns,name,kind,depth,device,stream,correlation,value,flags\".split(\",\"), rows[0]
assert all(len(r) == 13 for r in rows), [r for r in rows if len(r) != 13]
assert len(rows) == 28, len(rows)
got = [r[5] for r in rows[1:] if r[0] == \"region\" and r[7] == \"0\"]
# control characters but tab, LF and CR are U+FFFD in a CSV (export-csv.md)
want = [n.replace(\"\\x07\", \"\\ufffd\").replace(\"\\x1b\", \"\\ufffd\") for n in $NAMES]
assert got == want, got
assert {r[2] for r in rows[1:] if r[1] != \"gpu\"} == {\"main, \\\"first\\\"\"}
counter = [r for r in rows if r[0] == \"counter\"][0]
assert counter[5] == \"loss, \\\"smoothed\\\"\" and float(counter[11]) == 0.25, counter
" "$tmp/o/names.csv"

# names that begin as a spreadsheet formula are text there (export-csv.md);
# the same for the CSV of analyze
printf '{"traceEvents": [%s, %s, %s, %s]}' \
    '{"ph": "X", "cat": "cpu_op", "name": "=cmd|'"'"' /C calc'"'"'!A0", "pid": 1, "tid": 1, "ts": 1, "dur": 5}' \
    '{"ph": "X", "cat": "cpu_op", "name": "@SUM(A1)", "pid": 1, "tid": 1, "ts": 10, "dur": 5}' \
    '{"ph": "X", "cat": "cpu_op", "name": "+1-2", "pid": 1, "tid": 1, "ts": 20, "dur": 5}' \
    '{"ph": "X", "cat": "cpu_op", "name": "-x", "pid": 1, "tid": 1, "ts": 30, "dur": 5}' >"$tmp/formula.json"
run export "$tmp/formula.json" --format csv -o "$tmp/o/formula.csv"
quiet_ok csv-formula-run && py csv-formula "
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline=\"\", encoding=\"utf-8\")))
got = [r[5] for r in rows[1:] if r[0] == \"region\"]
assert got == [\"'=cmd|' /C calc'!A0\", \"'@SUM(A1)\", \"'+1-2\", \"'-x\"], got
raw = open(sys.argv[1], encoding=\"utf-8\").read()
assert '\"\\'=cmd' in raw and ',=' not in raw and ',@' not in raw, raw
" "$tmp/o/formula.csv"
run analyze "$tmp/formula.json" --format csv
quiet_ok analyze-csv-formula-run && py analyze-csv-formula "
import sys
raw = open(sys.argv[1], encoding=\"utf-8\").read()
assert '\"\\'=cmd' in raw and '\"\\'@SUM(A1)\"' in raw, raw
assert '\\n=' not in raw and ',=' not in raw and '\\n@' not in raw, raw
" "$out"

run export "$tmp/names.prof" --format folded
quiet_ok folded-names-run && py folded-names "
import sys
lines = open(sys.argv[1], encoding=\"utf-8\").read().splitlines()
assert \"two lines   300\" in lines and \"x:y z 300\" in lines and \"x:y z;inner 200\" in lines, lines
assert len(lines) == 16, lines
" "$out"

# ---- folded stacks of the demo against self times ----------------------------------------
"$PROF" export "$DEMO" --format json -o "$tmp/demo.jsonl" 2>"$err" || not_ok demo-json "$(cat "$err")"
run export "$DEMO" --format folded
quiet_ok folded-demo-run && py folded-demo-self-times "
import bisect, collections, json, sys
regions = collections.defaultdict(list)
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e[\"type\"] == \"region\":
        regions[e[\"thread\"]].append(e)
want = collections.Counter()
for rs in regions.values():
    by_depth = collections.defaultdict(list)
    for r in rs:
        by_depth[r[\"depth\"]].append(r)
    for d in by_depth:
        by_depth[d].sort(key=lambda r: r[\"start_ns\"])
    for r in rs:
        kids = by_depth.get(r[\"depth\"] + 1, [])
        starts = [k[\"start_ns\"] for k in kids]
        i = bisect.bisect_left(starts, r[\"start_ns\"])
        child = 0
        while i < len(kids) and kids[i][\"start_ns\"] < r[\"start_ns\"] + r[\"dur_ns\"]:
            child += kids[i][\"dur_ns\"]
            i += 1
        want[r[\"name\"]] += r[\"dur_ns\"] - child
got = collections.Counter()
for line in open(sys.argv[2]):
    stack, ns = line.rsplit(\" \", 1)
    got[stack.split(\";\")[-1]] += int(ns)
want = {k: v for k, v in want.items() if v}
assert dict(got) == want, (dict(got), want)
assert len(want) == 17, sorted(want)
" "$tmp/demo.jsonl" "$out"

run export "$DEMO" --format folded --thread-frames
quiet_ok folded-thread-frames && {
    if grep -q '^train;forward;layer.0;attention [0-9]*$' "$out" &&
        grep -q '^dataloader;fetch_batch;decode [0-9]*$' "$out"; then ok folded-thread-frames; else
        not_ok folded-thread-frames "$(head -5 "$out")"
    fi
}

# ---- a profile cut short: what is intact, one warning, status 0 --------------------------------
head -c 30000 "$DEMO" >"$tmp/cut.prof"
run export "$tmp/cut.prof" --format chrome-trace -o "$tmp/o/cut.json"
if status_is export-truncated 0; then
    if [ "$(wc -l <"$err")" -ne 1 ] || ! grep -q "^prof: export: warning: '$tmp/cut.prof' was cut short (" "$err"; then
        not_ok export-truncated "stderr: $(cat "$err")"
    else
        py export-truncated "$CHECK_TRACE
assert trace[\"otherData\"][\"prof_export\"][\"truncated\"] is True
assert 0 < len(ev) < 8733
" "$tmp/o/cut.json"
    fi
fi

# ---- usage errors: status 2 -----------------------------------------------------------------
run export "$DEMO"
error_like export-no-format 2 "prof: export: no --format given (chrome-trace, csv, json, folded or sqlite) (see 'prof export --help')"
run export "$DEMO" --format xml
error_like export-bad-format 2 "prof: export: unknown format 'xml'"
run export --format csv
error_like export-no-profile 2 "prof: export: no profile given"
run export "$DEMO" "$DEMO" --format csv
error_like export-two-profiles 2 "prof: export: takes exactly one profile"
run export "$DEMO" --format
error_like export-format-no-value 2 "prof: export: option '--format' needs a value"
run export "$DEMO" --frobnicate
error_like export-unknown-option 2 "prof: export: unknown option '--frobnicate'"

# ---- unreadable input: status 3, no output file ------------------------------------------------
run export "$tmp/missing.prof" --format csv -o "$tmp/o/missing.csv"
error_like export-missing-input 3 "prof: export: cannot read '$tmp/missing.prof': cannot open: No such file or directory"
[ -e "$tmp/o/missing.csv" ] && not_ok export-missing-input-no-file "output file created"
printf 'not a profile\n' >"$tmp/bad.prof"
run export "$tmp/bad.prof" --format json
error_like export-not-prof 3 "not a prof file (bad magic)"

# ---- output errors: status 4, nothing left behind ------------------------------------------------
run export "$DEMO" --format chrome-trace -o "$tmp/no/such/dir/out.json"
error_like export-no-directory 4 "prof: export: cannot create '$tmp/no/such/dir/out.json': No such file or directory"
mkdir "$tmp/ro"
chmod 555 "$tmp/ro"
# root writes anywhere a mode allows nothing: as root this runs as nobody
chmod 755 "$tmp"
run_unprivileged export "$DEMO" --format csv -o "$tmp/ro/out.csv"
error_like export-unwritable-directory 4 "prof: export: cannot create '$tmp/ro/out.csv': Permission denied"
[ -z "$(ls "$tmp/ro")" ] || not_ok export-unwritable-directory-empty "$(ls "$tmp/ro")"
chmod 700 "$tmp"
if [ -d /proc/self ]; then
    # /proc takes no new files, whoever asks
    run export "$DEMO" --format csv -o /proc/prof-export-test.csv
    error_like export-unwritable-proc 4 "prof: export: cannot create '/proc/prof-export-test.csv': "
    ls /proc | grep -q '^prof-export-test' && not_ok export-unwritable-proc-empty "file left in /proc"
fi
if [ -w /dev/full ]; then
    for f in chrome-trace csv json folded; do
        "$PROF" export "$DEMO" --format $f >/dev/full 2>"$err"
        rc=$?
        : >"$out"
        error_like "export-stdout-full-$f" 4 "prof: export: cannot write to standard output: No space left on device"
    done
else
    echo "ok export-stdout-full # skip no /dev/full"
fi
no_leftovers export-no-temp-left "$tmp/o"

# ---- what -o finds there: FIFOs, devices, modes, long names -------------------------------------
mkdir "$tmp/s"
"$PROF" export "$DEMO" --format csv -o "$tmp/demo.csv" 2>"$err" || not_ok export-csv-reference "$(cat "$err")"
mkfifo "$tmp/s/fifo"
timeout 20 cat "$tmp/s/fifo" >"$tmp/fifo.out" &
reader=$!
run export "$DEMO" --format csv -o "$tmp/s/fifo"
wait $reader
if quiet_ok output-fifo; then
    if [ ! -p "$tmp/s/fifo" ]; then not_ok output-fifo "the FIFO was replaced"
    elif ! cmp -s "$tmp/fifo.out" "$tmp/demo.csv"; then not_ok output-fifo "the reader got other bytes"
    else ok output-fifo; fi
fi
# A character device of our own first (as root), so that a wrong build
# replaces that one, and /dev/null only once it stayed a device.
dev_ok=yes
if [ "$(id -u)" = 0 ] && mknod "$tmp/s/null" c 1 3 2>/dev/null; then
    run export "$DEMO" --format csv -o "$tmp/s/null"
    if quiet_ok output-char-device; then
        [ -c "$tmp/s/null" ] && ok output-char-device || {
            not_ok output-char-device "the device was replaced by a file"
            dev_ok=no
        }
    else dev_ok=no; fi
else
    echo "ok output-char-device # skip not root or no mknod"
fi
if [ $dev_ok = yes ] && [ -c /dev/null ]; then
    run export "$DEMO" --format json -o /dev/null
    if quiet_ok output-dev-null; then
        [ -c /dev/null ] && ok output-dev-null || not_ok output-dev-null "/dev/null is no device any more"
    fi
fi
no_leftovers output-devices-no-temp /dev
echo old >"$tmp/s/private.csv"
chmod 600 "$tmp/s/private.csv"
run export "$DEMO" --format csv -o "$tmp/s/private.csv"
if quiet_ok output-keeps-0600; then
    mode=$(stat -c %a "$tmp/s/private.csv")
    if [ "$mode" != 600 ]; then not_ok output-keeps-0600 "mode $mode"
    elif ! cmp -s "$tmp/s/private.csv" "$tmp/demo.csv"; then not_ok output-keeps-0600 "not replaced"
    else ok output-keeps-0600; fi
fi
echo old >"$tmp/s/ro.csv"
chmod 444 "$tmp/s/ro.csv"
run export "$DEMO" --format csv -o "$tmp/s/ro.csv"
error_is output-read-only 4 "prof: export: cannot write '$tmp/s/ro.csv': file is read-only; remove it or choose another name"
[ "$(cat "$tmp/s/ro.csv")" = old ] || not_ok output-read-only-kept "the read-only file changed"
long=$(printf '%0250d' 0)
run export "$DEMO" --format csv -o "$tmp/s/$long"
if quiet_ok output-250-byte-name; then
    cmp -s "$tmp/s/$long" "$tmp/demo.csv" && ok output-250-byte-name ||
        not_ok output-250-byte-name "file differs"
fi
no_leftovers output-surroundings-no-temp "$tmp/s"
run export "$DEMO" --format csv -o "$tmp/no/such/$long/out.csv"
error_like output-long-path-keeps-reason 4 "/out.csv': No such file or directory"

# ---- SIGTERM, SIGINT, SIGHUP mid-write: no temporary, death by the signal ----------------------
# Python starts prof with the three signals at their defaults (a shell
# would start a background job with SIGINT ignored), waits until the
# temporary file exists, and sends the signal.
if "$TEST_BIN/make_big" 3000000 "$tmp/big.prof" >/dev/null 2>"$err"; then
    mkdir "$tmp/sig"
    py output-signals-remove-temp '
import os, signal, subprocess, sys, time
prof, big, d = sys.argv[1:4]
for name in ("SIGTERM", "SIGINT", "SIGHUP"):
    sig = getattr(signal, name)
    def defaults():
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
    p = subprocess.Popen([prof, "export", big, "--format", "chrome-trace", "-o",
                          os.path.join(d, "big.json")], preexec_fn=defaults,
                         stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while not any(".tmp." in f for f in os.listdir(d)):
        assert p.poll() is None, "%s: prof ended (%s) before a temporary appeared" % (name, p.returncode)
        assert time.time() < deadline, "no temporary file appeared"
        time.sleep(0.002)
    p.send_signal(sig)
    rc = p.wait()
    assert rc == -sig, "%s: exit %s, want death by the signal" % (name, rc)
    left = os.listdir(d)
    assert not left, "%s: left %s" % (name, left)
' "$PROF" "$tmp/big.prof" "$tmp/sig"
else
    not_ok output-signals-remove-temp "make_big: $(cat "$err")"
fi

[ $fails -eq 0 ]
