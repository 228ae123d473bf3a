#!/usr/bin/env bash
# scripts/device/80-bench.sh — `mmaprobe bench` on the GPU: two built-in kernels validated with
# the smoke suite, then timed at 4096^3 and 8192^3 (10 warm-up + 50 launches, CUDA events,
# operands rotated over sets larger than twice the L2 cache), each against the cuBLAS kernel of
# its precision and the measured wgmma peak, with NVML's clocks and power before and after.
# Run from the repo root (scripts/device/run-all.sh) with the build in build-h200/; writes
# $OUT/80-bench/bench.json (the document) and bench.txt (the table).
#   kernels: bf16_mma_pipe_256_bk64 (mma.sync, pipelined, 64-wide K tiles) and wgmma_bf16_tma_256
#   (Hopper wgmma + TMA), both bf16 x bf16 -> fp32, so one peak measurement serves both.
# MMP_BENCH_FILTER: other kernels (a --filter list). MMP_BENCH_PLUGIN=LIB.so: also bench that
#   plugin's kernels -> plugin.json / plugin.txt (give the script MMP_BUDGET_80=240 then).
#   MMP_BENCH_ARGS: extra options for both runs.
# budget-seconds: 120
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/80-bench
mkdir -p "$out"
mmp=build-h200/mmaprobe
mmp_need "$mmp"
filter=${MMP_BENCH_FILTER:-bf16_mma_pipe_256_bk64,wgmma_bf16_tma_256}

# shellcheck disable=SC2086  # MMP_BENCH_ARGS is a list of options
timeout 100 "$mmp" bench --filter "$filter" --json "$out/bench.json" ${MMP_BENCH_ARGS:-} \
    > "$out/bench.txt" 2> "$out/bench.err"
rc=$?
mmp_expect "mmaprobe bench --filter $filter (see $out/bench.txt, bench.err)" $rc 0
sed -n '/^kernel /,$p' "$out/bench.txt"

if [ -n "${MMP_BENCH_PLUGIN:-}" ]; then
    # shellcheck disable=SC2086
    timeout 100 "$mmp" bench --plugin "$MMP_BENCH_PLUGIN" --json "$out/plugin.json" ${MMP_BENCH_ARGS:-} \
        > "$out/plugin.txt" 2> "$out/plugin.err"
    rc=$?
    mmp_expect "mmaprobe bench --plugin $MMP_BENCH_PLUGIN (see $out/plugin.txt, plugin.err)" $rc 0
    sed -n '/^kernel /,$p' "$out/plugin.txt"
fi
mmp_finish
