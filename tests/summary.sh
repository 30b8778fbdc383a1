#!/bin/sh
# summary.sh - the closing report of a test tier: adds up what each suite
# recorded in $B/results/SUITE (tests/suite.sh writes them) and prints the
# skipped tests with why, the suites that failed, the five slowest suites
# with their times (so that test time that creeps up is seen), and one
# closing line "N passed, N failed, N skipped".
# Usage: tests/summary.sh SUITE... (every suite of the tier: one that left
# no result, because its target was not built or it was stopped, counts
# one failure). Exits 1 when anything failed or nothing passed.
B=${B:-build}
results=$B/results
passed=0
failed=0
skipped=0
failures=""
times=""

for suite in "$@"; do
    f=$results/$suite
    secs=""
    [ -f "$f" ] && read -r ok bad skip secs <"$f"
    if [ -z "$secs" ]; then
        echo "$suite: no result in $f (did its build or run stop?)"
        failed=$((failed + 1))
        failures="$failures $suite"
        continue
    fi
    passed=$((passed + ok))
    failed=$((failed + bad))
    skipped=$((skipped + skip))
    [ "$bad" -gt 0 ] && failures="$failures $suite"
    times="$times$secs $suite
"
    sed -n "s|^skip |skipped: $suite: |p" "$f"
done

echo "slowest suites:"
printf '%s' "$times" | sort -rn | head -n 5 | awk '{ printf "    %-34s %7.1f s\n", $2, $1 }'
[ -n "$failures" ] && echo "failed suites:$failures (logs in $B/test-logs)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
