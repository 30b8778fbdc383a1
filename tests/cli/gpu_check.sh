#!/bin/sh
# gpu_check.sh - what of the GPU device check (tests/gpu/device-check.sh)
# runs without a GPU: its arguments and their errors, the skip status
# where there is no GPU, the bundle of Debian packages (`make gpu-bundle`,
# fetched with apt-get download) and a build of prof from that bundle alone
# (--build-only), whose programs then run. The checkers it runs on a GPU
# (check_cuda.py, compare_torch.py) are tried on profiles of the importer.
# variants: rel
# Run from the repository root with PROF, TEST_BIN and B, as tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
case "$PROF" in
*/asan/*) exit 0 ;;
esac

cli_tmp gpu_check
DC=tests/gpu/device-check.sh

# dc NAME STATUS ARGS...: device-check.sh exits with STATUS
dc() {
    name=$1
    want=$2
    shift 2
    sh "$DC" "$@" >"$out" 2>"$err"
    rc=$?
    status_is "$name" "$want" && ok "$name"
}

dc help 0 --help
grep -q '^usage: tests/gpu/device-check.sh' "$out" && grep -q -- '--build-only' "$out" &&
    grep -q 'Exit status: 0 passed, 1 a check failed, 2 usage error, 77 skipped' "$out" && ok help-text ||
    not_ok help-text "$(head -c 300 "$out")"
dc unknown-argument 2 --bogus
grep -q "unknown argument '--bogus'" "$err" && ok unknown-argument-said || not_ok unknown-argument-said "$(cat "$err")"
dc steps-not-a-number 2 --steps many
dc steps-zero 2 --steps 0
dc torch-steps-too-few 2 --torch-steps 6
dc rounds-missing-value 2 --rounds
dc out-missing-value 2 --out
mkdir -p "$tmp/mine" && echo keep >"$tmp/mine/file"
dc work-not-emptied 2 --build-only --work "$tmp/mine" --out "$tmp/o0"
[ -f "$tmp/mine/file" ] && grep -q 'not emptying it' "$err" && ok work-kept || not_ok work-kept "$(cat "$err")"

if nvidia-smi -L >/dev/null 2>&1; then
    ok "no-gpu-skips # skip a GPU is here"
else
    dc no-gpu-skips 77 --out "$tmp/none"
    grep -q 'SKIPPED: no GPU here' "$out" && ok no-gpu-said || not_ok no-gpu-said "$(cat "$out")"
    [ ! -e "$tmp/none" ] && ok no-gpu-writes-nothing || not_ok no-gpu-writes-nothing "$(ls "$tmp/none")"
fi

sh tests/gpu/bundle.sh >"$out" 2>"$err"
rc=$?
status_is bundle-usage 2 && ok bundle-usage

# ---- the bundle, and a build from it -----------------------------------------------
if make -s gpu-bundle B="$tmp/b" >"$out" 2>"$err"; then
    ok gpu-bundle
    list=$tmp/b/gpu-bundle/packages.txt
    for p in libzstd-dev libzstd1 libcjson-dev libcjson1 libgsl-dev libgsl27 libgslcblas0 libyajl-dev \
        libyajl2 zlib1g-dev zlib1g libsqlite3-dev libsqlite3-0 libmicrohttpd-dev; do
        grep -q "^$p " "$list" || { not_ok "bundle-has-$p" "$(cat "$list")"; continue; }
        f=$(sed -n "s/^$p [^ ]* //p" "$list")
        dpkg-deb -f "$tmp/b/gpu-bundle/$f" Package >/dev/null 2>&1 && ok "bundle-has-$p" ||
            not_ok "bundle-has-$p" "'$f' is no .deb"
    done
    if sh "$DC" --build-only --bundle "$tmp/b/gpu-bundle" --work "$tmp/w" --out "$tmp/o" >"$out" 2>"$err"; then
        ok build-from-bundle
    else
        not_ok build-from-bundle "$(tail -n 5 "$out") $(tail -n 5 "$err")"
    fi
    grep -q '^ok build-cupti' "$tmp/o/device-check.log" 2>/dev/null || [ ! -f /usr/local/cuda/include/cupti.h ] &&
        ok build-from-bundle-cupti || not_ok build-from-bundle-cupti "$(cat "$tmp/o/device-check.log")"
    grep -q '^# bundle: 14 packages unpacked' "$tmp/o/device-check.log" && ok bundle-unpacked ||
        not_ok bundle-unpacked "$(head -n 20 "$tmp/o/device-check.log")"
    # headers come from the bundle's prefix, not the system's
    echo '#include <zstd.h>' | C_INCLUDE_PATH="$tmp/w/prefix/usr/include" ${CC:-cc} -M -x c - 2>/dev/null |
        grep -q "$tmp/w/prefix/usr/include/zstd.h" && ok bundle-headers-first ||
        not_ok bundle-headers-first "zstd.h not taken from $tmp/w/prefix"
    # absolute links of the packages (libz.so -> /lib/...) point into the prefix
    l=$(readlink "$tmp/w/prefix/usr/lib/x86_64-linux-gnu/libz.so")
    case $l in "$tmp/w/prefix/"*) ok bundle-links-inside ;; *) not_ok bundle-links-inside "libz.so -> $l" ;; esac
    if "$tmp/w/build/prof" --version >"$out" 2>"$err" &&
        "$tmp/w/build/prof" record -o "$tmp/r.prof" -- sh -c 'exit 0' >"$out" 2>"$err" &&
        "$tmp/w/build/prof" info "$tmp/r.prof" >"$out" 2>"$err"; then
        ok built-prof-runs
    else
        not_ok built-prof-runs "$(cat "$err")"
    fi
else
    if grep -q 'apt-get download .* failed' "$err"; then
        ok "gpu-bundle # skip no package archive reachable: $(head -n 1 "$err")"
    else
        not_ok gpu-bundle "$(cat "$err")"
    fi
fi

# ---- the checkers on profiles recorded on an H200 (testdata/gpu) -------------------------------
# The figures the device check found right there, read here again: a
# change to the reader or the analysis that breaks them fails without a GPU.
G=testdata/gpu
if "$PROF" export --format json -o "$tmp/cuda.jsonl" "$G/h200_cuda_train.prof" 2>"$err" &&
    "$PROF" analyze --format json --top 0 "$G/h200_cuda_train.prof" >"$tmp/cuda.json" 2>"$err" &&
    python3 tests/gpu/check_cuda.py "$G/h200_cuda_train.truth.json" "$tmp/cuda.jsonl" "$tmp/cuda.json" \
        "$tmp/cuda.md" >"$out" 2>&1; then
    ok "h200-cuda-train ($(grep -c '^ok' "$out") checks)"
else
    not_ok h200-cuda-train "$(grep -v '^ok' "$out" | head -n 5) $(cat "$err")"
fi
if "$PROF" import -o "$tmp/kineto.prof" "$G/h200_torch_train.kineto.json.gz" >/dev/null 2>"$err" &&
    "$PROF" analyze --format json --top 0 "$tmp/kineto.prof" >"$tmp/kineto.json" 2>"$err" &&
    "$PROF" analyze --format json --top 0 "$G/h200_torch_train.prof" >"$tmp/torch.json" 2>"$err" &&
    "$PROF" export --format json -o "$tmp/torch.jsonl" "$G/h200_torch_train.prof" 2>"$err" &&
    python3 tests/gpu/compare_torch.py "$tmp/torch.json" "$tmp/kineto.json" 40 "$tmp/torch.md" \
        "$tmp/torch.jsonl" >"$out" 2>&1; then
    ok "h200-torch-train ($(grep -c '^ok' "$out") checks)"
else
    not_ok h200-torch-train "$(grep -v '^ok' "$out" | head -n 5) $(cat "$err")"
fi
# the text report tells the loop's cuBLAS kernels apart
"$PROF" analyze "$G/h200_torch_train.prof" >"$out" 2>"$err"
n=$(sed -n '/^Top kernels/,/^$/p' "$out" | grep -c 'sm80_')
d=$(sed -n '/^Top kernels/,/^$/p' "$out" | grep 'sm80_' | awk '{print $1}' | sort -u | wc -l)
[ "$n" -ge 4 ] && [ "$n" -eq "$d" ] && ok "h200-kernel-names-apart ($n)" ||
    not_ok h200-kernel-names-apart "$(sed -n '/^Top kernels/,/^$/p' "$out")"

# ---- the checkers, on what the importer makes of a Kineto trace ----------------------------
"$PROF" import -o "$tmp/k.prof" testdata/kineto/2024.json >/dev/null 2>&1 &&
    "$PROF" analyze --format json --top 0 "$tmp/k.prof" >"$tmp/k.json" 2>"$err" || not_ok checkers-input "$(cat "$err")"
steps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["steps"])' "$tmp/k.json")
if python3 tests/gpu/compare_torch.py "$tmp/k.json" "$tmp/k.json" "$steps" "$tmp/k.md" >"$out" 2>&1 &&
    ! grep -q '^not ok' "$out" && grep -q '^| kernels |' "$tmp/k.md"; then
    ok compare-torch-same
else
    not_ok compare-torch-same "$(cat "$out")"
fi
# one kernel fewer on one side: the counts part
python3 - "$tmp/k.json" "$tmp/k2.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["kernels"][0]["calls"] -= 1
json.dump(r, open(sys.argv[2], "w"))
EOF
python3 tests/gpu/compare_torch.py "$tmp/k.json" "$tmp/k2.json" "$steps" "$tmp/k.md" >"$out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok kernel-calls' "$out" && ok compare-torch-differ ||
    not_ok compare-torch-differ "exit $rc: $(cat "$out")"

[ $fails -eq 0 ]
