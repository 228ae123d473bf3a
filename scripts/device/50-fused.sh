#!/usr/bin/env bash
# scripts/device/50-fused.sh — the fused INT4 operator on the GPU: validation of every component
# and of the fused operator through the runner, then timing. Run from the repo root with the build
# in build-h200/; writes under $OUT/fused/. Fails soft (prints what failed, exits 0). ~1-2 minutes.
#  1. mmaprobe validate --suite smoke --filter 'int4_fused*': every op of the int4_fused table as
#     runner cases (guards both sides, poison, two runs, a forked child per op), against the exact
#     per-component reference and budget, bitwise vs the host emulation, smem budget vs
#     cudaFuncGetAttributes -> validate.txt, validate.json
#  2. check_gpu_fused: more shapes and grid caps, the smoke suite isolated, planted bugs caught
#     -> check_gpu_fused.txt
#  3. check_fused (the CPU suite) on this machine -> check_fused.txt
#  4. bench_fused: single CTA, fused persistent, and both without residual/affine (headroom),
#     median of 30 launches after 5 warm-up -> bench.txt (two shapes)
#  5. SASS of the fused kernels: which tensor instructions ptxas emitted (s4 IMMA or emulation)
# budget-seconds: 100
# Within $MMP_SCRIPT_BUDGET (run-all.sh): ~50% validation, the rest timing; the second bench shape
# only runs when at least 40 s are left.
set -u
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-out}
dir="$OUT/fused"
mkdir -p "$dir"
B=build-h200
note() { echo "50-fused: $*" | tee -a "$dir/summary.txt"; }
T=${MMP_SCRIPT_BUDGET:-120}
t0=$(date +%s)
left() { echo $((T - ($(date +%s) - t0) - 5)); }

mmp_need "$B/mmaprobe"
timeout $((T * 20 / 100)) "$B/mmaprobe" validate --suite smoke --filter 'int4_fused*' -o "$dir/validate.json" \
    > "$dir/validate.txt" 2>&1
rc=$?
mmp_expect "validate --suite smoke --filter int4_fused*" $rc 0
note "mmaprobe validate --suite smoke --filter 'int4_fused*': exit $rc (0 pass) -> $dir/validate.txt"
grep -E "^int4_fused|pass, " "$dir/validate.txt" | head -20
mmp_need "$B/tests/check_gpu_fused"
CK_DEFAULT_TIMEOUT=300 timeout $((T * 30 / 100)) "$B/tests/check_gpu_fused" > "$dir/check_gpu_fused.txt" 2>&1
rc=$?
mmp_expect check_gpu_fused $rc 0
note "check_gpu_fused: exit $rc (0 pass) -> $dir/check_gpu_fused.txt"
grep -E "^int4_fused|Checks" "$dir/check_gpu_fused.txt" | head -60
if [ -x "$B/tests/check_fused" ]; then
    timeout 15 "$B/tests/check_fused" > "$dir/check_fused.txt" 2>&1
    rc=$?
    mmp_expect check_fused $rc 0
    note "check_fused (CPU): exit $rc"
fi
if [ -x "$B/bench_fused" ]; then
    for shape in "--m 4096 --n 4096 --k 4096 --g 64" "--m 8192 --n 8192 --k 4096 --g 128"; do
        l=$(left)
        if [ "$l" -lt 40 ]; then note "bench_fused $shape: skipped, ${l}s left"; continue; fi
        echo "## bench_fused $shape" >> "$dir/bench.txt"
        timeout $((l - 5)) "$B/bench_fused" $shape --iters 30 --warmup 5 >> "$dir/bench.txt" 2>&1
        rc=$?
        mmp_expect "bench_fused $shape" $rc 0
        note "bench_fused $shape: exit $rc (124 = timed out)"
    done
    cat "$dir/bench.txt"
else
    note "no $B/bench_fused"
fi
lib="$B/libmmp.a"
if command -v cuobjdump >/dev/null && [ -f "$lib" ]; then
    cuobjdump -sass "$lib" 2>/dev/null | awk '/Function :/ { fn = $3 }
        fn ~ /fk_(simple|persistent)_kernel/ {
            if (match($0, /(IMMA|HMMA|IDP|I2IP|I2I)[.A-Z0-9_]*/)) n[fn " " substr($0, RSTART, RLENGTH)]++ }
        END { for (k in n) print k, n[k] }' | sort > "$dir/sass_tensor_ops.txt"
    note "SASS tensor ops of the fused kernels -> $dir/sass_tensor_ops.txt"
fi
mmp_finish
