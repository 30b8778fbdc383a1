#!/bin/sh
# hostile.sh - prof in hostile surroundings and on hostile inputs: every
# case ends fast and clean, loses nothing and clobbers nothing. One check
# (or a few) per row of issue 15's table that is about the surroundings or
# the reader, rows fixed earlier included so that they stay fixed (the
# recorder's rows, 5, 6, 7 and 9, are tests/cli/record.sh's):
#   inputs that are not regular files: a FIFO (row 2), a device, a directory;
#   outputs that are: a FIFO, a device, /dev/null, /dev/full (rows 1, 16's
#   full disk); closed standard descriptors; SIGINT, SIGTERM, SIGHUP during
#   export -o (row 8); modes of an existing -o (row 10); prof record into a
#   missing directory (row 11); non-UTF-8 names in CSV (row 12); a
#   250-character name (row 13); the viewer's largest window bound (row 14);
#   a string table bomb (row 3); 100,000 devices (row 4); a page of 200,000
#   names (row 15); memory running out while reading (row 16).
# Run from the repository root with PROF, TEST_BIN and B, as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
DEMO=testdata/demo.prof
GOLDEN=testdata/golden
PYTHON=${PYTHON:-python3}
HOSTILE=$TEST_BIN/make_hostile

cli_tmp hostile
case "$PROF" in */asan/*) asan=1 ;; *) asan=0 ;; esac

# timed SECONDS ARGS...: run, killed past SECONDS (status 124: it hung)
timed() {
    limit=$1
    shift
    timeout "$limit" "$PROF" "$@" >"$out" 2>"$err"
    rc=$?
}

# same_file NAME FILE REFERENCE: status 0, FILE has REFERENCE's bytes
same_file() {
    status_is "$1" 0 || return
    if cmp -s "$2" "$3"; then ok "$1"; else not_ok "$1" "$2 differs from $3"; fi
}

# no_temp NAME DIR: no temporary output file is left in DIR
no_temp() {
    if ls -A "$2" | grep -q '\.tmp\.'; then not_ok "$1" "left: $(ls -A "$2" | grep '\.tmp\.')"; else
        ok "$1"
    fi
}

"$PROF" analyze "$DEMO" >"$tmp/analyze.txt" 2>"$err" || not_ok reference "$(cat "$err")"
"$PROF" export "$DEMO" --format csv -o "$tmp/demo.csv" 2>"$err" || not_ok reference "$(cat "$err")"
head -c 30000 "$DEMO" >"$tmp/cut.prof"

# ---- inputs that are not regular files: refused at once, status 3 ---------------------------
mkfifo "$tmp/in.fifo"
for c in "analyze" "info" "export --format csv" "view --html $tmp/page.html" "compare $DEMO"; do
    name="input-fifo-$(echo "$c" | cut -d' ' -f1)"
    # shellcheck disable=SC2086 # the command's words
    timed 10 $c "$tmp/in.fifo"
    error_like "$name" 3 "not a regular file (a FIFO)"
done
timed 10 view --port 0 --no-open "$tmp/in.fifo"
error_like input-fifo-view-server 3 "not a regular file (a FIFO)"
timed 10 compare "$tmp/in.fifo" "$DEMO"
error_like input-fifo-compare-before 3 "not a regular file (a FIFO)"
# a device that never ends (reading it would never finish), and a directory
timed 10 analyze /dev/zero
error_like input-char-device 3 "not a regular file (a character device)"
timed 10 export --format json /dev/zero
error_like input-char-device-export 3 "not a regular file (a character device)"
mkdir "$tmp/dir.prof"
timed 10 info "$tmp/dir.prof"
error_like input-directory 3 "is a directory"
# what is left of a FIFO nobody wrote to: still a FIFO, and no reader blocked on it
[ -p "$tmp/in.fifo" ] && ok input-fifo-left-alone || not_ok input-fifo-left-alone "not a FIFO any more"

# ---- outputs that are not regular files: written through, left as they are ----------------
mkdir "$tmp/o"
# fifo_out NAME REFERENCE ARGS...: prof writes to a FIFO (named after
# ARGS, whose last is -o or --html) while cat reads it; the FIFO stays, the
# reader gets REFERENCE (or anything, when it is "")
fifo_out() {
    name=$1
    ref=$2
    shift 2
    rm -f "$tmp/o/fifo"
    mkfifo "$tmp/o/fifo"
    timeout 30 cat "$tmp/o/fifo" >"$tmp/fifo.got" &
    reader=$!
    timed 30 "$@" "$tmp/o/fifo"
    wait $reader
    status_is "$name" 0 || return
    if [ ! -p "$tmp/o/fifo" ]; then not_ok "$name" "the FIFO was replaced"
    elif [ -n "$ref" ] && ! cmp -s "$tmp/fifo.got" "$ref"; then not_ok "$name" "the reader got other bytes"
    elif [ ! -s "$tmp/fifo.got" ]; then not_ok "$name" "the reader got nothing"
    else ok "$name"; fi
}
fifo_out output-fifo-analyze "$tmp/analyze.txt" analyze "$DEMO" -o
fifo_out output-fifo-export "$tmp/demo.csv" export "$DEMO" --format csv -o
fifo_out output-fifo-compare "" compare "$DEMO" "$DEMO" -o
fifo_out output-fifo-view "" view "$DEMO" --html
no_temp output-fifo-no-temp "$tmp/o"

# A device of our own first (root only), so that a wrong build replaces
# that one; the system's /dev/null only once ours stayed a device.
dev_ok=no
if [ "$(id -u)" = 0 ] && mknod "$tmp/o/null" c 1 3 2>/dev/null; then
    dev_ok=yes
    for c in "analyze $DEMO -o" "export $DEMO --format json -o" "compare $DEMO $DEMO -o" \
        "view $DEMO --html"; do
        name="output-device-$(echo "$c" | cut -d' ' -f1)"
        # shellcheck disable=SC2086
        timed 30 $c "$tmp/o/null"
        if status_is "$name" 0; then
            if [ -c "$tmp/o/null" ]; then ok "$name"; else not_ok "$name" "replaced by a file"; dev_ok=no; fi
        else
            dev_ok=no
        fi
    done
else
    echo "ok output-device # skip not root, or mknod refused: the system's /dev/null is not risked"
fi
if [ $dev_ok = yes ]; then
    timed 30 analyze "$DEMO" -o /dev/null
    if status_is output-dev-null 0; then
        [ -c /dev/null ] && ok output-dev-null || not_ok output-dev-null "/dev/null is no device any more"
    fi
fi
# a full disk: /dev/full as -o and as standard output, status 4
if [ -w /dev/full ]; then
    timed 30 export "$DEMO" --format chrome-trace -o /dev/full
    error_like output-dev-full 4 "No space left on device"
    [ -c /dev/full ] && ok output-dev-full-left-alone || not_ok output-dev-full-left-alone "replaced"
    for c in analyze info; do
        timeout 30 "$PROF" $c "$DEMO" >/dev/full 2>"$err"
        rc=$?
        : >"$out"
        error_like "stdout-full-$c" 4 "cannot write to standard output: No space left on device"
    done
else
    echo "ok output-dev-full # skip no writable /dev/full"
fi

# ---- closed standard descriptors -----------------------------------------------------------
# stdout closed: writing it fails as any failed write does
"$PROF" analyze "$DEMO" >&- 2>"$err"
rc=$?
: >"$out"
error_like closed-stdout 4 "cannot write to standard output"
# every descriptor closed: -o still gets exactly the report
"$PROF" export "$DEMO" --format csv -o "$tmp/o/closed.csv" <&- >&- 2>&-
rc=$?
same_file closed-all-export "$tmp/o/closed.csv" "$tmp/demo.csv"
"$PROF" analyze "$DEMO" -o "$tmp/o/closed.txt" <&- >&- 2>&-
rc=$?
same_file closed-all-analyze "$tmp/o/closed.txt" "$tmp/analyze.txt"
# stderr closed while there is something to warn about: no message lands in an output
"$PROF" analyze --format csv -o "$tmp/o/cut.csv" "$tmp/cut.prof" 2>&-
rc=$?
if status_is closed-stderr-warning 0; then
    if grep -q 'prof:' "$tmp/o/cut.csv"; then not_ok closed-stderr-warning "a message in the output"
    else ok closed-stderr-warning; fi
fi
"$PROF" export --format csv -o "$tmp/o/cut-export.csv" "$tmp/cut.prof" 2>&-
rc=$?
"$PROF" export --format csv -o "$tmp/o/cut-ref.csv" "$tmp/cut.prof" 2>/dev/null
same_file closed-stderr-export "$tmp/o/cut-export.csv" "$tmp/o/cut-ref.csv"
"$PROF" view "$DEMO" --html "$tmp/o/page.html" >&- 2>&-
rc=$?
if status_is closed-view-html 0 && grep -q '"prof-data"' "$tmp/o/page.html"; then ok closed-view-html
else not_ok closed-view-html "no page"; fi
# errors keep their status when there is nowhere to say them
"$PROF" analyze "$tmp/absent.prof" 2>&-
rc=$?
status_is closed-stderr-error 3 && ok closed-stderr-error
no_temp closed-no-temp "$tmp/o"

# ---- signals during export -o: the temporary goes, prof dies by the signal -----------------
# Python starts prof with the signals at their defaults (a shell's
# background job would ignore SIGINT), waits until the temporary exists.
if "$PYTHON" -c 'import subprocess' 2>/dev/null &&
    "$TEST_BIN/make_big" 2000000 "$tmp/big.prof" >/dev/null 2>"$err"; then
    mkdir "$tmp/sig"
    if msg=$("$PYTHON" -c '
import os, signal, subprocess, sys, time
prof, big, d = sys.argv[1:4]
def defaults():
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
for name in ("SIGINT", "SIGTERM", "SIGHUP"):
    sig = getattr(signal, name)
    p = subprocess.Popen([prof, "export", big, "--format", "chrome-trace", "-o",
                          os.path.join(d, "big.json")], preexec_fn=defaults,
                         stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while not any(".tmp." in f for f in os.listdir(d)):
        assert p.poll() is None, "%s: prof ended (%s) before its temporary appeared" % (name, p.returncode)
        assert time.time() < deadline, "%s: no temporary appeared" % name
        time.sleep(0.002)
    p.send_signal(sig)
    rc = p.wait()
    assert rc == -sig, "%s: exit %s, want death by the signal" % (name, rc)
    assert not os.listdir(d), "%s: left %s" % (name, os.listdir(d))
' "$PROF" "$tmp/big.prof" "$tmp/sig" 2>&1); then ok signals-remove-temp; else not_ok signals-remove-temp "$msg"; fi
else
    echo "ok signals-remove-temp # skip no $PYTHON or make_big failed"
fi

# ---- modes of an existing -o: kept, never widened; read-only refused ------------------------
for mode in 600 640 664; do
    echo old >"$tmp/o/mode$mode"
    chmod "$mode" "$tmp/o/mode$mode"
    timed 30 export "$DEMO" --format csv -o "$tmp/o/mode$mode"
    if status_is "mode-kept-$mode" 0; then
        got=$(stat -c %a "$tmp/o/mode$mode")
        [ "$got" = "$mode" ] && ok "mode-kept-$mode" || not_ok "mode-kept-$mode" "mode now $got"
    fi
done
echo old >"$tmp/o/readonly"
chmod 444 "$tmp/o/readonly"
timed 30 analyze "$DEMO" -o "$tmp/o/readonly"
error_like mode-read-only-refused 4 "is read-only"
[ "$(cat "$tmp/o/readonly")" = old ] && [ "$(stat -c %a "$tmp/o/readonly")" = 444 ] &&
    ok mode-read-only-untouched || not_ok mode-read-only-untouched "changed"
no_temp mode-no-temp "$tmp/o"

# ---- long names: a 250-character file name; messages keep their reason ---------------------
long=$(printf 'n%.0s' $(seq 1 246)).csv
timed 30 export "$DEMO" --format csv -o "$tmp/o/$long"
same_file long-name-export "$tmp/o/$long" "$tmp/demo.csv"
timed 30 view "$DEMO" --html "$tmp/o/$long"
status_is long-name-view 0 && ok long-name-view
timed 30 analyze "$DEMO" -o "$tmp/no/such/$long/$long"
error_like long-name-keeps-reason 4 "No such file or directory"
no_temp long-name-no-temp "$tmp/o"

# ---- prof record into a directory that does not exist: said, and a documented status -------
timed 30 record -o "$tmp/no/such/dir/x.prof" -- true
error_like record-missing-directory 125 "No such file or directory"

# ---- names that are not UTF-8: CSV output is valid UTF-8 -------------------------------------
"$TEST_BIN/make_export_names" "$tmp/names.prof" 2>"$err" || not_ok make-export-names "$(cat "$err")"
for c in "analyze --format csv --table ops" "compare --format csv $tmp/names.prof"; do
    name="utf8-$(echo "$c" | cut -d' ' -f1)"
    # shellcheck disable=SC2086
    timed 30 $c "$tmp/names.prof"
    if status_is "$name" 0; then
        if "$PYTHON" -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$out" 2>/dev/null
        then ok "$name"; else not_ok "$name" "output is not UTF-8"; fi
    fi
done

# ---- the viewer accepts every window bound it hands out ------------------------------------
if command -v curl >/dev/null 2>&1; then
    : >"$tmp/serve.out"
    "$PROF" view "$DEMO" --port 0 --no-open >"$tmp/serve.out" 2>"$tmp/serve.err" &
    server=$!
    url=""
    i=0
    while [ -z "$url" ] && [ $i -lt 200 ] && kill -0 $server 2>/dev/null; do
        url=$(sed -n 's/^Serving .* at \(http:[^ ]*\) (Ctrl+C stops)$/\1/p' "$tmp/serve.out")
        [ -n "$url" ] || sleep 0.05
        i=$((i + 1))
    done
    if [ -z "$url" ]; then
        not_ok server-largest-t1 "no URL: $(cat "$tmp/serve.out" "$tmp/serve.err")"
    else
        # the printed URL carries the run's token (man prof-view, SECURITY)
        got=$(curl -s -o /dev/null -w '%{http_code}' \
            "${url%%\?token=*}api/events?t1=18446744073709551615&token=${url##*token=}")
        [ "$got" = 200 ] && ok server-largest-t1 || not_ok server-largest-t1 "status $got"
    fi
    kill $server 2>/dev/null
    wait $server 2>/dev/null
else
    echo "ok server-largest-t1 # skip no curl"
fi

# ---- hostile contents: bounded memory and time, a clean error --------------------------------
# A 78 KB file that defines one string id 40 times with 60 MiB of text. Its
# first definition is over the format's limit; memory stays at one block's.
if "$HOSTILE" redefine "$tmp/bomb.prof" 40 60 2>"$err"; then
    if [ $asan = 0 ]; then
        (ulimit -v 600000 && exec timeout 30 "$PROF" analyze "$tmp/bomb.prof") >"$out" 2>"$err"
    else
        timeout 60 "$PROF" analyze "$tmp/bomb.prof" >"$out" 2>"$err"
    fi
    rc=$?
    error_like string-bomb 3 "string 1 of 62914560 bytes, over the 65536-byte limit"
else
    not_ok string-bomb "make_hostile: $(cat "$err")"
fi
if "$HOSTILE" repeat "$tmp/repeat.prof" 1000 2>"$err"; then
    timed 30 info "$tmp/repeat.prof"
    error_like string-redefined 3 "string 1 defined again with other text"
else
    not_ok string-redefined "make_hostile: $(cat "$err")"
fi
# Kernels on 100,000 devices (20,000 under ASan): near-linear, seconds.
n=100000
[ $asan = 1 ] && n=20000
if "$HOSTILE" devices "$tmp/devices.prof" $n 2>"$err"; then
    timed 60 analyze --format json -o "$tmp/devices.json" "$tmp/devices.prof"
    status_is many-devices 0 && ok many-devices
    if [ -s "$tmp/devices.json" ] && [ "$(wc -c <"$tmp/devices.json")" -lt 5000000 ]; then
        ok many-devices-report-bounded
    else
        not_ok many-devices-report-bounded "$(wc -c <"$tmp/devices.json") bytes"
    fi
else
    not_ok many-devices "make_hostile: $(cat "$err")"
fi
# 1,000,000 kernel launches (200,000 under ASan) made in reverse time order,
# each on its own stream, then as many regions before them all: the GPU
# join's lists at their worst stay near-linear (seconds), the streams with
# their own statistics bounded, and every launch counted.
n=1000000
[ $asan = 1 ] && n=200000
if "$HOSTILE" launches "$tmp/launches.prof" $n 2>"$err"; then
    timed 60 analyze --format json -o "$tmp/launches.json" "$tmp/launches.prof"
    if status_is gpu-join-worst 0; then
        if python3 - "$tmp/launches.json" $n <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l = r["summary"]["launches"]
n = int(sys.argv[2])
ok = l["joined"] == n and l["all"]["count"] == n and len(l["streams"]) <= 1000
sys.exit(0 if ok else 1)
PY
        then ok gpu-join-worst
        else not_ok gpu-join-worst "not every launch counted, or the streams unbounded"; fi
    fi
else
    not_ok gpu-join-worst "make_hostile: $(cat "$err")"
fi
# 100,000 memory series, counters and threads (20,000 under ASan): seconds
# (a search per new name took 46 s for the series), and a report that lists
# a page's worth of each and says how many there were.
n=100000
[ $asan = 1 ] && n=20000
for k in series counters threads; do
    if "$HOSTILE" $k "$tmp/$k.prof" $n 2>"$err"; then
        timed 20 analyze --format json -o "$tmp/$k.json" "$tmp/$k.prof"
        if status_is "many-$k" 0; then
            if [ "$(wc -c <"$tmp/$k.json")" -gt 2000000 ]; then
                not_ok "many-$k" "a report of $(wc -c <"$tmp/$k.json") bytes"
            elif ! grep -q "the limit of its per-name lists\|(other threads)" "$tmp/$k.json"; then
                not_ok "many-$k" "the report does not say what it left out"
            else ok "many-$k"; fi
        fi
    else
        not_ok "many-$k" "make_hostile: $(cat "$err")"
    fi
done
# A page of 200,000 distinct names (50,000 under ASan): the page lists a
# page's worth and says what it left out.
n=200000
[ $asan = 1 ] && n=50000
if "$HOSTILE" names "$tmp/names200k.prof" $n 2>"$err"; then
    timed 120 view "$tmp/names200k.prof" --html "$tmp/o/names.html"
    if status_is many-names-page 0; then
        size=$(wc -c <"$tmp/o/names.html")
        if [ "$size" -gt 3000000 ]; then not_ok many-names-page "a page of $size bytes"
        elif ! grep -q "$((n - 1000)) more operations are not listed here" "$tmp/o/names.html"; then
            not_ok many-names-page "the page does not say what it left out"
        else ok many-names-page; fi
    fi
else
    not_ok many-names-page "make_hostile: $(cat "$err")"
fi

# ---- out of memory while reading: its own error and status, in every command ----------------
# One block whose payload takes 60 MB to read. The plain build runs under
# an address-space limit that lets prof start and read the demo; the
# sanitized one cannot (ASan reserves terabytes), so its allocator is told
# to fail allocations over 32 MiB instead.
if "$HOSTILE" bigblock "$tmp/bigblock.prof" 12000000 2>"$err"; then
    limit=""
    if [ $asan = 0 ]; then
        for kb in 40000 60000 80000 100000 140000 200000; do
            if (ulimit -v $kb && exec "$PROF" analyze "$DEMO") >/dev/null 2>&1; then
                limit=$((kb + 16000))
                break
            fi
        done
    fi
    for c in "analyze" "info" "export --format csv" "view --html $tmp/o/oom.html" "compare $DEMO"; do
        name="out-of-memory-$(echo "$c" | cut -d' ' -f1)"
        if [ $asan = 1 ]; then
            # shellcheck disable=SC2086
            ASAN_OPTIONS="$ASAN_OPTIONS:allocator_may_return_null=1:max_allocation_size_mb=32" \
                timeout 60 "$PROF" $c "$tmp/bigblock.prof" >"$out" 2>"$err"
        elif [ -n "$limit" ]; then
            # shellcheck disable=SC2086
            (ulimit -v $limit && exec timeout 60 "$PROF" $c "$tmp/bigblock.prof") >"$out" 2>"$err"
        else
            echo "ok $name # skip prof does not start under any address-space limit tried"
            continue
        fi
        rc=$?
        : >"$out"
        # ASan may warn before the allocation returns NULL: the last line is prof's
        if status_is "$name" 5; then
            if tail -n 1 "$err" | grep -q "^prof: .*out of memory"; then ok "$name"
            else not_ok "$name" "stderr: $(cat "$err")"; fi
        fi
    done
    no_temp out-of-memory-no-temp "$tmp/o"
else
    not_ok out-of-memory "make_hostile: $(cat "$err")"
fi

[ $fails -eq 0 ]
