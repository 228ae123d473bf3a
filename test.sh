#!/usr/bin/env bash
# ./test.sh [--sanitize] — the tests. Installs what is missing, builds, runs ctest (the "cpu"
# tests, and the "gpu" tests, which skip with exit 77 and a reason where there is no GPU).
# --sanitize: a second, host-only build under AddressSanitizer + UBSan, running the cpu tests.
# --netlib: a host-only build against the netlib reference CBLAS (libblas-dev, installed when
# missing) instead of OpenBLAS, running the reference tests: any CBLAS must build and agree.
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
"$root/scripts/deps.sh"
if [ "${1:-}" = "--sanitize" ]; then
  "$root/scripts/build.sh" build-asan -DMMP_SANITIZE=ON -DMMP_ENABLE_CUDA=OFF
  cd "$root/build-asan"
  # ASan/UBSan make the host code 2-5x slower: Check's per-test timeouts scale with it.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CK_TIMEOUT_MULTIPLIER=5 \
    ctest -L cpu --output-on-failure -j2
elif [ "${1:-}" = "--netlib" ]; then
  "$root/scripts/deps.sh" --netlib
  lib=$(ls /usr/lib/*/blas/libblas.so | head -1)
  hdr=$(find /usr/include -name cblas-netlib.h | head -1)
  mkdir -p "$root/build-netlib/netlib-include"   # cblas.h itself may be OpenBLAS's (alternatives)
  echo "#include \"$hdr\"" >"$root/build-netlib/netlib-include/cblas.h"
  "$root/scripts/build.sh" build-netlib -DMMP_ENABLE_CUDA=OFF -DCBLAS_LIB="$lib" \
    -DCBLAS_INCLUDE="$root/build-netlib/netlib-include"
  cd "$root/build-netlib"
  grep -q 'MMP_HAVE_OPENBLAS:INTERNAL=1' CMakeCache.txt && { echo "test.sh: build-netlib found OpenBLAS, not netlib" >&2; exit 1; }
  ctest -R '^check_(reference|ref_round|ref_exact|metrics|tolerance)$' --output-on-failure -j2
else
  "$root/scripts/build.sh" build
  cd "$root/build"
  ctest --output-on-failure -j2
fi
