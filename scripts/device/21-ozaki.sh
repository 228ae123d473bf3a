#!/usr/bin/env bash
# scripts/device/21-ozaki.sh — the device reference's two routes for its exact slice products
# (ref_plan.h, Routes), side by side in one process: int8 slices on integer tensor cores
# (ref_cuda2_imma.cu) and binary64 slices with cublasDgemm, each against cuBLAS DGEMM at
# 8192^3, operands resident on the device (as a harness has them): bf16 -> fp32 and
# fp32 -> fp32 on uniform, wide and special data ("certified gpu v2: route int8|dgemm:
# resident on device ... x DGEMM"), 2,000 random elements of each result against pure MPFR
# (0 disagreements expected). Then tests/check_gpu_reference (both routes, and version 1,
# against the CPU path bit for bit). Writes $OUT/ozaki/ (one .txt per run, summary.txt).
# budget-seconds: 280
set -u
. "$(dirname "$0")/lib.sh"
budget=${MMP_SCRIPT_BUDGET:-280}
t_start=$(date +%s)
out=${OUT:-out}/ozaki
mkdir -p "$out"
bin=build-h200/bench_reference
mmp_need "$bin"
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
left() { echo $((budget - ($(date +%s) - t_start) - 5)); }
run() {   # name, timeout, args...
    local name=$1 limit=$2 l rc; shift 2
    l=$(left)
    if [ "$l" -lt 10 ]; then echo "21-ozaki: $name skipped: budget spent"; return; fi
    [ "$limit" -gt "$l" ] && limit=$l
    timeout "$limit" "$bin" "$@" > "$out/$name.txt" 2>&1
    rc=$?
    echo "21-ozaki: $name rc=$rc"
    mmp_expect "$name (see $out/$name.txt)" $rc 0
    grep -E '^(## |certified gpu v2:|certified gpu|open after|sampled|compared|device (memory|path v2 split))|FAILED' \
        "$out/$name.txt" | tee -a "$out/summary.txt"
}
# the GPU suite first: correctness of both routes before their figures
if [ -x build-h200/tests/check_gpu_reference ]; then
    l=$(left); lim=$(( l > 130 ? 120 : l - 10 ))
    timeout "$lim" build-h200/tests/check_gpu_reference > "$out/check_gpu_reference.txt" 2>&1
    rc=$?
    echo "21-ozaki: check_gpu_reference rc=$rc (0 pass, 1 fail, 77 skip, 124 timeout)" | tee -a "$out/summary.txt"
    mmp_expect check_gpu_reference $rc 0
    tail -4 "$out/check_gpu_reference.txt"
fi
for fmt in "bf16 bf16 fp32" "fp32 fp32 fp32"; do
    set -- $fmt
    for d in uniform wide special; do
        echo "### $1 x $2 -> $3, $d: int8 route, then DGEMM route" >> "$out/summary.txt"
        run "$1-$d" 60 --gpu --operands-on-device --routes 1,2 --repeat 2 --a "$1" --b "$2" --d "$3" --dist "$d" \
            --sizes 8192 --mpfr-rows 0 --mpfr-full-max 0 --sample 2000
    done
done
mmp_finish
