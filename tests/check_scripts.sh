#!/usr/bin/env bash
# tests/check_scripts.sh ROOT — the device scripts parse, and every one that reports through
# scripts/device/lib.sh (mmp_need, mmp_expect, mmp_failed_line, mmp_finish) sources it, so a
# failing GPU step cannot read as a passing one.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
bad=0
for f in "$root"/scripts/device/*.sh "$root"/scripts/*.sh; do
  bash -n "$f" || { echo "FAIL: $f does not parse"; bad=1; }
  case $f in */lib.sh) continue ;; esac
  if grep -qE '\bmmp_(need|expect|failed_line|finish)\b' "$f" && ! grep -qE '^\. "\$\(dirname "\$0"\)/lib.sh"' "$f"; then
    echo "FAIL: $f uses scripts/device/lib.sh without sourcing it"; bad=1
  fi
  if [[ $f == */scripts/device/[0-9][0-9]-*.sh ]] && grep -qE '^exit 0$' "$f"; then
    echo "FAIL: $f ends a path with an unconditional 'exit 0'"; bad=1
  fi
done
[ $bad = 0 ] && echo "scripts: every device script parses and reports its failures"
exit $bad
