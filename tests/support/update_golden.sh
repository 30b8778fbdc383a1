#!/bin/sh
# update_golden.sh - regenerates the golden outputs in testdata/golden/ from
# the prof in $B (default build) after a deliberate change to the analysis
# or its renderers; review `git diff testdata/golden` before committing.
# The files are plain (no terminal styling) and hold nothing of the moment
# they were made, so regenerating without a change gives the same bytes.
B=${B:-build}
PROF=${PROF:-$B/prof}
dir=testdata/golden
set -e
"$PROF" analyze testdata/demo.prof >"$dir/analyze-demo.txt"
"$PROF" analyze --format json testdata/demo.prof >"$dir/analyze-demo.json"
"$PROF" analyze --format csv testdata/demo.prof >"$dir/analyze-demo-ops.csv"
echo "updated $dir: analyze-demo.txt analyze-demo.json analyze-demo-ops.csv"
