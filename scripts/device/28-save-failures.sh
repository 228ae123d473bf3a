#!/usr/bin/env bash
# scripts/device/28-save-failures.sh — `validate --save-failures` on device kernels: CUDA mutants
# that FAIL (dropped K tile, unwritten edge, swapped elements, wrong lda, column-major C read as
# row-major) and a control that PASSes, with the device stages (the buffers and the reference
# stay on the device: the failing case's are copied back) and with the host stages
# (MMP_DEVICE_STAGES=0); check_failures.py then reads every saved .npy header, the shapes, and
# D against the reference at each case's first failing element. Writes $OUT/save-failures/.
# budget-seconds: 90
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/save-failures
mkdir -p "$out"
mmp_need build-h200/mmaprobe
filter='cuda_mut_drop_k_tile/*,cuda_mut_edge_unwritten/*,cuda_mut_swap/*,cuda_mut_wrong_ld/*,cuda_mut_c_col_packed/*,cuda_mut_base/*'
for stages in 1 0; do
    dir=$out/stages-$stages
    rm -rf "$dir"
    mkdir -p "$dir"
    MMP_DEVICE_STAGES=$stages timeout 40 build-h200/mmaprobe validate --mutants --suite kernels/cuda_mutants.suite \
        --filter "$filter" --timeout 10 --save-failures "$dir/failures" -o "$dir/run.json" > "$dir.log" 2>&1
    mmp_expect "validate --save-failures (device stages $stages)" $? 1
    python3 "$(dirname "$0")/check_failures.py" "$dir/failures" "$dir/run.json" | tee "$dir/check.txt"
    mmp_expect "check_failures.py (device stages $stages)" "${PIPESTATUS[0]}" 0
done
mmp_finish
