#!/bin/sh
# info.sh - `prof info` end to end on the real binary: the output for
# testdata/demo.prof, help and version, and every failure with its exit
# status (DESIGN §5: 2 usage, 3 unreadable input, 4 output error) and its
# one-line message on stderr with nothing on stdout.
# Run from the repository root with PROF=path/to/prof, TEST_BIN=dir of the
# helper binaries (make_corpus), as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
DEMO=testdata/demo.prof

cli_tmp info

# ---- the demo profile ------------------------------------------------------
run info "$DEMO"
if status_is info-demo 0; then
    missing=""
    for line in "file       $DEMO (50.3 KiB)" \
        "format     1.0, closed cleanly" \
        "recorded   2026-01-01 00:00:00 UTC on demo-host, pid 4242, rank 0 of 1" \
        "command    python3 train.py --epochs 1" \
        "threads    2" \
        "  0        train (tid 4242), 7,533 events" \
        "  1        dataloader (tid 4251), 1,200 events" \
        "events     8,733" \
        "  step         300" \
        "  mark         1" \
        "dropped    0 events" \
        "tags       model=tiny-transformer batch_size=32"; do
        has "$out" "$line" || missing="$missing [$line]"
    done
    if [ -n "$missing" ]; then
        not_ok info-demo "missing lines:$missing"
    elif [ -s "$err" ]; then
        not_ok info-demo "stderr not empty: $(cat "$err")"
    else
        ok info-demo
    fi
fi

# ---- help and version --------------------------------------------------------
run --help
out_has help-overview "usage: prof COMMAND [ARGS]"
run help
out_has help-no-arg "  info      show a profile's origin"

for args in "help info" "info --help" "info -h"; do
    name="help-$(echo "$args" | tr ' ' '_')"
    # shellcheck disable=SC2086 # split on purpose
    run $args
    out_has "$name" "usage: prof info RUN.prof"
done

# `prof help COMMAND` on a terminal: the manual page beside the build when
# man(1) is there, else the command's --help (no man, as in CI; a binary
# with no pages beside it). The page is found from the binary's own place.
if ! command -v script >/dev/null 2>&1; then
    echo "ok help-man-page # skip no script(1)"
elif ! command -v man >/dev/null 2>&1 || ! man -l man/prof-info.1 >/dev/null 2>&1; then
    echo "ok help-man-page # skip no working man(1)"
else
    tty_run "$tmp/page" "MANPAGER=cat PAGER=cat $PROF help info"
    if grep -q 'PROF-INFO(1)' "$tmp/page" && ! grep -q '^usage:' "$tmp/page"; then
        ok help-man-page
    else
        not_ok help-man-page "no manual page: $(head -c 300 "$tmp/page")"
    fi
fi
if command -v script >/dev/null 2>&1; then
    mkdir "$tmp/no-man"
    tty_run "$tmp/page" "env PATH=$tmp/no-man $PROF help info"
    if grep -q '^usage: prof info RUN.prof' "$tmp/page"; then ok help-without-man; else
        not_ok help-without-man "no --help: $(head -c 300 "$tmp/page")"
    fi
    mkdir "$tmp/bin"
    cp "$PROF" "$tmp/bin/prof"
    tty_run "$tmp/page" "MANPAGER=cat PAGER=cat $tmp/bin/prof help info"
    if grep -q '^usage: prof info RUN.prof' "$tmp/page"; then ok help-without-page; else
        not_ok help-without-page "no --help: $(head -c 300 "$tmp/page")"
    fi
else
    echo "ok help-without-man # skip no script(1)"
    echo "ok help-without-page # skip no script(1)"
fi

run version
status_is version 0 && {
    if grep -q '^prof [0-9][0-9.]* (file format 1\.1)$' "$out"; then ok version; else
        not_ok version "got '$(cat "$out")'"
    fi
}
run --version
out_has version-option "(file format 1.1)"

# ---- usage errors: status 2 ----------------------------------------------------
run info
error_is info-no-argument 2 "prof: info: no profile given (see 'prof info --help')"
run info "$DEMO" "$DEMO"
error_is info-two-arguments 2 "prof: info: takes exactly one profile (see 'prof info --help')"
run info --bogus "$DEMO"
error_is info-unknown-option 2 "prof: info: unknown option '--bogus' (see 'prof info --help')"
run frobnicate
error_is unknown-command 2 "prof: 'frobnicate' is not a prof command (see 'prof help')"
run help frobnicate
error_is help-unknown-command 2 "prof: help: unknown command 'frobnicate' (see 'prof help --help')"
run version extra
error_is version-extra-argument 2 "prof: version: unexpected argument 'extra' (see 'prof version --help')"
run
if status_is no-command 2; then
    if has "$err" "usage: prof COMMAND" && ! [ -s "$out" ]; then ok no-command; else
        not_ok no-command "no usage on stderr"
    fi
