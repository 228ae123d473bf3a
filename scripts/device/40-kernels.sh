#!/usr/bin/env bash
# scripts/device/40-kernels.sh — GPU side of the fp16_wmma / fp16_ptx / bf16_mma families and
# the timing tables of every kernel. Run from the repo root (scripts/device/run-all.sh) with the
# build in build-h200/; writes under $OUT/kernels/. Fails soft: prints what failed, continues.
#   1. check_kern16_maps (host emulation of the kernels' addressing) on this machine.
#   2. bench_mma_peak: peak TFLOP/s of mma.sync m16n8k16 bf16 and wgmma m64n256k16 bf16 on this
#      GPU and their ratio (the ceiling of the mma.sync kernels) -> mma_peak.txt.
#   2b. mmaprobe validate --suite kernels/wgmma_tma.suite: the TMA wgmma kernels with K long
#      enough to wrap their stage ring, several CTAs and groups, padded ld -> wgmma_tma.{json,txt}.
#   (validation: mmaprobe validate --suite smoke,edge over the families is in 10-validate.sh)
#   3. bench/bench_kernels.sh: SASS tensor-op summary + timing of every registered device kernel
#      at N = 512, 1024, 2048, 4096, 8192 (median of 20 after 3 warm-up, L2-rotated operands),
#      speedup vs the same-precision WMMA baseline, fraction of cuBLAS -> kernels.md (the
#      longest step of this script).
# budget-seconds: 240
# MMP_BENCH_FILTER / MMP_BENCH_SIZES: bench_kernels' --filter / --sizes (a partial re-run). The
#   default filter is the tensor-core families tuned against cuBLAS (their cuBLAS rows come with
#   them): the SIMT references and cuBLAS's own descriptors at 8192 do not fit the budget.
# MMP_NCU_PROFILE="kernel kernel": instead of all the above, Nsight Compute's speed-of-light, warp
#   state and compute sections of one launch of each named kernel at N=4096 (why a kernel is slow)
#   -> ncu-<kernel>.txt.
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/kernels
mkdir -p "$out"
B=build-h200
note() { echo "40-kernels: $*" | tee -a "$out/summary.txt"; }

if [ -n "${MMP_NCU_PROFILE:-}" ]; then
    export PATH=$PATH:/usr/local/cuda/bin
    for k in $MMP_NCU_PROFILE; do
        # bench_kernels without cuBLAS launches only this kernel: skip the 3 warm-up launches
        timeout 90 ncu --target-processes all --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
            --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section SchedulerStats \
            --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
            --section LaunchStats "$B/bench_kernels" --filter "$k" --sizes 4096 --no-cublas --out /dev/null \
            > "$out/ncu-$k.txt" 2>&1
        rc=$?
        mmp_expect "ncu $k" $rc 0
        note "ncu profile of $k at N=4096: exit $rc -> ncu-$k.txt"
        grep -E "Compute \(SM\) Throughput|Memory Throughput|Duration|Stall|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc" \
            "$out/ncu-$k.txt" | head -20
    done
    mmp_finish
fi

mmp_need "$B/tests/check_kern16_maps"
"$B/tests/check_kern16_maps" > "$out/check_kern16_maps.txt" 2>&1
mmp_expect "check_kern16_maps (see $out/check_kern16_maps.txt)" $? 0

# bench_mma_peak first: short (--seconds 12, killed at 40 s), so that bench_kernels' budget stays
# the rest of this script's
if [ -x "$B/bench_mma_peak" ]; then
    timeout 40 "$B/bench_mma_peak" --seconds 12 > "$out/mma_peak.txt" 2>&1
    rc=$?
    mmp_expect bench_mma_peak $rc 0
    note "bench_mma_peak: exit $rc ($(grep -E '^ratio' "$out/mma_peak.txt" || echo 'no ratio line'))"
else
    mmp_failed_line "$B/bench_mma_peak missing"
fi

if [ -x "$B/mmaprobe" ]; then
    timeout 45 "$B/mmaprobe" validate --suite kernels/wgmma_tma.suite --seed 42 -o "$out/wgmma_tma.json" \
        > "$out/wgmma_tma.txt" 2>&1
    rc=$?
    mmp_expect "validate wgmma_tma.suite" $rc 0
    note "validate wgmma_tma.suite: exit $rc ($(grep -E '^[0-9]+ pass' "$out/wgmma_tma.txt" | tail -1))"
fi

# Validation of these kernels is in 10-validate.sh (one smoke and one edge run over every kernel).
MMP_SASS_SUMMARY=${MMP_SASS_SUMMARY:-${OUT:-out}/10-validate/sass-summary.txt} \
    bash bench/bench_kernels.sh "$B" "$out" --budget $(( ${MMP_SCRIPT_BUDGET:-200} - 90 )) \
    --filter "${MMP_BENCH_FILTER:-fp16_*,bf16_*,fp8_*,int8_*,int4_*,wgmma_*}" ${MMP_BENCH_SIZES:+--sizes "$MMP_BENCH_SIZES"}
rc=$?
mmp_expect bench_kernels.sh $rc 0
note "bench_kernels.sh: exit $rc"

[ -f "$out/kernels.md" ] && cat "$out/kernels.md"
[ -f "$out/mma_peak.txt" ] && cat "$out/mma_peak.txt"
mmp_finish
