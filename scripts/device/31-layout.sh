#!/usr/bin/env bash
# scripts/device/31-layout.sh — fragment-layout probes on the GPU (mma.sync, WMMA, ldmatrix,
# stmatrix, wgmma). Run from the repository root with the build in build-h200/; writes under
# $OUT/layout/:
#   <id>.txt              one capture per instruction/shape (format: include/mmaprobe/layout.h);
#                         copy them to probes/captures/layout/h200/ to make them CI inputs
#   layout-report.log     tables and pictures, with the environment header
#   layout.json           the JSON object ("layout" member of the probe document)
#   reanalysis.log        the stored captures analysed again from disk (the CI path)
#   sass-ops.log          tensor-core / ldmatrix SASS opcodes present in the binary
# Fails soft: prints what failed and exits 0.
set -u
out="${OUT:-/tmp/mmaprobe-out}/layout"
mkdir -p "$out" || { echo "31-layout: cannot create $out"; exit 0; }
bin=build-h200/mmaprobe
if [ ! -x "$bin" ]; then
    echo "31-layout: $bin is missing (build with cmake -S . -B build-h200 first); skipped"
    exit 0
fi
if ! "$bin" probe layout --help >/dev/null 2>&1; then
    echo "31-layout: 'mmaprobe probe layout' is not wired in this build (probes/cli_probe.c); skipped"
    exit 0
fi
t0=$(date +%s)
timeout 300 "$bin" probe layout --write-capture "$out" --json "$out/layout.json" > "$out/layout-report.log" 2>&1
rc=$?
echo "31-layout: capture exit $rc in $(( $(date +%s) - t0 )) s (0 all as documented, 1 a difference: see layout-report.log)"
tail -n 1 "$out/layout-report.log"
grep -E "DIFFERS|differs-from-ptx-isa|inconsistent|ERROR|SKIP" "$out/layout-report.log" | head -40
if ls "$out"/*.txt >/dev/null 2>&1; then
    timeout 120 "$bin" probe layout --from-capture "$out" --quiet > "$out/reanalysis.log" 2>&1
    echo "31-layout: re-analysis of the stored captures exit $? ($(tail -n 1 "$out/reanalysis.log"))"
fi
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
if [ -x "$cuobjdump" ]; then
    "$cuobjdump" -sass "$bin" 2>/dev/null | grep -oE "\b(HMMA|IMMA|DMMA|BMMA|HGMMA|QGMMA|LDSM|STSM)[.A-Z0-9_]*" \
        | sort | uniq -c > "$out/sass-ops.log" || true
fi
exit 0
