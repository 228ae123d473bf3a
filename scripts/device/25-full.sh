#!/usr/bin/env bash
# scripts/device/25-full.sh — `validate --suite full` (sizes up to 8192^3, every distribution)
# for the kernels of MMP_FULL_FILTER (default 'cublas_bf16_f32/*'), under this script's budget:
# stopped by SIGTERM at the limit, the partial report (complete: false) is kept. Writes
# $OUT/full/: the run document, the terminal table and the time by stage. MMP_FULL_ARGS adds
# options (e.g. "--host-max-log2-work 0": host kernels SKIP, for a run over the device kernels).
# budget-seconds: 240
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/full
mkdir -p "$out"
mmp_need build-h200/mmaprobe
lim=$(( ${MMP_SCRIPT_BUDGET:-240} - 10 ))
start=$(date +%s)
timeout -s TERM -k 5 "$lim" build-h200/mmaprobe validate --suite full --filter "${MMP_FULL_FILTER:-cublas_bf16_f32/*}" \
    --seed 42 ${MMP_FULL_ARGS:-} -o "$out/full.json" > "$out/full.txt" 2>&1
rc=$?
echo "25-full: validate --suite full: exit $rc in $(( $(date +%s) - start )) s (124: stopped at the limit)"
tail -6 "$out/full.txt"
mmp_expect "validate --suite full" $rc 0
mmp_finish
