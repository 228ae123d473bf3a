#!/usr/bin/env bash
# scripts/device/10-validate.sh — the baseline kernels (cuBLAS/cuBLASLt, SIMT) through the smoke
# and edge suites, the CUDA mutants (each must be caught with its reason), one small case under
# each compute-sanitizer tool, the GPU Check suites (ctest -L gpu), and a per-kernel summary of
# the tensor-core instructions in the binary's SASS. Run by run-all.sh from the repo root with
# build-h200/ carried. Files under $OUT/10-validate/:
#   baseline-cublas.{json,txt}, baseline-simt.{json,txt}   validate runs (JSON + terminal table)
#   baseline-check.txt                                      every case PASS or explained SKIP?
#   mutants.{json,txt}, mutants-racecheck.json, mutants-check.txt   mutant × caught-by
#   sanitize-<tool>-<kernel>.{json,txt}                     --sanitize memcheck|racecheck|...
#   ctest-gpu.txt, sass-summary.txt, summary.txt
# budget-seconds: 300
set -u
mmp=build-h200/mmaprobe
dir=$OUT/10-validate
mkdir -p "$dir"
sum=$dir/summary.txt
: >"$sum"
check="python3 scripts/device/mmp_check_run.py"
seed=42
fail=0
start=$(date +%s)
budget=${MMP_SCRIPT_BUDGET:-300}
left() { echo $((budget - ($(date +%s) - start) - 5)); }
# step NAME SECONDS CMD... : run with a time limit (never past this script's budget), log rc.
step() {
  local name=$1 want=$2; shift 2
  local l; l=$(left)
  [ "$want" -lt "$l" ] || want=$l
  if [ "$want" -lt 5 ]; then echo "10-validate: $name not run (no time left)" | tee -a "$sum"; return 99; fi
  echo "== $name (limit ${want}s): $*"
  timeout -k 5 "$want" "$@"
  local rc=$?
  echo "== $name: exit $rc"
  return $rc
}

# 1. Baseline kernels, smoke + edge. Every case must PASS or SKIP with a reason.
step baseline-cublas 120 "$mmp" validate --suite smoke,edge --filter 'cublas*' --seed $seed \
  --json "$dir/baseline-cublas.json" 2>&1 | tee "$dir/baseline-cublas.txt"
step baseline-simt 60 "$mmp" validate --suite smoke,edge --filter 'simt_*' --seed $seed \
  --json "$dir/baseline-simt.json" 2>&1 | tee "$dir/baseline-simt.txt"
$check baseline "$dir/baseline-cublas.json" "$dir/baseline-simt.json" | tee "$dir/baseline-check.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
echo "baseline: $(tail -1 "$dir/baseline-check.txt")" >>"$sum"

# 2. CUDA mutants through validate (FAILs and ERRORs expected: exit 1 is normal here), the race
#    mutant again under racecheck, then the mutant x caught-by table.
step mutants 60 "$mmp" validate --mutants --suite kernels/cuda_mutants.suite --filter 'cuda_mut_*' \
  --timeout 10 --seed $seed --json "$dir/mutants.json" 2>&1 | tee "$dir/mutants.txt"
step mutants-racecheck 60 "$mmp" validate --mutants --suite kernels/cuda_mutants.suite \
  --filter 'cuda_mut_no_sync*' --sanitize racecheck --timeout 60 --seed $seed \
  --json "$dir/mutants-racecheck.json" 2>&1 | tee "$dir/mutants-racecheck.txt"
racejson=()
[ -s "$dir/mutants-racecheck.json" ] && racejson=("$dir/mutants-racecheck.json")
$check mutants kernels/cuda_mutants.suite "$dir/mutants.json" "${racejson[@]}" | tee "$dir/mutants-check.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
echo "mutants: $(tail -1 "$dir/mutants-check.txt")" >>"$sum"

# 3. One small case per compute-sanitizer tool (a SIMT and a cuBLAS kernel; the findings are
#    folded into the verdicts). compute-sanitizer does not run under gVisor: that shows here.
if command -v compute-sanitizer >/dev/null; then
  runs=("memcheck simt_f32" "racecheck simt_f32" "initcheck simt_f32" "synccheck simt_f32"
        "memcheck cublas_f16_f32")
  for r in "${runs[@]}"; do
    set -- $r
    tool=$1 k=$2 f=$dir/sanitize-$1-$2
    step "sanitize-$tool-$k" 45 "$mmp" validate --suite smoke --filter "$k/*/64x64x128/uniform/s$seed" \
      --sanitize "$tool" --seed $seed --json "$f.json" >"$f.txt" 2>&1
    echo "sanitize $tool $k: exit $?, $($check baseline "$f.json" | tail -1)" >>"$sum"
  done
else
  echo "sanitize: compute-sanitizer not installed" >>"$sum"
fi

# 4. Tensor-core instructions per kernel in the binary's SASS.
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$mmp" 2>/dev/null | python3 -c '
import re, subprocess, sys
ops = ["HGMMA", "QGMMA", "IGMMA", "HMMA", "IMMA", "DMMA", "FFMA", "DFMA", "HFMA2", "LDSM", "UTMALDG"]
rows, cur = {}, None
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m:
        cur = m.group(1); rows.setdefault(cur, dict.fromkeys(ops, 0)); continue
    if cur:
        m = re.search(r"/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)(\.\S*)?", line)
        if m:
            op = m.group(1)
            for o in ops:
                if op == o or op.startswith(o + "."):
                    rows[cur][o] += 1
names = list(rows)
try:
    dem = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
except OSError:
    dem = names
print(f"{len(names)} kernels; columns: instruction counts in SASS (static, not executed)")
print("kernel".ljust(70) + "".join(o.rjust(8) for o in ops))
for n, d in zip(names, dem):
    d = (d or n)[:69]
    print(d.ljust(70) + "".join(str(rows[n][o]).rjust(8) for o in ops))
' >"$dir/sass-summary.txt" 2>&1
  echo "sass: $(head -1 "$dir/sass-summary.txt")" >>"$sum"
else
  echo "sass: cuobjdump not installed" >>"$sum"
fi

# 5. The GPU Check suites (label gpu), with what time is left.
if command -v ctest >/dev/null; then
  l=$(left)
  (cd build-h200 && step ctest-gpu "$l" ctest -L gpu --output-on-failure --timeout "$l") \
    >"$dir/ctest-gpu.txt" 2>&1
  grep -q "== ctest-gpu: exit 0" "$dir/ctest-gpu.txt" || fail=1
  echo "ctest -L gpu: $(grep -E 'tests passed|tests failed' "$dir/ctest-gpu.txt" | tail -1)" >>"$sum"
  grep -E "^\s+[0-9]+ - " "$dir/ctest-gpu.txt" >>"$sum"
else
  echo "ctest: not installed" >>"$sum"
fi

cat "$sum"
grep -q "not run" "$sum" && fail=1
exit $fail
