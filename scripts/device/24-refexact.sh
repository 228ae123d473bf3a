#!/usr/bin/env bash
# scripts/device/24-refexact.sh — the references made fast this round, on the device machine:
# the fp64 reference (fp64 outputs decided by the bound, triangles up to 9 levels) at 4096^3
# with operands resident, uniform / normal / wide / special, 10^4 elements against pure MPFR;
# the fused INT4 operator's exact host reference (long accumulator, every core) at the full
# suite's shapes, and against its MPFR oracle bit for bit at a small one; and
# `validate --require-device` on a device kernel (exit 0 here, 3 on a machine without one).
# Writes $OUT/refexact/ (one .txt per step, summary.txt).
# budget-seconds: 150
set -u
. "$(dirname "$0")/lib.sh"
budget=${MMP_SCRIPT_BUDGET:-150}
t_start=$(date +%s)
out=${OUT:-out}/refexact
mkdir -p "$out"
mmp_need build-h200/bench_reference
mmp_need build-h200/bench_fused
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
step() {   # name, timeout, command...
    local name=$1 limit=$2 left rc; shift 2
    left=$((budget - ($(date +%s) - t_start) - 5))
    if [ "$left" -lt 10 ]; then echo "24-refexact: $name skipped: budget spent"; return; fi
    [ "$limit" -gt "$left" ] && limit=$left
    timeout "$limit" "$@" > "$out/$name.txt" 2>&1
    rc=$?
    echo "24-refexact: $name rc=$rc"
    mmp_expect "$name (see $out/$name.txt)" $rc 0
    { echo "### $name"; grep -E '^(## |certified gpu v2:|open after|sampled|compared|device memory|fused|qgemm|lowrank|# host)|FAILED|pass, ' "$out/$name.txt"; } | tee -a "$out/summary.txt"
}
for d in ${MMP_REFEXACT_DISTS:-uniform wide special}; do
    step "fp64-$d" 40 build-h200/bench_reference --gpu --operands-on-device --a fp64 --b fp64 --d fp64 --dist "$d" \
        --sizes 4096 --mpfr-rows 0 --mpfr-full-max 0 --sample 10000
done
step fused-full1 30 build-h200/bench_fused --reference --m 1024 --n 1024 --k 2048 --g 64
step fused-full2 30 build-h200/bench_fused --reference --m 1024 --n 512 --k 4096 --g 128
step fused-mpfr 40 build-h200/bench_fused --reference --mpfr --m 256 --n 256 --k 1024 --g 64
step require-device 60 build-h200/mmaprobe validate --suite smoke --filter 'cublas_bf16_f32/*' --require-device \
    -o "$out/require-device.json"
mmp_finish
