# scripts/device/lib.sh — sourced by every scripts/device/NN-*.sh: steps fail loudly.
#   mmp_need FILE           the script cannot run without FILE (exit 1, said in the summary)
#   mmp_expect LABEL RC OK  RC is the exit status of step LABEL; OK lists the statuses that are
#                           a success ("0", "0 1" for mutants that must fail, ...). Any other
#                           status is a FAILED line in the output and in $OUT/<script>.fail
#   mmp_finish              exit 1 when any step failed, else 0 (run-all.sh's summary shows it)
#   mmp_left                seconds left of the script's budget ($MMP_SCRIPT_BUDGET, from when
#                           lib.sh was sourced), 5 kept for the end
#   mmp_bench DIR NAME LIMIT PATTERN CMD...   CMD into DIR/NAME.txt within LIMIT seconds and what
#                           is left (skipped when under 10 s are), exit 0 expected; its lines
#                           matching PATTERN (grep -E) printed and added to DIR/summary.txt
MMP_FAILED=0
MMP_T0=$(date +%s)
MMP_SCRIPT=$(basename "${BASH_SOURCE[1]:-$0}" .sh)
mmp_failed_line() {
  echo "FAILED: $MMP_SCRIPT: $*"
  echo "$*" >>"${OUT:-out}/$MMP_SCRIPT.fail"
  MMP_FAILED=$((MMP_FAILED + 1))
}
mmp_need() {
  [ -e "$1" ] && return 0
  mmp_failed_line "$1 missing: build first (bash scripts/device-build.sh)"
  exit 1
}
mmp_expect() {   # label rc ok-statuses...
  local label=$1 rc=$2 ok
  shift 2
  for ok in "$@"; do [ "$rc" = "$ok" ] && return 0; done
  mmp_failed_line "$label: exit $rc (expected $*)"
  return 1
}
mmp_finish() {
  if [ "$MMP_FAILED" -gt 0 ]; then
    echo "$MMP_SCRIPT: $MMP_FAILED step(s) FAILED"
    exit 1
  fi
  exit 0
}
mmp_left() { echo $(( ${MMP_SCRIPT_BUDGET:-90} - ($(date +%s) - MMP_T0) - 5 )); }
mmp_bench() {   # dir name limit pattern cmd...
  local dir=$1 name=$2 limit=$3 pattern=$4 l rc
  shift 4
  l=$(mmp_left)
  if [ "$l" -lt 10 ]; then echo "$MMP_SCRIPT: $name skipped: budget spent"; return; fi
  [ "$limit" -gt "$l" ] && limit=$l
  timeout "$limit" "$@" > "$dir/$name.txt" 2>&1
  rc=$?
  echo "$MMP_SCRIPT: $name rc=$rc"
  mmp_expect "$name (see $dir/$name.txt)" $rc 0
  grep -E "$pattern" "$dir/$name.txt" | tee -a "$dir/summary.txt"
}