fi

# ---- unreadable input: status 3 ------------------------------------------------
run info "$tmp/x.prof"
error_is info-missing-file 3 "prof: info: cannot read '$tmp/x.prof': cannot open: No such file or directory"

mkdir "$tmp/dir.prof"
run info "$tmp/dir.prof"
error_is info-directory 3 "prof: info: cannot read '$tmp/dir.prof': cannot read: is a directory"

: >"$tmp/empty.prof"
run info "$tmp/empty.prof"
error_is info-empty-file 3 "prof: info: cannot read '$tmp/empty.prof': empty file (0 bytes)"

printf 'step,region,ms\n1,forward,12.5\n' >"$tmp/data.csv"
run info "$tmp/data.csv"
error_is info-not-prof 3 "prof: info: cannot read '$tmp/data.csv': not a prof file (bad magic)"

head -c 15 "$DEMO" >"$tmp/header-cut.prof"
run info "$tmp/header-cut.prof"
error_is info-cut-in-header 3 "prof: info: cannot read '$tmp/header-cut.prof': file cut short inside its header (15 of 24 bytes)"

# Files a shell cannot make (a recomputed header checksum) come from
# make_corpus.
if "$TEST_BIN/make_corpus" "$tmp" >"$err" 2>&1; then
    run info "$tmp/version-2.0.prof"
    error_is info-newer-version 3 "prof: info: cannot read '$tmp/version-2.0.prof': written in format version 2.0; this prof reads 1.x: upgrade prof"
    run info "$tmp/version-1.9.prof"
    out_has info-newer-minor "format     1.9, closed cleanly"
    run info "$tmp/flip-payload.prof"
    error_like info-corrupt-block 3 ": payload checksum mismatch"
    run info "$tmp/flip-metadata.prof"
    error_like info-corrupt-metadata 3 "': header checksum mismatch"
else
    not_ok make-corpus "$TEST_BIN/make_corpus failed: $(cat "$err")"
fi

# A byte flipped in the middle of a block of the clean demo profile
size=$(wc -c <"$DEMO")
half=$((size / 2))
{ head -c "$half" "$DEMO"; printf '\377'; tail -c "$((size - half - 1))" "$DEMO"; } >"$tmp/flipped.prof"
if cmp -s "$tmp/flipped.prof" "$DEMO"; then
    printf '\000' | dd of="$tmp/flipped.prof" bs=1 seek="$half" conv=notrunc 2>/dev/null
fi
run info "$tmp/flipped.prof"
error_like info-flipped-demo 3 "prof: info: cannot read '$tmp/flipped.prof': block "

# ---- cut short: read up to the last intact block, status 0 ---------------------
head -c 30000 "$DEMO" >"$tmp/cut.prof"
run info "$tmp/cut.prof"
if status_is info-truncated 0; then
    if has "$out" "not closed cleanly: cut after " && has "$out" "unreadable (block " &&
        ! [ -s "$err" ]; then
        ok info-truncated
    else
        not_ok info-truncated "$(grep format "$out")"
    fi
fi

head -c "$((size - 16))" "$DEMO" >"$tmp/no-trailer.prof"
run info "$tmp/no-trailer.prof"
out_has info-no-footer "format     1.0, not closed cleanly (no footer): all 4 blocks intact"

# ---- output errors: status 4 -------------------------------------------------------
if [ -w /dev/full ]; then
    "$PROF" info "$DEMO" >/dev/full 2>"$err"
    rc=$?
    if [ $rc -ne 4 ]; then
        not_ok info-stdout-full "exit status $rc, want 4"
    elif ! has "$err" "prof: info: cannot write to standard output"; then
        not_ok info-stdout-full "stderr: $(cat "$err")"
    else
        ok info-stdout-full
    fi
    "$PROF" version >/dev/full 2>"$err"
    rc=$?
    if [ $rc -eq 4 ]; then ok version-stdout-full; else
        not_ok version-stdout-full "exit status $rc, want 4"
    fi
    "$PROF" --help >/dev/full 2>"$err"
    rc=$?
    if [ $rc -eq 4 ]; then ok help-stdout-full; else
        not_ok help-stdout-full "exit status $rc, want 4"
    fi
else
    echo "ok info-stdout-full # skip no /dev/full"
fi

[ $fails -eq 0 ]
