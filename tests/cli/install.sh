#!/bin/sh
# install.sh - `make install` into a staging directory, then the README's C
# example compiled against the installed headers and library through
# pkg-config (shared and static), run, and its profile read back: what a
# user does first. The Python package, where the installed `prof record`
# finds it and puts it on PYTHONPATH, loading the installed libprof. The
# installed `prof help` finds the installed pages. Then `make uninstall`
# leaves no file behind.
# Needs the build tree B (as tests/suite.sh sets it); runs once, for the plain
# variant only, since it exercises packaging rather than the binary.
# variants: rel
. "$(dirname "$0")/../support/cli_lib.sh"
B=${B:-build}
case "$PROF" in */asan/*) exit 0 ;; esac

cli_tmp install
root=$tmp/root

if make -s --no-print-directory B="$B" install DESTDIR="$root" PREFIX=/usr >"$tmp/log" 2>&1; then
    ok make-install
else
    not_ok make-install "$(tail -n 5 "$tmp/log")"
    exit 1
fi

missing=""
for f in bin/prof lib/libprof.a lib/libprof.so lib/libprof.so.0 include/prof.h \
    include/prof_reader.h lib/pkgconfig/prof.pc share/man/man1/prof.1 \
    share/man/man3/libprof.3 share/man/man5/prof.5 lib/prof/python/prof/__init__.py \
    lib/prof/python/prof/torch.py lib/prof/python/prof/_boot/sitecustomize.py \
    lib/prof/python/prof/libprof.so; do
    [ -e "$root/usr/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok installed-files || not_ok installed-files "missing:$missing"

# The README's example, verbatim, with the three functions it leaves to the user.
# It records 1,000 steps and prof_stop closes the 1,001st (flagged incomplete).
sed -n '/^```c$/,/^```$/p' README.md | sed '1d;$d' >"$tmp/train.c"
cat >"$tmp/user.c" <<'C'
#include <stdint.h>
static volatile uint64_t sink;
void load_batch(void) { sink++; }
void forward(void) { for (int i = 0; i < 100; i++) sink += (uint64_t)i; }
void backward(void) { sink *= 3; }
uint64_t gpu_bytes(void) { return 1024u * (uint64_t)sink % 4096u; }
C
[ -s "$tmp/train.c" ] && grep -q 'prof_start' "$tmp/train.c" && ok readme-example-found \
    || not_ok readme-example-found "no C example in README.md"

export PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_PATH="$root/usr/lib/pkgconfig"
export PKG_CONFIG_LIBDIR="$root/usr/lib/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig"
if pkg-config --modversion prof >/dev/null 2>&1; then ok pkg-config; else not_ok pkg-config "prof.pc not found"; fi

for link in shared static; do
    if [ $link = shared ]; then
        flags=$(pkg-config --cflags --libs prof)
    else
        flags="$(pkg-config --cflags prof) $root/usr/lib/libprof.a $(pkg-config --static --libs-only-l prof | sed 's/-lprof//')"
    fi
    # shellcheck disable=SC2086
    if cc -std=c11 -Wall -Wextra -Werror "$tmp/train.c" "$tmp/user.c" $flags -o "$tmp/train-$link" \
        2>"$tmp/cc.err"; then
        ok "compile-readme-example-$link"
    else
        not_ok "compile-readme-example-$link" "$(head -c 400 "$tmp/cc.err")"
        continue
    fi
    rm -f "$tmp/run.prof"
    if (cd "$tmp" && LD_LIBRARY_PATH="$root/usr/lib" PROF_OUTPUT="$tmp/run.prof" "./train-$link") \
        2>"$tmp/run.err" && "$PROF" info "$tmp/run.prof" >"$tmp/info" 2>&1 &&
        grep -q 'closed cleanly' "$tmp/info" && grep -Eq '^ *step +1,001$' "$tmp/info"; then
        ok "run-readme-example-$link"
    else
        not_ok "run-readme-example-$link" "$(head -c 300 "$tmp/run.err") $(head -c 600 "$tmp/info" 2>/dev/null)"
    fi
done

# The installed prof record: libprof from ../lib, the package from ../lib/prof/python.
pkg=$root/usr/lib/prof/python
if [ "$(readlink -f "$pkg/prof/libprof.so")" = "$(readlink -f "$root/usr/lib/libprof.so.0")" ]; then
    ok python-package-library
else
    not_ok python-package-library "$pkg/prof/libprof.so -> $(readlink "$pkg/prof/libprof.so")"
fi
if PROF_LIBRARY= PROF_PYTHONPATH= "$root/usr/bin/prof" record -o "$tmp/py.prof" -- sh -c 'echo "$PYTHONPATH"' \
    >"$tmp/out" 2>"$tmp/err" && [ "$(cat "$tmp/out")" = "$pkg/prof/_boot:$pkg" ]; then
    ok installed-record-pythonpath
else
    not_ok installed-record-pythonpath "$(cat "$tmp/out" "$tmp/err")"
fi
if command -v python3 >/dev/null 2>&1; then
    if PROF_LIBRARY= PROF_PYTHONPATH= "$root/usr/bin/prof" record -o "$tmp/py.prof" -- python3 -c \
        'import prof; print(prof.__file__)' >"$tmp/out" 2>"$tmp/err" &&
        [ "$(cat "$tmp/out")" = "$pkg/prof/__init__.py" ] && "$PROF" info "$tmp/py.prof" >/dev/null 2>&1; then
        ok installed-record-python
    else
        not_ok installed-record-python "$(cat "$tmp/out" "$tmp/err")"
    fi
fi

# The installed prof finds its pages in ../share/man (no source tree there).
if ! command -v script >/dev/null 2>&1 || ! command -v man >/dev/null 2>&1; then
    echo "ok installed-help-page # skip no script(1) or man(1)"
else
    tty_run "$tmp/page" "MANPAGER=cat PAGER=cat $root/usr/bin/prof help analyze"
    if grep -q 'PROF-ANALYZE(1)' "$tmp/page"; then ok installed-help-page; else
        not_ok installed-help-page "no manual page: $(head -c 300 "$tmp/page")"
    fi
fi

make -s --no-print-directory B="$B" uninstall DESTDIR="$root" PREFIX=/usr >"$tmp/log" 2>&1
left=$(find "$root" -type f | sed "s|$root||")
[ -z "$left" ] && ok uninstall-removes-everything || not_ok uninstall-removes-everything "left:$left"
exit $((fails > 0))
