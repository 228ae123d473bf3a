#!/usr/bin/env bash
# scripts/device/40-kernels.sh — GPU side of the fp16_wmma / fp16_ptx / bf16_mma families and
# the timing tables of every kernel. Run from the repo root (scripts/device/run-all.sh) with the
# build in build-h200/; writes under $OUT/kernels/. Fails soft: prints what failed, continues.
#   1. check_kern16_maps (host emulation of the kernels' addressing) on this machine.
#   2. mmaprobe validate --suite smoke,edge over the three families (PASS or explained SKIP).
#   3. bench/bench_kernels.sh: SASS tensor-op summary + timing of every registered device kernel
#      at N = 512, 1024, 2048, 4096, 8192 (median of 20 after 3 warm-up, L2-rotated operands),
#      speedup vs the same-precision WMMA baseline, % of cuBLAS -> kernels.md (~3-4 minutes).
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

if [ -x "$B/mmaprobe" ]; then
    # validate takes one suite and one case-ID glob per call
    for suite in smoke edge; do
        for glob in 'fp16_wmma_*' 'fp16_ptx_*' 'bf16_mma_*' 'fp16_mma_*' 'fp8_mma*'; do
            tag=${glob//[*]/}
            timeout 120 "$B/mmaprobe" validate --suite "$suite" --filter "$glob" \
                -o "$out/validate_${suite}_${tag}.json" > "$out/validate_${suite}_${tag}.txt" 2>&1
            note "mmaprobe validate --suite $suite --filter '$glob': exit $? (see $out/validate_${suite}_${tag}.txt)"
            grep -E "FAIL|ERROR" "$out/validate_${suite}_${tag}.txt" | head -n 10
        done
    done
else
    note "$B/mmaprobe missing: build first"
fi

bash bench/bench_kernels.sh "$B" "$out"
note "bench_kernels.sh: exit $?"
[ -f "$out/kernels.md" ] && cat "$out/kernels.md"
exit 0
