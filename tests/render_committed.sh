#!/usr/bin/env bash
# tests/render_committed.sh MMAPROBE — CI test: render the committed H200 run documents
# (results/h200/) in all four formats with the built mmaprobe, on a machine without a GPU;
# the CUPTI memory document's HTML must put the counters beside the model;
# the JUnit file must validate against reports/schema/junit-10.xsd (xmllint), the HTML must
# hold the per-failure heatmaps (inline SVG) and the text the environment header.
set -euo pipefail
mmp=$1
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
xz -dc "$root/results/h200/validate/all-smoke.json.xz" >"$tmp/smoke.json"
cp "$root/results/h200/probe/probe.json" "$tmp/probe.json"
for doc in smoke probe; do
  for f in text md junit html; do
    "$mmp" report "$tmp/$doc.json" --format $f -o "$tmp/$doc.$f"
    [ -s "$tmp/$doc.$f" ] || { echo "FAIL: $doc.$f is empty"; exit 1; }
  done
done
grep -q "NVIDIA H200" "$tmp/smoke.text" || { echo "FAIL: no environment header in the text report"; exit 1; }
grep -q "<svg" "$tmp/smoke.html" || { echo "FAIL: no inline SVG in the HTML report"; exit 1; }
grep -q "cublaslt_e5m2_e4m3_f32" "$tmp/smoke.md" || { echo "FAIL: the recorded failures are missing from the Markdown"; exit 1; }
# the probe document (schema 1.1) renders its typed results: instruction and capture rows
for f in text md; do
  grep -q "^| *mma.f16.f32 |\|^mma.f16.f32 .*HMMA.16816.F32" "$tmp/probe.$f" || { echo "FAIL: no arith row in probe.$f"; exit 1; }
  grep -q "mma.m16n8k16.f32.f16.*matches-ptx-isa" "$tmp/probe.$f" || { echo "FAIL: no layout row in probe.$f"; exit 1; }
  if grep -q "PRECISION" "$tmp/probe.$f"; then echo "FAIL: probe.$f rendered as a validate table"; exit 1; fi
done
# the CUPTI memory document: its counters beside the model, as a table and a figure per kernel
"$mmp" report "$root/results/h200/memory/memory-cupti.json" --format html -o "$tmp/memory.html"
grep -q "Counters measured beside the model" "$tmp/memory.html" || { echo "FAIL: no counters-vs-model table in memory.html"; exit 1; }
grep -q "<td>bf16_mma_plain</td><td>cupti</td><td>384</td><td>1536</td><td>1536.0</td>" "$tmp/memory.html" ||
  { echo "FAIL: bf16_mma_plain's measured wavefronts are not beside the model's in memory.html"; exit 1; }
if command -v xmllint >/dev/null; then
  xmllint --noout --schema "$root/reports/schema/junit-10.xsd" "$tmp/smoke.junit"
else
  echo "xmllint not installed: JUnit checked for well-formed testcases only"
  grep -q "<testcase" "$tmp/smoke.junit"
fi
echo "rendered the committed H200 runs in 4 formats: OK"
