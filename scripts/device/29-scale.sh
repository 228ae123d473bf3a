#!/usr/bin/env bash
# scripts/device/29-scale.sh — the harness at benchmark sizes: `validate --suite full` for one
# kernel at a time (35 cases up to 8192^3, all seven distributions), its wall clock and the
# case time by stage; then one 8192^3 case end to end (bench/bench_e2e.sh: inputs, reference,
# poison, two launches, guards, comparison) on uniform, wide and special data, its split by
# stage. Writes $OUT/scale/.
# budget-seconds: 150
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/scale
mkdir -p "$out"
mmp_need build-h200/mmaprobe
for k in cublas_bf16_f32 cublas_tf32 wgmma_bf16_tma_256 fp16_ptx_mma; do
    t0=$(date +%s.%N)
    build-h200/mmaprobe validate --suite full --filter "$k/*" -o "$out/full-$k.json" > "$out/full-$k.txt" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    echo "29-scale: validate --suite full --filter '$k/*': exit $rc, $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s wall; $(grep -E '^[0-9]+ pass' "$out/full-$k.txt")" | tee -a "$out/summary.txt"
    grep '^time by stage' "$out/full-$k.txt" | tee -a "$out/summary.txt"
    mmp_expect "full $k" $rc 0
done
for d in uniform wide special; do
    bash bench/bench_e2e.sh build-h200/mmaprobe cublas_bf16_f32 8192 "$out" "$d" > "$out/e2e-$d.log" 2>&1
    mmp_expect "bench_e2e 8192 $d" $? 0
    { echo "== e2e 8192^3 $d"; tail -24 "$out/e2e-$d.log"; } | tee -a "$out/summary.txt"
done
mmp_finish
