#!/usr/bin/env bash
# bench/bench_reference_dists.sh MMAPROBE KERNEL SIZES [OUT_DIR] — the certified reference's
# time on every input distribution against its time on `uniform`, through `mmaprobe validate`
# (the reference a case really runs: CPU for host kernels, the device path for device ones).
#   CPU:  bash bench/bench_reference_dists.sh build/mmaprobe host_tc_bf16_f32 512,1024
#   GPU:  bash bench/bench_reference_dists.sh build-h200/mmaprobe cublas_bf16_f32 4096,8192
# Prints, per size and distribution: the reference's milliseconds, the ratio to uniform, the
# elements decided by the dot stage, the exact evaluator and MPFR. Writes OUT_DIR/refdist-KERNEL.{json,txt}.
set -euo pipefail
mmp=${1:-build/mmaprobe}
kernel=${2:-host_tc_bf16_f32}
sizes=${3:-512,1024}
out=${4:-results/host/bench}
mkdir -p "$out"
suite=$(mktemp --suffix=.suite)
trap 'rm -f "$suite"' EXIT
for n in ${sizes//,/ }; do
  echo "shape=${n}x${n}x${n} dist=uniform,exact,normal,wide,cancel,onehot,special kernel=$kernel" >> "$suite"
done
base="$out/refdist-$kernel"
"$mmp" validate --suite "$suite" --filter "$kernel/*" --seed 42 --host-max-log2-work 40 --timeout 600 \
  -o "$base.json" > "$base.log" 2>&1 || true
python3 - "$base.json" <<'PY' | tee "$base.txt"
import json, sys
run = json.load(open(sys.argv[1]))
env = run.get("env", {})
print(f"# {env.get('gpu', '?')}  blas: {env.get('blas', '?')}  git {env.get('git_sha', '?')}  seed 42")
rows = {}
for c in run["cases"]:
    rows.setdefault((c["m"], c["n"], c["k"]), []).append(c)
print(f"{'shape':>16} {'dist':>8} {'verdict':>7} {'ref ms':>10} {'x uniform':>9} {'dot':>10} {'exact':>10} {'mpfr':>8}")
for shape, cs in rows.items():
    uni = next((c.get("time_reference_ms", 0) for c in cs if c["dist"] == "uniform"), 0) or float("nan")
    for c in cs:
        t = c.get("time_reference_ms", 0)
        print(f"{'x'.join(map(str, shape)):>16} {c['dist']:>8} {c['verdict']:>7} {t:10.1f} {t / uni:9.2f} "
              f"{c.get('n_dot', 0):>10} {c.get('n_exact', 0):>10} {c.get('n_mpfr', 0):>8}")
PY
