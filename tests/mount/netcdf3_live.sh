#!/bin/bash
# netcdf3_live.sh - a netCDF-3 file that grows while mounted: a writer
# (netCDF4-python, libnetcdf) appends records in the background and syncs
# numrecs; the record variables grow without remount and every byte equals
# netCDF4-python's values once the writer is done.  A file whose numrecs is
# STREAMING (-1) counts the records the file size holds, as the format
# specification says, and grows with it.  No fixed waits: polls for the
# condition, bounded by attempts (lib.sh's wait_until).
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
"$PY" -c 'import netCDF4' 2>/dev/null || { echo "SKIP: python3-netcdf4 missing (tests/deps.sh)"; exit 77; }
. "$top_srcdir/tests/lib/python_env.sh"
f="$TMP/live.nc"
mnt="$TMP/m-live"
writer() {   # MODE FILE FIRST COUNT [GO]: records FIRST.. of x(t, 4) and c(t);
             # with GO, the second half only once the file GO exists
    "$PY" - "$@" <<'PYEOF'
import os, sys, time, netCDF4, numpy as np
mode, path, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
go = sys.argv[5] if len(sys.argv) > 5 else None
if mode == "create":
    d = netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET")
    d.createDimension("t", None); d.createDimension("n", 4)
    d.createVariable("x", "f8", ("t", "n")); d.createVariable("c", "S1", ("t",))
    d.createVariable("fixed", "i4", ("n",))[:] = [1, 2, 3, 4]
else:
    d = netCDF4.Dataset(path, "a")
for r in range(first, first + count):
    for _ in range(6000 if go and r == first + count // 2 else 0):
        if os.path.exists(go):        # the test saw the first half
            break
        time.sleep(0.1)
    d["x"][r] = np.arange(4) + 10.0 * r
    d["c"][r] = b"abcdefghij"[r % 10:r % 10 + 1]
    d.sync()                          # numrecs in the header, record by record
d.close()
PYEOF
}
writer create "$f" 0 3
mount_container "$f" "$mnt" || { fail "mount"; finish; }
expect_eq "3 records at mount" 96 "$(stat -c %s "$mnt/x")"
writer append "$f" 3 200 "$TMP/go" &
w=$!
# the writer holds after 100 records until the mount has shown them
wait_until sh -c "[ \"\$(stat -c %s '$mnt/x')\" = $((103 * 32)) ]"
expect_eq "103 records while the writer runs" "103,4" "$(getfattr --absolute-names --only-values -n user.shape "$mnt/x")"
check "a growing variable reads" sh -c "head -c 3296 '$mnt/x' > /dev/null"
touch "$TMP/go"
wait "$w"
check "the writer finished" [ $? = 0 ]
wait_until sh -c "[ \"\$(stat -c %s '$mnt/x')\" = $((203 * 32)) ]"
expect_eq "all 203 records without remount" "203,4" "$(getfattr --absolute-names --only-values -n user.shape "$mnt/x")"
check "every variable as netCDF4-python reads it" pypkg "$top_srcdir/tests/mount/netcdf3_verify.py" "$f" "$mnt"
check ".info follows" grep -q '^numrecs: 203$' "$mnt/.info"

# STREAMING: numrecs -1; the records are those the file holds
s="$TMP/stream.nc"
mnt2="$TMP/m-stream"
writer create "$s" 0 5
"$PY" - "$s" <<'PYEOF'
import sys
with open(sys.argv[1], "r+b") as fh:
    fh.seek(4); fh.write(b"\xff\xff\xff\xff")
PYEOF
mount_container "$s" "$mnt2" || fail "mount STREAMING"
check ".info: STREAMING computed" grep -q '^numrecs: 5 (STREAMING' "$mnt2/.info"
expect_eq "STREAMING: 5 records of x" "5,4" "$(getfattr --absolute-names --only-values -n user.shape "$mnt2/x")"
# another whole record appended by hand (x's 32 bytes, c's 1 padded to 4)
"$PY" - "$s" <<'PYEOF'
import sys, struct
with open(sys.argv[1], "ab") as fh:
    fh.write(struct.pack(">4d", 50, 51, 52, 53) + b"z\0\0\0")
PYEOF
wait_until sh -c "[ \"\$(getfattr --absolute-names --only-values -n user.shape '$mnt2/x')\" = 6,4 ]"
expect_eq "STREAMING: the appended record" "50 51 52 53" \
    "$("$PY" -c "import numpy as np, sys; print(*np.fromfile(sys.argv[1], '<f8')[-4:].astype(int))" "$mnt2/x")"
expect_eq "STREAMING: its char" "abcdez" "$(cat "$mnt2/c")"
finish
