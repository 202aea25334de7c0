#!/bin/bash
# readahead.sh - the daemon's read-ahead of source extents, through a real
# mount: behind a sequential reader the daemon reads the source far ahead
# of it from the disk, with -o ra_max_kb=0 it does not, random reads of one
# open file never trigger it (until it reads on in order), and the bytes
# read are the container's; a mount whose reading thread polls for
# requests (-o spin_us) serves the same bytes.
#
# The window is set to 64 MiB from the first read (ra_min_kb = ra_max_kb).
# What the daemon read ahead is measured by the bytes it read from the disk
# (/proc/PID/io read_bytes, the read-ahead threads' reads included) after
# the source's pages were dropped: a 1 MiB read with the window reads >= 40
# MiB, one without it a few MiB (the mount's read-ahead of 1 MiB, the
# kernel's own read-ahead of the source file).  Not the page cache: pages
# read ahead and not yet touched may be reclaimed within seconds on
# machines that page out idle memory proactively (DAMON), busy or not.
# The source pages 40-64 MiB into the rank must still be absent where no
# read-ahead is expected.  Nothing depends on timing: the read-ahead
# threads are waited for, with a long limit.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse

MiB=$((1 << 20))
src="$TMP/ra.sion"
"$PY" "$top_srcdir/tests/gen/sion_gen.py" "$src" --ntasks 1 --length $((96 * MiB)) \
    --chunksize $((96 * MiB)) --fsblksize 65536 > "$TMP/ra.exp" || { fail "generate"; finish; }
sync "$src"
want=$(awk '{print $3}' "$TMP/ra.exp")
start=$("$HPCDUMP" info "$src" | sed -n 's/.* start_of_data \([0-9]*\) .*/\1/p')
check "rank data start known" test -n "$start"

# resident SRC FROM TO: percent of the pages of SRC in [FROM, TO) that are
# in the page cache (mmap + mincore)
resident() {
    "$PY" - "$@" <<'PYEOF'
import ctypes, mmap, os, sys
path, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
page = mmap.PAGESIZE
lo -= lo % page
n = (hi - lo + page - 1) // page
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
fd = os.open(path, os.O_RDONLY)
addr = libc.mmap(None, n * page, mmap.PROT_READ, mmap.MAP_SHARED, fd, lo)
vec = (ctypes.c_ubyte * n)()
if addr in (None, ctypes.c_void_p(-1).value) or \
        libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(n * page), vec) != 0:
    sys.exit("mmap/mincore: " + os.strerror(ctypes.get_errno()))
print(100 * sum(v & 1 for v in vec) // n)
PYEOF
}

# daemon_read MNT: MiB the daemon of mount MNT has read from the disk
daemon_read() {
    local pid
    pid=$(pgrep -f "hpcmount .* $1\$" | head -n 1)
    [ -n "$pid" ] && awk '/^read_bytes:/ { print int($2 / 1048576) }' "/proc/$pid/io"
}
# read_ahead MNT BEFORE: has the daemon read at least 40 MiB since BEFORE?
read_ahead() { [ "$(daemon_read "$1")" -ge $(($2 + 40)) ]; }

# pread_direct FILE COPY OFFSET...: 4 KiB O_DIRECT reads of one open FILE
# (each one a request of its own), compared with the same bytes of COPY;
# prints the number of differences
pread_direct() {
    "$PY" - "$@" <<'PYEOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
ref = open(sys.argv[2], "rb")
buf = mmap.mmap(-1, 4096)          # page-aligned, as O_DIRECT wants
bad = 0
for off in map(int, sys.argv[3:]):
    n = os.preadv(fd, [buf], off)
    ref.seek(off)
    bad += n != 4096 or buf[:n] != ref.read(4096)
print(bad)
PYEOF
}

