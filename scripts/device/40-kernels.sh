#!/usr/bin/env bash
# scripts/device/40-kernels.sh — GPU side of the fp16_wmma / fp16_ptx / bf16_mma families and
# the timing tables of every kernel. Run from the repo root (scripts/device/run-all.sh) with the
# build in build-h200/; writes under $OUT/kernels/. Fails soft: prints what failed, continues.
#   1. check_kern16_maps (host emulation of the kernels' addressing) on this machine.
#   2. mmaprobe validate --suite smoke,edge over the three families (PASS or explained SKIP).
#   3. bench/bench_kernels.sh: SASS tensor-op summary + timing of every registered device kernel
#      at N = 512, 1024, 2048, 4096, 8192 (median of 20 after 3 warm-up, L2-rotated operands),
#      speedup vs the same-precision WMMA baseline, % of cuBLAS -> kernels.md (~3-4 minutes).
# budget-seconds: 150
# MMP_BENCH_FILTER / MMP_BENCH_SIZES: bench_kernels' --filter / --sizes (a partial re-run).
set -u
out=${OUT:-out}/kernels
mkdir -p "$out"
B=build-h200
note() { echo "40-kernels: $*" | tee -a "$out/summary.txt"; }

if [ -x "$B/suites/check_kern16_maps" ]; then
    "$B/suites/check_kern16_maps" > "$out/check_kern16_maps.txt" 2>&1 && note "check_kern16_maps: pass" \
        || note "check_kern16_maps: FAIL (see $out/check_kern16_maps.txt)"
else
    note "$B/suites/check_kern16_maps missing"
fi

# Validation of these kernels is in 10-validate.sh (one smoke and one edge run over every kernel).
MMP_SASS_SUMMARY=${MMP_SASS_SUMMARY:-${OUT:-out}/10-validate/sass-summary.txt} \
    bash bench/bench_kernels.sh "$B" "$out" --budget $(( ${MMP_SCRIPT_BUDGET:-150} - 40 )) \
    ${MMP_BENCH_FILTER:+--filter "$MMP_BENCH_FILTER"} ${MMP_BENCH_SIZES:+--sizes "$MMP_BENCH_SIZES"}
note "bench_kernels.sh: exit $?"
[ -f "$out/kernels.md" ] && cat "$out/kernels.md"
exit 0
