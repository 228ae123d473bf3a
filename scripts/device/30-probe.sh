#!/usr/bin/env bash
# scripts/device/30-probe.sh — arithmetic probes on the device (run from the repo root by
# scripts/device/run-all.sh with the build in build-h200/; writes under $OUT/probe/).
#   1. `mmaprobe probe --arith` with 100,000 random vectors per instruction (half random bit
#      patterns) over every instruction (mma.sync f16/bf16/tf32/e4m3/e5m2/s8/u8/s4 +-satfinite,
#      wmma, wgmma f16/bf16/tf32/e4m3/e5m2 with C used, ".c0" (scale-d 0), f16 out, chain4,
#      promote4): GPU capture in a forked child, analysis in host threads; JSON + text, timed.
#      The text captures (every designed vector + the first 500 random ones, the format
#      check_arith replays) go to $OUT/probe/captures/<id>.txt and, renamed h200-<id>.txt for
#      results/<gpu>/captures/arith/, into one archive $OUT/probe/h200-captures.tar.gz.
#   2. The SASS of the probe binary (cuobjdump -sass, the capture kernels only) for the record:
#      each capture names its opcode and native/emulated verdict from it.
#   3. `mmaprobe probe` (all groups) once more: the combined report, required under 60 s.
#   4. check_arith / check_sass / check_model_bound / check_model_vectors on this machine.
# Lead: `tar -xzf h200-captures.tar.gz -C results/h200/captures/arith/` stores the real captures; then
# check_arith's test_real_captures replays them in CI (0 mismatches required).
# A failing step is a FAILED line and a non-zero exit (lib.sh); the other steps still run.
# budget-seconds: 130
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/probe
mkdir -p "$out/captures"
bin=build-h200/mmaprobe
mmp_need "$bin"
export PATH=$PATH:/usr/local/cuda/bin
command -v cuobjdump >/dev/null || echo "30-probe: cuobjdump not found: SASS names will read 'unknown'"

t() { awk "BEGIN{printf \"%.1f\", $2 - $1}"; }

start=$(date +%s.%N)
mkdir -p "$out/layout"
"$bin" probe --random 100000 --capture-dir "$out/captures" --capture-keep 500 \
    --write-capture "$out/layout" --json "$out/probe.json" > "$out/probe.txt" 2> "$out/probe.err"
rc=$?
end=$(date +%s.%N)
mmp_expect "probe (arith + layout)" $rc 0
echo "30-probe: probe (arith + layout) rc=$rc in $(t "$start" "$end") s (goal < 60)" | tee "$out/probe.time"
grep -E '^# arith:' "$out/probe.txt" | tee -a "$out/probe.time"
grep -E '^==|hardware_path|replay:|overflow|chain_bits|ptx_isa' "$out/probe.txt" \
    || echo "30-probe: no arith output (see $out/probe.err)"
head -c 2000 "$out/probe.err"

stage=$(mktemp -d)
for f in "$out"/captures/*.txt; do
    [ -f "$f" ] && cp "$f" "$stage/h200-$(basename "$f")"
done
tar -czf "$out/h200-captures.tar.gz" -C "$stage" . && \
    echo "30-probe: $(ls "$stage" | wc -l) captures -> $out/h200-captures.tar.gz ($(du -h "$out/h200-captures.tar.gz" | cut -f1))"
rm -rf "$stage"

# the SASS of the capture kernels (mma.sync / wmma / integer / wgmma), for the record
lib=$bin; [ -f build-h200/libmmp.so ] && lib=build-h200/libmmp.so
if command -v cuobjdump >/dev/null; then
    cuobjdump -sass "$lib" 2>/dev/null | awk '/code for sm_/ {arch=$0} /Function :/ {keep = ($3 ~ /arith_k_|layout_k|lay_/); if (keep) print arch} keep' \
        | gzip > "$out/sass-probes.txt.gz"
    echo "30-probe: SASS of the capture kernels -> $out/sass-probes.txt.gz"
fi

for s in check_arith check_sass check_model_bound check_model check_model_vectors; do
    if [ -x "build-h200/tests/$s" ]; then
        "build-h200/tests/$s" > "$out/$s.txt" 2>&1
        rc=$?
        echo "30-probe: $s rc=$rc ($(grep -E '^[0-9]+%' "$out/$s.txt" | tail -1))"
        mmp_expect "$s" $rc 0 77
    else
        mmp_failed_line "build-h200/tests/$s missing"
    fi
done
mmp_finish
