#!/bin/sh
# record.sh - `prof record` end to end: a C program that knows nothing of
# prof (tests/support/bin/record_child.c) and a Python script run with
# libprof preloaded; their exit statuses passed through (128 + N for a
# signal), the environment the command gets, %p and %r in -o, signals
# forwarded (the command flushes and `prof info` reads the file), a
# crashing command leaving a readable profile, and usage errors. The line
# per profile written at the end, and status 125 when none was; what is
# refused before the command runs (an output that cannot be written, a bad
# PROF_* variable); the Python binding's directory put in front of
# PYTHONPATH (a stand-in sitecustomize here), --no-python, --python-hooks
# (modules=N and its bad depths among them),
# and a Python script ending by sys.exit, an exception or SIGINT; hostile
# surroundings: a command started with its standard descriptors closed, a
# FIFO as the output, another user's link in /tmp as the output; two
# recorders on one output (a linked and a preloaded libprof, a child that
# starts its own), each writing a whole profile. Signals are sent once the command says it is ready
# (a file it creates), never after a fixed sleep.
# Run from the repository root with PROF and B set, as tests/suite.sh does.
PROF=${PROF:-build/prof}
B=${B:-build}
CHILD=$B/rel/tests/bin/record_child  # never the sanitized one: ASan refuses LD_PRELOAD
PY=/usr/bin/python3

# A sanitized prof refuses to start with something else preloaded first.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
export ASAN_OPTIONS
unset PROF_OUTPUT PROF_ENABLE PROF_SAMPLE_RATE PROF_SCHEDULE PROF_CUDA PROF_RANK RANK \
    PROF_AUTOSTART_PID LD_PRELOAD NVTX_INJECTION64_PATH PROF_BUFFER_MB PROF_FLUSH_MS \
    PROF_MEMORY_INTERVAL_MS PROF_TAGS PYTHONPATH PROF_PYTHONPATH PROF_PYTHON PROF_PYTHON_HOOKS
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
cp "$out" "$tmp/pre.out"
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
    check record-cuda-fails-soft eval 'status 4 && [ "$(wc -l <"$err")" -eq 2 ] &&
        head -n 1 "$err" | grep -q "^prof: CUDA capture off: " &&
        tail -n 1 "$err" | grep -q "^prof: record: wrote $tmp/cuda.prof "'
    readable record-cuda-profile "$tmp/cuda.prof" "closed cleanly"
fi

# ---- a crashing command --------------------------------------------------------------
run record -o "$tmp/segv.prof" -- "$CHILD" segv
check record-segv-status status 139
readable record-segv-profile "$tmp/segv.prof" "not closed cleanly"
check record-segv-summary eval 'grep -q "^prof: record: wrote $tmp/segv.prof (.*, not closed cleanly)$" "$err"'

# ---- what was written: one line per profile, or 125 when none ---------------------
run record -o "$tmp/sum.prof" -- "$CHILD" exit 0
check record-summary eval 'status 0 && [ "$(wc -l <"$err")" -eq 1 ] &&
    grep -Eq "^prof: record: wrote $tmp/sum.prof \([0-9.]+ (B|KiB), [0-9,]+ events?, 0 steps\)$" "$err"'
# every rank's file written during the run, not one left from before. The
# ranks start as torchrun starts them, not recording through the launcher's
# preload (PROF_AUTOSTART_PID is the launcher's pid): here they start
# recording with it unset; the sh launcher writes the rank-0 file.
touch -d 2000-01-01 "$tmp/ranks.7.prof"
run record -o "$tmp/ranks.%r.prof" -- sh -c "env -u PROF_AUTOSTART_PID RANK=1 '$CHILD' exit 0 &&
    env -u PROF_AUTOSTART_PID RANK=2 '$CHILD' exit 0"
check record-summary-ranks eval 'status 0 && [ "$(grep -c "^prof: record: wrote " "$err")" -eq 3 ] &&
    grep -q "^prof: record: wrote $tmp/ranks.1.prof (" "$err" &&
    grep -q "^prof: record: wrote $tmp/ranks.2.prof (" "$err" && ! grep -q "ranks.7" "$err"'
# the command removes its profile: nothing written, said, and 125 for a
# command that succeeded (its own status when it failed)
run record -o "$tmp/gone.prof" -- sh -c 'rm -f "$PROF_OUTPUT"'
check record-nothing-written eval 'status 125 && [ "$(wc -l <"$err")" -eq 1 ] &&
    grep -q "^prof: record: no profile written to '"'$tmp/gone.prof'"': " "$err"'
