#!/bin/sh
# record.sh - `prof record` end to end: a C program that knows nothing of
# prof (tests/support/bin/record_child.c) and a Python script run with
# libprof preloaded; their exit statuses passed through (128 + N for a
# signal), the environment the command gets, %p and %r in -o, signals
# forwarded (the command flushes and `prof info` reads the file), a
# crashing command leaving a readable profile, and usage errors.
# Run from the repository root with PROF and B set, as tests/run.sh does.
PROF=${PROF:-build/prof}
B=${B:-build}
CHILD=$B/rel/tests/bin/record_child  # never the sanitized one: ASan refuses LD_PRELOAD
PY=/usr/bin/python3

# A sanitized prof refuses to start with something else preloaded first.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
export ASAN_OPTIONS
unset PROF_OUTPUT PROF_ENABLE PROF_SAMPLE_RATE PROF_SCHEDULE PROF_CUDA PROF_RANK RANK \
    PROF_AUTOSTART_PID LD_PRELOAD NVTX_INJECTION64_PATH
ulimit -c 0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-cli-record.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$tmp/stdout
err=$tmp/stderr

ok() { echo "ok $1"; }
not_ok() { echo "not ok $1 - $2"; }

# run ARGS...: runs prof, keeps stdout and stderr, sets $rc
run() {
    "$PROF" "$@" >"$out" 2>"$err"
    rc=$?
}

# check NAME CONDITION...: ok when the condition (a command) holds
check() {
    name=$1
    shift
    if "$@"; then ok "$name"; else not_ok "$name" "rc $rc; stdout: $(head -c 300 "$out"); stderr: $(head -c 300 "$err")"; fi
}

has() { grep -F -q -x -e "$2" "$1"; }
status() { [ "$rc" -eq "$1" ]; }

# readable NAME FILE [TEXT]: prof info reads FILE (status 0), output has TEXT
readable() {
    if ! "$PROF" info "$2" >"$tmp/info" 2>&1; then
        not_ok "$1" "prof info '$2' failed: $(head -c 300 "$tmp/info")"
    elif [ -n "$3" ] && ! grep -F -q -e "$3" "$tmp/info"; then
        not_ok "$1" "prof info lacks '$3': $(cat "$tmp/info")"
    else
        ok "$1"
    fi
}

# wait_for FILE: up to 10 s for FILE to appear
wait_for() {
    i=0
    while [ ! -e "$1" ] && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ -e "$1" ]
}

# ---- help and usage ------------------------------------------------------------
run record --help
check record-help eval 'status 0 && grep -q "^usage: prof record" "$out"'
run record
want="prof: record: no command to run (see 'prof record --help')"
check record-no-command eval 'status 2 && [ ! -s "$out" ] && [ "$(cat "$err")" = "$want" ]'
run record --sample-rate 1.5 -- "$CHILD" exit 0
check record-bad-rate eval 'status 2 && grep -q "bad sample rate" "$err"'
run record --schedule 1:2:3 -- "$CHILD" exit 0
check record-bad-schedule eval 'status 2 && grep -q "bad schedule" "$err"'
run record --bogus -- "$CHILD" exit 0
check record-unknown-option eval 'status 2 && [ "$(wc -l <"$err")" -eq 1 ]'
run record -o "$tmp/nf.prof" -- "$tmp/no-such-program"
want="prof: record: cannot run '$tmp/no-such-program': No such file or directory"
check record-not-found eval 'status 127 && [ "$(cat "$err")" = "$want" ]'
PROF_LIBRARY=$tmp/missing.so run record -o "$tmp/nl.prof" -- "$CHILD" exit 0
check record-no-library eval 'status 125 && grep -q "PROF_LIBRARY" "$err"'

# ---- exit status and the profile of a program that does not call prof ----------
run record -o "$tmp/exit.prof" -- "$CHILD" exit 7
check record-exit-status status 7
readable record-exit-profile "$tmp/exit.prof" "closed cleanly"
run record -o "$tmp/zero.prof" "$CHILD" exit 0
check record-without-dashes status 0

