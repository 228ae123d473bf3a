#!/usr/bin/env bash
# scripts/device/10-validate.sh — every built-in kernel through the smoke and edge suites (one
# JSON report each), the CUDA mutants (each must be caught with its reason), seed kernels under
# each compute-sanitizer tool, the GPU Check suites (ctest -L gpu), and a per-kernel summary of
# the tensor-core instructions in the binary's SASS. Run by run-all.sh from the repo root with
# build-h200/ carried. Files under $OUT/10-validate/:
#   all-{smoke,edge}.{json,txt}                       validate runs (JSON + terminal table)
#   baseline-check.txt                                every case PASS or explained SKIP?
#   mutants.{json,txt}, mutants-racecheck.json, mutants-check.txt   mutant x caught-by
#   sanitize-<tool>-<kernel>.{json,txt}               compute-sanitizer memcheck|racecheck|...
#   ctest-gpu.txt, sass-summary.txt, summary.txt
# budget-seconds: 480
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
  if [ "$want" -lt 5 ]; then echo "10-validate: $name not run (no time left)" | tee -a "$sum"; return 98; fi
  echo "== $name (limit ${want}s): $*"
  timeout -k 5 "$want" "$@"
  local rc=$?
  echo "== $name: exit $rc"
  return $rc
}

# validate with compute-sanitizer: the runner's --sanitize when it has one, else the tool run
# directly on an in-process validate (--no-isolate); exit 99 = the tool reported errors.
has_sanitize=0
"$mmp" validate --help 2>&1 | grep -q -- "--sanitize" && has_sanitize=1
san=()
sanitized() {  # sanitized TOOL OUT.json validate-args... : the command into san[]
  local tool=$1 json=$2; shift 2
  if [ $has_sanitize = 1 ]; then
    san=("$mmp" validate "$@" --sanitize "$tool" -o "$json")
  else
    san=(compute-sanitizer --tool "$tool" --target-processes all --error-exitcode 99
         "$mmp" validate "$@" --no-isolate -o "$json")
  fi
}
counts() { grep -E '^[0-9]+ pass' "$1" 2>/dev/null | tail -1; }

# 1. Baseline kernels, smoke + edge. Every case must PASS or SKIP with a reason.
base=()
for fs in "smoke 100" "edge ${MMP_EDGE_LIMIT:-300}"; do
  set -- $fs
  suite=$1
  f=$dir/all-$suite
  step "all-$suite" "$2" "$mmp" validate --suite $suite --seed $seed -o "$f.json" >"$f.txt" 2>&1
  echo "validate (every built-in kernel) $suite: exit $?, $(counts "$f.txt")" >>"$sum"
  base+=("$f.json")
done
$check baseline "${base[@]}" | tee "$dir/baseline-check.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
tail -1 "$dir/baseline-check.txt" >>"$sum"

# 2. CUDA mutants through validate (FAILs and ERRORs expected: exit 1 is normal here), the race
#    mutant again under racecheck, then the mutant x caught-by table.
msuite=kernels/cuda_mutants.suite
step mutants 90 "$mmp" validate --mutants --suite $msuite --filter 'cuda_mut_*' --timeout 10 \
  --seed $seed -o "$dir/mutants.json" >"$dir/mutants.txt" 2>&1
echo "validate mutants: exit $? (1 expected), $(counts "$dir/mutants.txt")" >>"$sum"
race=()
if command -v compute-sanitizer >/dev/null; then
  rj=$dir/mutants-racecheck.json
  sanitized racecheck "$rj" --mutants --suite $msuite --filter 'cuda_mut_no_sync/*' --seed $seed
  step mutants-racecheck 90 "${san[@]}" >"$dir/mutants-racecheck.txt" 2>&1
  rc=$?
  echo "racecheck cuda_mut_no_sync: exit $rc (99: hazards reported)" >>"$sum"
  # A direct compute-sanitizer run reports through its exit code: record it as a case result.
  if [ $has_sanitize = 0 ] && [ $rc = 99 ] && [ -s "$rj" ]; then
    python3 - "$rj" <<'PY'
import json, sys
p = sys.argv[1]
run = json.load(open(p))
for c in run.get("cases", []):
    c["verdict"] = "FAIL"
    c["reasons"] = sorted(set(c.get("reasons", [])) | {"sanitizer"})
    c["message"] = "compute-sanitizer racecheck reported hazards; " + c.get("message", "")
json.dump(run, open(p, "w"), indent=1)
PY
  fi
  [ -s "$rj" ] && race=("$rj")
fi
$check mutants $msuite "$dir/mutants.json" "${race[@]}" | tee "$dir/mutants-check.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
tail -1 "$dir/mutants-check.txt" >>"$sum"

# 3. One small case per compute-sanitizer tool on a SIMT kernel, memcheck on a cuBLAS one.
#    compute-sanitizer refuses the device under gVisor: that shows here as a non-zero exit.
#    MMP_VALIDATE_SANITIZE=0 leaves this step out (a call that re-validates after a change).
if [ "${MMP_VALIDATE_SANITIZE:-1}" = 0 ]; then
  echo "sanitize: left out (MMP_VALIDATE_SANITIZE=0)" >>"$sum"
elif command -v compute-sanitizer >/dev/null; then
  for r in "memcheck bf16_mma_swizzle_3stage" "racecheck bf16_mma_swizzle_3stage" \
           "synccheck bf16_mma_swizzle_3stage" "racecheck int4_ptx_3stage"; do
    set -- $r
    f=$dir/sanitize-$1-$2
    sanitized "$1" "$f.json" --suite smoke --filter "$2/*/*/uniform/s$seed" --seed $seed
    step "sanitize-$1-$2" 45 "${san[@]}" >"$f.txt" 2>&1
    rc=$?
    echo "sanitize $1 $2: exit $rc (0 clean, 99 errors), $($check baseline "$f.json" | tail -1)" >>"$sum"
    [ $rc = 0 ] || fail=1
  done
else
  echo "sanitize: compute-sanitizer not installed" >>"$sum"
fi

# 4. Tensor-core instructions per kernel in the SASS (libmmp.so holds the kernels when the
#    device build makes it shared, else the mmaprobe executable does).
sass_of=$mmp
[ -f build-h200/libmmp.so ] && sass_of=build-h200/libmmp.so
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$sass_of" 2>/dev/null | python3 -c '
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

# 5. The GPU Check suites run last, in 99-ctest.sh, with what time is left.

cat "$sum"
grep -q "not run" "$sum" && fail=1
exit $fail
