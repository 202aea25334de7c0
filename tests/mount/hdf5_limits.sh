#!/bin/sh
# hdf5_limits.sh - HDF5 at the edges: an element of 72 MiB read in parts with
# bounded memory, a dataset larger than the largest file left out with an
# .info line, a source truncated under the mount (EIO and a log line, never
# zeros), and the daemon's peak memory within what docs/hdf5.md says for
# its options.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse
"$PY" -c 'import h5py' 2>/dev/null || { echo "SKIP: python3-h5py missing"; exit 77; }

G="$TMP/h5"
mkdir -p "$G"
check "C API generator" "$top_builddir/tests/gen/hdf5_gen" "$G"
# huge.h5: a dataset of more bytes than the largest file; mem.h5: six 16 MiB
# gzip datasets (d0-d3 big-endian: libhdf5's chunk caches, d4, d5 decoded
# by the reader).  Prints h5py's sha256 of each, and of bigelem.h5's element.
"$PY" - "$G" > "$TMP/want" <<'PY'
import hashlib, os, sys, h5py, numpy as np
g = sys.argv[1]
with h5py.File(os.path.join(g, "huge.h5"), "w") as f:
    f.create_dataset("huge", shape=(2**60 + 1,), dtype="<i8", chunks=(4096,))
    f["small"] = np.arange(5, dtype="<i2")
x = (np.arange(2 << 20, dtype="<f8") % 1000.0).reshape(1024, 2048)
with h5py.File(os.path.join(g, "mem.h5"), "w") as f:
    for i in range(6):
        f.create_dataset("d%d" % i, data=(x + i).astype(">f8" if i < 4 else "<f8"), chunks=(64, 2048),
                         compression="gzip", compression_opts=1)
def sha(a, t):
    return hashlib.sha256(np.ascontiguousarray(a).astype(t).tobytes()).hexdigest()
with h5py.File(os.path.join(g, "huge.h5")) as f:
    print("small", sha(f["small"][()], "<i2"))
with h5py.File(os.path.join(g, "mem.h5")) as f:
    for i in range(6):
        print("d%d" % i, sha(f["d%d" % i][()], "<f8"))
with h5py.File(os.path.join(g, "bigelem.h5")) as f:
    print("big", sha(f["big"][()], "<i4"))
PY
want() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/want"; }
# sanitizer builds use several times the memory: no peak checks there
sanitized() { grep -q __asan_init "$HPCMOUNT"; }
daemon_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$(pgrep -f "hpcmount.* $1\$" | head -1)/status"; }

# one element of 72 MiB (an array type, gzip) read in odd pieces; the daemon
# holds a few elements at most
M="$TMP/mnt-bigelem"
mount_container "$G/bigelem.h5" "$M" || fail "mount bigelem.h5"
expect_eq "72 MiB element: read in 100001-byte pieces" "$(want big)" \
    "$(dd if="$M/big" bs=100001 status=none | sha256sum | cut -d' ' -f1)"
hwm=$(daemon_kb "$M" VmHWM)
sanitized || check "72 MiB element: daemon peak ${hwm} kB < 4 elements + 64 MiB" test "${hwm:-999999999}" -lt $((4 * 73728 + 65536))
unmount_container "$M"
M="$TMP/mnt-bigelem-small"
mount_container "$G/bigelem.h5" "$M" -o h5cache=32M || fail "mount bigelem.h5 -o h5cache=32M"
check "element larger than h5cache: .info says why" grep -q "^/big.*more than h5cache: not served" "$M/.info"
check "element larger than h5cache: an empty file" test "$(stat -c %s "$M/big")" = 0
unmount_container "$M"

# the peak stays within docs/hdf5.md's 2 x cache_size + h5cache + 40 MiB
M="$TMP/mnt-mem"
mount_container "$G/mem.h5" "$M" -o cache_size=8M,h5cache=16M || fail "mount mem.h5"
for i in 0 1 2 3 4 5; do
    expect_eq "memory bound: d$i" "$(want d$i)" "$(sha "$M/d$i")"
done
hwm=$(daemon_kb "$M" VmHWM)
sanitized || check "cache_size=8M,h5cache=16M: daemon peak ${hwm} kB <= 72 MiB" test "${hwm:-999999999}" -le $((72 * 1024))
unmount_container "$M"

# more bytes than the largest file size: no file (left out of the listing,
# lookup ENOENT), an .info line saying why, the rest fine
M="$TMP/mnt-huge"
mount_container "$G/huge.h5" "$M" || fail "mount huge.h5"
expect_eq "huge dataset: left out of the listing" "small" "$(ls "$M")"
check "huge dataset: lookup fails with ENOENT" sh -c "stat '$M/huge' 2>&1 | grep -q 'No such file'"
check "huge dataset: .info line" grep -q "^warning: /huge: more bytes than the largest file size (2^63 - 1): left out" "$M/.info"
expect_eq "huge dataset: hpcdump ls leaves it out too" ".info small" "$("$HPCDUMP" ls "$G/huge.h5" | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "huge dataset: the others served" "$(want small)" "$(sha "$M/small")"
unmount_container "$M"

# truncated under the mount: data read through libhdf5 (big-endian chunks)
# fail with EIO
cp "$G/mem.h5" "$TMP/trunc.h5"
M="$TMP/mnt-trunc"
mount_container "$TMP/trunc.h5" "$M" -o log="$TMP/trunc.log" || fail "mount trunc.h5"
head -c 4096 "$M/d1" > /dev/null
truncate -s $(($(stat -c %s "$TMP/trunc.h5") / 2)) "$TMP/trunc.h5"
cat "$M/d1" > "$TMP/trunc.out" 2> "$TMP/trunc.err"; rc=$?
check "truncated source: read fails" test "$rc" -ne 0
check "truncated source: with EIO" grep -q "Input/output error" "$TMP/trunc.err"
check "truncated source: no zero run served" "$PY" -c "
import sys
b = open(sys.argv[1], 'rb').read()
sys.exit(b'\\0' * 4096 in b[4096:])" "$TMP/trunc.out"
check "truncated source: one log line names the file" \
    test "$(grep -c "trunc.h5 changed since mount" "$TMP/trunc.log")" -eq 1
check "truncated source: still mounted" is_mounted "$M"
unmount_container "$M"

finish
