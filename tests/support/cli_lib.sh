# cli_lib.sh - what the CLI tests (tests/cli/*.sh) share, sourced by them
# (it is no suite itself, so it lives outside tests/cli/): the `ok NAME` /
# `not ok NAME - WHY` lines with the failures counted in $fails, a
# temporary directory removed at exit, running prof with its stdout, stderr
# and exit status kept, and the checks on them.
# PROF and TEST_BIN come from tests/suite.sh; the defaults are the plain build.
PROF=${PROF:-build/prof}
TEST_BIN=${TEST_BIN:-build/rel/tests/bin}
fails=0

ok() { echo "ok $1"; }
not_ok() {
    echo "not ok $1 - $2"
    fails=$((fails + 1))
}

# cli_tmp NAME: $tmp, a fresh directory removed at exit (read-only parts
# included); $out and $err, where run keeps prof's output.
cli_tmp() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-cli-$1.XXXXXX") || exit 1
    trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
    out=$tmp/stdout
    err=$tmp/stderr
}

# run ARGS...: runs prof, keeps stdout and stderr, sets $rc
run() {
    "$PROF" "$@" >"$out" 2>"$err"
    rc=$?
}

# unprivileged ARGS...: runs a command as a user without root's powers,
# for tests of what such a user cannot do (write into a read-only
# directory): as root (as CI runs) it drops to nobody with setpriv, else
# runuser; anyone else runs it as themselves. 125 when root cannot drop.
# The files it reads and the directories on their paths must be open to
# others (cli_tmp's directory is not: chmod it).
unprivileged() {
    if [ "$(id -u)" -ne 0 ]; then
        "$@"
    elif command -v setpriv >/dev/null 2>&1; then
        setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups -- "$@"
    elif command -v runuser >/dev/null 2>&1; then
        runuser -u nobody -- "$@"
    else
        return 125
    fi
}

# run_unprivileged ARGS...: run, as unprivileged does it
run_unprivileged() {
    unprivileged "$PROF" "$@" >"$out" 2>"$err"
    rc=$?
}

# status_is NAME STATUS: $rc is STATUS, else a failure that shows stderr
status_is() {
    [ "$rc" -eq "$2" ] && return 0
    not_ok "$1" "exit status $rc, want $2; stderr: $(head -c 300 "$err")"
    return 1
}

# has FILE TEXT: FILE contains the fixed string TEXT
has() {
    grep -F -q -e "$2" "$1"
}

# error_line NAME STATUS: prof failed with STATUS, one line on stderr and
# nothing on stdout; else a failure, and status 1.
error_line() {
    status_is "$1" "$2" || return 1
    if [ -s "$out" ]; then
        not_ok "$1" "stdout not empty: $(head -c 200 "$out")"
    elif [ "$(wc -l <"$err")" -ne 1 ]; then
        not_ok "$1" "stderr is not one line: $(cat "$err")"
    else
        return 0
    fi
    return 1
}

# error_is NAME STATUS MESSAGE: as error_line, MESSAGE that line exactly
error_is() {
    error_line "$1" "$2" || return
    if [ "$(cat "$err")" != "$3" ]; then
        not_ok "$1" "stderr '$(cat "$err")', want '$3'"
    else
        ok "$1"
    fi
}

# error_like NAME STATUS TEXT: as error_line, with TEXT a part of the line
error_like() {
    error_line "$1" "$2" || return
    if ! has "$err" "$3"; then
        not_ok "$1" "stderr '$(cat "$err")' lacks '$3'"
    else
        ok "$1"
    fi
}

# out_has NAME TEXT: succeeded, stdout has TEXT, stderr empty
out_has() {
    status_is "$1" 0 || return
    if ! has "$out" "$2"; then
        not_ok "$1" "stdout lacks '$2': $(head -c 300 "$out")"
    elif [ -s "$err" ]; then
        not_ok "$1" "stderr not empty: $(head -c 300 "$err")"
    else
        ok "$1"
    fi
}

# tty_run FILE ARGS...: prof's output on a pseudo-terminal (script(1), which
# the caller checks for) into FILE
tty_run() {
    f=$1
    shift
    TERM=xterm LC_ALL=C.UTF-8 script -qec "$*" /dev/null >"$f" 2>&1 </dev/null
}
