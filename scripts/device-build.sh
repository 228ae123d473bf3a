#!/usr/bin/env bash
# scripts/device-build.sh — build mmaprobe for the H200 device machine and assemble the folder
# that is carried there: build-h200/ (then, on the device: bash scripts/device/run-all.sh).
#
#   bash scripts/device-build.sh            # here, on the build machine (no GPU needed)
#
# The CMake tree is build-h200-tree/ (incremental, never carried), configured with
# -DCMAKE_CUDA_ARCHITECTURES=90 -DMMP_STATIC_DEPS=ON (static Check) -DMMP_SHARED_LIB=ON (one
# libmmp.so, small executables) and OpenBLAS linked as a shared library (statically it adds
# 25 MB to each executable). Staged in build-h200-stage/: every ELF file with the executable
# bit (executables and libmmp.so) at its relative path (debug info stripped), the
# CTestTestfile.cmake files with paths made relative (`ctest -L gpu` works wherever the folder
# lands), and lib/ with each shared library the binaries need that the device's Ubuntu 24.04
# may lack (found with ldd here: OpenBLAS, gfortran, quadmath, subunit; the binaries carry
# $ORIGIN/lib as DT_RPATH, not RUNPATH, so that it also serves OpenBLAS's own gfortran).
# Expected on the device and not copied: glibc, libstdc++, libgcc_s, libmpfr.so.6,
# libgmp.so.10, and CUDA 13's libcublas/libcublasLt (run-all.sh finds those).
# build-h200/ gets the staged files as they are when they take under 16 MiB, else one xz
# archive build-h200/bundle.tar.xz (OpenBLAS alone is 36 MB; executables share most of their
# bytes, which a 192 MiB dictionary finds) that run-all.sh unpacks in place. The script fails
# if build-h200/ reaches 60 MiB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tree=$root/build-h200-tree
stage=$root/build-h200-stage
out=$root/build-h200
openblas=$(ls /usr/lib/x86_64-linux-gnu/libopenblas.so /usr/lib64/libopenblas.so /usr/lib/libopenblas.so 2>/dev/null | head -1 || true)
export PATH=$PATH:/usr/local/cuda/bin
limit_mib=60   # the device tool carries at most 64 MiB with the working tree
pack_mib=16    # above this, carry one xz archive (the working tree needs room too)

cmake -S "$root" -B "$tree" -DCMAKE_CUDA_ARCHITECTURES=90 -DMMP_STATIC_DEPS=ON -DMMP_SHARED_LIB=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo ${openblas:+-DCBLAS_LIB=$openblas} \
      -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags \
      '-DCMAKE_BUILD_RPATH=$ORIGIN;$ORIGIN/..;$ORIGIN/lib;$ORIGIN/../lib;$ORIGIN/../../lib;/usr/local/cuda/lib64;/usr/local/cuda/targets/x86_64-linux/lib' \
      >/dev/null
cmake --build "$tree" -j"$(nproc)"

rm -rf "$stage"
mkdir -p "$stage/lib"
# Executables at their relative paths (ELF files with the executable bit, outside CMakeFiles).
mapfile -t exes < <(cd "$tree" && find . -path ./CMakeFiles -prune -o -path '*/CMakeFiles' -prune -o \
                       -type f -perm -u+x -print | while read -r f; do
                         head -c4 "$f" | grep -q ELF && echo "$f"; done | sort)
for f in "${exes[@]}"; do
  mkdir -p "$stage/$(dirname "$f")"
  strip --strip-debug -o "$stage/$f" "$tree/$f"
done
# CTest files: the tree's absolute path becomes ${CMAKE_CURRENT_LIST_DIR}/<up to the root>.
while read -r t; do
  rel=${t#./}
  depth=$(($(tr -cd / <<<"$rel" | wc -c)))
  up='${CMAKE_CURRENT_LIST_DIR}'
  for ((i = 0; i < depth; i++)); do up="$up/.."; done
  mkdir -p "$stage/$(dirname "$rel")"
  sed "s#$tree#$up#g" "$tree/$rel" >"$stage/$rel"
done < <(cd "$tree" && find . -name CTestTestfile.cmake -not -path '*/CMakeFiles/*')
echo "$root" >"$stage/.source_root"
git -C "$root" rev-parse --short=12 HEAD >"$stage/.git_sha" 2>/dev/null || echo unknown >"$stage/.git_sha"

# Shared libraries the device may not have: everything ldd resolves outside this allow-list.
expected='^(libmmp|libopenblas|libgfortran|libquadmath|linux-vdso|libc|libm|libdl|librt|libpthread|ld-linux-x86-64|libstdc\+\+|libgcc_s|libmpfr|libgmp|libcublas|libcublasLt|libcudart|libcuda)\.so'
missing=0
for f in "${exes[@]}"; do
  while read -r name arrow path rest; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = "not" ]; then echo "device-build: $f needs $name, not found here" >&2; missing=1; continue; fi
    grep -Eq "$expected" <<<"$name" && continue
    [ -e "$stage/lib/$name" ] || cp -L "$path" "$stage/lib/$name"
  done < <(ldd "$tree/$f")
done
[ $missing = 0 ] || exit 1

echo "device-build: ${#exes[@]} executables; copied libraries:"
ls -la "$stage/lib" | tail -n +2 | awk '$9 != "." && $9 != ".." {print "  " $5 "  " $9}'
echo "device-build: mmaprobe's libraries (those not under lib/ must be on the device):"
ldd "$stage/mmaprobe" | awk '{print "  " $1 " " $3}'

rm -rf "$out"
mkdir -p "$out"
raw=$(du -sm "$stage" | cut -f1)
if [ "$raw" -lt "$pack_mib" ]; then
  cp -a "$stage/." "$out/"
else
  echo "device-build: staged files are ${raw} MiB: packing build-h200/bundle.tar.xz"
  tar -C "$stage" -cf - . | xz -T1 --lzma2=preset=6,dict=192MiB >"$out/bundle.tar.xz"
  cp "$stage/.source_root" "$stage/.git_sha" "$out/"
  cat >"$out/README.txt" <<'TXT'
bundle.tar.xz holds this build folder (executables, lib/, CTest files); scripts/device/run-all.sh
unpacks it here before anything else runs. Made by scripts/device-build.sh.
TXT
fi
size=$(du -sm "$out" | cut -f1)
echo "device-build: build-h200/ is ${size} MiB (limit ${limit_mib} MiB; staged ${raw} MiB); carry=[\"build-h200\"]"
if [ "$size" -ge "$limit_mib" ]; then
  echo "device-build: build-h200/ is too large to carry" >&2
  exit 1
fi
