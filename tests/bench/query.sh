#!/bin/sh
# query.sh - `prof query` (SQL over a profile's tables, formats/query.md) of
# a 10-million-event profile (tests/support/bin/make_big, the analyze
# benchmark's generator), measured in one run by `make bench`
# (tests/bench/run.sh), each as wall time, CPU time and peak memory:
#
#   1. an aggregate over every region: SELECT name, COUNT(*), SUM(dur_ns)
#      FROM regions GROUP BY name;
#   2. one step's regions (WHERE step = S, S the middle step), at 10 million
#      and at 1 million events: a filter on steps reads only the blocks it
#      needs, so the time should not grow with the file. Targets: about the
#      same at both sizes, and under STEP_TARGET_S (well under a second)
#      whatever the size. The same step's rows by their time range are
#      measured too: that is the query DuckDB runs in 4;
#   3. `prof export --format sqlite`: what building a database first costs,
#      against querying the profile in place, and the database's size;
#   4. beside them, the same two queries in DuckDB over the CSV export
#      (formats/export-csv.md; read_csv_auto, the region rows; the step by
#      its time range, as the CSV has no step column), through Node.js and
#      @duckdb/node-api (tests/bench/duckdb_query.mjs), as whole processes;
#      DuckDB's own time with the CSV already loaded is given beside them.
#      The CSV export, which DuckDB needs first, is measured once.
#
# DuckDB is for this benchmark only: @duckdb/node-api is installed with npm
# into $B/bench-node when it is not there. BENCH_DUCKDB=0 leaves DuckDB out;
# BENCH_DUCKDB=cached uses it only if it is already installed, installing
# nothing (tests/cli/bench.sh: `make check` must stay fast and work
# offline). Without node or npm, or when the install fails, the DuckDB part
# says it was skipped and the benchmark still succeeds.
# BENCH_EVENTS changes the size.
B=${B:-build}
PROF=$B/prof
BIN=$B/rel/tests/bin
EVENTS=${BENCH_EVENTS:-10000000}
ROUNDS=3
STEP_TARGET_S=0.5
DUCKDB=${BENCH_DUCKDB:-1}
NODE_DIR=$B/bench-node
BENCH_NODE_MODULES=$NODE_DIR/node_modules
export BENCH_NODE_MODULES

tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-bench-query.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

BENCH=query
. tests/bench/measure.sh
LINE_WIDTH=52
# ratio3 A B: A/B to three significant figures (prof / DuckDB can be a
# hundredth or less, which ratio's two decimals would print as 0.00)
ratio3() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3g", (b > 0 ? a / b : 0) }'; }
# value SQL PROFILE: the one value (first row, first column) of a query
value() { "$PROF" query "$2" "$1" --format csv | awk -F, 'NR == 2 { print $1 }'; }
# rows_prof PROFILE SQL: how many rows a query gives
rows_prof() { "$PROF" query "$1" "$2" --format csv | awk 'END { print NR - 1 }'; }

n_small=$("$BIN/make_big" 1000000 "$tmp/small.prof") || exit 1
n_big=$("$BIN/make_big" "$EVENTS" "$tmp/big.prof") || exit 1

