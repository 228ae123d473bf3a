#!/usr/bin/env bash
# ./run.sh [mmaprobe arguments]  — the main job. Installs what is missing, builds, then runs
# mmaprobe; with no arguments: validate the smoke suite over every kernel this machine can run,
# write reports/out/run.json and print the table. Exit codes are mmaprobe's (README).
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
"$root/scripts/deps.sh"
"$root/scripts/build.sh" build >/dev/null
if [ $# -eq 0 ]; then
  mkdir -p "$root/reports/out"
  set -- validate --suite smoke -o "$root/reports/out/run.json"
fi
exec "$root/build/mmaprobe" "$@"
