#!/usr/bin/env bash
# scripts/device/26-interrupt.sh — how promptly an interrupted run stops: `validate --suite
# full` over every device kernel (a run of minutes) gets SIGTERM (then, in a second run, SIGINT)
# 10 s in, while a case is in flight (one kernel's 35 cases finish in seconds); the time from the signal until the process has exited and the partial
# run document (complete: false) is on disk is printed (the aim: within 2 s). Writes
# $OUT/interrupt/.
# budget-seconds: 75
set -u
. "$(dirname "$0")/lib.sh"
out=${OUT:-out}/interrupt
mkdir -p "$out"
mmp_need build-h200/mmaprobe
for sig in TERM INT; do
    doc=$out/partial-$sig.json
    build-h200/mmaprobe validate --suite full --filter '*,!host_*' --seed 7 -o "$doc" \
        > "$out/validate-$sig.txt" 2>&1 &
    pid=$!
    sleep 10
    t0=$(date +%s.%N)
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    t1=$(date +%s.%N)
    complete=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("complete"), len(d.get("cases", [])))' "$doc" 2>&1)
    echo "26-interrupt: SIG$sig: exit $rc, $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s from the signal to exit; document: complete, cases = $complete" | tee -a "$out/summary.txt"
    case "$complete" in False*) ;; *) mmp_failed_line "SIG$sig: the partial document is not complete: false ($complete)";; esac
done
mmp_finish
