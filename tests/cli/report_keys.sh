#!/bin/sh
# report_keys.sh - the member names of the report and the comparison have
# one home, src/analysis/report_keys.h, and those of a profile's metadata
# another, src/format/meta_keys.h: tests/support/check_report_keys.py
# checks the first against formats/report.schema.json and
# compare.schema.json (both ways), the second against the format's
# documents, every C file of src/ and cmd/ for names spelt around them, and
# viewer/app.js for members no schema declares. A check of the sources: it
# needs no prof.
# variants: rel
. "$(dirname "$0")/../support/cli_lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
    echo "ok report-keys # skip no python3"
    exit 0
fi
cli_tmp report-keys
if python3 tests/support/check_report_keys.py src/*/*.c cmd/prof/*.c >"$out" 2>"$err"
then
    ok report-keys
else
    not_ok report-keys "$(cat "$out" "$err" | head -n 20)"
fi
[ $fails -eq 0 ]
