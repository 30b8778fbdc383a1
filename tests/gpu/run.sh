#!/bin/sh
# run.sh - the tests that need an NVIDIA GPU, run by `make check-gpu`:
# tests/gpu/cuda_train.cu (kernels, a synchronous device-to-host copy, a
# memset, cudaDeviceSynchronize and NVTX ranges every step) and
# tests/gpu/torch_train.py (PyTorch on CUDA with prof.torch and NVTX), each
# run under `prof record --cuda`, then read with `prof info` and
# `prof analyze`. Also prints the overhead of CUDA capture on cuda_train
# (after an untimed warm-up run).
#
# The CUDA program is compiled whenever nvcc is there, GPU or not. Without
# a GPU the rest does not run and the script says SKIPPED: that is not a
# pass. Prints "ok NAME" / "not ok NAME" lines; exits 1 when one failed.
B=${B:-build}
PROF=${PROF:-$B/prof}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
STEPS=${STEPS:-200}
out=$B/gpu
mkdir -p "$out"
fails=0

ok() { echo "ok $1"; }
not_ok() {
    echo "not ok $1 - $2"
    fails=$((fails + 1))
}

# ---- build (no GPU needed) --------------------------------------------------------
if [ -x "$NVCC" ]; then
    if "$NVCC" -O2 -o "$out/cuda_train" tests/gpu/cuda_train.cu -ldl >"$out/nvcc.log" 2>&1; then
        ok gpu-build-cuda-train
    else
        not_ok gpu-build-cuda-train "$(tail -n 5 "$out/nvcc.log")"
    fi
else
    echo "# $NVCC not found: cuda_train not built"
fi

if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "check-gpu: SKIPPED: no GPU (nvidia-smi -L failed); nothing was run on a GPU"
    [ $fails -eq 0 ]
    exit
fi
if [ ! -x "$out/cuda_train" ]; then
    echo "check-gpu: SKIPPED: a GPU but no nvcc to build tests/gpu/cuda_train.cu"
    exit 0
fi
nvidia-smi -L | sed 's/^/# /'

now_ms() { date +%s%3N; }

# info_count FILE TYPE: the count of TYPE on its "  TYPE   N" line of prof info
info_count() {
    sed -n "s/^  $2 *\([0-9,]*\)$/\1/p" "$1" | tr -d ,
}

# expect_events NAME INFO TYPE...: each TYPE was counted at least once
expect_events() {
    name=$1
    info=$2
    shift 2
    for t in "$@"; do
        n=$(info_count "$info" "$t")
        if [ -n "$n" ] && [ "$n" -gt 0 ]; then ok "$name-$t ($n)"; else not_ok "$name-$t" "no $t events"; fi
    done
}

# ---- cuda_train under prof record --cuda -------------------------------------------------
# A first run, not timed, pays the CUDA driver's cold start (loading, the
# device's context): timed first, the plain run took it and the overhead
# line read 0.70x.
"$out/cuda_train" "$STEPS" >"$out/plain.log" 2>&1
t0=$(now_ms)
"$out/cuda_train" "$STEPS" >"$out/plain.log" 2>&1 || not_ok cuda-train-plain "$(cat "$out/plain.log")"
t1=$(now_ms)
"$PROF" record --cuda -o "$out/cuda.prof" -- "$out/cuda_train" "$STEPS" >"$out/record.log" 2>&1
rc=$?
t2=$(now_ms)
if [ $rc -eq 0 ]; then ok cuda-record; else not_ok cuda-record "status $rc: $(tail -n 5 "$out/record.log")"; fi
if grep -q "CUDA capture off" "$out/record.log"; then
    not_ok cuda-capture-on "$(grep "CUDA capture off" "$out/record.log")"
fi
if "$PROF" info "$out/cuda.prof" >"$out/cuda.info" 2>&1; then
    ok cuda-info
    sed 's/^/# /' "$out/cuda.info"
    expect_events cuda "$out/cuda.info" gpu_kernel gpu_memcpy gpu_memset sync api region step memory
else
    not_ok cuda-info "$(cat "$out/cuda.info")"
fi
kernels=$(info_count "$out/cuda.info" gpu_kernel)
[ "${kernels:-0}" -ge $((STEPS * 5)) ] && ok "cuda-all-kernels ($kernels of $((STEPS * 5)))" ||
    not_ok cuda-all-kernels "$kernels kernels, want $((STEPS * 5))"
if "$PROF" analyze --format json --top 0 "$out/cuda.prof" >"$out/cuda.json" 2>"$out/analyze.err"; then
    for want in scale_kernel reduce_kernel train_step forward loss.item cpu_gpu_sync gpu.0.used; do
        grep -q "$want" "$out/cuda.json" && ok "cuda-analyze-$want" ||
            not_ok "cuda-analyze-$want" "'$want' not in the report"
    done
    "$PROF" analyze "$out/cuda.prof" | sed 's/^/# /'
else
    not_ok cuda-analyze "$(cat "$out/analyze.err")"
fi
base=$((t1 - t0))
echo "# overhead: cuda_train $STEPS steps: ${base} ms plain, $((t2 - t1)) ms under prof record --cuda" \
    "($(awk "BEGIN { if ($base > 0) printf \"%.2f\", ($t2 - $t1) / $base; else print \"?\" }")x, wall time incl. start-up)"

# ---- PyTorch on CUDA --------------------------------------------------------------------------
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    PYTHONPATH=bindings/python "$PROF" record --cuda -o "$out/torch.prof" -- \
        python3 tests/gpu/torch_train.py 30 >"$out/torch.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then ok torch-record; else not_ok torch-record "status $rc: $(tail -n 5 "$out/torch.log")"; fi
    if "$PROF" info "$out/torch.prof" >"$out/torch.info" 2>&1; then
        sed 's/^/# /' "$out/torch.info"
        expect_events torch "$out/torch.info" gpu_kernel gpu_memcpy sync api region step
    else
        not_ok torch-info "$(cat "$out/torch.info")"
    fi
    if "$PROF" analyze --format json --top 0 "$out/torch.prof" >"$out/torch.json" 2>&1; then
        for want in train_step forward_backward cpu_gpu_sync; do
            grep -q "$want" "$out/torch.json" && ok "torch-analyze-$want" ||
                not_ok "torch-analyze-$want" "'$want' not in the report"
        done
    else
        not_ok torch-analyze "$(cat "$out/torch.json")"
    fi
else
    echo "# torch with CUDA not importable by python3: PyTorch case not run"
fi

echo "check-gpu: $fails failed"
[ $fails -eq 0 ]
