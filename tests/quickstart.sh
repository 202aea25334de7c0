#!/bin/sh
# tests/quickstart.sh - install what is needed, build hpcmount, mount the
# bundled SIONlib example (4 MPI tasks' streams in one file) and show it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tests/deps.sh"
cd "$top"
[ -x configure ] || autoreconf -fi >/dev/null
mkdir -p build && cd build
[ -f Makefile ] || ../configure >/dev/null
make -j"$(nproc)" >/dev/null
mnt=$(mktemp -d /tmp/hpcmount-demo.XXXXXX)
./fuse/hpcmount "$top/tests/data/a_4tasks.sion" "$mnt"
trap 'fusermount3 -u "$mnt"; rmdir "$mnt"' EXIT
echo "\$ hpcmount tests/data/a_4tasks.sion $mnt"
echo "\$ ls -la $mnt"; ls -la "$mnt"
echo "\$ head -12 $mnt/.info"; head -12 "$mnt/.info"
echo "\$ head -c 130 $mnt/rank-000001"; head -c 130 "$mnt/rank-000001"; echo
echo "\$ sha256sum $mnt/rank-*"; sha256sum "$mnt"/rank-*
echo "(the same without FUSE: build/dump/hpcdump ls|cat|info|xattr|extract SOURCE [PATH])"
