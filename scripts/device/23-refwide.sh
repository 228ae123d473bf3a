#!/usr/bin/env bash
# scripts/device/23-refwide.sh — the device reference (version 2) on the distributions that
# leave elements open after the slices' bound (wide, special, cancel, onehot) against its
# uniform time, at 4096^3 and 8192^3, operands resident on the device (as a harness has them),
# bf16 -> fp32 and fp32 -> fp32: per run the time, the dot stage's share and count, what went
# on to the exact evaluator and MPFR, and 10^4 random elements against pure MPFR (0
# disagreements expected). Then wide and special at 1024^3 compared with the CPU certified
# path element by element. Writes $OUT/refwide/ (one .txt per run, summary.txt). The route of
# the slice products is the plan's (int8 on integer tensor cores for these formats; each line
# names it); scripts/device/21-ozaki.sh sets it against the DGEMM route. Each size runs twice
# and the second is reported: the steady state, as a suite's later cases see it (the first call
# at a size pays cuBLAS's heuristics, lazy module loading and the memory pool's growth).
# budget-seconds: 300
set -u
. "$(dirname "$0")/lib.sh"
budget=${MMP_SCRIPT_BUDGET:-300}
t_start=$(date +%s)
out=${OUT:-out}/refwide
mkdir -p "$out"
bin=build-h200/bench_reference
mmp_need "$bin"
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
run() {   # name, timeout, args...
    local name=$1 limit=$2 left rc; shift 2
    left=$((budget - ($(date +%s) - t_start) - 5))
    if [ "$left" -lt 10 ]; then echo "23-refwide: $name skipped: budget spent"; return; fi
    [ "$limit" -gt "$left" ] && limit=$left
    timeout "$limit" "$bin" "$@" > "$out/$name.txt" 2>&1
    rc=$?
    echo "23-refwide: $name rc=$rc"
    mmp_expect "$name (see $out/$name.txt)" $rc 0
    grep -E '^(## |certified gpu v2:|open after|sampled|compared|device memory)|FAILED' "$out/$name.txt" | tee -a "$out/summary.txt"
}
for fmt in "bf16 bf16 fp32" "fp32 fp32 fp32"; do
    set -- $fmt
    for d in uniform wide special cancel onehot; do
        echo "### $1 x $2 -> $3, $d" >> "$out/summary.txt"
        run "$1-$d" 60 --gpu --operands-on-device --a "$1" --b "$2" --d "$3" --dist "$d" --sizes 4096,8192 --repeat 2 \
            --mpfr-rows 0 --mpfr-full-max 0 --sample 10000
    done
done
for d in wide special; do
    echo "### bf16 x bf16 -> bf16, $d, against the CPU path" >> "$out/summary.txt"
    run "cmp-bf16-$d" 40 --gpu --compare-cpu --a bf16 --b bf16 --d bf16 --dist "$d" --alpha -0.75 --beta 0.5 \
        --sizes 1024 --mpfr-rows 8 --mpfr-full-max 0
done
mmp_finish
