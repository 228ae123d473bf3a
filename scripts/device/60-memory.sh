#!/usr/bin/env bash
# scripts/device/60-memory.sh — `mmaprobe probe --memory`: bank conflicts and coalescing from each
# kernel's exposed memory map (analysis) next to the measured counters, for the calibration
# accesses and the seed kernels the issue names (seed 004 plain/padded/swizzled BF16, seed 000
# INT4 transposed-B vs non-transposed). Files under $OUT/memory/:
#   memory-cupti.{txt,json}  once, `--counters cupti`: CUPTI's in-process range profiler (never run
#                            on a GPU before; exit 3 + one line on stderr when it cannot measure, or
#                            when a calibration row disagrees with the model)
#   memory-<filter>.{txt,json}  `--counters ncu`: Nsight Compute, as before
# budget-seconds: 130
set -u
out=${OUT:-out}/memory
mkdir -p "$out"
bin=build-h200/mmaprobe
export PATH=$PATH:/usr/local/cuda/bin
# libcupti loads libnvperf_host by name: the CUDA library folders on the loader path
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
budget=${MMP_SCRIPT_BUDGET:-130}
start=$(date +%s)

timeout 40 "$bin" probe --memory --counters cupti --filter 'bf16_mma_*' --size 2048 \
    --json "$out/memory-cupti.json" > "$out/memory-cupti.txt" 2> "$out/memory-cupti.err"
rc=$?
cat "$out/memory-cupti.err" >> "$out/memory-cupti.txt"
echo "60-memory: probe --memory --counters cupti: exit $rc in $(( $(date +%s) - start ))s"
grep -E "^memory measurement|--counters cupti|DISAGREE|agree|wavefronts \(" "$out/memory-cupti.txt" | head -30

for f in 'bf16_mma_*' 'int4_ptx_mma_k64_x4_x2*' 'fp16_ptx_*'; do
    left=$((budget - ($(date +%s) - start) - 5))
    [ "$left" -gt 15 ] || { echo "60-memory: $f not run (${left}s left)"; continue; }
    tag=${f//[*]/}
    timeout "$left" "$bin" probe --memory --counters ncu --filter "$f" --size 2048 --json "$out/memory-$tag.json" \
        > "$out/memory-$tag.txt" 2>&1
    echo "60-memory: probe --memory --counters ncu --filter '$f': exit $? in $(( $(date +%s) - start ))s"
    grep -E "^memory measurement|DISAGREE|agree|wavefronts \(|sectors \(" "$out/memory-$tag.txt" | head -40
done
exit 0
