# measure.sh - what the benchmark scripts share; each sources it after
# setting BIN (where run_measured is), ROUNDS and BENCH (its name, for
# messages).

# measure_n NAME N COMMAND...: the least of N runs of COMMAND, as whole
# processes with their output thrown away (tests/support/bin/run_measured):
# sets NAME_s (wall seconds), NAME_cpu (CPU seconds, user + system) and
# NAME_kib (peak RSS); a failed run ends the benchmark.
measure_n() {
    name=$1
    rounds=$2
    shift 2
    # shellcheck disable=SC2046 # four numbers, split on purpose
    set -- $("$BIN/run_measured" "$rounds" "$@")
    if [ "${4:-1}" -ne 0 ]; then
        echo "$BENCH bench: '$name' failed (status ${4:-?})" >&2
        exit 1
    fi
    eval "${name}_s=$1 ${name}_cpu=$2 ${name}_kib=$3"
}

# measure NAME COMMAND...: measure_n over ROUNDS runs.
measure() {
    name=$1
    shift
    measure_n "$name" "$ROUNDS" "$@"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

# val NAME FIELD: a figure that measure stored
val() { eval "echo \"\$${1}_$2\""; }
# line LABEL NAME: wall, CPU and peak memory of a measured command, the
# label in LINE_WIDTH columns (default 46)
line() {
    printf "%-${LINE_WIDTH:-46}s %8.3f s wall %8.3f s CPU  peak %s\n" "$1" "$(val "$2" s)" \
        "$(val "$2" cpu)" "$(mib "$(val "$2" kib)")"
}
