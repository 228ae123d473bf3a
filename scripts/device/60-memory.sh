#!/usr/bin/env bash
# scripts/device/60-memory.sh — `mmaprobe probe --memory`: bank conflicts and coalescing from each
# kernel's exposed memory map (analysis) next to Nsight Compute's counters (measurement), for
# the calibration accesses and the seed kernels the issue names (seed 004 plain/padded/swizzled
# BF16, seed 000 INT4 transposed-B vs non-transposed). Files under $OUT/memory/.
# budget-seconds: 100
set -u
out=${OUT:-out}/memory
mkdir -p "$out"
bin=build-h200/mmaprobe
export PATH=$PATH:/usr/local/cuda/bin
budget=${MMP_SCRIPT_BUDGET:-100}
start=$(date +%s)
for f in 'bf16_mma_*' 'int4_ptx_mma_k64_x4_x2*' 'fp16_ptx_*'; do
    left=$((budget - ($(date +%s) - start) - 5))
    [ "$left" -gt 15 ] || { echo "60-memory: $f not run (${left}s left)"; continue; }
    tag=${f//[*]/}
    timeout "$left" "$bin" probe --memory --filter "$f" --size 2048 --json "$out/memory-$tag.json" \
        > "$out/memory-$tag.txt" 2>&1
    echo "60-memory: probe --memory --filter '$f': exit $? in $(( $(date +%s) - start ))s"
    grep -E "^memory measurement|DISAGREE|agree|wavefronts \(|sectors \(" "$out/memory-$tag.txt" | head -40
done
exit 0
