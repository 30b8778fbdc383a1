#!/bin/sh
# run.sh - runs every test suite that `make check` built and prints one
# closing line "N passed, N failed, N skipped". Suites: the Criterion unit
# tests plain, under AddressSanitizer+UBSan and (the recorder's threaded
# ones) under ThreadSanitizer; the CLI tests against the plain and the
# sanitized prof; the fuzz targets over their stored corpus. A CLI test that
# prints "ok NAME # skip WHY" did not run: it is counted as skipped, never as
# passed. A CLI script that names its variants in a "# variants: rel" line
# runs for those only. Exits 1 when anything failed, or when a suite ran
# nothing.
B=${B:-build}
passed=0
failed=0
skipped=0
failures=""
log_dir=$B/test-logs
mkdir -p "$log_dir"

# The sanitizers stop at the first error and say so loudly.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

count() { # name, passed, failed[, skipped]
    passed=$((passed + $2))
    failed=$((failed + $3))
    skipped=$((skipped + ${4:-0}))
    [ "$3" -gt 0 ] && failures="$failures $1"
    return 0
}

run_criterion() { # variant, binary
    name="$1/$(basename "$2")"
    log="$log_dir/$1-$(basename "$2").log"
    "$2" --color=never -j2 >"$log" 2>&1
    rc=$?
    line=$(grep 'Synthesis:' "$log" | tail -n 1)
    tested=$(echo "$line" | sed -n 's/.*Tested: \([0-9]*\).*/\1/p')
    ok=$(echo "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
    if [ -z "$tested" ]; then
        tested=1
        ok=0
    fi
    bad=$((tested - ok))
    [ $rc -ne 0 ] && [ $bad -eq 0 ] && bad=1
    printf '%-40s %s passed, %s failed\n' "$name" "$ok" "$bad"
    [ $bad -gt 0 ] && sed -n '/\[FAIL\]\|\[----\]\|ERROR\|WARNING: ThreadSanitizer\|runtime error/p' "$log" | head -n 40
    count "$name" "$ok" "$bad"
}

for v in rel asan tsan; do
    for t in "$B"/$v/tests/unit/*; do
        case "$t" in *.o|*.d) continue ;; esac
        [ -x "$t" ] && run_criterion $v "$t"
    done
done

# CLI tests: each script prints "ok NAME" or "not ok NAME" lines.
for v in rel asan; do
    if [ $v = rel ]; then prof=$B/prof; bin=$B/rel/tests/bin; else prof=$B/asan/prof; bin=$B/asan/tests/bin; fi
    [ -x "$prof" ] || continue
    for s in tests/cli/*.sh; do
        [ -f "$s" ] || continue
        variants=$(sed -n 's/^# variants: //p' "$s" | head -n 1)
        case " ${variants:-rel asan} " in *" $v "*) ;; *) continue ;; esac
        name="cli-$v/$(basename "$s" .sh)"
        log="$log_dir/cli-$v-$(basename "$s" .sh).log"
        PROF=$prof TEST_BIN=$bin B=$B sh "$s" >"$log" 2>&1
        rc=$?
        skip=$(grep -c '^ok .* # skip' "$log")
        ok=$(($(grep -c '^ok ' "$log") - skip))
        bad=$(grep -c '^not ok ' "$log")
        [ $rc -ne 0 ] && [ "$bad" -eq 0 ] && bad=1
        # a suite that reports nothing tested nothing: that is a failure
        [ "$ok" -eq 0 ] && [ "$skip" -eq 0 ] && [ "$bad" -eq 0 ] && bad=1
        printf '%-40s %s passed, %s failed, %s skipped\n' "$name" "$ok" "$bad" "$skip"
        [ "$bad" -gt 0 ] && grep -A3 '^not ok \|^#' "$log" | head -n 40
        [ "$skip" -gt 0 ] && grep '^ok .* # skip' "$log" | sed 's/^/    /'
        count "$name" "$ok" "$bad" "$skip"
    done
done

# Fuzz targets over the stored corpus (the profiles of tests/fuzz/corpus and
# the target's own tests/fuzz/corpus-NAME): every input must pass cleanly.
for f in "$B"/fuzz/fuzz_*; do
    [ -x "$f" ] || continue
    name="fuzz/$(basename "$f")"
    log="$log_dir/$(basename "$f").log"
    dirs=tests/fuzz/corpus
    own=tests/fuzz/corpus-$(basename "$f" | sed 's/^fuzz_//')
    [ -d "$own" ] && dirs="$dirs $own"
    inputs=$(for d in $dirs; do ls -d "$d"/*; done)
    n=$(echo "$inputs" | wc -l)
    if "$f" -runs=0 $dirs >"$log" 2>&1 && "$f" $inputs >>"$log" 2>&1; then
        printf '%-40s %s passed, 0 failed\n' "$name" "$n"
        count "$name" "$n" 0
    else
        printf '%-40s 0 passed, 1 failed\n' "$name"
        tail -n 30 "$log"
        count "$name" 0 1
    fi
done

[ -n "$failures" ] && echo "failed suites:$failures (logs in $log_dir)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
