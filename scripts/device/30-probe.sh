#!/usr/bin/env bash
# scripts/device/30-probe.sh — arithmetic probes on the device (run from the repo root by
# scripts/device/run-all.sh with the build in build-h200/; writes under $OUT/probe/).
#   1. `mmaprobe probe --arith` with 100,000 random vectors per instruction (half random bit
#      patterns): GPU capture in a forked child, analysis on the host; JSON + text, timed.
#   2. The captures are kept in $OUT/probe/captures/ so the lead can store them in
#      probes/captures/ (real H200 captures for the CI analysis tests).
#   3. `mmaprobe probe` (all groups) once more for the combined report under 60 s.
# Fails soft: prints what failed and continues.
set -u
out=${OUT:-out}/probe
mkdir -p "$out/captures"
bin=build-h200/mmaprobe
if [ ! -x "$bin" ]; then echo "30-probe: $bin missing: build first"; exit 0; fi
export PATH=$PATH:/usr/local/cuda/bin
command -v cuobjdump >/dev/null || echo "30-probe: cuobjdump not found: SASS names will read 'unknown'"

start=$(date +%s.%N)
"$bin" probe --arith --random 100000 --capture-dir "$out/captures" --json "$out/arith.json" \
    > "$out/arith.txt" 2> "$out/arith.err"
rc=$?
end=$(date +%s.%N)
echo "30-probe: probe --arith rc=$rc in $(awk "BEGIN{printf \"%.1f\", $end - $start}") s" | tee "$out/arith.time"
grep -E '^==|replay:' "$out/arith.txt" || echo "30-probe: no arith output (see $out/arith.err)"

start=$(date +%s.%N)
"$bin" probe --json "$out/probe.json" > "$out/probe.txt" 2> "$out/probe.err"
rc=$?
end=$(date +%s.%N)
echo "30-probe: probe (all groups) rc=$rc in $(awk "BEGIN{printf \"%.1f\", $end - $start}") s" | tee "$out/probe.time"

# the model against the published vectors on this machine too (CPU; needs shared/ data)
if [ -x build-h200/suites/check_model_vectors ]; then
    build-h200/suites/check_model_vectors > "$out/check_model_vectors.txt" 2>&1
    echo "30-probe: check_model_vectors rc=$?"
fi
exit 0
