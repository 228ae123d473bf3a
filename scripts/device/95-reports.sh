#!/usr/bin/env bash
# scripts/device/95-reports.sh — reports from the H200 run: render every run document found
# under $OUT in all four formats, validate the JUnit against reports/schema/junit-10.xsd, and check
# shard + merge on real data (validate --shard 0/2 and 1/2, merge, diff against the unsharded run:
# must show no regression). Run from the repo root with the build in build-h200/; writes under
# $OUT/reports/. Fails soft: prints what failed and continues.
# budget-seconds: 90
set -u
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-out}
dir="$OUT/reports"
mkdir -p "$dir"
B=build-h200
M="$B/mmaprobe"
note() { echo "95-reports: $*" | tee -a "$dir/summary.txt"; }
mmp_need "$M"

# 1. our own small run, unsharded and in two shards, then merge and diff
if timeout 240 "$M" validate --suite smoke -o "$dir/run.json" > "$dir/validate.txt" 2>&1; then rc=0; else rc=$?; fi
note "validate --suite smoke: exit $rc (see $dir/validate.txt)"
mmp_expect "validate --suite smoke" $rc 0
for i in 0 1; do
    timeout 240 "$M" validate --suite smoke --device 0 --shard "$i/2" -o "$dir/shard-$i.json" \
        > "$dir/validate-shard-$i.txt" 2>&1
    rc=$?
    note "validate --shard $i/2: exit $rc"
    mmp_expect "validate --shard $i/2" $rc 0
done
if [ -f "$dir/shard-0.json" ] && [ -f "$dir/shard-1.json" ]; then
    "$M" merge "$dir/shard-0.json" "$dir/shard-1.json" -o "$dir/merged.json" 2> "$dir/merge.txt"
    rc=$?
    mmp_expect merge $rc 0
    note "merge shards: exit $rc ($(cat "$dir/merge.txt"))"
    if [ -f "$dir/run.json" ] && [ -f "$dir/merged.json" ]; then
        "$M" diff "$dir/run.json" "$dir/merged.json" --max-ratio-growth 1 > "$dir/diff-shards.txt" 2>&1
        rc=$?
        mmp_expect "diff unsharded vs merged" $rc 0
        note "diff unsharded vs merged shards (growth 1: identical results expected): exit $rc"
    fi
fi

# 2. render every run document under $OUT
find "$OUT" -name '*.json' -size -200M 2>/dev/null | while read -r f; do
    head -c 200 "$f" | grep -q '"mmaprobe-run"' || continue
    base="$dir/rendered/$(echo "${f#"$OUT"/}" | tr '/' '_')"
    base="${base%.json}"
    mkdir -p "$dir/rendered"
    for fmt in text md junit html; do
        ext=$fmt; [ "$fmt" = junit ] && ext=xml; [ "$fmt" = text ] && ext=txt
        "$M" report "$f" --format "$fmt" -o "$base.$ext" 2>> "$dir/render-errors.txt" \
            || mmp_failed_line "report $f --format $fmt (see $dir/render-errors.txt)"
    done
    if command -v xmllint >/dev/null && [ -f "$base.xml" ]; then
        xmllint --noout --schema reports/schema/junit-10.xsd "$base.xml" 2>> "$dir/render-errors.txt" \
            && note "junit of $f validates" || mmp_failed_line "junit of $f does NOT validate"
    fi
    note "rendered $f -> $base.{txt,md,xml,html}"
done
mmp_finish
