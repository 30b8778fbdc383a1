#!/bin/sh
# ranks.sh - `prof analyze DIR` over the ranks of one job, measured in one
# run by `make bench` (tests/bench/run.sh): each rank is loaded, analysed
# and reduced to its summary, one per core at a time, its collectives
# written to a temporary file (src/analysis/ranks.h). Targets (DESIGN §7):
#
#   1. memory flat in the ranks: peak RSS of 1,000 generated ranks of
#      100,000 events each against 10 of them (ratio about 1);
#   2. time linear: wall seconds per rank at 1,000 against 100 (about 1);
#   3. every core busy: CPU seconds over wall seconds (about the cores);
#   4. 64 copies of a real torch.profiler trace (../shared/traces/, when
#      this checkout has it beside it) as the ranks of one job: the same
#      three figures, each trace imported in place.
# BENCH_RANKS sets the largest job (default 1000), BENCH_RANKS_MID the
# middle one (100), BENCH_RANK_EVENTS the events of a rank (100000) and
# BENCH_TRACE_COPIES the copies of the real trace (64): tests/cli/bench.sh
# runs it small.
B=${B:-build}
PROF=$B/prof
BIN=$B/rel/tests/bin
PY=${PYTHON:-/usr/bin/python3}
RANKS=${BENCH_RANKS:-1000}
MID=${BENCH_RANKS_MID:-100}
EVENTS=${BENCH_RANK_EVENTS:-100000}
COPIES=${BENCH_TRACE_COPIES:-64}
ROUNDS=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-bench-ranks.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

BENCH=ranks
. tests/bench/measure.sh

cores=$(nproc)
for n in 10 "$MID" "$RANKS"; do
    mkdir -p "$tmp/r$n"
    "$BIN/make_ranks" "$tmp/r$n" "$n" "$EVENTS" || { echo "ranks bench: make_ranks failed" >&2; exit 1; }
done
measure r10 "$PROF" analyze "$tmp/r10"
measure r100 "$PROF" analyze "$tmp/r$MID"
measure rbig "$PROF" analyze "$tmp/r$RANKS"
bytes=$(du -sk "$tmp/r$RANKS" | cut -f1)
echo "generated ranks of $EVENTS events ($cores cores; $RANKS ranks: $(mib "$bytes") of profiles):"
printf '  %5s ranks  %7.2f s wall  %7.2f s CPU  %s peak RSS\n' 10 "$r10_s" "$r10_cpu" "$(mib "$r10_kib")"
printf '  %5s ranks  %7.2f s wall  %7.2f s CPU  %s peak RSS\n' "$MID" "$r100_s" "$r100_cpu" "$(mib "$r100_kib")"
printf '  %5s ranks  %7.2f s wall  %7.2f s CPU  %s peak RSS\n' "$RANKS" "$rbig_s" "$rbig_cpu" "$(mib "$rbig_kib")"
echo "  peak RSS, $RANKS ranks over 10:         $(ratio "$rbig_kib" "$r10_kib") (target about 1: flat)"
per100=$(awk -v s="$r100_s" -v n="$MID" 'BEGIN { print s / n }')
perbig=$(awk -v s="$rbig_s" -v n="$RANKS" 'BEGIN { print s / n }')
echo "  wall per rank, $RANKS ranks over $MID:   $(ratio "$perbig" "$per100") (target about 1: linear)"
echo "  CPU over wall, $RANKS ranks:            $(ratio "$rbig_cpu" "$rbig_s") (target about $cores: every core busy)"
rm -rf "$tmp/r10" "$tmp/r$MID" "$tmp/r$RANKS"

trace=../shared/traces/hta_nccl_data_a100_rank0of2.json.gz
if [ ! -f "$trace" ]; then
    echo "real trace: $trace not here, skipped"
    exit 0
fi
mkdir -p "$tmp/t64" "$tmp/t1"
"$PY" - "$trace" "$tmp/t64" "$COPIES" <<'PY' || exit 1
import gzip, re, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = gzip.open(src, "rt").read()
for r in range(n):
    t = re.sub(r'("distributedInfo": \{[^{}]*?"rank": )\d+', r"\g<1>%d" % r, text, count=1)
    t = re.sub(r'("distributedInfo": \{[^{}]*?"world_size": )\d+', r"\g<1>%d" % n, t, count=1)
    with gzip.open("%s/rank%d.json.gz" % (out, r), "wt", compresslevel=1) as f:
        f.write(t)
PY
cp "$tmp/t64/rank0.json.gz" "$tmp/t1/"
measure t1 "$PROF" analyze "$tmp/t1/rank0.json.gz"
measure t64 "$PROF" analyze "$tmp/t64"
echo "$COPIES copies of $(basename "$trace") as ranks (torch.profiler JSON, imported in place):"
printf '  %5s rank   %7.2f s wall  %7.2f s CPU  %s peak RSS\n' 1 "$t1_s" "$t1_cpu" "$(mib "$t1_kib")"
printf '  %5s ranks  %7.2f s wall  %7.2f s CPU  %s peak RSS\n' "$COPIES" "$t64_s" "$t64_cpu" "$(mib "$t64_kib")"
echo "  peak RSS, $COPIES ranks over 1:              $(ratio "$t64_kib" "$t1_kib") (target: the ranks at once, $cores)"
echo "  CPU over wall, $COPIES ranks:                $(ratio "$t64_cpu" "$t64_s") (target about $cores)"
