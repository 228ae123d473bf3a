#!/usr/bin/env bash
# scripts/device-build.sh — build mmaprobe for the H200 device machine and assemble the folder
# that is carried there: build-h200/ (run on the device: bash scripts/device/run-all.sh).
#
#   bash scripts/device-build.sh            # here, on the build machine (no GPU needed)
#
# The CMake tree is build-h200-tree/ (incremental, never carried). build-h200/ gets, at the same
# relative paths, every executable (debug info stripped), the CTestTestfile.cmake files with
# paths made relative (so `ctest -L gpu` works wherever the folder lands), and lib/ with each
# shared library the binaries need that the device's Ubuntu 24.04 may lack (found with ldd
# here; binaries carry the RUNPATH $ORIGIN/lib). Expected on the device and not copied: glibc,
# libstdc++, libgcc_s, libmpfr.so.6, libgmp.so.10, and CUDA 13's libcublas/libcublasLt
# (run-all.sh finds those). The script fails if build-h200/ exceeds 60 MiB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tree=$root/build-h200-tree
out=$root/build-h200
export PATH=$PATH:/usr/local/cuda/bin
limit_mib=60

cmake -S "$root" -B "$tree" -DCMAKE_CUDA_ARCHITECTURES=90 -DMMP_STATIC_DEPS=ON -DMMP_SHARED_LIB=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      '-DCMAKE_BUILD_RPATH=$ORIGIN;$ORIGIN/..;$ORIGIN/lib;$ORIGIN/../lib;$ORIGIN/../../lib;/usr/local/cuda/lib64;/usr/local/cuda/targets/x86_64-linux/lib' \
      >/dev/null
cmake --build "$tree" -j"$(nproc)"

rm -rf "$out"
mkdir -p "$out/lib"
# Executables at their relative paths (ELF files with the executable bit, outside CMakeFiles).
mapfile -t exes < <(cd "$tree" && find . -path ./CMakeFiles -prune -o -path '*/CMakeFiles' -prune -o \
                       -type f -perm -u+x -print | while read -r f; do
                         head -c4 "$f" | grep -q ELF && echo "$f"; done | sort)
for f in "${exes[@]}"; do
  mkdir -p "$out/$(dirname "$f")"
  strip --strip-debug -o "$out/$f" "$tree/$f"
done
# CTest files: the tree's absolute path becomes ${CMAKE_CURRENT_LIST_DIR}/<up to the root>.
while read -r t; do
  rel=${t#./}
  depth=$(($(tr -cd / <<<"$rel" | wc -c)))
  up='${CMAKE_CURRENT_LIST_DIR}'
  for ((i = 0; i < depth; i++)); do up="$up/.."; done
  mkdir -p "$out/$(dirname "$rel")"
  sed "s#$tree#$up#g" "$tree/$rel" >"$out/$rel"
done < <(cd "$tree" && find . -name CTestTestfile.cmake -not -path '*/CMakeFiles/*')
echo "$root" >"$out/.source_root"
git -C "$root" rev-parse --short=12 HEAD >"$out/.git_sha" 2>/dev/null || echo unknown >"$out/.git_sha"

# Shared libraries the device may not have: everything ldd resolves outside this allow-list.
expected='^(libmmp|linux-vdso|libc|libm|libdl|librt|libpthread|ld-linux-x86-64|libstdc\+\+|libgcc_s|libmpfr|libgmp|libcublas|libcublasLt|libcudart|libcuda)\.so'
missing=0
for f in "${exes[@]}"; do
  while read -r name arrow path rest; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = "not" ]; then echo "device-build: $f needs $name, not found here" >&2; missing=1; continue; fi
    grep -Eq "$expected" <<<"$name" && continue
    [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
  done < <(ldd "$tree/$f")
done
[ $missing = 0 ] || exit 1

echo "device-build: ${#exes[@]} executables in build-h200/; copied libraries:"
ls -la "$out/lib" | tail -n +2 | awk '{print "  " $5 "  " $9}'
echo "device-build: mmaprobe's libraries (those not under build-h200/lib must be on the device):"
ldd "$out/mmaprobe" | awk '{print "  " $1 " " $3}'
size=$(du -sm "$out" | cut -f1)
echo "device-build: build-h200/ is ${size} MiB (limit ${limit_mib} MiB); carry it: carry=[\"build-h200\"]"
if [ "$size" -ge "$limit_mib" ]; then
  echo "device-build: build-h200/ is too large to carry" >&2
  du -sm "$out"/* "$out"/*/* 2>/dev/null | sort -n | tail -8 >&2
  exit 1
fi
