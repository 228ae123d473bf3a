#!/usr/bin/env bash
# bench/bench_kernels.sh [BUILD_DIR] [OUT_DIR] [bench_kernels args...] — the kernel timing tables
# (time, throughput, speedup, fraction of cuBLAS; bench/bench_kernels.c) with the SASS column.
#   1. cuobjdump -sass BUILD_DIR/mmaprobe, summarised per kernel function: the tensor opcodes it
#      really runs (HMMA / IMMA / HGMMA / QGMMA / QMMA / IGMMA, IDP for DP4A) with counts, "none"
#      without any, and FP8 -> FP16 conversions (F2FP ... E4M3/E5M2) flagged as an emulation
#      -> OUT_DIR/sass_summary.tsv ("demangled function<TAB>ops"), OUT_DIR/sass_all.txt.
#   2. BUILD_DIR/bench_kernels over every registered device kernel at N = 512 ... 8192
#      -> OUT_DIR/kernels.md (Markdown tables), OUT_DIR/bench.log.
# Default OUT_DIR: reports/bench. Needs a GPU for step 2 (exit 77 without one); fails soft.
set -u
B=${1:-build-h200}
out=${2:-reports/bench}
shift 2 2>/dev/null || shift $#
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin

sass_args=()
sass_of=$B/mmaprobe
[ -f "$B/libmmp.so" ] && sass_of=$B/libmmp.so   # the shared device build keeps the kernels there
if command -v cuobjdump >/dev/null && [ -e "$sass_of" ]; then
    cuobjdump -sass "$sass_of" > "$out/sass_all.txt" 2>&1 || echo "bench_kernels.sh: cuobjdump failed"
    awk '/Function : / { fn = $3; seen[fn] = 1; next }
         fn != "" {
             if (match($0, /(HMMA|IMMA|HGMMA|QGMMA|QMMA|IGMMA|BGMMA|DMMA|OMMA|IDP)[.A-Z0-9_]*/))
                 n[fn SUBSEP substr($0, RSTART, RLENGTH)]++
             if (match($0, /F2FP[.A-Z0-9_]*(E4M3|E5M2)[.A-Z0-9_]*/) && substr($0, RSTART, RLENGTH) !~ /^F2FP[.A-Z0-9_]*(E4M3|E5M2)[.]F/) conv[fn]++
         }
         END {
             for (f in seen) {
                 s = ""
                 for (k in n) { split(k, p, SUBSEP); if (p[1] == f) s = s (s == "" ? "" : " ") p[2] " x" n[k] }
                 if (s == "") s = "none"
                 if (conv[f] && s ~ /HMMA/) s = s " + FP8->FP16 F2FP x" conv[f] " (FP8 emulated)"
                 print f "\t" s
             }
         }' "$out/sass_all.txt" | sort > "$out/sass_mangled.tsv"
    demangle=cat
    command -v cu++filt >/dev/null && demangle=cu++filt
    [ "$demangle" = cat ] && command -v c++filt >/dev/null && demangle=c++filt
    paste <(cut -f1 "$out/sass_mangled.tsv" | $demangle) <(cut -f2 "$out/sass_mangled.tsv") > "$out/sass_summary.tsv"
    echo "bench_kernels.sh: SASS summary of $(wc -l < "$out/sass_summary.tsv") functions -> $out/sass_summary.tsv"
    sass_args=(--sass "$out/sass_summary.tsv")
    gzip -f "$out/sass_all.txt"
else
    echo "bench_kernels.sh: no cuobjdump or no $B/mmaprobe: the SASS column will read '?'"
fi

if [ ! -x "$B/bench_kernels" ]; then echo "bench_kernels.sh: $B/bench_kernels missing: build first"; exit 0; fi
start=$(date +%s)
timeout 560 "$B/bench_kernels" "${sass_args[@]}" --out "$out/kernels.md" "$@" 2> "$out/bench.log"
rc=$?
echo "bench_kernels.sh: bench_kernels exit $rc in $(( $(date +%s) - start )) s -> $out/kernels.md (log $out/bench.log)"
# kernels whose device function is a template instance named through a row table (the integer
# and wgmma families) read "?" above: scripts/sass-column.py maps them and fills those cells
if [ -f "$out/kernels.md" ] && [ -f "${MMP_SASS_SUMMARY:-}" ] && command -v python3 >/dev/null; then
    python3 "$(dirname "$0")/../scripts/sass-column.py" "$MMP_SASS_SUMMARY" "$out/kernels.md" --fill > "$out/kernels.filled.md" &&
        mv "$out/kernels.filled.md" "$out/kernels.md" && echo "bench_kernels.sh: SASS cells filled from $MMP_SASS_SUMMARY"
fi
exit $rc
