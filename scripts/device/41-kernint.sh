#!/usr/bin/env bash
# scripts/device/41-kernint.sh — GPU-side checks of the int8_ptx / int4_ptx kernel families.
# Run from the repo root with the build in build-h200/; writes under $OUT/kernint/. Fails soft.
#  1. SASS: which integer tensor instruction each kernel really runs (IMMA shape and types, IDP4A,
#     or an s4 emulation on Hopper), per kernel function, from cuobjdump -sass of libmmp.a.
#  2. The host map test (check_kernint_maps) on this machine.
#  3. mmaprobe validate over the integer kernels (exact int32 comparison), when the CLI has it.
# budget-seconds: 30
set -u
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-out}
dir="$OUT/kernint"
mkdir -p "$dir"
B=build-h200
note() { echo "41-kernint: $*" | tee -a "$dir/summary.txt"; }

lib="$B/libmmp.a"
if command -v cuobjdump >/dev/null && [ -f "$lib" ]; then
    cuobjdump -sass "$lib" > "$dir/sass_all.txt" 2>&1 || mmp_failed_line "cuobjdump -sass $lib"
    # per function: count of each tensor / dot-product opcode (IMMA.<shape>.<types>, IDP.4A, HMMA)
    awk '/Function :/ { fn = $3 }
         fn ~ /intk_kernel|int8_wmma|int4_wmma|int8_dp4a/ {
             if (match($0, /(IMMA|HMMA|IDP|IDP4A|I2IP|I2I)[.A-Z0-9_]*/)) n[fn " " substr($0, RSTART, RLENGTH)]++ }
         END { for (k in n) print k, n[k] }' "$dir/sass_all.txt" | sort > "$dir/sass_tensor_ops.txt"
    note "SASS tensor ops per kernel function -> $dir/sass_tensor_ops.txt ($(wc -l < "$dir/sass_tensor_ops.txt") lines)"
    cat "$dir/sass_tensor_ops.txt"
else
    note "no cuobjdump or no $lib: SASS column not produced"
fi

mmp_need "$B/tests/check_kernint_maps"
"$B/tests/check_kernint_maps" > "$dir/check_kernint_maps.txt" 2>&1
rc=$?
note "check_kernint_maps: exit $rc (see $dir/check_kernint_maps.txt)"
mmp_expect check_kernint_maps $rc 0

# Validation of these kernels is in 10-validate.sh (every built-in kernel, smoke and edge).
mmp_finish
