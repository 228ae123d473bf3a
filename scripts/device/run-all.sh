#!/usr/bin/env bash
# scripts/device/run-all.sh — every GPU step of mmaprobe in one call on the device machine.
#
#   here:   bash scripts/device-build.sh                       (builds and assembles build-h200/)
#   device: bash scripts/device/run-all.sh                     (carry=["build-h200"], $OUT set)
#           bash scripts/device/run-all.sh 99 00 10            (only these NN prefixes, in this order)
#
# The scripts' budgets add up to more than one device call (10 minutes): when they do, split
# them over calls by prefix; each call returns its own results.tar.gz and summary.txt.
#
# Runs scripts/device/NN-*.sh in order, each under `timeout` with its own budget (a line
# "# budget-seconds: N" in the script, default 90) and never more than what is left of the
# whole run's budget (MMP_DEVICE_BUDGET seconds, default 510, so that packing ends inside 9
# minutes; MMP_BUDGET_NN=S overrides script NN's); the script sees its budget in $MMP_SCRIPT_BUDGET. Output goes to
# $OUT/<name>.log, files under $OUT/<name>/;
# a failing or overrunning script is recorded and the next one runs. At the end everything is
# packed into $OUT/results.tar.gz and only that, summary.txt and run-all.log stay under $OUT
# (the device tool brings back at most 8 files). Exit status: 0 if every script exited 0.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
OUT=${OUT:-$root/device-out}
mkdir -p "$OUT"
export OUT
budget=${MMP_DEVICE_BUDGET:-510}
start=$(date +%s)
summary=$OUT/summary.txt
exec > >(tee "$OUT/run-all.log") 2>&1

say() { echo "run-all: $*"; }
say "repo $root, out $OUT, budget ${budget}s, scripts: ${*:-all}, started $(date -u +%FT%TZ)"

# device-build.sh packs a build that is too large to carry as it is into one xz archive.
if [ -f build-h200/bundle.tar.xz ]; then
  say "unpacking build-h200/bundle.tar.xz"
  tar -C build-h200 -xJf build-h200/bundle.tar.xz 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      build-h200/bundle.tar.xz build-h200 || say "unpacking FAILED"
fi

# The build was made elsewhere: its tests name the source root it was built in (MMP_SOURCE_DIR
# for test vectors). Point that path here when it does not exist on this machine.
if [ -f build-h200/.source_root ]; then
  old=$(cat build-h200/.source_root)
  if [ "$old" != "$root" ] && [ ! -e "$old" ]; then
    mkdir -p "$(dirname "$old")" 2>/dev/null && ln -s "$root" "$old" 2>/dev/null &&
      say "linked $old -> $root (the build's source root)"
  fi
  say "build-h200 from git $(cat build-h200/.git_sha 2>/dev/null || echo '?')"
else
  say "build-h200/ is missing or was not made by scripts/device-build.sh"
fi

