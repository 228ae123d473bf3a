#!/usr/bin/env bash
# scripts/device/20-reference.sh — the certified reference on the device, run from the
# repo root by scripts/device/run-all.sh with the build in build-h200/; writes $OUT/reference/.
#   1. fp32 x fp32 -> fp32 at 8192^3: the certified GPU reference, version 2 (ref_cuda2.cu:
#      native upload, every O(n^2) stage on the device, MPFR for the undecided: n_mpfr) timed
#      against cuBLAS DGEMM at the same size in the same process: "certified gpu v2: resident
#      on device ... x DGEMM; download ... x DGEMM; total ... x DGEMM"; 10^4 random elements
#      checked against pure MPFR (0 disagreements expected); the naive MPFR triple loop timed
#      at 512^3 on every core and extrapolated to 8192^3. Then the same with version 1 (host
#      prepare/finish; --device-version 1) for comparison, without the sample, and version 2
#      with pageable uploads/downloads (MMP_REF_PIN=0) against the default pinned ones.
#   2. bf16 x bf16 -> fp32 at 8192^3 with 2,000 sampled elements (fewer slices), version 2.
#      Version 2 takes the route of its plan (int8 slices on integer tensor cores for these
#      formats, ref_plan.h); with operands on the device, bf16 and fp32 also run the DGEMM route
#      in the same process (--routes 0,2; scripts/device/21-ozaki.sh has both on more data).
#   3. The device path (version 2) against the CPU certified path, every element bit for bit, at 2048^3 or
#      1024^3: fp32 (column-major, alpha -0.75, beta 0.5), bf16 -> bf16, e4m3 x e5m2 -> fp16,
#      fp16 -> fp16 (alpha 2, beta -1).
#   4. tests/check_gpu_reference (the Check suite: device versions 2 and 1 vs the CPU path on
#      random, wide, cancelling, special-value and far-entry problems of every float format,
#      every output format, and a remainder cross-term known answer).
#   5. The CPU certified path at 2048^3 on this host, for comparison with the 2-core figure.
#   6. bench/bench_e2e.sh: one 8192^3 validation case end to end (cublas_bf16_f32, in-process),
#      its time split by stage (inputs, reference, poison, transfers, launches, guards, compare).
# Fails soft: prints what failed and continues. Each run is limited to what is left of the
# script's budget ($MMP_SCRIPT_BUDGET from run-all.sh).
# budget-seconds: 240
set -u
. "$(dirname "$0")/lib.sh"
budget=${MMP_SCRIPT_BUDGET:-150}
t_start=$(date +%s)
out=${OUT:-out}/reference
mkdir -p "$out"
bin=build-h200/bench_reference
mmp_need "$bin"
core=${OPENBLAS_CORETYPE:-}
if [ -z "$core" ]; then
    if grep -qw avx512f /proc/cpuinfo; then core=SkylakeX; elif grep -qw avx2 /proc/cpuinfo; then core=Haswell; fi
fi
export OPENBLAS_CORETYPE=$core
run() {   # name, timeout, args...
    local name=$1 limit=$2; shift 2
    local start end rc left
    left=$((budget - ($(date +%s) - t_start) - 5))
    if [ "$left" -lt 10 ]; then echo "20-reference: $name skipped: budget spent"; return; fi
    [ "$limit" -gt "$left" ] && limit=$left
    start=$(date +%s.%N)
    timeout "$limit" "$bin" "$@" > "$out/$name.txt" 2>&1
    rc=$?
    end=$(date +%s.%N)
    echo "20-reference: $name rc=$rc in $(awk "BEGIN{printf \"%.1f\", $end - $start}") s" | tee -a "$out/times.txt"
    mmp_expect "$name (see $out/$name.txt)" $rc 0
    grep -E '^(certified|cublas dgemm|device|naive|sampled|compared|operands|# disagreements)|FAILED' "$out/$name.txt" || true
}
run gpu-fp32-8192 90 --gpu --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0 --sample 10000 --naive-size 512
# bf16 inputs: the fewest slices (DGEMM route: one DGEMM; fp32: 2 x 2 slices, 4 DGEMMs)
run gpu-bf16-8192 60 --gpu --a bf16 --b bf16 --d fp32 --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0 --sample 2000
# operands already on the device (as the kernel's are in a harness, and the DGEMM's): no upload
run gpu-bf16-8192-ondev 50 --gpu --operands-on-device --routes 0,2 --a bf16 --b bf16 --d fp32 --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0 --sample 2000
run gpu-fp32-8192-ondev 50 --gpu --operands-on-device --routes 0,2 --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0
# every tensor-core input format: fp16 -> fp16, tf32 -> fp32, e4m3 x e5m2 -> bf16 (one DGEMM each)
run gpu-fp16-8192-ondev 40 --gpu --operands-on-device --a fp16 --b fp16 --d fp16 --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0 --sample 2000
run gpu-tf32-8192-ondev 40 --gpu --operands-on-device --a tf32 --b tf32 --d fp32 --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0 --sample 2000
run gpu-fp8-8192-ondev 40 --gpu --operands-on-device --a e4m3 --b e5m2 --d bf16 --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0 --sample 2000
run gpu-fp32-8192-v1 40 --gpu --device-version 1 --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0
# v2 with pageable copies instead of cudaHostRegister'ed ones (which is faster on this host?)
MMP_REF_PIN=0 run gpu-fp32-8192-nopin 30 --gpu --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0
# MMP_REFERENCE_QUICK=1: only the 8192^3 figures (a partial re-run)
if [ -z "${MMP_REFERENCE_QUICK:-}" ]; then
run cmp-fp32-2048 40 --gpu --compare-cpu --col --alpha -0.75 --beta 0.5 --sizes 2048 --mpfr-rows 16 --mpfr-full-max 0
run cmp-bf16-2048 40 --gpu --compare-cpu --a bf16 --b bf16 --d bf16 --sizes 2048 --mpfr-rows 16 --mpfr-full-max 0
run cmp-fp8-1024 40 --gpu --compare-cpu --a e4m3 --b e5m2 --d fp16 --sizes 1024 --mpfr-rows 16 --mpfr-full-max 0
run cmp-fp16-1024 40 --gpu --compare-cpu --a fp16 --b fp16 --d fp16 --alpha 2 --beta -1 --sizes 1024 --mpfr-rows 16 --mpfr-full-max 0
left=$((budget - ($(date +%s) - t_start) - 5))
if [ -x build-h200/tests/check_gpu_reference ] && [ "$left" -gt 20 ]; then
    lim=$(( left > 70 ? 60 : left - 10 ))
    timeout "$lim" build-h200/tests/check_gpu_reference > "$out/check_gpu_reference.txt" 2>&1
    rc=$?
    echo "20-reference: check_gpu_reference rc=$rc (0 pass, 1 fail, 77 skip, 124 timeout)" | tee -a "$out/times.txt"
    mmp_expect check_gpu_reference $rc 0
    tail -3 "$out/check_gpu_reference.txt"
fi
run cpu-fp32-2048 40 --sizes 2048 --mpfr-rows 16 --mpfr-full-max 0
fi
left=$((budget - ($(date +%s) - t_start) - 5))
if [ "$left" -gt 30 ]; then
    timeout "$left" bash bench/bench_e2e.sh build-h200/mmaprobe cublas_bf16_f32 8192 "$out" > "$out/e2e.log" 2>&1
    mmp_expect "bench_e2e 8192" $? 0
    tail -14 "$out/e2e.log"
else
    echo "20-reference: e2e 8192^3 skipped: budget spent"
fi
mmp_finish
