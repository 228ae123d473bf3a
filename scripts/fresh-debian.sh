#!/usr/bin/env bash
# scripts/fresh-debian.sh [SUITE] [PACKAGES...] — the README's test command on a fresh Debian
# whatever BLAS is preinstalled: a minimal Debian SUITE (default bookworm) made by debootstrap
# in a chroot, PACKAGES installed first (default: libblas-dev, the netlib reference BLAS and
# CBLAS, which provides a cblas.h that is not OpenBLAS), then a clean clone of this repository's
# HEAD and `./test.sh` run in it as a new user would (it must install what it is missing).
#
#   sudo bash scripts/fresh-debian.sh                       # bookworm + libblas-dev
#   sudo bash scripts/fresh-debian.sh bookworm libblas-dev libatlas-base-dev
#
# Needs root, debootstrap and the network to Debian's mirror; about 5 minutes to make the root
# (kept in $MMP_FRESH_ROOT, default /tmp/mmp-fresh-SUITE, and reused when it exists), then the
# build and tests (host only: no CUDA in the chroot). Prints the BLAS found and the test summary;
# exits with ./test.sh's status.
set -euo pipefail
suite=${1:-bookworm}; shift || true
pkgs=("$@"); [ ${#pkgs[@]} -gt 0 ] || pkgs=(libblas-dev)
root=$(cd "$(dirname "$0")/.." && pwd)
fresh=${MMP_FRESH_ROOT:-/tmp/mmp-fresh-$suite}
command -v debootstrap >/dev/null || { echo "fresh-debian: needs debootstrap (apt-get install debootstrap)" >&2; exit 3; }
if [ ! -x "$fresh/usr/bin/apt-get" ]; then
  debootstrap --variant=minbase "$suite" "$fresh" http://deb.debian.org/debian >"$fresh.log" 2>&1 ||
    { echo "fresh-debian: debootstrap failed (see $fresh.log)" >&2; exit 3; }
fi
cp /etc/resolv.conf "$fresh/etc/resolv.conf" 2>/dev/null || true
for m in proc sys dev; do mountpoint -q "$fresh/$m" || mount --bind "/$m" "$fresh/$m"; done
cleanup() { for m in dev sys proc; do umount -l "$fresh/$m" 2>/dev/null || true; done; }
trap cleanup EXIT
rm -rf "$fresh/src"
git clone -q "$root" "$fresh/src"
echo "fresh-debian: $suite, preinstalled: ${pkgs[*]}, commit $(git -C "$fresh/src" rev-parse --short HEAD)"
chroot "$fresh" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive \
  bash -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${pkgs[*]} >/dev/null &&
           echo 'fresh-debian: CBLAS headers before test.sh:' \$(find /usr/include -name 'cblas*.h') &&
           cd /src && ./test.sh"
