#!/usr/bin/env bash
# scripts/device/00-env.sh — what the device machine is: GPU, driver, OS, mmaprobe's environment
# header, the libraries each carried binary resolves, and which CUDA tools exist. Writes
# $OUT/00-env/{env.txt,ldd.txt,summary.txt}. Run by run-all.sh (repo root, build-h200/ carried).
# budget-seconds: 45
set -u
dir=$OUT/00-env
mkdir -p "$dir"
sum=$dir/summary.txt
: >"$sum"

{
  echo "## nvidia-smi"; nvidia-smi 2>&1 || echo "nvidia-smi failed"
  echo; echo "## nvidia-smi -q (clocks, ECC, MIG)"
  nvidia-smi -q -d CLOCK,ECC,COMPUTE 2>&1 | head -80
  echo; echo "## OS"; cat /etc/os-release 2>/dev/null | head -4; uname -a
  echo; echo "## CPU / memory"; nproc; free -g 2>/dev/null | head -2
  echo; echo "## mmaprobe env"; build-h200/mmaprobe env 2>&1; echo "exit $?"
  echo; echo "## tools"
  for t in nvcc compute-sanitizer cuobjdump nvdisasm ncu ctest cmake python3; do
    printf "%-18s %s\n" "$t" "$(command -v $t || echo MISSING)"
  done
  nvcc --version 2>/dev/null | tail -2
  compute-sanitizer --version 2>/dev/null | head -3
} >"$dir/env.txt" 2>&1
cat "$dir/env.txt"

gpu=$(build-h200/mmaprobe env 2>/dev/null | head -1)
build-h200/mmaprobe env >/dev/null 2>&1
env_rc=$?
echo "env: ${gpu:-mmaprobe env failed}" >>"$sum"
for t in compute-sanitizer cuobjdump ncu; do
  command -v $t >/dev/null && echo "env: $t present" >>"$sum" || echo "env: $t MISSING" >>"$sum"
done

# Every carried executable: its libraries, and any that are not found.
missing=0
while read -r f; do
  echo "## $f"
  ldd "$f" 2>&1
  if ldd "$f" 2>&1 | grep -q "not found"; then missing=$((missing + 1)); fi
done < <(find build-h200 -path build-h200/lib -prune -o -type f -perm -u+x -print | sort) >"$dir/ldd.txt"
echo "env: $missing carried executables with unresolved libraries (see 00-env/ldd.txt)" >>"$sum"
grep -B1 "not found" "$dir/ldd.txt" | head -20
cat "$sum"
[ $missing = 0 ] && [ $env_rc = 0 ]
