#!/usr/bin/env bash
# bench/bench_reference_cpu_formats.sh [BENCH_REFERENCE] [SIZE] [RUNS] — the certified CPU
# reference (2 threads) for each input format on uniform, wide and special data, with the slice
# products' route chosen by cost and forced onto DGEMMs (MMP_REF_LISTS=0), RUNS rounds in turn:
# the median seconds of each, the route, slices and levels the plan took, the elements the
# bound left to the dot stage, and 1,000 sampled elements against pure MPFR (0 expected).
# Writes results/host/bench/reference-formats-cpu.txt.
#   bash bench/bench_reference_cpu_formats.sh build/bench_reference 1024 3
set -euo pipefail
bin=${1:-build/bench_reference}
size=${2:-1024}
runs=${3:-3}
out=results/host/bench/reference-formats-cpu.txt
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
formats="bf16:bf16:fp32 fp16:fp16:fp16 e4m3:e5m2:fp16 fp32:fp32:fp32 tf32:tf32:fp32 fp64:fp64:fp64"
one() {   # lists(''|0) a b d dist samples
  MMP_REF_LISTS=$1 "$bin" --sizes "$size" --a "$2" --b "$3" --d "$4" --dist "$5" --mpfr-full-max 0 --mpfr-rows 0 \
    --sample "$6" --threads 2 2>&1
}
{
  echo "# made by: bash bench/bench_reference_cpu_formats.sh $bin $size $runs ($(date -u +%FT%TZ), git $(git rev-parse --short=12 HEAD 2>/dev/null || echo '?'))"
  echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
  one "" bf16 bf16 fp32 uniform 0 | grep -E '^# (gpu|mpfr)' || true
  printf '%-16s %-8s %9s %9s %10s  %-22s %9s  %s\n' formats dist "auto s" "dgemm s" "auto/dgemm" "route, slices, levels" "dot" "vs mpfr"
  for f in $formats; do
    IFS=: read -r a b d <<<"$f"
    for dist in uniform wide special; do
      ta=(); td=(); line=
      for r in $(seq "$runs"); do
        line=$(one "" "$a" "$b" "$d" "$dist" 0)
        ta+=("$(awk '/^certified cpu:/ {print $3}' <<<"$line")")
        td+=("$(one 0 "$a" "$b" "$d" "$dist" 0 | awk '/^certified cpu:/ {print $3}')")
      done
      med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
      ma=$(med "${ta[@]}"); md=$(med "${td[@]}")
      plan=$(sed -n 's/.*slices \([0-9x]*\) of [0-9]* bits, \([0-9]*\) levels, .*(route \([a-z0-9]*\)).*/\3, \1, \2/p' <<<"$line")
      dot=$(sed -n 's/.*dot stage \([0-9]*\) in.*/\1/p' <<<"$line")
      mp=$(one "" "$a" "$b" "$d" "$dist" 1000 | sed -n 's/^sampled vs pure mpfr: .*, \([0-9]* disagreements\).*/\1/p')
      printf '%-16s %-8s %9s %9s %10.2f  %-22s %9s  %s\n' "$f" "$dist" "$ma" "$md" "$(awk -v a="$ma" -v d="$md" 'BEGIN {print (d > 0 ? a / d : 0)}')" "$plan" "$dot" "$mp"
    done
  done
} | tee "$out"