# mid_step PROFILE: "STEP START_NS END_NS" of the middle step, the one
# whose blocks are furthest from both ends of the file.
mid_step() {
    n=$(value "SELECT COUNT(*) FROM steps" "$1")
    [ -n "$n" ] && [ "$n" -gt 0 ] || return 1
    "$PROF" query "$1" \
        "SELECT step, start_ns, end_ns FROM steps ORDER BY step LIMIT 1 OFFSET $((n / 2))" \
        --format csv | awk -F, 'NR == 2 { print $1, $2, $3 }'
}
big_steps=$(value "SELECT COUNT(*) FROM steps" "$tmp/big.prof")
# shellcheck disable=SC2046 # three numbers, split on purpose
set -- $(mid_step "$tmp/big.prof")
[ $# -eq 3 ] || { echo "query bench: no middle step in the profile" >&2; exit 1; }
step=$1 step_start=$2 step_end=$3
# shellcheck disable=SC2046 # three numbers, split on purpose
set -- $(mid_step "$tmp/small.prof")
[ $# -eq 3 ] || { echo "query bench: no middle step in the 1M profile" >&2; exit 1; }
small_step=$1

Q_AGG="SELECT name, COUNT(*), SUM(dur_ns) FROM regions GROUP BY name"
Q_STEP="SELECT name, dur_ns, self_ns FROM regions WHERE step = $step"
Q_SMALL_STEP="SELECT name, dur_ns, self_ns FROM regions WHERE step = $small_step"
Q_RANGE="SELECT name, dur_ns FROM regions WHERE start_ns >= $step_start AND start_ns < $step_end"
# csv: every row written (the table stops at 100), as DuckDB reads them all
measure agg "$PROF" query "$tmp/big.prof" "$Q_AGG" --format csv
measure step "$PROF" query "$tmp/big.prof" "$Q_STEP" --format csv
measure small_step "$PROF" query "$tmp/small.prof" "$Q_SMALL_STEP" --format csv
measure range "$PROF" query "$tmp/big.prof" "$Q_RANGE" --format csv
agg_rows=$(rows_prof "$tmp/big.prof" "$Q_AGG")
step_rows=$(rows_prof "$tmp/big.prof" "$Q_STEP")
range_rows=$(rows_prof "$tmp/big.prof" "$Q_RANGE")

# A gigabyte a 10 million events: measured once, removed once its size is known.
measure_n sqlite 1 "$PROF" export "$tmp/big.prof" --format sqlite -o "$tmp/big.db"
db_bytes=$(wc -c <"$tmp/big.db")
rm -f "$tmp/big.db"
measure_n csv 1 "$PROF" export "$tmp/big.prof" --format csv -o "$tmp/big.csv"
csv_bytes=$(wc -c <"$tmp/big.csv")
prof_bytes=$(wc -c <"$tmp/big.prof")

echo "profile: $n_big events, $prof_bytes bytes, $big_steps steps; the middle step: $step," \
    "[$step_start, $step_end) ns"
line "prof query, GROUP BY name ($agg_rows rows)" agg
line "prof query, step = $step ($step_rows rows)" step
line "prof query, step = $small_step of the $n_small-event profile" small_step
echo "  one step, $n_big / $n_small events: $(ratio "$step_s" "$small_step_s")x wall," \
    "$(ratio "$step_cpu" "$small_step_cpu")x CPU (target about 1: it does not grow with the file)"
held=$(awk -v s="$step_s" -v t="$STEP_TARGET_S" 'BEGIN { print (s < t) ? "held" : "missed" }')
echo "  one step at $n_big events: $step_s s (target under $STEP_TARGET_S s, well under a" \
    "second, at any size): $held"
line "prof query, the same step by start_ns ($range_rows rows)" range
line "prof export --format sqlite (once)" sqlite
echo "  database: $db_bytes bytes, $(ratio "$db_bytes" "$n_big") bytes/event," \
    "$(ratio "$db_bytes" "$prof_bytes")x the .prof"
echo "  export sqlite / prof query GROUP BY: $(ratio "$sqlite_s" "$agg_s")x wall"
line "prof export --format csv (once)" csv
echo "  CSV: $csv_bytes bytes, $(ratio "$csv_bytes" "$n_big") bytes/event"

# ---- DuckDB ----------------------------------------------------------------------
skip=
mod=$BENCH_NODE_MODULES/@duckdb/node-api/package.json
if [ "$DUCKDB" = 0 ]; then
    skip="BENCH_DUCKDB=0"
elif ! command -v node >/dev/null 2>&1; then
    skip="no node"
elif [ ! -f "$mod" ]; then
    if [ "$DUCKDB" = cached ]; then
        skip="@duckdb/node-api is not in $NODE_DIR, and BENCH_DUCKDB=cached installs nothing"
    elif ! command -v npm >/dev/null 2>&1; then
        skip="no npm to install @duckdb/node-api"
    # few retries and a timeout: without a registry npm would otherwise
    # retry for minutes before failing
    elif ! npm install --prefix "$NODE_DIR" --no-audit --no-fund --fetch-retries=1 \
        --fetch-timeout=60000 @duckdb/node-api >"$tmp/npm.log" 2>&1 || [ ! -f "$mod" ]; then
        skip="npm install @duckdb/node-api failed: $(head -n 1 "$tmp/npm.log")"
    fi
fi
# A package that installed but does not load (no binary for this platform)
# is a skip too, not a failed benchmark: it is not prof's.
if [ -z "$skip" ] && ! node tests/bench/duckdb_query.mjs "$tmp/big.csv" "SELECT 1" >/dev/null \
    2>"$tmp/node.err"; then
    skip="@duckdb/node-api does not run: $(tail -n 1 "$tmp/node.err")"
fi
if [ -n "$skip" ]; then
    echo "DuckDB: skipped ($skip)"
    exit 0
fi

D_AGG="SELECT name, COUNT(*), SUM(dur_ns) FROM events WHERE type = 'region' GROUP BY name"
D_STEP="SELECT name, dur_ns FROM events WHERE type = 'region' AND start_ns >= $step_start AND start_ns < $step_end"
measure dagg node tests/bench/duckdb_query.mjs "$tmp/big.csv" "$D_AGG"
measure dstep node tests/bench/duckdb_query.mjs "$tmp/big.csv" "$D_STEP"
# rows N (load_s S query_s S) -> the row count, and DuckDB's time once the
# CSV is parsed into a table
dagg_out=$(node tests/bench/duckdb_query.mjs --load "$tmp/big.csv" "$D_AGG") || exit 1
dstep_out=$(node tests/bench/duckdb_query.mjs --load "$tmp/big.csv" "$D_STEP") || exit 1
# shellcheck disable=SC2086 # six words, split on purpose
set -- $dagg_out
dagg_rows=$2 dagg_load=$4 dagg_query=$6
# shellcheck disable=SC2086 # six words, split on purpose
set -- $dstep_out
dstep_rows=$2 dstep_load=$4 dstep_query=$6

echo "DuckDB (@duckdb/node-api $(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$mod" | head -n 1))" \
    "over the CSV, read_csv_auto, whole node processes:"
