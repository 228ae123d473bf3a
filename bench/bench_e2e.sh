#!/usr/bin/env bash
# bench/bench_e2e.sh [MMAPROBE] [KERNEL] [N] [OUT_DIR] [DIST] — end-to-end validation of ONE case
# (inputs, certified reference, poison, transfers, two launches, guards, comparison, memory),
# its wall time split by stage (the case's time_<stage>_ms members), after a 256^3 case of the
# same kernel in the same process (which takes the process's one-off costs: both are printed).
# A second N^3 case follows (seed 43): the first N^3 case in a process also pays for what the
# size needs once (the reference's memory pool growing, cuBLAS's heuristics and lazy module
# loading for the new shapes); the second is what every later case of a suite costs.
#   GPU (the issue's figure):  bash bench/bench_e2e.sh build-h200/mmaprobe cublas_bf16_f32 8192
#   CPU (no GPU):              bash bench/bench_e2e.sh build/mmaprobe host_blas_f32 2048
# DIST: the case's distribution (default uniform). A device kernel's stages run on the device
# unless MMP_DEVICE_STAGES=0 (then on the host; the file name says which).
# Writes OUT_DIR/e2e-KERNEL-N[-DIST][-hoststages].{json,txt}; prints the split. The case runs in-process
# (--no-isolate) so the stage sum and the wall clock of the process can be compared.
set -euo pipefail
mmp=${1:-build/mmaprobe}
kernel=${2:-host_tc_bf16_f32}
n=${3:-1024}
out=${4:-results/host/bench}
dist=${5:-uniform}
mkdir -p "$out"
suite=$(mktemp --suffix=.suite)
trap 'rm -f "$suite"' EXIT
# a small case of the same kernel first: the process's one-off costs (CUDA context, library
# handles, modules) fall on it, and the N^3 case after it shows a case's own cost
printf 'shape=256x256x256 dist=%s kernel=%s\nshape=%sx%sx%s dist=%s kernel=%s\nshape=%sx%sx%s dist=%s kernel=%s seed=43\n' \
  "$dist" "$kernel" "$n" "$n" "$n" "$dist" "$kernel" "$n" "$n" "$n" "$dist" "$kernel" > "$suite"
base="$out/e2e-$kernel-$n"
[ "$dist" = uniform ] || base="$base-$dist"
[ "${MMP_DEVICE_STAGES:-1}" = 0 ] && base="$base-hoststages"
start=$(date +%s.%N)
"$mmp" validate --suite "$suite" --filter "$kernel/*" --seed 42 --no-isolate --host-max-log2-work 40 -o "$base.json" > "$base.txt" 2>&1 || true
end=$(date +%s.%N)
python3 - "$base.json" "$start" "$end" <<'PY' | tee -a "$base.txt"
import json, sys
doc = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
env = doc["env"]
print("env: %s, %s, git %s" % (env.get("gpu"), env.get("hostname"), env.get("git_sha")))
for c in doc["cases"]:
    print("case %s: %s (n_mpfr %d)" % (c["id"], c["verdict"], c.get("n_mpfr", 0)))
    names = ["inputs", "reference", "poison", "transfer", "launch", "guards", "compare", "memory"]
    tot = c["time_total_ms"]
    for s in names:
        ms = c.get("time_%s_ms" % s, 0.0)
        print("  %-10s %10.1f ms  %5.1f %%" % (s, ms, 100.0 * ms / tot if tot else 0))
    rest = tot - sum(c.get("time_%s_ms" % s, 0.0) for s in names)
    print("  %-10s %10.1f ms  %5.1f %%" % ("other", rest, 100.0 * rest / tot if tot else 0))
    print("  %-10s %10.1f ms  (kernel alone, fastest of 2 runs: %.3f ms)" % ("case total", tot, c["time_kernel_ms"]))
    if c.get("time_context_ms", 0.0):
        print("  (before it, not in its total: the CUDA context, %.1f ms)" % c["time_context_ms"])
print("process wall clock (start-up, environment, report writing included): %.2f s" % wall)
PY
