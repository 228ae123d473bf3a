#!/usr/bin/env bash
# scripts/device/36-refplan.sh — the device reference with its default plan (route and residue
# mode by cost) on bf16 -> fp32 wide, special and uniform data at 8192^3, operands resident, each
# twice (the second reported), 2,000 elements against pure MPFR; then one 8192^3 case of
# cublas_bf16_f32 end to end on wide data (bench/bench_e2e.sh: first and second case of the
# size). Writes $OUT/refplan/ (one .txt per run, summary.txt, e2e/).
# budget-seconds: 150
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/refplan
mkdir -p "$out"
bin=build-h200/bench_reference
mmp_need "$bin"
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
lines='^(certified gpu v2:|device path v2 split|open after|sampled)|FAILED'
for d in wide special uniform; do
    echo "### bf16 x bf16 -> fp32, $d, the default plan" >> "$out/summary.txt"
    mmp_bench "$out" "bf16-$d" 30 "$lines" "$bin" --gpu --operands-on-device --a bf16 --b bf16 --d fp32 --dist "$d" \
        --sizes 8192 --repeat 2 --mpfr-rows 0 --mpfr-full-max 0 --sample 2000
done
echo "### one 8192^3 case end to end, wide" >> "$out/summary.txt"
mmp_bench "$out" "e2e-wide" 60 '^case|reference|case total' bash bench/bench_e2e.sh build-h200/mmaprobe cublas_bf16_f32 \
    8192 "$out/e2e" wide
mmp_finish