# The carried libraries (also found through the binaries' RPATH), then cuBLAS 13 from the
# device's CUDA when the binary's RPATH does not find it.
[ -d build-h200/lib ] && export LD_LIBRARY_PATH="$root/build-h200/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -x build-h200/mmaprobe ] && ldd build-h200/mmaprobe | grep -q "not found"; then
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64 \
           $(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null); do
    [ -e "$d/libcublas.so.13" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
  done
  say "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldd build-h200/mmaprobe | grep "not found" && say "WARNING: libraries still missing"
fi
for t in compute-sanitizer cuobjdump ncu nvdisasm; do
  command -v $t >/dev/null || { [ -x /usr/local/cuda/bin/$t ] && export PATH=$PATH:/usr/local/cuda/bin; }
done

printf "%-28s %6s %8s %8s\n" script status seconds budget >"$summary"
status=0
# MMP_DEVICE_ONLY="00 10": run only the scripts with these number prefixes (a run split over
# two calls of the device tool, each under its 10-minute limit).
# With arguments, the scripts run in the order given (e.g. the GPU tests first, so that a call
# cut short still has them); without, in the order of their prefixes.
list=()
if [ $# -gt 0 ]; then
  for p in "$@"; do
    for s in scripts/device/"$p"-*.sh scripts/device/"$p".sh; do [ -e "$s" ] && list+=("$s"); done
  done
else
  list=(scripts/device/[0-9][0-9]-*.sh)
fi
for s in "${list[@]}"; do
  [ -e "$s" ] || continue
  name=$(basename "$s" .sh)
  if [ -n "${MMP_DEVICE_ONLY:-}" ] && ! grep -qw "${name%%-*}" <<<"$MMP_DEVICE_ONLY"; then continue; fi
  want=$(sed -n 's/^# budget-seconds: *\([0-9]\+\).*/\1/p' "$s" | head -1)
  want=${want:-90}
  # MMP_BUDGET_NN=seconds overrides script NN's own budget (e.g. a longer --suite full)
  ov=MMP_BUDGET_${name%%-*}
  [ -n "${!ov:-}" ] && want=${!ov}
  left=$((budget - ($(date +%s) - start)))
  if [ "$left" -lt 20 ]; then
    say "$name: not run, ${left}s left"
    printf "%-28s %6s %8s %8s\n" "$name" skip 0 "$want" >>"$summary"
    status=1
    continue
  fi
  b=$((want < left - 10 ? want : left - 10))
  say "$name: budget ${b}s"
  mkdir -p "$OUT/$name"
  t0=$(date +%s)
  MMP_SCRIPT_BUDGET=$b timeout -k 10 "$b" bash "$s" >"$OUT/$name.log" 2>&1
  rc=$?
  dt=$(($(date +%s) - t0))
  [ $rc = 124 ] || [ $rc = 137 ] && say "$name: TIMED OUT after ${dt}s"
  say "$name: exit $rc in ${dt}s (last lines of $name.log:)"
  tail -n 5 "$OUT/$name.log" | sed 's/^/    /'
  printf "%-28s %6s %8s %8s\n" "$name" "$rc" "$dt" "$b" >>"$summary"
  # the steps that failed inside the script (scripts/device/lib.sh), each on a line
  if [ -f "$OUT/$name.fail" ]; then
    sed "s/^/    FAILED: /" "$OUT/$name.fail" >>"$summary"
    rm -f "$OUT/$name.fail"
  fi
  [ $rc = 0 ] || { status=1; say "$name: FAILED (exit $rc)"; }
done

# Each script may append one-line findings to $OUT/<name>/summary.txt: gather them.
for f in "$OUT"/*/summary.txt; do
  [ -e "$f" ] || continue
  { echo; echo "== $(basename "$(dirname "$f")")"; cat "$f"; } >>"$summary"
done
say "total $(($(date +%s) - start))s; packing"
cat "$summary"
# Pack: everything but JSON-lines files and anything over 20 MB (listed), xz-compressed, split
# into parts of at most 15 MB (the device tool returns at most 8 files of 16 MB each).
find "$OUT" -mindepth 2 -type f -name '*.jsonl' -delete
find "$OUT" -mindepth 2 -type f -size +20M ! -name '*.xz' -print -exec xz -T0 -6 {} \; | sed 's/^/run-all: compressed alone: /'
(cd "$OUT" && tar -I 'xz -T0 -6' -cf /tmp/mmp-results.tar.xz --exclude ./run-all.log --exclude ./summary.txt . &&
   rm -f results.tar.xz.part-* && split -b 15M -d /tmp/mmp-results.tar.xz results.tar.xz.part- &&
   rm -f /tmp/mmp-results.tar.xz) || say "packing failed"
# Only the parts, summary.txt and run-all.log come back.
find "$OUT" -mindepth 1 -maxdepth 1 ! -name 'results.tar.xz.part-*' ! -name summary.txt ! -name run-all.log \
  -exec rm -rf {} +
ls -la "$OUT"
[ $status = 0 ] && say "every script passed" || say "SOME SCRIPTS FAILED: see summary.txt"
exit $status
