#!/usr/bin/env bash
# bench/bench_reference.sh [BUILD_DIR] — the reference GEMM against its anchors (naive MPFR,
# cuBLAS DGEMM) on this machine: writes results/host/bench/reference-cpu.txt.
#   1. fp32 inputs, 256^3 and 1024^3: naive MPFR (all of 256^3; the first 8 rows of 1024^3,
#      extrapolated — the output says so) vs the certified path, elements sent to MPFR, and
#      every MPFR-computed element compared bit for bit with the certified result;
#   2. 2048^3 certified (target <= 10 s on 2 cores), again with 4 MPFR rows compared;
#   3. the same 2048^3 with OpenBLAS's own CPU detection, and bf16 inputs at 2048^3.
# OpenBLAS picks its kernels from the CPU model name; on VMs that hide it (model "Intel Xeon
# Processor") it falls back to SSE3 "Prescott" kernels, several times slower. Unless
# OPENBLAS_CORETYPE is set, we set it from the CPU flags (avx512f: SkylakeX, avx2: Haswell) and
# say so. Other processes sharing the cores slow everything down: the load average is printed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bin=$build/bench_reference
out=$root/results/host/bench/reference-cpu.txt
mkdir -p "$(dirname "$out")"
if [ ! -x "$bin" ]; then echo "bench_reference.sh: $bin missing: build first (cmake --build $build)"; exit 3; fi
core=${OPENBLAS_CORETYPE:-}
if [ -z "$core" ]; then
    if grep -qw avx512f /proc/cpuinfo; then core=SkylakeX; elif grep -qw avx2 /proc/cpuinfo; then core=Haswell; fi
fi
{
    echo "# bench/bench_reference.sh on $(hostname): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
    echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg) (other processes share these cores)"
    echo "# OPENBLAS_CORETYPE=${core:-<auto>}"
    echo
    OPENBLAS_CORETYPE=$core "$bin" --sizes 256,1024,2048 --mpfr-full-max 256 --mpfr-rows 8
    echo
    echo "# the same 2048^3 with OpenBLAS's own CPU detection (no OPENBLAS_CORETYPE)"
    env -u OPENBLAS_CORETYPE "$bin" --sizes 2048 --mpfr-full-max 0 --mpfr-rows 0 | grep -vE '^# (gpu|driver|mpfr|started|command):'
    echo
    echo "# bf16 inputs, fp32 output, 2048^3"
    OPENBLAS_CORETYPE=$core "$bin" --a bf16 --b bf16 --d fp32 --sizes 2048 --mpfr-full-max 0 --mpfr-rows 4 | grep -vE '^# (gpu|driver|mpfr|started|command):'
    echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out"
