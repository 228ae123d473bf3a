#!/usr/bin/env bash
# scripts/device/60-memory.sh — `mmaprobe probe --memory`: bank conflicts and coalescing from each
# kernel's exposed memory map (analysis) next to the measured counters, for the calibration
# accesses and the kernels whose shared-memory layout or loader differs by one thing (plain /
# padded / swizzled BF16; INT4 transposed-B vs non-transposed). Files under $OUT/memory/:
#   memory-cupti.{txt,json}  `--counters cupti` over every kernel: CUPTI's in-process range profiler
#                            (exit 3 + one line on stderr when it cannot measure, or when a
#                            calibration row disagrees with the model; MMP_CUPTI_DEBUG=1 prints what
#                            CUPTI returned into memory-cupti.err)
#   memory-<filter>.{txt,json}  `--counters ncu`: Nsight Compute, as before
# budget-seconds: 200
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/memory
mkdir -p "$out"
bin=build-h200/mmaprobe
export PATH=$PATH:/usr/local/cuda/bin
# libcupti loads libnvperf_host by name: the CUDA library folders on the loader path
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
budget=${MMP_SCRIPT_BUDGET:-200}
start=$(date +%s)

# 1. CUPTI over every kernel that exposes a map (no filter): the issue's "every built-in kernel"
timeout 100 "$bin" probe --memory --counters cupti --size 2048 \
    --json "$out/memory-cupti.json" > "$out/memory-cupti.txt" 2> "$out/memory-cupti.err"
rc=$?
mmp_expect "probe --memory --counters cupti" $rc 0
cat "$out/memory-cupti.err" >> "$out/memory-cupti.txt"
echo "60-memory: probe --memory --counters cupti (every kernel): exit $rc in $(( $(date +%s) - start ))s"
grep -E "^memory measurement|--counters cupti|DISAGREE|disagree|wavefronts \(" "$out/memory-cupti.txt" | head -30

# 2. Nsight Compute on those families (and on every kernel when CUPTI could not measure)
filters=('bf16_mma_*' 'int4_ptx_mma_k64_x4_x2*' 'fp16_ptx_*')
# MMP_MEMORY_NCU_FILTERS="glob glob": only these with ncu (a partial re-run); "skip": none
[ -n "${MMP_MEMORY_NCU_FILTERS:-}" ] && read -r -a filters <<<"$MMP_MEMORY_NCU_FILTERS"
[ "${MMP_MEMORY_NCU_FILTERS:-}" = skip ] && filters=()
[ $rc -eq 0 ] || [ -n "${MMP_MEMORY_NCU_FILTERS:-}" ] || filters+=('fp16_wmma_*' 'fp16_mma_*' 'fp8_mma*' 'int8_ptx_*' 'int4_ptx_mma_k32' 'int4_ptx_mma_k64' 'int4_ptx_manual_pack' 'int4_ptx_3stage' 'int4_ptx_mma_k64_x[12]*' 'int4_ptx_mma_k64_x4_x1*')
for f in "${filters[@]}"; do
    left=$((budget - ($(date +%s) - start) - 5))
    [ "$left" -gt 15 ] || { echo "60-memory: $f not run (${left}s left)"; continue; }
    tag=${f//[*\[\]]/}
    timeout "$left" "$bin" probe --memory --counters ncu --filter "$f" --size 2048 --json "$out/memory-$tag.json" \
        > "$out/memory-$tag.txt" 2>&1
    rc=$?
    mmp_expect "probe --memory --counters ncu --filter $f" $rc 0
    echo "60-memory: probe --memory --counters ncu --filter '$f': exit $rc in $(( $(date +%s) - start ))s"
    grep -E "^memory measurement|DISAGREE|agree|wavefronts \(|sectors \(" "$out/memory-$tag.txt" | head -40
done
mmp_finish
