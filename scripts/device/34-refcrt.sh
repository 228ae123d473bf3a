#!/usr/bin/env bash
# scripts/device/34-refcrt.sh — the int8 route's squares by residues (ref_crt.h,
# ref_cuda2_crt.cu: one int8 GEMM per modulus instead of one per slice pair) against the pairs,
# on the same operands in one process: first tests/check_gpu_reference (its version 6 runs every
# square by residues against the CPU path bit for bit), then bench_reference --routes 1,3 (route
# 1: the pairs, the default; route 3: residues weighed by cost) for bf16 -> fp32 and fp32 ->
# fp32 on uniform, wide, special, cancel and onehot data at 4096^3 and 8192^3, operands resident,
# each size twice (the second reported), 10^4 random elements of each result against pure MPFR
# (0 disagreements expected); then bf16 wide and special at 1024^3 with every square by
# residues (route 4) against the CPU path element by element. Each result line names its route
# ("int8-crt N": N moduli). Writes $OUT/refcrt/ (one .txt per run, summary.txt).
# budget-seconds: 330
set -u
. "$(dirname "$0")/lib.sh"
budget=${MMP_SCRIPT_BUDGET:-330}
t_start=$(date +%s)
out=${OUT:-out}/refcrt
mkdir -p "$out"
bin=build-h200/bench_reference
mmp_need "$bin"
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
left() { echo $((budget - ($(date +%s) - t_start) - 5)); }
run() {   # name, timeout, args...
    local name=$1 limit=$2 l rc; shift 2
    l=$(left)
    if [ "$l" -lt 10 ]; then echo "34-refcrt: $name skipped: budget spent"; return; fi
    [ "$limit" -gt "$l" ] && limit=$l
    timeout "$limit" "$bin" "$@" > "$out/$name.txt" 2>&1
    rc=$?
    echo "34-refcrt: $name rc=$rc"
    mmp_expect "$name (see $out/$name.txt)" $rc 0
    grep -E '^(## |certified gpu v2:|open after|sampled|compared|device memory|run [0-9])|FAILED' "$out/$name.txt" |
        tee -a "$out/summary.txt"
}
if [ -x build-h200/tests/check_gpu_reference ]; then
    l=$(left); lim=$(( l > 140 ? 130 : l - 10 ))
    timeout "$lim" build-h200/tests/check_gpu_reference > "$out/check_gpu_reference.txt" 2>&1
    rc=$?
    echo "34-refcrt: check_gpu_reference rc=$rc (0 pass, 1 fail, 77 skip, 124 timeout)" | tee -a "$out/summary.txt"
    mmp_expect check_gpu_reference $rc 0
    tail -6 "$out/check_gpu_reference.txt"
fi
for fmt in "bf16 bf16 fp32" "fp32 fp32 fp32"; do
    set -- $fmt
    for d in uniform wide special cancel onehot; do
        echo "### $1 x $2 -> $3, $d: pairs (route 1), then residues by cost (route 3)" >> "$out/summary.txt"
        run "$1-$d" 40 --gpu --operands-on-device --routes 1,3 --repeat 2 --a "$1" --b "$2" --d "$3" --dist "$d" \
            --sizes 4096,8192 --mpfr-rows 0 --mpfr-full-max 0 --sample 10000
    done
done
for d in wide special; do
    echo "### bf16 x bf16 -> bf16, $d, every square by residues (route 4) against the CPU path" >> "$out/summary.txt"
    run "cmp-bf16-$d" 30 --gpu --compare-cpu --routes 4 --a bf16 --b bf16 --d bf16 --dist "$d" --alpha -0.75 \
        --beta 0.5 --sizes 1024 --mpfr-rows 8 --mpfr-full-max 0
done
mmp_finish
