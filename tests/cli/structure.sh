#!/bin/sh
# structure.sh - the rules of docs/DESIGN.md that the tree itself can be
# held to: no source file over 1,000 lines; the tool's threads start in
# src/util/pool.c alone (libprof's writer in src/record/ has its own); no
# environment read below cmd/ but by libprof's own configuration
# (src/record/; the tool's knobs come down in a prof_tuning); and a
# layer's private header included only inside its directory (and by the
# unit tests). A check of the sources: it needs no prof.
# variants: rel
. "$(dirname "$0")/../support/cli_lib.sh"
cli_tmp structure

# the sources: C, headers, Python, the viewer's parts, shell tools
find src cmd bindings viewer tools tests/unit tests/support tests/cli tests/fuzz \
    -type f \( -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.js' -o -name '*.sh' \
    -o -name '*.mjs' -o -name '*.css' -o -name '*.html' \) 2>/dev/null | sort >"$tmp/files"
long=$(xargs wc -l <"$tmp/files" | awk '$2 != "total" && $1 > 1000 { print $2 " (" $1 ")" }')
if [ -s "$tmp/files" ] && [ -z "$long" ]; then
    ok "no source file over 1,000 lines ($(wc -l <"$tmp/files") files)"
else
    not_ok "no source file over 1,000 lines" "$long"
fi

threads=$(grep -ln 'pthread_create' src/*/*.c cmd/prof/*.c | grep -v '^src/util/pool\.c$\|^src/record/')
if [ -z "$threads" ] && grep -q pthread_create src/util/pool.c; then
    ok "threads start in src/util/pool.c"
else
    not_ok "threads start in src/util/pool.c" "also in: $threads"
fi

env=$(grep -ln '\bgetenv\b' src/*/*.c src/*/*.h | grep -v '^src/record/')
if [ -z "$env" ]; then
    ok "no getenv below cmd/ but libprof's configuration"
else
    not_ok "no getenv below cmd/ but libprof's configuration" "in: $env"
fi

# private headers: NAME_int.h, and the shared state of model/, analysis/, record/
bad=""
for h in src/*/*_int.h src/model/build.h src/analysis/analysis.h src/record/runtime.h; do
    dir=$(dirname "$h")
    name=${h#src/}
    users=$(grep -l "#include \"$name\"" src/*/*.c src/*/*.h cmd/prof/*.c cmd/prof/*.h 2>/dev/null |
        grep -v "^$dir/")
    [ -n "$users" ] && bad="$bad $name: $(echo $users)"
done
# cmd/prof/record.c checks the environment and the output path as libprof will
bad=$(echo "$bad" | sed 's| record/runtime.h: cmd/prof/record.c||')
if [ -z "$(echo "$bad" | tr -d ' ')" ]; then
    ok "private headers stay in their directory"
else
    not_ok "private headers stay in their directory" "$bad"
fi
[ $fails -eq 0 ]
