#!/bin/sh
# query.sh - `prof query` and `prof export --format sqlite` end to end on
# the real binary: the three output formats, the table's limit, names that
# try to drive a terminal, SQL errors with their position (exit 2), bad
# input (exit 3), outputs whole or not at all, a trace and a directory of
# ranks as inputs, and the SQLite file read by Python's sqlite3 answering
# as prof query does (tests/support/query_check.py).
# Run from the repository root with PROF and TEST_BIN, as tests/suite.sh
# does.
. "$(dirname "$0")/../support/cli_lib.sh"
DEMO=testdata/demo.prof
GPU=testdata/gpu/h200_torch_train.prof
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$PYTHON" ] || PYTHON=python3

cli_tmp query

# ---- the formats ---------------------------------------------------------------
GROUP="SELECT name, COUNT(*) AS calls, SUM(self_ns) AS self FROM regions GROUP BY name ORDER BY self DESC"
run query "$DEMO" "$GROUP"
out_has table-header "name            calls         self"
run query "$DEMO" "$GROUP"
out_has table-row "backward          300  16411418959"
run query "$DEMO" "$GROUP"
out_has table-count "(20 rows)"

run query "$DEMO" "$GROUP" --format csv
if status_is csv 0 && [ "$(head -1 "$out")" = "name,calls,self" ] &&
    [ "$(sed -n 2p "$out")" = "backward,300,16411418959" ] && [ "$(wc -l <"$out")" -eq 21 ]; then
    ok csv
else
    not_ok csv "$(head -3 "$out")"
fi

run query "$DEMO" "$GROUP" -f json
if status_is json 0 && "$PYTHON" -c '
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 20, len(rows)
assert rows[0] == {"name": "backward", "calls": 300, "self": 16411418959}, rows[0]
' "$out" 2>"$tmp/py.err"; then
    ok json
else
    not_ok json "$(cat "$tmp/py.err")"
fi

run query "$DEMO" "SELECT NULL AS n, 2.5 AS r, 'a,b' AS t, x'00ff' AS b" -f json
out_has json-types '{"n": null, "r": 2.5, "t": "a,b", "b": "x'"'"'00ff'"'"'"}'
run query "$DEMO" "SELECT NULL AS n, 2.5 AS r, 'a,b' AS t" -f csv
out_has csv-types ',2.5,"a,b"'

# ---- the limit -----------------------------------------------------------------
run query "$DEMO" "SELECT * FROM regions"
if status_is limit-default 0 && has "$out" "(the first 100 rows; --limit 0 shows all)" &&
    [ "$(wc -l <"$out")" -eq 103 ]; then
    ok limit-default
else
    not_ok limit-default "$(tail -2 "$out")"
fi
run query "$DEMO" "SELECT * FROM regions" --limit 0
n=$("$PROF" query "$DEMO" "SELECT COUNT(*) FROM regions" -f csv | tail -1)
run query "$DEMO" "SELECT * FROM regions" --limit 0
out_has limit-none-count "($n rows)"
run query "$DEMO" "SELECT * FROM regions" -f csv
[ "$(wc -l <"$out")" -eq $((n + 1)) ] && ok csv-no-limit || not_ok csv-no-limit "$(wc -l <"$out") lines"
run query "$DEMO" "SELECT * FROM regions" -f csv -n 5
[ "$(wc -l <"$out")" -eq 6 ] && ok csv-limit || not_ok csv-limit "$(wc -l <"$out") lines"
run query "$DEMO" "SELECT 1" --limit -3
error_like limit-bad 2 "--limit takes a count of rows, not '-3'"

# ---- names from a profile are user data ------------------------------------------
if "$TEST_BIN/make_export_names" "$tmp/names.prof" 2>"$err"; then
    run query "$tmp/names.prof" "SELECT DISTINCT name FROM regions" --wide
    if status_is names-table 0 && ! grep -q "$(printf '\033')" "$out" && has "$out" 'esc\x1b[0m'; then
        ok names-table
    else
        not_ok names-table "$(cat -v "$out" | head -5)"
    fi
    run query "$tmp/names.prof" "SELECT DISTINCT name FROM regions" -f json
    if status_is names-json 0 && "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$out"; then
        ok names-json
    else
        not_ok names-json "not JSON"
    fi
else
    not_ok make-export-names "$(cat "$err")"
fi

# ---- SQL errors: one line, the position, exit 2 ------------------------------------
run query "$DEMO" "SELECT name FORM regions"
error_is sql-syntax 2 'prof: query: SQL error at character 18: near "regions": syntax error'
run query "$DEMO" "SELECT nme FROM regions"
error_is sql-column 2 'prof: query: SQL error at character 8: no such column: nme'
run query "$DEMO" "SELECT * FROM region"
error_like sql-table 2 "no such table: region"
run query "$DEMO" "SELECT 1; SELECT nothin FROM regions"
error_is sql-second 2 "prof: query: SQL error at character 18: no such column: nothin"
run query "$DEMO" "SELECT 'é', nme FROM regions"
error_is sql-characters 2 "prof: query: SQL error at character 13: no such column: nme"
run query "$DEMO" "SELECT abs(-9223372036854775807 - 1)"
error_like sql-runtime 2 "SQL error: integer overflow"
run query "$DEMO" "  -- nothing"
error_like sql-none 2 "no SQL statement given"
run query "$DEMO"
error_like sql-missing 2 "no SQL given"
run query
error_like operands-none 2 "no profile and no SQL given"

