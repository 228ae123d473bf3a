#!/usr/bin/env bash
# check_install.sh BUILD SOURCE — `cmake --install` and the package from a user's side: install
# into a temporary prefix, then, as separate projects using find_package(mmaprobe):
#   examples/plugin   builds libmine.so with mmaprobe::headers, registers its validation with
#                     mmaprobe_add_plugin_test, and that CTest test passes;
#   examples/plugin_cuda (where nvcc exists) builds libmyplugin.so the same way; its registered
#                     test passes with a GPU and is skipped (exit 3) without one;
#   a broken twin     the test fixture plugin writing outside D (FIX_WILD): its registered
#                     test must FAIL, so the registration cannot pass whatever the kernel does;
#   examples/library  links mmaprobe::mmp and runs (the reference from a program of one's own);
#   pkg-config        mmaprobe.pc gives the include directory and -lmmp.
set -euo pipefail
build=$1 src=$2
t=$(mktemp -d /tmp/mmp_install.XXXXXX)
trap 'rm -rf "$t"' EXIT
say() { echo "check_install: $*"; }
cmake --install "$build" --prefix "$t/prefix" > "$t/install.log"
for f in bin/mmaprobe include/mmaprobe/kernel.h lib/cmake/mmaprobe/mmaprobeConfig.cmake lib/pkgconfig/mmaprobe.pc; do
  [ -e "$t/prefix/$f" ] || { say "FAIL: $f not installed"; exit 1; }
done
ls "$t/prefix/lib/" | grep -q '^libmmp\.' || { say "FAIL: no libmmp installed"; exit 1; }
gen=(-DCMAKE_PREFIX_PATH="$t/prefix" -DCMAKE_BUILD_TYPE=Release)

cmake -S "$src/examples/plugin" -B "$t/plugin" "${gen[@]}" > "$t/plugin.log"
grep -q "mmaprobe_add_plugin_test\|mine_smoke" "$t/plugin/CTestTestfile.cmake" || { say "FAIL: no test registered"; exit 1; }
cmake --build "$t/plugin" >> "$t/plugin.log"
(cd "$t/plugin" && ctest --output-on-failure > "$t/plugin-ctest.log") || { cat "$t/plugin-ctest.log"; say "FAIL: the example plugin's test"; exit 1; }
say "examples/plugin: $(grep -E 'tests passed' "$t/plugin-ctest.log")"

# examples/plugin_cuda where nvcc exists: builds against the package, registers its test; the
# test runs where there is a GPU (PASS required) and is CTest's "skipped" (exit 3) elsewhere.
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
if [ -n "$nvcc" ]; then
  cmake -S "$src/examples/plugin_cuda" -B "$t/plugin_cuda" "${gen[@]}" -DCMAKE_CUDA_COMPILER="$nvcc" > "$t/plugin_cuda.log" 2>&1 ||
    { tail -20 "$t/plugin_cuda.log"; say "FAIL: configuring examples/plugin_cuda"; exit 1; }
  grep -q "myplugin_smoke" "$t/plugin_cuda/CTestTestfile.cmake" || { say "FAIL: examples/plugin_cuda registered no test"; exit 1; }
  cmake --build "$t/plugin_cuda" >> "$t/plugin_cuda.log" 2>&1 || { tail -20 "$t/plugin_cuda.log"; say "FAIL: building examples/plugin_cuda"; exit 1; }
  [ -e "$t/plugin_cuda/libmyplugin.so" ] || { say "FAIL: no libmyplugin.so"; exit 1; }
  (cd "$t/plugin_cuda" && ctest --output-on-failure > "$t/plugin_cuda-ctest.log" 2>&1) ||
    { cat "$t/plugin_cuda-ctest.log"; say "FAIL: the CUDA example plugin's test"; exit 1; }
  if grep -q "myplugin_smoke (Skipped)" "$t/plugin_cuda-ctest.log"; then
    say "examples/plugin_cuda: built; its registered test myplugin_smoke skipped (exit 3: no GPU here)"
  else
    say "examples/plugin_cuda: $(grep -E 'tests passed' "$t/plugin_cuda-ctest.log")"
  fi
else
  say "examples/plugin_cuda: not built (no nvcc)"
fi

mkdir -p "$t/bad-src"
cat > "$t/bad-src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(bad C)
find_package(mmaprobe REQUIRED)
add_library(bad MODULE $src/tests/fixtures/plugin.c)
target_compile_definitions(bad PRIVATE FIX_WILD=1)
target_link_libraries(bad PRIVATE mmaprobe::headers)
enable_testing()
mmaprobe_add_plugin_test(bad_smoke bad)
CMAKE
cmake -S "$t/bad-src" -B "$t/bad" "${gen[@]}" > "$t/bad.log"
cmake --build "$t/bad" >> "$t/bad.log"
if (cd "$t/bad" && ctest > "$t/bad-ctest.log" 2>&1); then
  cat "$t/bad-ctest.log"; say "FAIL: a plugin writing outside D passed its registered test"; exit 1
fi
grep -q "Failed" "$t/bad-ctest.log" || { cat "$t/bad-ctest.log"; say "FAIL: the broken plugin's test did not fail"; exit 1; }
say "broken twin: its registered test fails, as it must"

cmake -S "$src/examples/library" -B "$t/library" "${gen[@]}" > "$t/library.log"
cmake --build "$t/library" >> "$t/library.log" 2>&1 || { tail -20 "$t/library.log"; say "FAIL: linking mmaprobe::mmp"; exit 1; }
out=$("$t/library/refdemo")
echo "$out" | grep -q "correctly rounded product" || { say "FAIL: refdemo printed: $out"; exit 1; }
say "examples/library: $out"

if command -v pkg-config > /dev/null; then
  flags=$(PKG_CONFIG_PATH="$t/prefix/lib/pkgconfig" pkg-config --cflags --libs mmaprobe)
  inc=$(echo "$flags" | tr ' ' '\n' | sed -n 's/^-I//p' | head -1)
  [ -n "$inc" ] && [ -e "$inc/mmaprobe/kernel.h" ] && echo "$flags" | grep -q -- "-lmmp" ||
    { say "FAIL: pkg-config gave '$flags'"; exit 1; }
  say "pkg-config: $flags"
fi
say "ok"
