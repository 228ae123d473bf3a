#!/usr/bin/env bash
# scripts/device/33-refncu.sh — Nsight Compute on the device reference's per-entry kernels and
# the device comparison at 8192^3, bf16 -> fp32 on wide data (the slowest distribution): what
# bounds each one (throughput against the peaks, warp stalls, occupancy), for deciding what to
# make faster. Clocks are left as they are (--clock-control none); nothing is asserted but that
# the runs finish. Writes $OUT/refncu/:
#   ref-wide.txt   bench_reference, operands resident: decoding, statistics, int8 slicing and
#                  accumulation, finish, dot stage, every launch (the 64^3 warm-up's first: the
#                  grid sizes in each header tell them apart)
#   compare.txt    one validate case of cublas_bf16_f32 (in process): the comparison's row kernel
# budget-seconds: 90
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/refncu
mkdir -p "$out"
mmp_need build-h200/bench_reference
mmp_need build-h200/mmaprobe
command -v ncu >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
budget=${MMP_SCRIPT_BUDGET:-90}
sections=(--clock-control none --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats
          --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis)
kernels='regex:v2_stats_kernel|v2_slice8_kernel|v2_accumulate8_kernel|v2_finish_kernel|v2_dot_list_kernel|v2_decode_kernel|v2_collect_kernel'
timeout $((budget * 2 / 3)) ncu --target-processes all -k "$kernels" --launch-count 40 "${sections[@]}" \
    build-h200/bench_reference --gpu --operands-on-device --a bf16 --b bf16 --d fp32 --dist wide --sizes 8192 \
    --repeat 1 --mpfr-rows 0 --mpfr-full-max 0 --sample 0 > "$out/ref-wide.txt" 2>&1
mmp_expect "ncu on the reference (see $out/ref-wide.txt)" $? 0
suite=$(mktemp --suffix=.suite)
printf 'shape=8192x8192x8192 dist=wide kernel=cublas_bf16_f32\n' > "$suite"
timeout $((budget / 3 - 5)) ncu --target-processes all -k regex:row_kernel --launch-count 1 "${sections[@]}" \
    build-h200/mmaprobe validate --suite "$suite" --filter 'cublas_bf16_f32/*' --seed 42 --no-isolate \
    -o "$out/compare.json" > "$out/compare.txt" 2>&1
mmp_expect "ncu on the comparison (see $out/compare.txt)" $? 0
rm -f "$suite"
grep -hE '^  [a-z_0-9]+.*\(|Duration|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per' \
    "$out/ref-wide.txt" "$out/compare.txt" | head -120
mmp_finish
