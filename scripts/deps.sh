#!/usr/bin/env bash
# scripts/deps.sh — install what mmaprobe needs on a Debian/Ubuntu machine, if it is missing.
# Needs root (or sudo) only when something is missing. nvcc/CUDA is optional: without it the
# build is host-only (-DMMP_ENABLE_CUDA=OFF is chosen automatically by build.sh).
set -euo pipefail
need=()
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
command -v cmake >/dev/null || need+=(cmake)
command -v cc >/dev/null || need+=(build-essential)
command -v g++ >/dev/null || need+=(g++)
command -v pkg-config >/dev/null || need+=(pkg-config)
have_pc mpfr || need+=(libmpfr-dev)
have_pc gmp || [ -e /usr/include/gmp.h ] || [ -e /usr/include/x86_64-linux-gnu/gmp.h ] || need+=(libgmp-dev)
have_pc check || need+=(check)
command -v xz >/dev/null || need+=(xz-utils)
command -v xmllint >/dev/null || need+=(libxml2-utils)
[ -e /usr/lib/x86_64-linux-gnu/libsubunit.so ] || [ -e /usr/lib/aarch64-linux-gnu/libsubunit.so ] || need+=(libsubunit-dev)
# OpenBLAS itself (a netlib CBLAS also provides cblas.h, but is far slower and has no
# thread control): found by pkg-config or by its library, installed when missing.
have_openblas=0
have_pc openblas && have_openblas=1
for l in /usr/lib/*/libopenblas.so /usr/lib/*/openblas*/libopenblas.so /usr/lib/libopenblas.so; do
  [ -e "$l" ] && have_openblas=1
done
[ $have_openblas = 1 ] || need+=(libopenblas-dev)
# --netlib (test.sh --netlib): the netlib reference BLAS and CBLAS too.
if [ "${1:-}" = "--netlib" ]; then
  ls /usr/lib/*/blas/libblas.so >/dev/null 2>&1 && [ -n "$(find /usr/include -name cblas-netlib.h)" ] ||
    need+=(libblas-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
