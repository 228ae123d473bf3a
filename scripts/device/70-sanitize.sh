#!/usr/bin/env bash
# scripts/device/70-sanitize.sh — compute-sanitizer over the built-in GPU kernels at small sizes,
# and raw sanitizer output samples for tests/data/sanitizer-samples/ (the memcheck out-of-bounds,
# initcheck and synccheck findings there are still hand-written). A call of its own:
#   MMP_DEVICE_ONLY="70" MMP_DEVICE_BUDGET=545 bash scripts/device/run-all.sh
# Run from the repo root with the build in build-h200/; writes under $OUT/sanitize/. Fails soft.
#  1. mmaprobe validate --sanitize TOOL (memcheck, racecheck, synccheck, initcheck): the smoke
#     suite's smallest case of every kernel re-run under the tool; a finding FAILs the case with
#     reason "sanitizer" (summary.txt lists the exit code and every sanitizer line).
#  2. The CUDA mutants that must be caught (write past the end, missing barrier) under memcheck /
#     racecheck directly: their raw output is what tests/data/sanitizer-samples/ should hold.
# budget-seconds: 540
set -u
. "$(dirname "$0")/lib.sh"
budget=${MMP_SCRIPT_BUDGET:-540}
t_start=$(date +%s)
left() { echo $(( budget - ($(date +%s) - t_start) - 10 )); }
OUT=${OUT:-out}
dir="$OUT/sanitize"
mkdir -p "$dir"
B=build-h200
M="$B/mmaprobe"
note() { echo "70-sanitize: $*" | tee -a "$dir/summary.txt"; }
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
mmp_need "$CS"
mmp_need "$M"
"$CS" --version > "$dir/version.txt" 2>&1

# four tools share most of the budget; the raw mutant runs below get the rest
# MMP_SANITIZE_TOOLS="racecheck" and MMP_SANITIZE_FILTER="glob glob" (one validate run per glob):
# a partial re-run
tools=(${MMP_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck})
read -r -a filts <<<"${MMP_SANITIZE_FILTER:-*}"
n=$(( ${#tools[@]} * ${#filts[@]} ))
for tool in "${tools[@]}"; do
  for filt in "${filts[@]}"; do
    lim=$(( ($(left) - 60) / n )); n=$((n - 1))
    tag=$tool; [ "$filt" = "*" ] || tag=$tool-${filt//[^a-z0-9_]/}
    [ "$lim" -gt 20 ] || { note "validate --sanitize $tool --filter '$filt': skipped, budget spent"; continue; }
    timeout "$lim" "$M" validate --suite smoke --sanitize "$tool" --filter "$filt" -o "$dir/run-$tag.json" \
        > "$dir/validate-$tag.txt" 2>&1
    rc=$?
    mmp_expect "validate --sanitize $tool --filter $filt" $rc 0
    note "validate --sanitize $tool --filter '$filt': exit $rc (limit ${lim} s; 124 = timed out, the partial JSON is kept)"
    grep -E "^sanitizer |sanitizer" "$dir/validate-$tag.txt" | tee -a "$dir/summary.txt" | head -50
  done
done

# Raw output of the tool on mutants it must catch (first matching mutant of each kind).
mut() { "$M" list --mutants --suite kernels/cuda_mutants.suite --filter "$1" 2>/dev/null | awk '/^  cuda_mut_/ && /\// {print $1; exit}'; }
for pair in "memcheck:past_tile" "memcheck:illegal_address" "racecheck:no_sync" "synccheck:no_sync"; do
    tool=${pair%%:*}; pat=${pair#*:}
    id=$(mut "cuda_mut_$pat/*")
    [ -n "$id" ] || { mmp_failed_line "no CUDA mutant matching cuda_mut_$pat"; continue; }
    name=$(echo "$id" | cut -d/ -f1)
    lim=$(( $(left) / 4 )); [ "$lim" -gt 10 ] || { note "raw $tool: skipped, budget spent"; continue; }
    timeout "$lim" "$CS" --tool "$tool" --error-exitcode 99 "$M" validate --mutants --suite kernels/cuda_mutants.suite --no-isolate \
        --filter "$id" -o "$dir/raw-$name.json" > "$dir/raw-$tool-$name.txt" 2>&1
    rc=$?
    mmp_expect "raw $tool on $id (the tool must report: 99)" $rc 99
    note "raw $tool on $id: exit $rc -> raw-$tool-$name.txt"
done
# a clean sample: the smallest smoke case of the first cuBLAS kernel
id=$("$M" list --suite smoke --filter 'cublas*' 2>/dev/null | awk '/^  cublas/ {print $1; exit}')
[ -n "$id" ] && timeout 300 "$CS" --tool memcheck --error-exitcode 99 "$M" validate --no-isolate \
    --filter "$id" -o "$dir/raw-clean.json" > "$dir/raw-memcheck-clean.txt" 2>&1
mmp_expect "raw memcheck clean sample $id" $? 0
mmp_finish
