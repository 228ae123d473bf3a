#!/usr/bin/env bash
# bench/bench_reference_cpu_dists.sh [BENCH_REFERENCE] [RUNS] [SIZES] — the certified CPU
# reference (bf16 x bf16 -> fp32, 2 threads) on every distribution against `uniform`, with the
# runs interleaved (size by size, distribution by distribution, RUNS rounds) so that a noisy
# shared machine slows every distribution alike: prints each one's median seconds, its range
# and the ratio of medians to `uniform`; then one run per distribution with 2,000 elements
# against pure MPFR (the disagreements, 0 expected). The row `wide/dgemm` is `wide` with the
# slice products forced onto DGEMMs (MMP_REF_LISTS=0), in the same rounds: what the list route
# saves. Writes results/host/bench/reference-dists-cpu.txt.
#   bash bench/bench_reference_cpu_dists.sh build/bench_reference 7 "512 1024"
set -euo pipefail
bin=${1:-build/bench_reference}
runs=${2:-7}
sizes=${3:-"512 1024"}
out=results/host/bench/reference-dists-cpu.txt
dists="uniform wide special cancel onehot wide/dgemm"
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
one() {   # size dist[/dgemm] samples -> the certified seconds, or the disagreements line
  local lists=
  [ "${2#*/}" = dgemm ] && lists=0
  MMP_REF_LISTS=$lists "$bin" --sizes "$1" --a bf16 --b bf16 --d fp32 --dist "${2%/*}" --mpfr-full-max 0 --mpfr-rows 0 \
    --sample "$3" --threads 2 2>&1
}
{
  echo "# made by: bash bench/bench_reference_cpu_dists.sh $bin $runs \"$sizes\" ($(date -u +%FT%TZ), git $(git rev-parse --short=12 HEAD 2>/dev/null || echo '?'))"
  echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
  one 64 uniform 0 | grep -E '^# (gpu|mpfr|blas|bench_reference)' || true
  for r in $(seq "$runs"); do
    for s in $sizes; do
      for d in $dists; do
        echo "$s $d $(one "$s" "$d" 0 | awk '/^certified cpu:/ {print $3}')" >> "$raw"
      done
    done
  done
  python3 - "$raw" "$sizes" "$dists" <<'PY'
import statistics as st, sys
r = {}
for line in open(sys.argv[1]):
    s, d, t = line.split()
    r.setdefault((int(s), d), []).append(float(t))
dists = sys.argv[3].split()
print(f"{'size':>6} {'dist':>11} {'median s':>9} {'min':>7} {'max':>7} {'x uniform':>9}  (runs: {len(r[next(iter(r))])})")
for s in map(int, sys.argv[2].split()):
    u = st.median(r[(s, 'uniform')])
    for d in dists:
        v = r[(s, d)]
        print(f"{s:>6} {d:>11} {st.median(v):9.3f} {min(v):7.3f} {max(v):7.3f} {st.median(v) / u:9.2f}")
PY
  for s in $sizes; do
    for d in $dists; do
      echo "$s $d: $(one "$s" "$d" 2000 | grep -E '^sampled vs pure mpfr' || echo 'no sample line')"
    done
  done
} | tee "$out"
