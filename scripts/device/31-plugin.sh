#!/usr/bin/env bash
# scripts/device/31-plugin.sh — CUDA plugins on the device (run from the repo root by
# scripts/device/run-all.sh with the build in build-h200/; builds nothing: the plugins come
# carried, built by the main CMake build into build-h200/tests/plugin_fixtures/). Files under
# $OUT/31-plugin/:
#   list.txt                     `mmaprobe list --plugin` of every plugin: the GPU code each carries
#   example-{smoke,edge}.{json,txt}   examples/plugin_cuda (libmyplugin.so): every case PASS
#                                (SKIP only with a reason), exit 0
#   bad-launch.{json,txt}        fixcu_bad_launch.so (2048 threads per block): every launched case
#                                ERROR launch with CUDA's message, exit 1, no FAIL unwritten
#   no-code.{json,txt}           fixcu_sm80.so (sm_80 SASS only) on this sm_90 device: every case
#                                SKIP "plugin has code for sm_80 only; this device is sm_90", exit 0
#   ptx.{json,txt}               fixcu_ptx80.so (compute_80 PTX only): JIT-compiled here, PASS
#   check_gpu_plugin.txt         the GPU Check suite of the same (ERROR launch, example PASS)
#   summary.txt
# budget-seconds: 300
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/31-plugin
mkdir -p "$out"
sum=$out/summary.txt
: >"$sum"
bin=build-h200/mmaprobe
fx=build-h200/tests/plugin_fixtures
mmp_need "$bin"
mmp_need "$fx/libmyplugin.so"
mmp_need "$fx/fixcu_bad_launch.so"

# The plugins link libcudart.so.13 (shared, as the example says): find it when the loader does not.
if ldd "$fx/libmyplugin.so" | grep -q "libcudart.*not found"; then
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64 \
           $(python3 -c 'import nvidia.cuda_runtime, os; print(os.path.join(list(nvidia.cuda_runtime.__path__)[0], "lib"))' 2>/dev/null); do
    [ -e "$d/libcudart.so.13" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
  done
  ldd "$fx/libmyplugin.so" | grep -q "libcudart.*not found" && mmp_failed_line "libcudart.so.13 not found on this machine"
fi

"$bin" list --plugin "$fx/libmyplugin.so" --plugin "$fx/fixcu_bad_launch.so" --plugin "$fx/fixcu_sm80.so" \
    --plugin "$fx/fixcu_sm90a.so" --plugin "$fx/fixcu_ptx80.so" >"$out/list.txt" 2>&1
mmp_expect "list --plugin" $? 0
sed -n '/^plugins/,/^suites/p' "$out/list.txt" | tee -a "$sum"

# run NAME LIB SUITE SECONDS OK-STATUSES...: validate one plugin, JSON and text kept, exit judged
run() {
  local name=$1 lib=$2 suite=$3 limit=$4
  shift 4
  timeout -k 5 "$limit" "$bin" validate --plugin "$lib" --suite "$suite" -o "$out/$name.json" >"$out/$name.txt" 2>&1
  local rc=$?
  echo "31-plugin: $name ($(basename "$lib"), $suite): exit $rc; $(grep -E '^[0-9]+ pass' "$out/$name.txt" | tail -1)" | tee -a "$sum"
  mmp_expect "$name" $rc "$@"
}
verdicts() { grep -E '^\[[0-9]+/[0-9]+\] ' "$1" | awk '{print $2}' | sort | uniq -c | tr '\n' ' '; }

run example-smoke "$fx/libmyplugin.so" smoke 40 0
run example-edge "$fx/libmyplugin.so" edge 120 0   # 860 cases
grep -E '^\[[0-9]+/[0-9]+\] (FAIL|ERROR)' "$out/example-smoke.txt" "$out/example-edge.txt" | head -20 | tee -a "$sum"

run bad-launch "$fx/fixcu_bad_launch.so" smoke 30 1
echo "31-plugin: bad-launch verdicts: $(verdicts "$out/bad-launch.txt")" | tee -a "$sum"
grep -qE '^\[[0-9]+/[0-9]+\] ERROR ' "$out/bad-launch.txt" || mmp_failed_line "bad-launch: no ERROR case"
grep -qE '^\[[0-9]+/[0-9]+\] (PASS|FAIL) ' "$out/bad-launch.txt" && mmp_failed_line "bad-launch: a PASS or FAIL case (the launch failure went unheard)"
grep -q 'launch: cudaError' "$out/bad-launch.txt" "$out/bad-launch.json" || mmp_failed_line "bad-launch: no 'launch: cudaError' message"
grep -m2 'launch: cudaError' "$out/bad-launch.txt" | tee -a "$sum"

run no-code "$fx/fixcu_sm80.so" smoke 20 0
echo "31-plugin: no-code verdicts: $(verdicts "$out/no-code.txt")" | tee -a "$sum"
grep -q 'plugin has code for sm_80 only; this device is sm_90' "$out/no-code.txt" "$out/no-code.json" ||
  mmp_failed_line "no-code: no 'plugin has code for sm_80 only; this device is sm_90' SKIP"
grep -qE '^\[[0-9]+/[0-9]+\] (PASS|FAIL|ERROR) ' "$out/no-code.txt" && mmp_failed_line "no-code: a case ran"

run ptx "$fx/fixcu_ptx80.so" smoke 30 0

if [ -x build-h200/tests/check_gpu_plugin ]; then
  (cd build-h200/tests && MMP_PLUGIN_FIXTURES=$PWD/plugin_fixtures timeout -k 5 50 ./check_gpu_plugin) >"$out/check_gpu_plugin.txt" 2>&1
  rc=$?
  echo "31-plugin: check_gpu_plugin exit $rc: $(grep -E 'Checks:' "$out/check_gpu_plugin.txt" | tail -1)" | tee -a "$sum"
  mmp_expect check_gpu_plugin $rc 0
else
  mmp_failed_line "build-h200/tests/check_gpu_plugin missing"
fi
mmp_finish
