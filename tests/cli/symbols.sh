#!/bin/sh
# symbols.sh - libprof defines its API and nothing else a training program
# could collide with. The API is what include/prof.h and
# include/prof_reader.h declare, parsed from them so that the list cannot
# drift: libprof.so exports exactly those functions, libprof.a leaves
# exactly those global, and a program defining every internal name of
# libprof as its own still links with libprof.a and records. The one
# exception: InitializeInjection and InitializeInjectionNvtx2, the names
# CUDA and NVTX look for in an injection library, in builds with CUPTI.
# Needs the build tree B (as tests/suite.sh sets it); runs once, for the plain
# variant only, since the libraries are the same for both.
# variants: rel
. "$(dirname "$0")/../support/cli_lib.sh"
B=${B:-build}
cli_tmp symbols
INJECTION='^InitializeInjection\(Nvtx2\)\?$'

# The functions the public headers declare, one a line, sorted: the
# preprocessed headers with every {...} cut out, split into declarations;
# typedefs and static inline helpers are no symbols.
printf '#include "prof.h"\n#include "prof_reader.h"\n' |
    cc -E -P -Iinclude -x c - 2>"$tmp/cc.err" |
    tr '\n' ' ' | sed -e ':a' -e 's/{[^{}]*}/;/g' -e 'ta' | tr ';' '\n' |
    grep -v '^ *\(static\|typedef\|extern\) ' |
    sed -n 's/^[^(]*\b\(prof_[A-Za-z0-9_]*\) *(.*/\1/p' | sort -u >"$tmp/api"
n=$(wc -l <"$tmp/api")
if [ "$n" -ge 30 ] && grep -qx prof_start "$tmp/api" && grep -qx prof_reader_open "$tmp/api"; then
    ok "api-declared ($n functions)"
else
    not_ok api-declared "$n functions: $(tr '\n' ' ' <"$tmp/api") $(head -c 300 "$tmp/cc.err")"
fi

# same NAME LIST: the symbols of LIST are the API's (and the injection
# entry points), else a failure naming the difference
same() {
    grep -v "$INJECTION" "$2" >"$2.api"
    if cmp -s "$tmp/api" "$2.api"; then
        ok "$1"
    else
        not_ok "$1" "$(comm -3 "$tmp/api" "$2.api" |
            awk -F '\t' '{ printf "%s ", $1 != "" ? "missing " $1 : "extra " $2 }' | head -c 600)"
    fi
}

nm -D --defined-only "$B/libprof.so" | awk '{ print $NF }' | sort -u >"$tmp/so"
same so-exports-the-api "$tmp/so"
nm -g --defined-only "$B/libprof.a" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/a"
same a-globals-are-the-api "$tmp/a"

# Every global name of libprof's internals, defined again by a program.
nm -g --defined-only "$B/rel/libprof.a" | awk 'NF == 3 { print $3 }' | sort -u |
    comm -23 - "$tmp/api" | grep -v "$INJECTION" >"$tmp/internal"
n=$(wc -l <"$tmp/internal")
sed 's/.*/char &;/' "$tmp/internal" >"$tmp/names.c"
cat >"$tmp/own.c" <<'C'
#include <prof.h>
int main(void)
{
    if (prof_start(NULL) != 0)
        return 2;
    prof_region_begin("own");
    prof_region_end();
    prof_step();
    return prof_stop() != 0;
}
C
link() { # ARCHIVE OUTPUT
    cc -std=c11 -Iinclude "$tmp/own.c" "$tmp/names.c" "$1" -lzstd -lcjson -lpthread -lm -ldl \
        -o "$2" 2>"$tmp/ld.err"
}
# the names are real: beside the tools' archive, where they are global, the link fails on them
if [ "$n" -ge 50 ] && ! link "$B/rel/libprof.a" "$tmp/own-internal" &&
    grep -q -w -F -f "$tmp/internal" "$tmp/ld.err"; then
    ok "internal-names-collide-in-the-tools-archive ($n names)"
else
    not_ok internal-names-collide-in-the-tools-archive "$n names; $(head -c 300 "$tmp/ld.err")"
fi
if link "$B/libprof.a" "$tmp/own" && PROF_OUTPUT="$tmp/own.prof" "$tmp/own" 2>"$tmp/run.err" &&
    "$PROF" info "$tmp/own.prof" >"$tmp/info" 2>&1 && has "$tmp/info" "closed cleanly"; then
    ok program-with-libprofs-internal-names-links-libprof-a
else
    not_ok program-with-libprofs-internal-names-links-libprof-a \
        "$(cat "$tmp/ld.err" "$tmp/run.err" "$tmp/info" 2>/dev/null | head -c 600)"
fi
exit $((fails > 0))