run record -o "$tmp/gone.prof" -- sh -c 'rm -f "$PROF_OUTPUT"; exit 6'
check record-nothing-written-failed eval 'status 6 && grep -q "no profile written" "$err"'
PROF_ENABLE=0 run record -o "$tmp/off.prof" -- "$CHILD" exit 0
check record-disabled eval 'status 0 && [ ! -s "$err" ] && [ ! -e "$tmp/off.prof" ]'

# ---- two recorders on one output ------------------------------------------------------
# The libprof linked into the command and the preloaded one both record
# into -o: the second finds it held and writes CMD's own name beside it,
# and prof reports both, each whole.
run record -o "$tmp/two.prof" -- "$CHILD" static
check record-two-recorders eval 'status 0 && [ "$(grep -c "^prof: record: wrote " "$err")" -eq 2 ] &&
    grep -q "^prof: record: wrote $tmp/two.prof (" "$err" &&
    grep -Eq "^prof: record: wrote $tmp/two\.[0-9]+\.prof \(.*, 3 steps\)$" "$err" &&
    ! grep -q "cannot read" "$err"'
readable record-two-recorders-preloaded "$tmp/two.prof" "closed cleanly"
readable record-two-recorders-linked "$(ls "$tmp"/two.[0-9]*.prof)" "static"
# A child calling prof_start(NULL) under a recorded parent: the name in
# PROF_OUTPUT is the parent's, even once the parent has written it.
run record -o "$tmp/kid.prof" -- sh -c "'$CHILD' static; '$CHILD' static"
check record-child-own-name eval 'status 0 && [ "$(grep -c "^prof: record: wrote " "$err")" -eq 3 ] &&
    [ "$(ls "$tmp"/kid.[0-9]*.prof | wc -l)" -eq 2 ] && ! grep -q "cannot read" "$err"'
readable record-child-parent-profile "$tmp/kid.prof" "closed cleanly"
# Only the command's profiles are reported, not what else it wrote beside
# them (a file named like a pid included).
mkdir "$tmp/pd"
run record -o "$tmp/pd/%p" -- sh -c 'echo notes >"$0/notes.txt"; echo 1 >"$0/12345"' "$tmp/pd"
check record-percent-p-others eval 'status 0 && [ "$(wc -l <"$err")" -eq 1 ] &&
    grep -Eq "^prof: record: wrote $tmp/pd/[0-9]+ \(" "$err"'

# ---- refused before the command runs ------------------------------------------------
run record -o "$tmp/no-dir/x.prof" -- sh -c ": >'$tmp/ran'"
want="prof: record: cannot write '$tmp/no-dir/x.prof': No such file or directory"
check record-unwritable-dir eval 'status 125 && [ "$(cat "$err")" = "$want" ] && [ ! -e "$tmp/ran" ]'
mkdir "$tmp/isdir.prof"
run record -o "$tmp/isdir.prof" -- sh -c ": >'$tmp/ran'"
check record-output-is-dir eval 'status 125 && grep -q "Is a directory" "$err" && [ ! -e "$tmp/ran" ]'
for bad in PROF_BUFFER_MB=abc PROF_SAMPLE_RATE=x PROF_SCHEDULE=bad PROF_MEMORY_INTERVAL_MS=-1 \
    PROF_FLUSH_MS=1s PROF_ENABLE=maybe PROF_TAGS==v; do
    env "$bad" "$PROF" record -o "$tmp/bad.prof" -- sh -c ": >'$tmp/ran'" >"$out" 2>"$err"
    rc=$?
    want="prof: record: bad ${bad%%=*} '${bad#*=}' (see libprof(3))"
    check "record-bad-env-${bad%%=*}" eval 'status 2 && [ "$(cat "$err")" = "$want" ] &&
        [ ! -e "$tmp/ran" ] && [ ! -e "$tmp/bad.prof" ]'