# drop the source's pages (fadvise DONTNEED)
drop_source() { dd if="$src" iflag=nocache count=0 2>/dev/null; }
far_lo=$((start + 40 * MiB)); far_hi=$((start + 64 * MiB))
WIN="ra_min_kb=65536,ra_max_kb=65536"

# --- sequential: the source ahead of the stream is read ---------------------
mnt="$TMP/on"; mount_container "$src" "$mnt" -o $WIN || { fail "mount"; finish; }
drop_source
expect_eq "source dropped" 0 "$(resident "$src" $far_lo $far_hi)"
before=$(daemon_read "$mnt")
check "the daemon's disk reads are known" test -n "$before"
dd if="$mnt/rank-000000" of=/dev/null bs=1M count=1 2>/dev/null
wait_until read_ahead "$mnt" "$before"
check "sequential: the daemon read 40 MiB or more ahead ($((
    $(daemon_read "$mnt") - before)) MiB)" read_ahead "$mnt" "$before"
expect_eq "sequential: bytes" "$want" "$(sha "$mnt/rank-000000")"
unmount_container "$mnt"

# --- the same with -o ra_max_kb=0: nothing ahead ----------------------------
mnt="$TMP/off"; mount_container "$src" "$mnt" -o $WIN,ra_max_kb=0 || fail "mount ra_max_kb=0"
drop_source
before=$(daemon_read "$mnt")
dd if="$mnt/rank-000000" of=/dev/null bs=1M count=1 2>/dev/null
got=$(($(daemon_read "$mnt") - before))
check "ra_max_kb=0: the daemon read a few MiB ($got MiB)" test "$got" -lt 24
got=$(resident "$src" $far_lo $far_hi)
check "ra_max_kb=0: the source 40-64 MiB ahead is not read ($got%)" test "$got" -le 10
expect_eq "ra_max_kb=0: bytes" "$want" "$(sha "$mnt/rank-000000")"
unmount_container "$mnt"

# --- random reads: never sequential, never read ahead ----------------------
# 4 KiB reads at scattered offsets of the first 40 MiB, in one open file;
# one that triggered would advise up to 64 MiB past it.
"$HPCDUMP" cat "$src" /rank-000000 > "$TMP/rank0"
mnt="$TMP/rand"; mount_container "$src" "$mnt" -o $WIN || fail "mount (random)"
drop_source
offs=""
for k in 2001 517 8190 33 4444 9000 1234 7777 3100 6000 250 5432 9001 4000; do
    offs="$offs $((k * 4096))"
done
before=$(daemon_read "$mnt")
expect_eq "random: bytes" 0 "$(pread_direct "$mnt/rank-000000" "$TMP/rank0" $offs)"
got=$(($(daemon_read "$mnt") - before))
check "random: the daemon read a few MiB ($got MiB)" test "$got" -lt 24
got=$(resident "$src" $far_lo $far_hi)
check "random: nothing read ahead ($got%)" test "$got" -le 10
# ... until the same open file reads on in order from 2 MiB
offs="$offs $((2 * MiB)) $((2 * MiB + 4096)) $((2 * MiB + 8192))"
before=$(daemon_read "$mnt")
expect_eq "random, then sequential: bytes" 0 "$(pread_direct "$mnt/rank-000000" "$TMP/rank0" $offs)"
wait_until read_ahead "$mnt" "$before"
check "random, then sequential: the daemon read 40 MiB or more ahead ($((
    $(daemon_read "$mnt") - before)) MiB)" read_ahead "$mnt" "$before"
unmount_container "$mnt"

# --- -o spin_us: the thread polling for requests serves the same bytes -----
mnt="$TMP/spin"; mount_container "$src" "$mnt" -o spin_us=200 || fail "mount spin_us=200"
expect_eq "spin_us=200: 4 KiB O_DIRECT reads" 0 "$(pread_direct "$mnt/rank-000000" "$TMP/rank0" $offs)"
expect_eq "spin_us=200: bytes" "$want" "$(sha "$mnt/rank-000000")"
unmount_container "$mnt"

finish
