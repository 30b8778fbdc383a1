#!/bin/sh
# device-check.sh - the CUDA backend proven on a real GPU, in one short run
# on a machine that starts bare and reaches no package registry:
#
#   1. builds libprof and prof there, with CUPTI, from the Debian packages
#      that `make gpu-bundle` fetched here (unpacked into a prefix of its
#      own with dpkg -x, never over /);
#   2. runs tests/gpu/cuda_train.cu (known kernels on two streams, copies
#      both ways, memsets, syncs, NVTX ranges, a device-memory leak) under
#      `prof record --cuda` and checks the profile against what the program
#      did (tests/gpu/check_cuda.py), and its GPU time per operation,
#      launch statistics and queues against an independent join of its
#      export (tests/support/gpu_join.py, rules.md §3.2);
#   3. runs tests/gpu/torch_train.py under `prof record --cuda` and under
#      torch.profiler, imports the Kineto trace, and checks that the two
#      agree (tests/gpu/compare_torch.py); the join of each against its own
#      trace, as for the CUDA program (the recorder's: self time only, its
#      NVTX ranges and regions being two nestings on one thread);
#   4. measures recording overhead, plain and recorded runs interleaved;
#   5. writes summary.md (and the log and the profiles) into --out.
#
# usage: tests/gpu/device-check.sh [--bundle DIR] [--out DIR] [--work DIR]
#            [--steps N] [--torch-steps N] [--rounds N] [--build-only | --prebuilt DIR]
#
# Prints "ok NAME" / "not ok NAME - WHY" lines. Exit status: 0 every check
# passed, 1 one failed, 2 usage error, 77 skipped: no GPU here (with
# --build-only, the build alone runs and no GPU is needed).
set -u
usage() {
    cat <<'EOF'
usage: tests/gpu/device-check.sh [--bundle DIR] [--out DIR] [--work DIR]
           [--steps N] [--torch-steps N] [--rounds N] [--build-only | --prebuilt DIR]

Builds prof with CUPTI from the bundled Debian packages, records a CUDA
program and a PyTorch loop on this machine's GPU, checks the profiles
against what the programs did and against torch.profiler, measures the
recording overhead, and writes summary.md.

  --bundle DIR      the packages `make gpu-bundle` fetched (default
                    build/gpu-bundle); none there: the system's headers
  --out DIR         where summary.md, the log and the profiles go (default
                    $OUT when set, else build/gpu-check)
  --work DIR        the prefix, the build and the runs (default
                    build/gpu-work; emptied first, so it must be empty or
                    one this script made)
  --steps N         cuda_train steps (default 200)
  --torch-steps N   torch_train steps (default 40)
  --rounds N        interleaved rounds of the overhead runs (default 3)
  --build-only      unpack and build, then stop (needs no GPU)
  --prebuilt DIR    build nothing: use DIR's prof, libprof.so and python/ (a
                    `make` and `make python` output), with the bundle's
                    libraries that the system lacks
  -h, --help        this help

Exit status: 0 passed, 1 a check failed, 2 usage error, 77 skipped (no GPU).
EOF
}

bundle=
out=${OUT:-}
W=
steps=200
torch_steps=40
rounds=3
build_only=0
prebuilt=
number() {
    case $2 in '' | *[!0-9]*) echo "device-check.sh: $1 wants a number, not '$2'" >&2; exit 2 ;; esac
    [ "$2" -ge 1 ] || { echo "device-check.sh: $1 wants 1 or more" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --bundle | --out | --work | --prebuilt | --steps | --torch-steps | --rounds)
        [ $# -ge 2 ] || { echo "device-check.sh: $1 needs a value" >&2; exit 2; }
        case $1 in
        --bundle) bundle=$2 ;;
        --out) out=$2 ;;
        --work) W=$2 ;;
        --prebuilt) prebuilt=$2 ;;
        --steps) number "$1" "$2"; steps=$2 ;;
        --torch-steps) number "$1" "$2"; torch_steps=$2 ;;
        --rounds) number "$1" "$2"; rounds=$2 ;;
        esac
        shift 2 ;;
    --build-only) build_only=1; shift ;;
    *) echo "device-check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ "$torch_steps" -ge 7 ] || { echo "device-check.sh: --torch-steps wants 7 or more (5 are warm-up)" >&2; exit 2; }

