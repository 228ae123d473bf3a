#!/usr/bin/env bash
# scripts/build.sh BUILD_DIR [cmake args...] — configure and build (CUDA when nvcc exists).
set -euo pipefail
dir=${1:-build}; shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
cuda=ON
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || cuda=OFF
export PATH=$PATH:/usr/local/cuda/bin
cmake -S "$root" -B "$root/$dir" -DMMP_ENABLE_CUDA=$cuda "$@" >/dev/null
cmake --build "$root/$dir" -j"$(nproc)"
