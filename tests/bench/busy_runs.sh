#!/bin/sh
# busy_runs.sh - records the real runs behind the busy-machine benchmark of
# `prof compare` (tests/bench/compare_busy.c, formats/rules.md §6.3): ROUNDS
# rounds of two runs of tests/python/cnn.py, the loop as it is ("base") and
# with a heavier forward ("heavier": a fixed amount of extra work, about 30%
# of the forward and 11% of the step), while 0 to 2 busy loops compete for
# the machine's cores, so that whole runs differ in speed as they do on a
# shared machine. The two sides of a round run under different loads and
# every side sees every load equally often, so that load and side are not
# confounded.
#
# usage: tests/bench/busy_runs.sh OUTDIR ROUNDS [STEPS]
#   (B: the build directory with python/, default build)
set -eu
[ $# -ge 2 ] || { echo "usage: $0 OUTDIR ROUNDS [STEPS]" >&2; exit 2; }
out=$1 rounds=$2 steps=${3:-100}
here=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-$here/build}
mkdir -p "$out/base" "$out/heavier"
pids=
load() { # start $1 busy loops
    pids=
    i=0
    while [ "$i" -lt "$1" ]; do
        sh -c 'while :; do :; done' &
        pids="$pids $!"
        i=$((i + 1))
    done
}
unload() {
    for p in $pids; do kill "$p" 2>/dev/null || :; done
    for p in $pids; do wait "$p" 2>/dev/null || :; done
    pids=
}
trap 'unload' EXIT INT TERM
run() { # side, round, load
    load "$3"
    PYTHONPATH=$B/python OMP_NUM_THREADS=1 PROF_TAGS="load=$3" \
        /usr/bin/python3 "$here/tests/python/cnn.py" "$out/$1/run$(printf %03d "$2").prof" \
        "$steps" $([ "$1" = heavier ] && echo --heavier-forward)
    unload
}
r=0
while [ "$r" -lt "$rounds" ]; do
    lb=$((r % 3)) la=$(((r + 1) % 3))
    if [ $((r % 2)) -eq 0 ]; then
        run base "$r" "$lb"; run heavier "$r" "$la"
    else
        run heavier "$r" "$la"; run base "$r" "$lb"
    fi
    echo "round $r: base load $lb, heavier load $la" >&2
    r=$((r + 1))
done