# paths given are the caller's; the defaults are the repository's
abs() { case $1 in /* | '') echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
bundle=$(abs "$bundle")
out=$(abs "$out")
W=$(abs "$W")
prebuilt=$(abs "$prebuilt")
cd "$(dirname "$0")/../.." || exit 2
bundle=${bundle:-$(pwd)/build/gpu-bundle}
out=${out:-$(pwd)/build/gpu-check}
W=${W:-$(pwd)/build/gpu-work}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
PYTHON=${PYTHON:-python3}
if [ $build_only -eq 0 ] && ! nvidia-smi -L >/dev/null 2>&1; then
    echo "device-check.sh: SKIPPED: no GPU here (nvidia-smi -L failed); nothing was checked"
    exit 77
fi

# the work folder is emptied: only one this script made, or an empty one
if [ -d "$W" ] && [ ! -f "$W/.device-check" ] && [ -n "$(ls -A "$W")" ]; then
    echo "device-check.sh: '$W' is not empty and not a folder of device-check.sh: not emptying it" >&2
    exit 2
fi
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
rm -rf "$W" && mkdir -p "$W" && : >"$W/.device-check" || exit 2
W=$(cd "$W" && pwd)
LOG=$out/device-check.log
SUM=$out/summary.md
: >"$LOG"
passed=0
failed=0
say() { echo "$*" | tee -a "$LOG"; }
ok() { say "ok $*"; passed=$((passed + 1)); }
not_ok() { say "not ok $1 - $2"; failed=$((failed + 1)); }
now_ms() { date +%s%3N; }
# checks: runs a checker that prints ok / not ok lines, counts them
checks() {
    "$@" >"$W/checks.out" 2>&1
    cat "$W/checks.out" >>"$LOG"
    cat "$W/checks.out"
    passed=$((passed + $(grep -c '^ok ' "$W/checks.out")))
    n=$(grep -c '^not ok ' "$W/checks.out")
    [ -s "$W/checks.out" ] || n=1
    grep -q '^Traceback' "$W/checks.out" && n=$((n + 1))
    failed=$((failed + n))
}

{
    echo "# prof on a GPU: device check"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}"
    echo
    echo "## The machine"
    echo
    echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo none)"
    echo "- CUDA compiler: $("$NVCC" --version 2>/dev/null | sed -n 's/.*release \([^,]*\).*/\1/p' || echo none)"
    echo "- system: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(uname -r), $(ldd --version 2>/dev/null | head -n 1)"
    echo "- compiler: $(${CC:-cc} --version 2>/dev/null | head -n 1), make: $(make --version 2>/dev/null | head -n 1)"
    echo "- Python: $($PYTHON -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null || echo 'no torch')"
} >"$SUM"
cat "$SUM"

