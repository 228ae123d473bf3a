#!/usr/bin/env bash
# ./test.sh [--sanitize] — the tests. Installs what is missing, builds, runs ctest (the "cpu"
# tests, and the "gpu" tests, which skip with exit 77 and a reason where there is no GPU).
# --sanitize: a second, host-only build under AddressSanitizer + UBSan, running the cpu tests.
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
"$root/scripts/deps.sh"
if [ "${1:-}" = "--sanitize" ]; then
  "$root/scripts/build.sh" build-asan -DMMP_SANITIZE=ON -DMMP_ENABLE_CUDA=OFF
  cd "$root/build-asan"
  # ASan/UBSan make the host code 2-5x slower: Check's per-test timeouts scale with it.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CK_TIMEOUT_MULTIPLIER=5 \
    ctest -L cpu --output-on-failure -j2
else
  "$root/scripts/build.sh" build
  cd "$root/build"
  ctest --output-on-failure -j2
fi
