#!/bin/sh
# hdf5_limits.sh - HDF5 at the edges: an element of 72 MiB read in parts with
# bounded memory, a dataset larger than the largest file left out with an
# .info line, a source truncated under the mount (EIO and a log line, never
# zeros), and the daemon's peak memory within what docs/hdf5.md says for
# its options.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_fuse
"$PY" -c 'import h5py' 2>/dev/null || { echo "SKIP: python3-h5py missing"; exit 77; }

G="$TMP/h5"
check "h5py generator" "$PY" "$top_srcdir/tests/hdf5_gen.py" "$G"
check "C API generator" "$top_builddir/tests/hdf5_gen" "$G"
expect() { "$PY" "$top_srcdir/tests/hdf5_verify.py" --expect "$1" "$2"; }
# sanitizer builds use several times the memory: no peak checks there
sanitized() { grep -q __asan_init "$HPCMOUNT"; }
daemon_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$(pgrep -f "hpcmount.* $1\$" | head -1)/status"; }

# one element of 72 MiB (an array type, gzip): whole and in odd pieces; the
# daemon holds a few elements at most
M="$TMP/mnt-bigelem"
mount_container "$G/bigelem.h5" "$M" || fail "mount bigelem.h5"
want=$(expect "$G/bigelem.h5" big)
expect_eq "72 MiB element: sha256 through the mount" "$want" "$(sha "$M/big")"
expect_eq "72 MiB element: read in 100001-byte pieces" "$want" \
    "$(dd if="$M/big" bs=100001 status=none iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
hwm=$(daemon_kb "$M" VmHWM)
sanitized || check "72 MiB element: daemon peak ${hwm} kB < 4 elements + 64 MiB" test "${hwm:-999999999}" -lt $((4 * 73728 + 65536))
unmount_container "$M"
M="$TMP/mnt-bigelem-small"
mount_container "$G/bigelem.h5" "$M" -o h5cache=32M || fail "mount bigelem.h5 -o h5cache=32M"
check "element larger than h5cache: .info says why" grep -q "^/big.*more than h5cache: not served" "$M/.info"
check "element larger than h5cache: an empty file" test "$(stat -c %s "$M/big")" = 0
unmount_container "$M"

# six 16 MiB gzip datasets (four big-endian: libhdf5's chunk caches, two
# decoded by the reader): the peak stays within docs/hdf5.md's
# 2 x cache_size + h5cache + 40 MiB
"$PY" - "$TMP/mem.h5" <<'PY'
import sys, h5py, numpy as np
x = (np.arange(2 << 20, dtype="<f8") % 1000.0).reshape(1024, 2048)
with h5py.File(sys.argv[1], "w") as f:
    for i in range(6):
        f.create_dataset("d%d" % i, data=(x + i).astype(">f8" if i < 4 else "<f8"), chunks=(64, 2048),
                         compression="gzip", compression_opts=1)
PY
M="$TMP/mnt-mem"
mount_container "$TMP/mem.h5" "$M" -o cache_size=8M,h5cache=16M || fail "mount mem.h5"
for i in 0 1 2 3 4 5; do
    expect_eq "memory bound: d$i" "$(expect "$TMP/mem.h5" d$i)" "$(sha "$M/d$i")"
done
hwm=$(daemon_kb "$M" VmHWM)
sanitized || check "cache_size=8M,h5cache=16M: daemon peak ${hwm} kB <= 72 MiB" test "${hwm:-999999999}" -le $((72 * 1024))
unmount_container "$M"

# more bytes than the largest file size: empty, an .info line, the rest fine
M="$TMP/mnt-huge"
mount_container "$G/huge.h5" "$M" || fail "mount huge.h5"
check "huge dataset: stat works" test "$(stat -c %s "$M/huge" 2>&1)" = 0
check "huge dataset: ls shows no ?????" sh -c "ls -l '$M' | grep -q huge && ! ls -l '$M' 2>&1 | grep -q '?'"
check "huge dataset: .info line" grep -q "^warning: /huge: .*larger than the largest file size" "$M/.info"
expect_eq "huge dataset: the others served" "$(expect "$G/huge.h5" small)" "$(sha "$M/small")"
unmount_container "$M"

# truncated under the mount: data read through libhdf5 fail with EIO
cp "$G/big.h5" "$TMP/trunc.h5"
M="$TMP/mnt-trunc"
mount_container "$TMP/trunc.h5" "$M" -o log="$TMP/trunc.log" || fail "mount trunc.h5"
head -c 4096 "$M/be3d" > /dev/null
truncate -s $(($(stat -c %s "$TMP/trunc.h5") / 2)) "$TMP/trunc.h5"
cat "$M/be3d" > "$TMP/trunc.out" 2> "$TMP/trunc.err"; rc=$?
check "truncated source: read fails" test "$rc" -ne 0
check "truncated source: with EIO" grep -q "Input/output error" "$TMP/trunc.err"
check "truncated source: no zero run served" "$PY" -c "
import sys
b = open(sys.argv[1], 'rb').read()
sys.exit(b'\0' * 4096 in b[4096:])" "$TMP/trunc.out"
check "truncated source: one log line names the file" grep -q "trunc.h5 changed since mount" "$TMP/trunc.log"
check "truncated source: still mounted" is_mounted "$M"
unmount_container "$M"

finish
