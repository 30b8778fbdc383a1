#!/bin/sh
# report_keys.sh - the member names of the report and the comparison have
# one home, src/analysis/report_keys.h: tests/support/check_report_keys.py
# checks it against formats/report.schema.json and compare.schema.json
# (both ways), the metadata names against the format's documents, the C
# builder and renderers for names spelt around it, and viewer/app.js for
# members no schema declares. A check of the sources: it needs no prof.
# variants: rel
. "$(dirname "$0")/../support/cli_lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
    echo "ok report-keys # skip no python3"
    exit 0
fi
cli_tmp report-keys
if python3 tests/support/check_report_keys.py src/analysis/*.c src/output/*.c >"$out" 2>"$err"
then
    ok report-keys
else
    not_ok report-keys "$(cat "$out" "$err" | head -n 20)"
fi
[ $fails -eq 0 ]
