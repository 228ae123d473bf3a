#!/usr/bin/env bash
# scripts/device/27-stages.sh — a device case's stages on the device: check_gpu_stages (the
# device fill, damage scan and verdicts against the host stages), then one 8192^3 case end to
# end (bench/bench_e2e.sh, cublas_bf16_f32) on uniform, wide and special data with the device
# stages, and on uniform data with the host stages (MMP_DEVICE_STAGES=0) for the comparison.
# Writes $OUT/stages/.
# budget-seconds: 300
set -u
. "$(dirname "$0")/lib.sh"
budget=${MMP_SCRIPT_BUDGET:-300}
t_start=$(date +%s)
out=${OUT:-out}/stages
mkdir -p "$out"
mmp_need build-h200/mmaprobe
left() { echo $((budget - ($(date +%s) - t_start) - 5)); }
if [ -x build-h200/tests/check_gpu_stages ]; then
    timeout "$(left)" build-h200/tests/check_gpu_stages > "$out/check_gpu_stages.txt" 2>&1
    mmp_expect "check_gpu_stages" $? 0
    grep -E "Checks|differ|bytes equal|F:|E:" "$out/check_gpu_stages.txt" | tail -25
fi
for run in "uniform 1" "wide 1" "special 1" "uniform 0"; do
    set -- $run
    [ "$(left)" -gt 20 ] || { echo "27-stages: e2e $1 (stages $2) skipped: budget spent"; continue; }
    MMP_DEVICE_STAGES=$2 timeout "$(left)" bash bench/bench_e2e.sh build-h200/mmaprobe cublas_bf16_f32 8192 "$out" "$1" \
        > "$out/e2e-$1-$2.log" 2>&1
    mmp_expect "bench_e2e 8192 $1 device-stages=$2" $? 0
    tail -12 "$out/e2e-$1-$2.log"
done
mmp_finish
