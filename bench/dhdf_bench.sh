#!/bin/sh
# dhdf_bench.sh BUILDDIR [WORKDIR] - short benchmark of the distributed HDF
# reader: a 64 MiB float32 array (4096x4096) in 16 pieces over 8 AHFs,
# written by tests/gen/dhdf_gen; measures hpcdump cat (no FUSE), a sequential
# read through the mount (cold: fresh mount; warm: again, served from the
# kernel page cache / block cache) and 2000 random 4 KiB reads; references:
# libhdf4 alone reading every piece whole (bench/dhdf_ref.c) and dd of a
# plain 64 MiB file holding the same bytes.
# not needed: hpcdump extract of the pieces directory gives it).
set -eu
B=$(cd "$1" && pwd); W=${2:-/tmp/dhdf_bench}
PY=/usr/bin/python3
rm -rf "$W"; mkdir -p "$W/m"
"$B/tests/gen/dhdf_gen" "$W/set" big >/dev/null
t() { /usr/bin/time -f "%e" "$@" 2>&1 >/dev/null | tail -1; }
mb=64
here=$(cd "$(dirname "$0")" && pwd)
gcc -O2 -I/usr/include/hdf "$here/dhdf_ref.c" -o "$W/dhdf_ref" -lmfhdf -ldf
set -- $("$W/dhdf_ref" "$W"/set/ahf*.hdf)
echo "reference: libhdf4 SDreaddata of the 16 whole pieces ($(($1 / 1048576)) MiB): ${2}s  $($PY -c "print(round($mb/max($2,0.001)))") MiB/s"
s=$(t dd if="$W/set/field.expect" of=/dev/null bs=1M)
echo "reference: dd bs=1M of a plain 64 MiB file (page cache): ${s}s"

s=$(t sh -c "'$B/dump/hpcdump' cat '$W/set/main.hdf' field > /dev/null")
echo "hpcdump cat field (64 MiB, assembled): ${s}s  $($PY -c "print(round($mb/max($s,0.001)))") MiB/s"
s=$(t sh -c "'$B/dump/hpcdump' extract '$W/set/main.hdf' '$W/x'")
echo "hpcdump extract (array + 16 pieces, 128 MiB): ${s}s"
trap 'fusermount3 -u "$W/m" 2>/dev/null || true' EXIT
# mount time: with the library in the helper (the default) and in process
s=$(t "$B/fuse/hpcmount" "$W/set/main.hdf" "$W/m"); fusermount3 -u "$W/m"
s0=$(t "$B/fuse/hpcmount" -o open_timeout=0 "$W/set/main.hdf" "$W/m"); fusermount3 -u "$W/m"
echo "mount (open + check of 9 files): ${s}s with the helper, ${s0}s in process (-o open_timeout=0)"
# cold sequential reads of a fresh mount against libhdf4 reading the
# pieces, interleaved three times (the machine may be shared)
for i in 1 2 3; do
    set -- $("$W/dhdf_ref" "$W"/set/ahf*.hdf)
    "$B/fuse/hpcmount" "$W/set/main.hdf" "$W/m"
    s=$(t dd if="$W/m/field" of=/dev/null bs=1M)
    echo "run $i: libhdf4 reading the 16 pieces ${2}s; fresh mount, dd bs=1M of the assembled array ${s}s: $($PY -c "print('%.2fx' % ($2/max($s,0.001)))") libhdf4's speed"
    [ "$i" = 3 ] || fusermount3 -u "$W/m"
done
s=$(t dd if="$W/m/field" of=/dev/null bs=1M)
echo "mount, sequential dd bs=1M, warm: ${s}s  $($PY -c "print(round($mb/max($s,0.001)))") MiB/s"
fusermount3 -u "$W/m"; "$B/fuse/hpcmount" "$W/set/main.hdf" "$W/m"
$PY - "$W/m/field" <<'PYEOF'
import os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY); size = os.fstat(fd).st_size
r = random.Random(1); t0 = time.time()
for _ in range(2000):
    os.pread(fd, 4096, r.randrange(0, size - 4096) & ~4095)
dt = time.time() - t0
print("mount, 2000 random 4 KiB reads, cold: %.2fs  %.0f reads/s" % (dt, 2000 / dt))
PYEOF