line "DuckDB, GROUP BY name ($dagg_rows rows)" dagg
echo "  the CSV loaded first: load $dagg_load s, then the query $dagg_query s"
line "DuckDB, the step by start_ns ($dstep_rows rows)" dstep
echo "  the CSV loaded first: load $dstep_load s, then the query $dstep_query s"
[ "$dagg_rows" = "$agg_rows" ] && [ "$dstep_rows" = "$step_rows" ] ||
    echo "  rows differ: prof $agg_rows and $step_rows, DuckDB $dagg_rows and $dstep_rows"
echo "  prof / DuckDB, GROUP BY name:       $(ratio3 "$agg_s" "$dagg_s")x wall," \
    "$(ratio3 "$agg_cpu" "$dagg_cpu")x CPU, $(ratio3 "$agg_kib" "$dagg_kib")x peak RSS"
echo "  prof / DuckDB, one step (step = S): $(ratio3 "$step_s" "$dstep_s")x wall," \
    "$(ratio3 "$step_cpu" "$dstep_cpu")x CPU, $(ratio3 "$step_kib" "$dstep_kib")x peak RSS"
echo "  prof / DuckDB, one step (start_ns): $(ratio3 "$range_s" "$dstep_s")x wall," \
    "$(ratio3 "$range_cpu" "$dstep_cpu")x CPU"
# DuckDB needs the CSV first; prof reads the profile as it is
echo "  prof / (CSV export + DuckDB), GROUP BY name: $(ratio3 "$agg_s" \
    "$(awk -v a="$csv_s" -v b="$dagg_s" 'BEGIN { print a + b }')")x wall"
