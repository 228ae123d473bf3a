#!/usr/bin/env bash
# render-screenshot.sh — render an mmaprobe HTML report in headless Chromium and save a PNG.
#   scripts/render-screenshot.sh REPORT.html OUT.png [WIDTHxHEIGHT]     (default 1400x2400)
# Needs Debian's chromium (apt-get install -y chromium). No network: the report is self-contained,
# and background networking, QUIC, component updates and sync are switched off.
set -euo pipefail
if [ $# -lt 2 ]; then echo "usage: $0 REPORT.html OUT.png [WIDTHxHEIGHT]" >&2; exit 2; fi
html=$(readlink -f "$1"); out=$(readlink -f "$(dirname "$2")")/$(basename "$2"); size=${3:-1400x2400}
[ -r "$html" ] || { echo "render-screenshot: cannot read $1" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "render-screenshot: chromium not found (apt-get install -y chromium)" >&2; exit 3; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --screenshot="$out" --window-size="${size/x/,}" \
  "file://$html" >/dev/null 2>&1 || true
[ -s "$out" ] || { echo "render-screenshot: chromium wrote no screenshot" >&2; exit 4; }
echo "render-screenshot: $out"
