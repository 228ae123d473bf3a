#!/usr/bin/env bash
# scripts/device/45-tune.sh — one tuning round for a few kernels (mma.sync against cuBLAS): the
# kernels' smoke and edge validation, then their time next to cuBLAS. A no-op unless
# MMP_TUNE_FILTER is set, so a full run-all.sh leaves it out; a tuning call is
#   MMP_DEVICE_ONLY="45" MMP_TUNE_FILTER='bf16_mma_pipe*,bf16_mma_w64_4stage' bash scripts/device/run-all.sh
# (MMP_TUNE_SIZES: bench sizes, default 4096,8192; MMP_NCU_PROFILE with "40" in MMP_DEVICE_ONLY
# adds Nsight Compute profiles.) Run from the repo root with build-h200/; writes $OUT/tune/.
# budget-seconds: 200
set -u
. "$(dirname "$0")/lib.sh"
[ -n "${MMP_TUNE_FILTER:-}" ] || { echo "45-tune: MMP_TUNE_FILTER unset, nothing to do"; exit 0; }
out=${OUT:-out}/tune
mkdir -p "$out"
B=build-h200
budget=${MMP_SCRIPT_BUDGET:-200}
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start) - 5)); }
IFS=, read -r -a globs <<<"$MMP_TUNE_FILTER"
for g in "${globs[@]}"; do
    for suite in smoke edge; do
        tag=$suite-${g//[^a-z0-9_]/}
        timeout "$(( $(left) / 4 ))" "$B/mmaprobe" validate --suite $suite --filter "$g" --seed 42 \
            -o "$out/validate-$tag.json" > "$out/validate-$tag.txt" 2>&1
        rc=$?
        mmp_expect "validate $suite $g" $rc 0
        echo "45-tune: validate $suite '$g': exit $rc ($(grep -E '^[0-9]+ pass' "$out/validate-$tag.txt" | tail -1))"
        grep -E "FAIL|ERROR|error" "$out/validate-$tag.txt" | head -5
    done
done
timeout "$(left)" "$B/bench_kernels" --filter "$MMP_TUNE_FILTER" --sizes "${MMP_TUNE_SIZES:-4096,8192}" \
    --budget "$(( $(left) - 10 ))" --out "$out/bench.md" > "$out/bench.log" 2>&1
rc=$?
mmp_expect bench_kernels $rc 0
echo "45-tune: bench_kernels: exit $rc"
[ -f "$out/bench.md" ] && sed -n '/Throughput/,$p' "$out/bench.md"
mmp_finish
