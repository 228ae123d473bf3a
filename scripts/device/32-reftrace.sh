#!/usr/bin/env bash
# scripts/device/32-reftrace.sh — where the device reference's time goes at 8192^3, operands
# resident: bench_reference with MMP_REF_TRACE=1 (ref_cuda2.cu: each part of each stage timed
# after a device synchronisation) for bf16 -> fp32 and fp32 -> fp32 on uniform, wide and special
# data, three reference calls each after the warm-up (the last is
# the steady state: the first pays cuBLAS's heuristics and lazy module loading), no MPFR samples. Writes $OUT/reftrace/
# (one .txt per run; summary.txt holds the trace lines and the resident time).
# budget-seconds: 120
set -u
. "$(dirname "$0")/lib.sh"
budget=${MMP_SCRIPT_BUDGET:-120}
t_start=$(date +%s)
out=${OUT:-out}/reftrace
mkdir -p "$out"
bin=build-h200/bench_reference
mmp_need "$bin"
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
for fmt in "bf16 bf16 fp32" "fp32 fp32 fp32"; do
    set -- $fmt
    for d in uniform wide special; do
        left=$((budget - ($(date +%s) - t_start) - 5))
        if [ "$left" -lt 10 ]; then echo "32-reftrace: $1-$d skipped: budget spent"; continue; fi
        [ "$left" -gt 40 ] && left=40
        MMP_REF_TRACE=1 timeout "$left" "$bin" --gpu --operands-on-device --a "$1" --b "$2" --d "$3" --dist "$d" \
            --sizes 8192 --repeat 3 --mpfr-rows 0 --mpfr-full-max 0 --sample 0 > "$out/$1-$d.txt" 2>&1
        rc=$?
        mmp_expect "$1-$d (see $out/$1-$d.txt)" $rc 0
        { echo "### $1 x $2 -> $3, $d (rc $rc)"; grep -E '^ref v2 trace|resident on device|device path v2 split' "$out/$1-$d.txt"; } \
            >> "$out/summary.txt"
    done
done
cat "$out/summary.txt"
mmp_finish
