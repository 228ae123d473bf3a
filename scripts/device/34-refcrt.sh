#!/usr/bin/env bash
# scripts/device/34-refcrt.sh — the int8 route's squares by residues (ref_crt.h,
# ref_cuda2_crt.cu: one int8 GEMM per modulus instead of one per slice pair) against the pairs,
# on the same operands in one process: first tests/check_gpu_reference (its version 6 runs every
# square by residues against the CPU path bit for bit), then bench_reference --routes 1,3 (route
# 1: the pairs, the default; route 3: residues weighed by cost) for bf16 -> fp32 and fp32 ->
# fp32 on wide, uniform, special, cancel and onehot data at 4096^3 and 8192^3, operands resident,
# each size twice (the second reported), 10^4 random elements of each result against pure MPFR
# (0 disagreements expected); then bf16 wide and special at 1024^3 with every square by
# residues (route 4) against the CPU path element by element. Each result line names its route
# ("int8-crt N": N moduli). Writes $OUT/refcrt/ (one .txt per run, summary.txt).
# MMP_REFCRT_ONLY="bf16-wide fp32-uniform ...": only those runs (no comparison at 1024^3);
# MMP_REFCRT_NO_CHECK=1: without check_gpu_reference (when ctest -L gpu runs it anyway).
# budget-seconds: 420
set -u
export MMP_SCRIPT_BUDGET=${MMP_SCRIPT_BUDGET:-420}
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/refcrt
mkdir -p "$out"
bin=build-h200/bench_reference
mmp_need "$bin"
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
lines='^(## |certified gpu v2:|open after|sampled|compared|device memory|run [0-9])|FAILED'
if [ -x build-h200/tests/check_gpu_reference ] && [ -z "${MMP_REFCRT_NO_CHECK:-}" ]; then
    l=$(mmp_left); lim=$(( l > 140 ? 130 : l - 10 ))
    timeout "$lim" build-h200/tests/check_gpu_reference > "$out/check_gpu_reference.txt" 2>&1
    rc=$?
    echo "34-refcrt: check_gpu_reference rc=$rc (0 pass, 1 fail, 77 skip, 124 timeout)" | tee -a "$out/summary.txt"
    mmp_expect check_gpu_reference $rc 0
    tail -6 "$out/check_gpu_reference.txt"
fi
# most wanted first: what is left of the budget may not reach the end
for run in "bf16 wide" "bf16 uniform" "bf16 special" "fp32 wide" "fp32 uniform" "bf16 cancel" "bf16 onehot" \
           "fp32 special" "fp32 cancel" "fp32 onehot"; do
    set -- $run
    [ -n "${MMP_REFCRT_ONLY:-}" ] && [[ " $MMP_REFCRT_ONLY " != *" $1-$2 "* ]] && continue
    echo "### $1 x $1 -> fp32, $2: pairs (route 1), then residues by cost (route 3)" >> "$out/summary.txt"
    mmp_bench "$out" "$1-$2" 60 "$lines" "$bin" --gpu --operands-on-device --routes 1,3 --repeat 2 --a "$1" --b "$1" \
        --d fp32 --dist "$2" --sizes 4096,8192 --mpfr-rows 0 --mpfr-full-max 0 --sample 10000
done
for d in wide special; do
    [ -n "${MMP_REFCRT_ONLY:-}" ] && break
    echo "### bf16 x bf16 -> bf16, $d, every square by residues (route 4) against the CPU path" >> "$out/summary.txt"
    mmp_bench "$out" "cmp-bf16-$d" 30 "$lines" "$bin" --gpu --compare-cpu --routes 4 --a bf16 --b bf16 --d bf16 \
        --dist "$d" --alpha -0.75 --beta 0.5 --sizes 1024 --mpfr-rows 8 --mpfr-full-max 0
done
mmp_finish