# several statements: the last one's rows
run query "$DEMO" "CREATE TEMP VIEW slow AS SELECT * FROM regions WHERE dur_ns > 50000000; SELECT COUNT(*) FROM slow" -f csv
if status_is statements 0 && [ "$(tail -1 "$out")" -gt 0 ]; then ok statements; else not_ok statements "$(cat "$out")"; fi

# ---- bad input: exit 3 --------------------------------------------------------------
run query "$tmp/none.prof" "SELECT 1"
error_like input-missing 3 "none.prof"
printf 'not a profile' >"$tmp/junk.prof"
run query "$tmp/junk.prof" "SELECT 1"
error_like input-junk 3 "junk.prof"
# damage found while a table reads: the input's status, not a SQL error
cp "$DEMO" "$tmp/damaged.prof"
size=$(wc -c <"$tmp/damaged.prof")
printf 'XXXXXXXX' | dd of="$tmp/damaged.prof" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run query "$tmp/damaged.prof" "SELECT COUNT(*) FROM regions"
error_like input-damaged 3 "cannot read '$tmp/damaged.prof'"

# ---- -o: whole or not at all --------------------------------------------------------
run query "$DEMO" "SELECT * FROM steps" -f csv -o "$tmp/steps.csv"
if status_is output 0 && [ ! -s "$out" ] && [ "$(wc -l <"$tmp/steps.csv")" -eq 301 ]; then
    ok output
else
    not_ok output "$(wc -l <"$tmp/steps.csv" 2>&1)"
fi
echo keep >"$tmp/kept.csv"
run query "$DEMO" "SELECT abs(-9223372036854775807 - 1) FROM steps" -f csv -o "$tmp/kept.csv"
if status_is output-failed 2 && [ "$(cat "$tmp/kept.csv")" = keep ] &&
    [ -z "$(find "$tmp" -name '.kept.csv.tmp*')" ]; then
    ok output-failed
else
    not_ok output-failed "the old file changed or a temporary was left"
fi
run query "$DEMO" "SELECT 1" -o "$tmp/no/such/dir/x"
error_like output-dir 4 "no/such/dir"

# ---- inputs: a trace, a directory of ranks ---------------------------------------------
run query testdata/kineto/2024.json "SELECT COUNT(*) FROM kernels WHERE op IS NOT NULL" -f csv
if status_is trace 0 && [ "$(tail -1 "$out")" -gt 0 ]; then ok trace; else not_ok trace "$(cat "$out" "$err")"; fi

mkdir "$tmp/ranks"
if "$TEST_BIN/make_ranks" "$tmp/ranks" 4 3000 >/dev/null 2>"$err"; then
    run query "$tmp/ranks" "SELECT rank, COUNT(*) FROM steps GROUP BY rank" -f csv
    if status_is ranks 0 && [ "$(wc -l <"$out")" -eq 5 ] && [ "$(sed -n 2p "$out" | cut -d, -f1)" = 0 ]; then
        ok ranks
    else
        not_ok ranks "$(cat "$out")"
    fi
    run query "$tmp/ranks/rank0.prof" "$tmp/ranks/rank0.prof" "SELECT 1"
    error_like ranks-twice 2 "both rank 0"
else
    not_ok make-ranks "$(cat "$err")"
fi

# ---- the SQLite export -----------------------------------------------------------------
run export "$DEMO" --format sqlite
error_like sqlite-no-output 2 "give -o FILE"
run export "$DEMO" --format sqlite -o -
error_like sqlite-stdout 2 "give -o FILE"
if command -v mkfifo >/dev/null 2>&1 && mkfifo "$tmp/fifo"; then
    run export "$DEMO" --format sqlite -o "$tmp/fifo"
    error_like sqlite-fifo 2 "is not a regular file"
fi
for input in "$DEMO" "$GPU" "$tmp/ranks"; do
    name=sqlite-$(basename "$input" .prof)
    run export "$input" --format sqlite -o "$tmp/$name.db"
    if ! status_is "$name" 0; then
        continue
    fi
    if [ -s "$out" ] || [ -s "$err" ]; then
        not_ok "$name" "output on stdout or stderr: $(cat "$out" "$err")"
    elif "$PYTHON" tests/support/query_check.py "$PROF" "$input" "$tmp/$name.db" >"$tmp/check" 2>&1; then
        ok "$name"
    else
        not_ok "$name" "$(tail -5 "$tmp/check")"
    fi
done
run export "$tmp/damaged.prof" --format sqlite -o "$tmp/damaged.db"
if error_line sqlite-damaged 3 && [ ! -e "$tmp/damaged.db" ]; then ok sqlite-damaged; fi

# ---- help --------------------------------------------------------------------------------
run query --help
out_has help "usage: prof query INPUT... SQL"
run help
out_has help-list "  query     ask a profile's events and analysis questions in SQL"

exit $((fails > 0))