done
# libprof preloaded by hand says why it does not record, once
lib=$(sed -n 's/^LD_PRELOAD=//p' "$tmp/pre.out")
PROF_OUTPUT=$tmp/no-dir/y.prof LD_PRELOAD=$lib "$CHILD" exit 0 >"$out" 2>"$err"
rc=$?
want="prof: not recording: cannot write '$tmp/no-dir/y.prof': No such file or directory"
check libprof-preload-unwritable eval 'status 0 && [ "$(cat "$err")" = "$want" ]'
PROF_OUTPUT=$tmp/z.prof PROF_BUFFER_MB=abc LD_PRELOAD=$lib "$CHILD" exit 0 >"$out" 2>"$err"
rc=$?
want="prof: not recording: bad PROF_BUFFER_MB 'abc' (see libprof(3))"
check libprof-preload-bad-env eval 'status 0 && [ "$(cat "$err")" = "$want" ]'
# Another user's link in a shared sticky directory is not followed: prof
# refuses it before the command runs, and libprof preloaded by hand says
# why it does not record; what the link points to is left as it was.
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -m 1777 "$tmp/sticky"
    echo keep >"$tmp/victim"
    ln -s "$tmp/victim" "$tmp/sticky/run.prof" && chown -h nobody "$tmp/sticky/run.prof"
    run record -o "$tmp/sticky/run.prof" -- sh -c ": >'$tmp/ran'"
    check record-planted-link eval 'status 125 && [ ! -e "$tmp/ran" ] &&
        grep -q "^prof: record: cannot write .*: a symbolic link of another user.s in a shared sticky directory" "$err" &&
        [ "$(cat "$tmp/victim")" = keep ]'
    PROF_OUTPUT=$tmp/sticky/run.prof LD_PRELOAD=$lib "$CHILD" exit 0 >"$out" 2>"$err"
    rc=$?
    check libprof-preload-planted-link eval 'status 0 && [ "$(wc -l <"$err")" -eq 1 ] &&
        grep -q "^prof: not recording: cannot write .*: a symbolic link of another user" "$err" &&
        [ "$(cat "$tmp/victim")" = keep ]'
else
    echo "ok record-planted-link # skip not root or no user nobody"
    echo "ok libprof-preload-planted-link # skip not root or no user nobody"
fi