# ---- 1. build -----------------------------------------------------------------------
# The bundle's packages go into a prefix of their own. The compiler and
# linker look there first (C_INCLUDE_PATH, LDFLAGS); at run time the
# programs look there (their RUNPATH, from LD_RUN_PATH, and
# LD_LIBRARY_PATH) only for the libraries the system lacks (runlib), so
# that a process prof records keeps the system's own copies of the rest.
# The packages are amd64 ones, as the GPU machines are.
P=$W/prefix
if [ -f "$bundle/packages.txt" ]; then
    bundle=$(cd "$bundle" && pwd)
    mkdir -p "$P/runlib"
    while read -r pkg ver deb; do
        if command -v dpkg >/dev/null 2>&1; then
            dpkg -x "$bundle/$deb" "$P" || not_ok unpack "$pkg $ver"
        else # a .deb is an ar archive; its files are in data.tar.*
            (cd "$W" && rm -f data.tar.* && ar x "$bundle/$deb" && tar -xf data.tar.* -C "$P") ||
                not_ok unpack "$pkg $ver"
        fi
    done <"$bundle/packages.txt"
    # links that point into / point into the prefix instead
    find "$P" -type l | while read -r l; do
        t=$(readlink "$l")
        case $t in /*) ln -sfn "$P$t" "$l" ;; esac
    done
    for d in "$P/usr/lib/x86_64-linux-gnu" "$P/lib/x86_64-linux-gnu"; do
        [ -d "$d" ] || continue
        for so in "$d"/lib*.so.[0-9]*; do
            [ -e "$so" ] || continue
            name=$(basename "$so")
            case $name in *.so.[0-9] | *.so.[0-9][0-9]) ;; *) continue ;; esac  # sonames only
            ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$name[[:space:]]" || ln -sfn "$so" "$P/runlib/$name"
        done
    done
    export C_INCLUDE_PATH="$P/usr/include:$P/usr/include/x86_64-linux-gnu"
    export LDFLAGS="-L$P/usr/lib/x86_64-linux-gnu -L$P/lib/x86_64-linux-gnu"
    export LD_RUN_PATH="$P/runlib"
    # RUNPATH serves prof's own libraries, not theirs (libgsl's libgslcblas)
    export LD_LIBRARY_PATH="$P/runlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    say "# bundle: $(wc -l <"$bundle/packages.txt") packages unpacked; taken from it at run time: $(ls "$P/runlib" | tr '\n' ' ')"
else
    say "# no bundle in $bundle: building with the system's headers and libraries"
fi
BB=$W/build
if [ -n "$prebuilt" ]; then
    BB=$prebuilt
    say "# prebuilt: $BB"
else
    t0=$(now_ms)
    # the Python package for the machine's python3, its C extension too
    # where Python's headers are (FUZZCC, clang's syntax check elsewhere)
    if make -j"$(nproc)" B="$BB" PYTHON="$(command -v "$PYTHON")" FUZZCC="${CC:-cc}" CUDA_HOME="$CUDA_HOME" \
        all python >"$W/build.log" 2>&1; then
        ok "build ($(( ($(now_ms) - t0) / 1000 )) s)"
    else
        not_ok build "$(grep -m 3 -i 'error' "$W/build.log" || tail -n 3 "$W/build.log")"
        cp "$W/build.log" "$out/" 2>/dev/null
    fi
fi
PROF=$BB/prof
if [ -x "$PROF" ] && grep -q cuptiActivityEnable "$BB/libprof.so"; then
    ok "build-cupti (libprof.so captures CUDA)"
else
    not_ok build-cupti "no CUPTI in $BB/libprof.so: were CUPTI's headers under $CUDA_HOME/include?"
fi
if [ -f "$bundle/packages.txt" ] && [ -x "$PROF" ]; then
    from=$(ldd "$PROF" 2>/dev/null | grep -c "$P/")
    say "# prof's libraries from the bundle: $from"
fi
if ls "$BB"/python/prof/_native*.so >/dev/null 2>&1; then
    say "# the Python binding calls libprof through its C extension"
else
    say "# the Python binding calls libprof through ctypes (no C extension: no Python.h for $PYTHON)"
fi
if [ $build_only -eq 1 ]; then
    say "device-check: build only: $passed passed, $failed failed"
    [ $failed -eq 0 ]
    exit
fi
if [ ! -x "$PROF" ]; then
    say "device-check: no prof was built; nothing more to check"
    exit 1
fi

# join_check NAME REPORT TRACE [--export] [--self-only]: GPU time per
# operation, launch statistics and queues of the report against
# tests/support/gpu_join.py's own join of the trace (rules.md §3.2)
join_check() {
    jname=$1 jrep=$2 jtrace=$3
    shift 3
    jexport= jself=
    for a in "$@"; do
        case $a in --export) jexport=--export ;; --self-only) jself=--self-only ;; esac
    done
    if "$PYTHON" tests/support/gpu_join.py "$jtrace" $jexport >"$W/$jname.json" 2>"$W/$jname.txt" &&
        "$PYTHON" tests/support/check_gpu_join.py $jself "$jrep" "$W/$jname.json" >"$W/$jname.txt" 2>&1; then
        ok "$jname"
    else
        not_ok "$jname" "$(head -n 3 "$W/$jname.txt" | tr '\n' ';')"
    fi
}

# ---- 2. the CUDA program --------------------------------------------------------------
arch=-arch=native
"$NVCC" -O2 $arch -o "$W/cuda_train" tests/gpu/cuda_train.cu -ldl >"$W/nvcc.log" 2>&1 ||
    { arch=; "$NVCC" -O2 -o "$W/cuda_train" tests/gpu/cuda_train.cu -ldl >>"$W/nvcc.log" 2>&1; }
if [ -x "$W/cuda_train" ]; then
    ok "cuda-build (nvcc ${arch:-with no arch})"
    "$W/cuda_train" 5 >/dev/null 2>&1  # the driver's cold start, not timed
    "$PROF" record --cuda -o "$W/cuda.prof" -- "$W/cuda_train" "$steps" "$W/truth.json" >"$W/cuda.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && ok cuda-record || not_ok cuda-record "status $rc: $(tail -n 3 "$W/cuda.log")"
    if grep -q "CUDA capture off" "$W/cuda.log"; then
        not_ok cuda-capture "$(grep -m 1 "CUDA capture off" "$W/cuda.log")"
    fi
    "$PROF" export --format json -o "$W/cuda.jsonl" "$W/cuda.prof" 2>>"$W/cuda.log" &&
        "$PROF" analyze --format json --top 0 "$W/cuda.prof" >"$W/cuda.json" 2>>"$W/cuda.log" &&
        "$PROF" analyze "$W/cuda.prof" >"$W/cuda.txt" 2>>"$W/cuda.log" ||
        not_ok cuda-read "$(tail -n 3 "$W/cuda.log")"
    checks "$PYTHON" tests/gpu/check_cuda.py "$W/truth.json" "$W/cuda.jsonl" "$W/cuda.json" "$W/cuda.md"
    join_check cuda-gpu-join "$W/cuda.json" "$W/cuda.jsonl" --export
else
    not_ok cuda-build "$(tail -n 5 "$W/nvcc.log")"
fi

# ---- 3. PyTorch: recorder against importer ------------------------------------------------
have_torch=0
"$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null && have_torch=1
if [ $have_torch -eq 1 ]; then
    "$PROF" record --cuda -o "$W/torch.prof" -- "$PYTHON" tests/gpu/torch_train.py "$torch_steps" >"$W/torch.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && ok torch-record || not_ok torch-record "status $rc: $(tail -n 3 "$W/torch.log")"
    "$PYTHON" tests/gpu/torch_train.py "$torch_steps" --kineto "$W/kineto.json" >"$W/kineto.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && ok torch-kineto || not_ok torch-kineto "status $rc: $(tail -n 3 "$W/kineto.log")"
    if "$PROF" import -o "$W/kineto.prof" "$W/kineto.json" >>"$W/kineto.log" 2>&1 &&
        "$PROF" analyze --format json --top 0 "$W/torch.prof" >"$W/torch.json" 2>>"$W/torch.log" &&
        "$PROF" analyze --format json --top 0 "$W/kineto.prof" >"$W/kineto-report.json" 2>>"$W/kineto.log"; then
        "$PROF" analyze "$W/torch.prof" >"$W/torch.txt" 2>&1
        "$PROF" export --format json -o "$W/torch.jsonl" "$W/torch.prof" 2>>"$W/torch.log"
        checks "$PYTHON" tests/gpu/compare_torch.py "$W/torch.json" "$W/kineto-report.json" "$torch_steps" \
            "$W/torch.md" "$W/torch.jsonl"
        join_check kineto-gpu-join "$W/kineto-report.json" "$W/kineto.json"
        join_check torch-gpu-join "$W/torch.json" "$W/torch.jsonl" --export --self-only
        # every record joined to its call, as in the Kineto trace: cuBLAS's kernels are
        # launched with the driver's cuLaunchKernel, which the recorder records too
        jr=$("$PYTHON" -c 'import json, sys
a, b = (json.load(open(p))["summary"]["launches"] for p in sys.argv[1:])
print(a["records"] - a["joined"], b["records"] - b["joined"])' "$W/torch.json" "$W/kineto-report.json" 2>&1)
        case $jr in
        "0 0") ok torch-every-record-joined ;;
        *) not_ok torch-every-record-joined "records not joined, recorder and Kineto: $jr" ;;
        esac
    else
        not_ok torch-read "$(tail -n 3 "$W/torch.log" "$W/kineto.log")"
    fi
else
    not_ok torch "python3 has no torch with CUDA"
fi

# ---- 4. overhead ------------------------------------------------------------------------
# Rounds interleave the ways of running, each round in an order rotated by
# one, so that a drift of the machine touches each alike. cuda_train: wall
# time of the process; torch_train: its own loop time per step after
# warm-up (Python's and torch's start-up are not prof's), beside
# torch.profiler's on the same loop.
# rotated N WORD...: the words, rotated left by N
rotated() {
    n=$1
    shift
    k=$((n % $#))
    i=0
    for w; do [ $i -ge $k ] && printf '%s ' "$w"; i=$((i + 1)); done
    i=0
    for w; do [ $i -lt $k ] && printf '%s ' "$w"; i=$((i + 1)); done
}
: >"$W/overhead.txt"
r=0
while [ $r -lt "$rounds" ] && [ -x "$W/cuda_train" ]; do
    for way in $(rotated $r plain cuda); do
        t0=$(now_ms)
        case $way in
        plain) "$W/cuda_train" "$steps" >/dev/null 2>&1 ;;
        cuda) "$PROF" record --cuda -o "$W/o.prof" -- "$W/cuda_train" "$steps" >/dev/null 2>&1 ;;
        esac
        echo "cuda_train $way $(($(now_ms) - t0))" >>"$W/overhead.txt"
    done
    if [ $have_torch -eq 1 ]; then
        for way in $(rotated $r plain record cuda kineto); do
            tt="tests/gpu/torch_train.py $torch_steps --timing $W/t.json"
            case $way in
            plain) "$PYTHON" $tt --plain ;;
            record) "$PROF" record -o "$W/o.prof" -- "$PYTHON" $tt ;;
            cuda) "$PROF" record --cuda -o "$W/o.prof" -- "$PYTHON" $tt ;;
            kineto) "$PYTHON" $tt --kineto "$W/o.json" ;;
            esac >/dev/null 2>&1
            echo "torch_train $way $("$PYTHON" -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["ms_per_step"])' "$W/t.json" 2>/dev/null)" >>"$W/overhead.txt"
            rm -f "$W/t.json" "$W/o.json"
        done
    fi
    r=$((r + 1))
done
# median PROGRAM WAY
median() {
    awk -v p="$1" -v w="$2" '$1 == p && $2 == w && $3 != "" { v[n++] = $3 }
        END { if (!n) { print ""; exit } for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
              print (n % 2) ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2 }' "$W/overhead.txt"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b > 0) printf "%.3fx", a / b; else print "?" }'; }
c_plain=$(median cuda_train plain)
c_cuda=$(median cuda_train cuda)
t_plain=$(median torch_train plain)
t_rec=$(median torch_train record)
t_cuda=$(median torch_train cuda)
t_kineto=$(median torch_train kineto)
{
    echo
    echo "## Recording overhead (medians of $rounds interleaved rounds)"
    echo
    echo "| program | plain | prof record | prof record --cuda | torch.profiler | --cuda / plain | torch.profiler / plain |"
    echo "|---|---|---|---|---|---|---|"
    echo "| cuda_train, $steps steps, process wall time / ms | $c_plain | | $c_cuda | | $(ratio "$c_cuda" "$c_plain") | |"
    echo "| torch_train, loop time per step after warm-up / ms | $t_plain | $t_rec | $t_cuda | $t_kineto |" \
        "$(ratio "$t_cuda" "$t_plain") | $(ratio "$t_kineto" "$t_plain") |"
} >"$W/overhead.md"
if [ -n "$t_cuda" ] && [ -n "$t_plain" ] && [ -n "$c_cuda" ]; then
    ok "overhead-measured (torch loop $(ratio "$t_cuda" "$t_plain") with --cuda, $(ratio "$t_kineto" "$t_plain") under torch.profiler)"
else
    not_ok overhead-measured "a way of running gave no time: $(tr '\n' ';' <"$W/overhead.txt")"
fi

# ---- 5. summary -----------------------------------------------------------------------
{
    echo
    echo "## Result: $passed passed, $failed failed"
    echo
    grep '^not ok' "$LOG" | sed 's/^/- /'
    if [ -f "$W/cuda.md" ]; then
        echo
        echo "## tests/gpu/cuda_train.cu ($steps steps) under prof record --cuda"
        echo
        cat "$W/cuda.md"
    fi
    if [ -f "$W/torch.md" ]; then
        echo
        echo "## tests/gpu/torch_train.py ($torch_steps steps): prof record --cuda against torch.profiler"
        echo
        cat "$W/torch.md"
    fi
    cat "$W/overhead.md"
    echo
    echo "## Every check"
    echo
    echo '```'
    grep -E '^(not )?ok ' "$LOG"
    echo '```'
} >>"$SUM"
# what a later look needs, small enough to come back
tar -czf "$out/profiles.tar.gz" -C "$W" $(cd "$W" && ls *.prof *.json *.txt *.md *.log 2>/dev/null | grep -v '^o.prof$') 2>/dev/null
[ "$(du -k "$out/profiles.tar.gz" | cut -f1)" -lt 15000 ] || rm -f "$out/profiles.tar.gz"
say "device-check: $passed passed, $failed failed (summary: $SUM)"
[ $failed -eq 0 ]
