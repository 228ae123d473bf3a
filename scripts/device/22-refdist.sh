#!/usr/bin/env bash
# scripts/device/22-refdist.sh — the certified reference on every input distribution against
# its uniform time, at benchmark sizes, through `mmaprobe validate` on a device kernel
# (bench/bench_reference_dists.sh): reference milliseconds, ratio to uniform, elements decided
# by the exact evaluator and by MPFR. MMP_REFDIST_KERNEL (default cublas_bf16_f32) and
# MMP_REFDIST_SIZES (default 2048,4096) choose. Writes $OUT/refdist/.
# budget-seconds: 200
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/refdist
mkdir -p "$out"
mmp_need build-h200/mmaprobe
timeout $(( ${MMP_SCRIPT_BUDGET:-200} - 5 )) bash bench/bench_reference_dists.sh build-h200/mmaprobe \
    "${MMP_REFDIST_KERNEL:-cublas_bf16_f32}" "${MMP_REFDIST_SIZES:-2048,4096}" "$out"
mmp_expect bench_reference_dists $? 0
mmp_finish