# ---- a process stopped now and then --------------------------------------------------
# SIGSTOP and SIGCONT, as a busy machine deschedules it: while stopped it
# neither samples its memory nor grows. Sampled on the timer while it takes
# 900 MiB and keeps them, host.rss is a leak over time; taking and freeing
# the same, it is flat (formats/rules.md §2.6: its increments weighed by the
# time they span; before, the long stopped spells read as no growth, r2 0.12).
# At most 75 MiB a running spell (1 MiB every 2 ms), so 12 spells or more:
# with the 5 of a 300 MiB run on a fast machine, growth in bursts and none
# between could not be told from a rate that wanders (p 0.027), as with
# the battery's descheduled class, whose runs have dozens.
stop_and_go() { # KEEP NAME
    rm -f "$tmp/$2.pid"
    PROF_MEMORY_INTERVAL_MS=10 "$PROF" record -o "$tmp/$2.prof" -- \
        "$CHILD" grow "$tmp/$2.pid" 900 "$1" >"$out" 2>"$err" &
    rec=$!
    i=0
    while [ ! -s "$tmp/$2.pid" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    pid=$(cat "$tmp/$2.pid" 2>/dev/null)
    spells=0
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
        sleep 0.15
        kill -STOP "$pid" 2>/dev/null && spells=$((spells + 1))
        sleep 0.6
        kill -CONT "$pid" 2>/dev/null
    done
    wait $rec
    rc=$?
    "$PROF" analyze --format json "$tmp/$2.prof" >"$tmp/$2.json" 2>>"$err"
}
leak_of() { # NAME: host.rss flagged as a leak, and the fit's slope in MiB/s
    "$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
fit = [m["fit"] for m in r["memory"] if m["series"] == "host.rss"][0]
flagged = any(b["rule"] == "memory_leak" and b["subject"] == "host.rss" for b in r["bottlenecks"])
print("flagged" if flagged else "silent", round(fit["slope_bytes_per_s"] / 2**20, 1) if fit else None)' \
        "$tmp/$1.json" 2>&1
}
if [ -x "$PY" ]; then
    stop_and_go 1 stopped-leak
    verdict=$(leak_of stopped-leak)
    check record-stopped-leak-found eval 'status 0 && [ "$spells" -ge 10 ] &&
        [ "${verdict%% *}" = flagged ] || { echo "$spells spells: $verdict" >"$err"; false; }'
    stop_and_go 0 stopped-flat
    verdict=$(leak_of stopped-flat)
    check record-stopped-flat-silent eval 'status 0 && [ "$spells" -ge 10 ] &&
        [ "${verdict%% *}" = silent ] || { echo "$spells spells: $verdict" >"$err"; false; }'
fi

# ---- hostile surroundings: closed standard descriptors, outputs that are not files ---
# A command started with stdout (or all of 0, 1, 2) closed: libprof's descriptors
# never take them, so what the command prints cannot land in the profile; its
# write fails as it would without prof, and so does the command (status 1).
"$CHILD" env PROF_OUTPUT >&- 2>/dev/null
alone=$?
"$PROF" record -o "$tmp/closed1.prof" -- "$CHILD" env PROF_OUTPUT >&- 2>"$err"
rc=$?
check record-closed-stdout-status eval '[ $alone -eq 1 ] && status $alone'
readable record-closed-stdout-profile "$tmp/closed1.prof" "closed cleanly"
"$PROF" record -o "$tmp/closed3.prof" -- "$CHILD" env PROF_OUTPUT <&- >&- 2>&-
rc=$?
check record-closed-std-status status $alone
readable record-closed-std-profile "$tmp/closed3.prof" "closed cleanly"
# A FIFO as the output, without a reader or with one that never reads:
# prof record refuses it before running anything, as a directory (the job
# would run for hours to write nothing); a preloaded libprof refuses it at
# once, said in one line, and the program runs unrecorded. The timeout is
# only a safety net: a blocking open would never return.
mkfifo "$tmp/out.fifo"
rm -f "$tmp/ran"
timeout 60 "$PROF" record -o "$tmp/out.fifo" -- sh -c ": >'$tmp/ran'" >"$out" 2>"$err"
rc=$?
want="prof: record: cannot write '$tmp/out.fifo': not a regular file"
check record-fifo-output eval 'status 125 && [ "$(cat "$err")" = "$want" ] && [ -p "$tmp/out.fifo" ] && [ ! -e "$tmp/ran" ]'
# (opened read-write by the shell: a reader that never reads, at once)
timeout 60 "$PROF" record -o "$tmp/out.fifo" -- "$CHILD" exit 0 >"$out" 2>"$err" 3<>"$tmp/out.fifo"
rc=$?
check record-fifo-idle-reader eval 'status 125 && [ "$(cat "$err")" = "$want" ]'
want="prof: not recording: cannot write '$tmp/out.fifo': not a regular file"
timeout 60 env PROF_OUTPUT="$tmp/out.fifo" LD_PRELOAD="$lib" "$CHILD" exit 0 >"$out" 2>"$err"
rc=$?
check libprof-preload-fifo eval 'status 0 && [ "$(cat "$err")" = "$want" ]'

# ---- the Python binding on PYTHONPATH ------------------------------------------------
# A stand-in for the binding's directory: prof/_boot/sitecustomize.py says it ran.
mkdir -p "$tmp/py/prof/_boot"
: >"$tmp/py/prof/__init__.py"
echo 'import os, sys; print("boot", os.environ.get("PROF_PYTHON_HOOKS", "all"), file=sys.stderr)' \
    >"$tmp/py/prof/_boot/sitecustomize.py"
pydir=$(cd "$tmp/py" && pwd -P)
PROF_PYTHONPATH=$tmp/py run record -o "$tmp/pp.prof" -- "$CHILD" env PYTHONPATH PROF_PYTHON
check record-pythonpath eval 'status 0 && has "$out" "PYTHONPATH=$pydir/prof/_boot:$pydir" &&
    has "$out" "PROF_PYTHON unset"'
PYTHONPATH=/user/a:/user/b PROF_PYTHONPATH=$tmp/py run record -o "$tmp/pp.prof" -- \
    "$CHILD" env PYTHONPATH
check record-pythonpath-kept eval 'status 0 && has "$out" "PYTHONPATH=$pydir/prof/_boot:$pydir:/user/a:/user/b"'
PYTHONPATH=/user/a PROF_PYTHONPATH=$tmp/py run record --no-python -o "$tmp/pp.prof" -- \
    "$CHILD" env PYTHONPATH PROF_PYTHON
check record-no-python eval 'status 0 && has "$out" PYTHONPATH=/user/a && has "$out" PROF_PYTHON=0'
PROF_PYTHONPATH=$tmp/py run record --python-hooks steps,memory -o "$tmp/pp.prof" -- \
    "$CHILD" env PROF_PYTHON_HOOKS
check record-python-hooks eval 'status 0 && has "$out" PROF_PYTHON_HOOKS=steps,memory'
run record --python-hooks steps,bogus -- "$CHILD" exit 0
check record-python-hooks-bad eval 'status 2 && grep -q "bad Python hooks '"'steps,bogus'"'" "$err"'
# modules=N: passed on as given; an N that is not a whole number from 0 to
# 255 is a usage error naming the item, and the command does not run
PROF_PYTHONPATH=$tmp/py run record --python-hooks steps,modules=2,data -o "$tmp/pp.prof" -- \
    "$CHILD" env PROF_PYTHON_HOOKS
check record-python-hooks-depth eval 'status 0 && has "$out" PROF_PYTHON_HOOKS=steps,modules=2,data'
PROF_PYTHONPATH=$tmp/py run record --python-hooks modules=0,modules=255 -o "$tmp/pp.prof" -- \
    "$CHILD" env PROF_PYTHON_HOOKS
check record-python-hooks-depth-limits eval 'status 0 && has "$out" PROF_PYTHON_HOOKS=modules=0,modules=255'
for bad in modules=x modules=-1 modules= modules=256 modules=2x "modules= 2" modules=+1; do
    rm -f "$tmp/ran"
    run record --python-hooks "steps,$bad,data" -- touch "$tmp/ran"
    check "record-python-hooks-depth-bad '$bad'" eval 'status 2 && [ ! -e "$tmp/ran" ] &&
        [ "$(wc -l <"$err")" -eq 1 ] &&
        grep -q "^prof: record: bad Python hook '"'$bad'"': the depth of modules=N is a whole number of levels from 0 to 255" "$err"'
done
run record --python-hooks all --no-python -- "$CHILD" exit 0
check record-python-hooks-no-python status 2
PROF_PYTHONPATH=$tmp/missing run record -o "$tmp/pp.prof" -- "$CHILD" exit 0
check record-pythonpath-missing eval 'status 125 && grep -q "cannot use PROF_PYTHONPATH" "$err"'
# without PROF_PYTHONPATH: the build tree's package, next to prof or one level up
pkg=$(dirname "$PROF")/python
[ -f "$pkg/prof/__init__.py" ] || pkg=$(dirname "$PROF")/../python
if [ -f "$pkg/prof/__init__.py" ]; then
    pkg=$(cd "$pkg" && pwd -P)
    run record -o "$tmp/pp.prof" -- sh -c 'echo "$PYTHONPATH"'
    check record-pythonpath-build-tree eval 'status 0 && has "$out" "$pkg/prof/_boot:$pkg"'
fi

if [ -x "$PY" ]; then
    PROF_PYTHONPATH=$tmp/py run record --python-hooks steps -o "$tmp/pyexit.prof" -- \
        "$PY" -c 'import sys; sys.exit(5)'
    check record-python-boot-exit eval 'status 5 && has "$err" "boot steps" &&
        grep -q "^prof: record: wrote $tmp/pyexit.prof (" "$err"'
    PROF_PYTHONPATH=$tmp/py run record -o "$tmp/pyraise.prof" -- "$PY" -c 'raise ValueError("x")'
    check record-python-raise eval 'status 1 && grep -q "^ValueError: x" "$err" &&
        grep -q "^prof: record: wrote $tmp/pyraise.prof (" "$err"'
    readable record-python-raise-profile "$tmp/pyraise.prof" "closed cleanly"
    # Ctrl-C: SIGINT sent to prof reaches the script (SIGINT is reset to its
    # default first: a shell starts background jobs with it ignored)
    "$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$PROF" record -o "$tmp/pyint.prof" -- "$PY" -c '
import time
open("'"$tmp/pyint.ready"'", "w").close()
while True:
    time.sleep(0.05)' >"$out" 2>"$err" &
    pid=$!
    if wait_for "$tmp/pyint.ready"; then
        kill -INT $pid
        wait $pid
        rc=$?
        check record-python-sigint eval 'status 130 && grep -q "^prof: record: wrote $tmp/pyint.prof (" "$err"'
        readable record-python-sigint-profile "$tmp/pyint.prof" "pid"
    else
        kill -KILL $pid 2>/dev/null
        not_ok record-python-sigint "the script never got ready"
    fi
fi
exit 0