# ---- the command's environment ---------------------------------------------------
PROF_AUTOSTART_PID=1 LD_PRELOAD=libc.so.6 run record -o "$tmp/env.%p.prof" --sample-rate 0.5 \
    --schedule 1:1:2:0 --cuda -- "$CHILD" env PROF_OUTPUT PROF_SAMPLE_RATE PROF_SCHEDULE PROF_CUDA \
    NVTX_INJECTION64_PATH
check record-env eval 'status 0 && has "$out" "PROF_OUTPUT=$tmp/env.%p.prof" &&
    has "$out" PROF_SAMPLE_RATE=0.5 && has "$out" PROF_SCHEDULE=1:1:2:0 && has "$out" PROF_CUDA=1 &&
    grep -q "^NVTX_INJECTION64_PATH=/.*libprof.so" "$out"'
run record -o "$tmp/pre.prof" -- "$CHILD" env LD_PRELOAD
check record-env-preload eval 'status 0 && grep -q "^LD_PRELOAD=/.*libprof.so" "$out"'
LD_PRELOAD=libc.so.6 run record -o "$tmp/pre2.prof" -- "$CHILD" env LD_PRELOAD
check record-env-preload-kept eval 'status 0 && grep -q "^LD_PRELOAD=/.*libprof.so[.0]*:libc.so.6$" "$out"'
PROF_OUTPUT=$tmp/from-env.prof run record -- "$CHILD" exit 0
check record-output-from-env eval 'status 0 && [ -f "$tmp/from-env.prof" ]'

# ---- a Python script: exit status, environment, preload auto-start, %p, %r -----------
if [ -x "$PY" ]; then
    PROF_AUTOSTART_PID=1 run record -o "$tmp/py.%p.prof" -- "$PY" -c '
import os, sys
print(os.getpid(), os.environ.get("PROF_AUTOSTART_PID"), os.environ["PROF_OUTPUT"])
sys.exit(3)'
    pypid=$(cut -d" " -f1 "$out")
    check record-python-status status 3
    # the preloaded library started in the script (and said so in its environment)
    check record-python-autostart eval '[ "$(cut -d" " -f2 "$out")" = "$pypid" ] &&
        [ "$(cut -d" " -f3 "$out")" = "$tmp/py.%p.prof" ]'
    readable record-python-percent-p "$tmp/py.$pypid.prof" "pid $pypid"
    RANK=5 run record -o "$tmp/py.r%r.prof" -- "$PY" -c 'pass'
    check record-python-ok status 0
    readable record-percent-r "$tmp/py.r5.prof" "rank 5"
else
    echo "# $PY missing: Python cases skipped"
fi

# ---- signals ---------------------------------------------------------------------------
"$PROF" record -o "$tmp/term.prof" -- "$CHILD" wait "$tmp/term.ready" >"$out" 2>"$err" &
pid=$!
if wait_for "$tmp/term.ready"; then
    sleep 0.2
    kill -TERM $pid
    wait $pid
    rc=$?
    check record-sigterm-status status 143
    readable record-sigterm-profile "$tmp/term.prof" "threads"
else
    kill -KILL $pid 2>/dev/null
    not_ok record-sigterm-status "the command never got ready"
fi

"$PROF" record -o "$tmp/usr1.prof" -- "$CHILD" usr1 "$tmp/usr1.ready" >"$out" 2>"$err" &
pid=$!
if wait_for "$tmp/usr1.ready"; then
    kill -USR1 $pid
    wait $pid
    rc=$?
    check record-sigusr1-forwarded eval 'status 0 && has "$out" "got SIGUSR1"'
else
    kill -KILL $pid 2>/dev/null
    not_ok record-sigusr1-forwarded "the command never got ready"
fi

# ---- --cuda where CUDA cannot be captured: one line, the run goes on -----------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
    run record --cuda -o "$tmp/cuda.prof" -- "$CHILD" exit 4
    check record-cuda-fails-soft eval 'status 4 && [ "$(wc -l <"$err")" -eq 1 ] &&
        grep -q "^prof: CUDA capture off: " "$err"'
    readable record-cuda-profile "$tmp/cuda.prof" "closed cleanly"
fi

# ---- a crashing command --------------------------------------------------------------
run record -o "$tmp/segv.prof" -- "$CHILD" segv
check record-segv-status status 139
readable record-segv-profile "$tmp/segv.prof" "not closed cleanly"
exit 0
