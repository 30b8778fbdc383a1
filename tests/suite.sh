#!/bin/sh
# suite.sh - runs one test suite and records what it found, for the
# Makefile's test tiers (each suite is one make target, so `make -j` runs
# them side by side). Usage: tests/suite.sh SUITE, where SUITE is
#
#   unit/NAME  unit-asan/NAME  unit-tsan/NAME   the Criterion test tests/unit/NAME.c,
#                                               plain, under ASan+UBSan, under TSan
#   cli/NAME   cli-asan/NAME                    tests/cli/NAME.sh against the plain
#                                               or the sanitized prof
#   python/NAME  python-asan/NAME               tests/python/test_NAME.py: the binding
#                                               and real PyTorch training, its profiles
#                                               read by the plain or the sanitized prof
#   fuzz/NAME  fuzz-asan/NAME                   the fuzz target tests/fuzz/NAME.c over
#                                               its stored corpus: the plain build's
#                                               replay, or libFuzzer's ASan+UBSan build
#
# It prints one line "SUITE  N passed, N failed, N skipped  (S s)", then what
# failed and what was skipped, and writes the same to $B/results/SUITE: the
# counts and seconds on the first line, one line "skip TEST - WHY" per
# skipped test after it (tests/summary.sh adds them up). A test that did
# not run is counted as skipped, never as passed; a suite that ran nothing,
# or exited non-zero with nothing failed, counts one failure. The suite's
# whole output is in $B/test-logs/. Exits 0 once the result is written:
# the suite's verdict is in the file, so that the other suites still run.
B=${B:-build}
suite=$1
kind=${suite%%/*}
name=${suite#*/}
flat=$(echo "$suite" | tr / -)
log=$B/test-logs/$flat.log
result=$B/results/$suite
mkdir -p "$B/test-logs" "$(dirname "$result")"

# The sanitizers stop at the first error and say so loudly.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

now() { date +%s.%N; }
lines() { # PATTERN FILE: how many lines match (0 when FILE is missing)
    n=$(grep -c "$1" "$2" 2>/dev/null)
    echo "${n:-0}"
}
start=$(now)
ok=0
bad=0
skip=0
skips=""  # "TEST - WHY" lines
excerpt=""

# Criterion reports each test in TAP beside its usual output: "ok - S::T",
# "ok - S::T  # SKIP WHY", "not ok - S::T ...", after a plan "1..N". A
# test the plan promised that never reported (the runner died) is a failure.
run_criterion() { # binary
    tap=$log.tap
    rm -f "$tap"
    "$1" --color=never --tap="$tap" >"$log" 2>&1
    rc=$?
    planned=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$tap" 2>/dev/null | head -n 1)
    skip=$(lines '^ok .* # SKIP' "$tap")
    ok=$(($(lines '^ok ' "$tap") - skip))
    bad=$(lines '^not ok ' "$tap")
    missing=$((${planned:-0} - ok - skip - bad))
    [ "$missing" -gt 0 ] && bad=$((bad + missing))
    [ $rc -ne 0 ] && [ "$bad" -eq 0 ] && bad=1
    skips=$(sed -n 's/^ok - \([^ ]*\) *# SKIP \(.*\)/\1 - \2/p' "$tap" 2>/dev/null)
    excerpt=$({ grep '^not ok ' "$tap"; sed -n '/\[FAIL\]\|\[----\]\|ERROR\|WARNING: ThreadSanitizer\|runtime error/p' "$log"; } 2>/dev/null)
}

# The command-line suites print "ok NAME", "ok NAME # skip WHY" or
# "not ok NAME - WHY" lines.
run_cli() { # prof, helper binaries
    PROF=$1 TEST_BIN=$2 B=$B sh "tests/cli/$name.sh" >"$log" 2>&1
    parse_lines $?
}

parse_lines() { # of $log; the suite's exit status
    rc=$1
    skip=$(lines '^ok .* # skip' "$log")
    ok=$(($(lines '^ok ' "$log") - skip))
    bad=$(lines '^not ok ' "$log")
    [ $rc -ne 0 ] && [ "$bad" -eq 0 ] && bad=1
    skips=$(sed -n 's/^ok \([^ ]*\) *# skip \(.*\)/\1 - \2/p' "$log")
    excerpt=$(grep -A3 '^not ok \|^#' "$log")
}

# The Python tests print the same lines (tests/python/run.py). PYTHON
# (default /usr/bin/python3, with Debian's python3-torch) runs them over
# the package that `make python` builds in $B/python.
run_python() { # prof, helper binaries
    PYTHONDONTWRITEBYTECODE=1 B=$B PROF=$1 TEST_BIN=$2 "${PYTHON:-/usr/bin/python3}" \
        tests/python/run.py "test_$name.py" >"$log" 2>&1
    parse_lines $?
}

# Every stored input of the target must pass: those of tests/fuzz/corpus
# and of its own tests/fuzz/corpus-NAME (NAME without "fuzz_"). Each input
# counts as a test.
run_fuzz() { # binary, libfuzzer|replay
    dirs=tests/fuzz/corpus
    own=tests/fuzz/corpus-${name#fuzz_}
    [ -d "$own" ] && dirs="$dirs $own"
    inputs=$(for d in $dirs; do ls -d "$d"/*; done)
    n=$(echo "$inputs" | wc -l)
    if [ "$2" = libfuzzer ]; then
        # -runs=0 loads the corpus as libFuzzer merges it, then each input alone
        "$1" -runs=0 $dirs >"$log" 2>&1 && "$1" $inputs >>"$log" 2>&1
    else
        "$1" $inputs >"$log" 2>&1
    fi
    if [ $? -eq 0 ]; then
        ok=$n
    else
        bad=1
        excerpt=$(tail -n 30 "$log")
    fi
}

case $kind in
unit) run_criterion "$B/rel/tests/unit/$name" ;;
unit-asan) run_criterion "$B/asan/tests/unit/$name" ;;
unit-tsan) run_criterion "$B/tsan/tests/unit/$name" ;;
cli) run_cli "$B/prof" "$B/rel/tests/bin" ;;
cli-asan) run_cli "$B/asan/prof" "$B/asan/tests/bin" ;;
python) run_python "$B/prof" "$B/rel/tests/bin" ;;
python-asan) run_python "$B/asan/prof" "$B/asan/tests/bin" ;;
fuzz) run_fuzz "$B/rel/tests/fuzz/$name" replay ;;
fuzz-asan) run_fuzz "$B/fuzz/$name" libfuzzer ;;
*)
    echo "suite.sh: unknown suite '$suite' (unit, unit-asan, unit-tsan, cli, cli-asan, python, python-asan, fuzz, fuzz-asan)" >&2
    exit 2
    ;;
esac

# a suite that reports nothing tested nothing: that is a failure
[ "$ok" -eq 0 ] && [ "$skip" -eq 0 ] && [ "$bad" -eq 0 ] && bad=1
secs=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
{
    echo "$ok $bad $skip $secs"
    if [ -n "$skips" ]; then echo "$skips" | sed 's/^/skip /'; fi
} >"$result.tmp" && mv "$result.tmp" "$result" || exit 1
printf '%-34s %s passed, %s failed, %s skipped  (%s s)\n' "$suite" "$ok" "$bad" "$skip" "$secs"
[ "$bad" -gt 0 ] && echo "$excerpt" | head -n 40 | sed 's/^/    /'
[ -n "$skips" ] && echo "$skips" | sed 's/^/    skipped: /'
exit 0
