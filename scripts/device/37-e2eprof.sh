#!/usr/bin/env bash
# scripts/device/37-e2eprof.sh — where one 8192^3 case's time goes end to end on the device
# (cublas_bf16_f32, wide data unless MMP_E2EPROF_DIST says otherwise), for deciding what to make
# faster. Nothing is asserted but that the runs finish. Writes $OUT/e2eprof/:
#   trace.txt    bench/bench_e2e.sh with MMP_REF_TRACE=1: the reference's parts (each timed after
#                a device synchronisation) for the 256^3 case and the first and second 8192^3 case
#   clocks.csv   nvidia-smi's SM clock, memory clock and power every 20 ms during that run (read
#                only: the clocks are left as they are)
#   kernels.csv  Nsight Compute, one metric (gpu__time_duration, no replay) for every kernel of
#                one 8192^3 case, in launch order
#   kernels.txt  the same summed by kernel name, largest first, and the total
#   plain/       bench/bench_e2e.sh without the trace for each distribution in MMP_E2EPROF_PLAIN
#                (e.g. "wide special uniform"; default none)
# budget-seconds: 150
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/e2eprof
mkdir -p "$out"
mmp_need build-h200/mmaprobe
command -v ncu >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
dist=${MMP_E2EPROF_DIST:-wide}
smi=""
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 20 \
        > "$out/clocks.csv" 2>&1 &
    smi=$!
fi
MMP_REF_TRACE=1 timeout 60 bash bench/bench_e2e.sh build-h200/mmaprobe cublas_bf16_f32 8192 "$out/e2e" "$dist" \
    > "$out/trace.txt" 2>&1
mmp_expect "e2e with the reference's trace (see $out/trace.txt)" $? 0
[ -n "$smi" ] && kill "$smi" 2>/dev/null
cat "$out"/e2e/*.txt >> "$out/trace.txt" 2>/dev/null
grep -E '^case|  [a-z]+ +[0-9.]+ ms' "$out/trace.txt" | tail -40
suite=$(mktemp --suffix=.suite)
printf 'shape=8192x8192x8192 dist=%s kernel=cublas_bf16_f32\n' "$dist" > "$suite"
l=$(mmp_left)
timeout $((l > 90 ? 90 : l)) ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread \
    --csv --print-units base --launch-count 2000 \
    build-h200/mmaprobe validate --suite "$suite" --filter 'cublas_bf16_f32/*' --seed 42 --no-isolate \
    -o "$out/ncu-case.json" > "$out/kernels.csv" 2>&1
mmp_expect "ncu over one case (see $out/kernels.csv)" $? 0
rm -f "$suite"
python3 - "$out/kernels.csv" > "$out/kernels.txt" <<'PY'
import csv, sys, collections
rows = []
lines = [l for l in open(sys.argv[1], errors="replace") if l.startswith('"')]
for r in csv.DictReader(lines):
    if r.get("Metric Name") == "gpu__time_duration.sum":
        rows.append((r["Kernel Name"], float(r["Metric Value"].replace(",", "")) / 1e6))
tot = collections.defaultdict(lambda: [0, 0.0])
for name, ms in rows:
    tot[name][0] += 1
    tot[name][1] += ms
print("%d kernels, %.2f ms on the device in all" % (len(rows), sum(ms for _, ms in rows)))
for name, (cnt, ms) in sorted(tot.items(), key=lambda x: -x[1][1]):
    print("%9.3f ms %5d x  %s" % (ms, cnt, name[:150]))
PY
head -40 "$out/kernels.txt"
for d in ${MMP_E2EPROF_PLAIN:-}; do
    mmp_bench "$out" "plain-$d" 40 '^case|  (reference|compare|launch) |case total' bash bench/bench_e2e.sh \
        build-h200/mmaprobe cublas_bf16_f32 8192 "$out/plain" "$d"
done
mmp_finish
