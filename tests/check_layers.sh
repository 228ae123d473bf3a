#!/usr/bin/env bash
# tests/check_layers.sh ROOT — the module layering, checked on every #include of product code.
# Modules in dependency order (the order of add_subdirectory in CMakeLists.txt); each public
# header in include/mmaprobe/ belongs to one module. A file of module M may include:
#   - its own module's private headers (a bare name found in M/, or M/sm90a/);
#   - public headers of M and of the modules before M in the order.
# Anything else (another module's private header, a header of a module above M, a path into
# tests/) is an arrow that runs back up, and fails the test with the file and the line.
# Also: core names no function of a module above it; one RNG (core/rng.c); no work history
# (session N, issue N, stop N, sN-N call ids) in the product code's comments.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
order=(core reference kernels suites probes reports cli)
# public header -> owning module
declare -A owner=(
  [status.h]=core [format.h]=core [gemm.h]=core [result.h]=core [core.h]=core [json.h]=core
  [cuda_check.h]=core [hd.h]=core [sysio.h]=core [npy.h]=core
  [reference.h]=reference [metrics.h]=reference [model.h]=reference [fused.h]=reference
  [kernel.h]=kernels [plugin_cuda.h]=kernels [registry.h]=kernels [memmap.h]=kernels [peak.h]=kernels
  [runner.h]=suites [bench.h]=suites
  [probe.h]=probes [layout.h]=probes [memory.h]=probes
  [report.h]=reports
)
rank() { local i; for i in "${!order[@]}"; do [ "${order[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo 99; }
bad=0
for h in include/mmaprobe/*.h; do
  b=$(basename "$h")
  [ -n "${owner[$b]:-}" ] || { echo "FAIL: $h has no owning module in tests/check_layers.sh"; bad=1; }
done
check_file() {   # file module
  local f=$1 m=$2 mr line n inc
  mr=$(rank "$m")
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] || continue
    inc=${BASH_REMATCH[1]}
    if [[ $inc == mmaprobe/* ]]; then
      local hb=${inc#mmaprobe/} o
      o=${owner[$hb]:-}
      if [ -z "$o" ]; then echo "FAIL: $f:$n includes unknown public header $inc"; bad=1; continue; fi
      if [ "$(rank "$o")" -gt "$mr" ]; then
        echo "FAIL: $f:$n ($m) includes $inc of $o, a module above it"; bad=1
      fi
    elif [ "$inc" = mmp_gitsha.h ]; then
      :
    elif [ -e "$(dirname "$f")/$inc" ] || [ -e "$m/$inc" ]; then
      :
    else
      echo "FAIL: $f:$n ($m) includes \"$inc\", not a header of its own module"; bad=1
    fi
  done <"$f"
}
for m in "${order[@]}"; do
  while IFS= read -r f; do check_file "$f" "$m"; done < <(find "$m" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \))
done
# public headers: each includes only headers of its own module or below
for h in include/mmaprobe/*.h; do
  b=$(basename "$h"); o=${owner[$b]:-core}
  check_file "$h" "$o"
done
# core may not even name a function of a module above it
if grep -rnE '\bmmp_(ref|kernel|kernels|registry|runner|cases|suite|suitefile|probe|arith|memory|report|cli)_[a-z_]+\(' core --include='*.c' --include='*.h'; then
  echo "FAIL: core/ calls a function of a module above it (listed above)"; bad=1
fi
# no random-number generator in product code but core's Philox (rng.c, and hd.h: the same
# arithmetic for host and device code)
if grep -rniE '0x9e3779b97f4a7c15|6364136223846793005|splitmix|xorshift|\brand\(\)|\brandom\(\)|drand48' \
     --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
     core reference kernels suites probes reports cli bench include | grep -v "^core/rng.c:\|^include/mmaprobe/hd.h:"; then
  echo "FAIL: a private random-number generator in product code (use mmaprobe/core.h's Philox)"; bad=1
fi
# no work history in product code: comments say what the code does and why, not which session,
# issue, stop or tool call (s15-6) produced it; a newcomer cannot resolve those (git log can)
if grep -rnEi '\bsessions? #?[0-9]+|\b(this|last|previous|next|earlier) session\b|\bissues? #?[0-9]+\b|\bstops? #?[0-9]+\b|\bs[0-9]+-[0-9]+\b' \
     --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' --include='*.cmake' \
     --include='CMakeLists.txt' --include='*.sh' --include='*.py' --include='*.suite' \
     core reference kernels suites probes reports cli include bench; then
  echo "FAIL: work history (session N, issue N, stop N, sN-N) in product code (listed above)"; bad=1
fi
[ $bad = 0 ] && echo "layers: every include of ${order[*]} follows the dependency order; one RNG; no work history"
exit $bad
