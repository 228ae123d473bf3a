#!/usr/bin/env bash
# scripts/device/12-edge-report.sh — the edge suite over every built-in kernel once more, kept
# whole (its JSON is large: compressed by run-all), for the committed report under reports/.
# budget-seconds: 120
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/edge
mkdir -p "$out"
timeout $(( ${MMP_SCRIPT_BUDGET:-120} - 5 )) build-h200/mmaprobe validate --suite edge --seed 42 \
    -o "$out/all-edge.json" > "$out/all-edge.txt" 2>&1
rc=$?
mmp_expect "validate --suite edge" $rc 0
echo "12-edge-report: exit $rc: $(grep -E '^[0-9]+ pass' "$out/all-edge.txt" | tail -1)"
mmp_finish
