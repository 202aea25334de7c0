#!/bin/bash
# netcdf3_mount.sh - netCDF-3 files written by libnetcdf (tests/gen/netcdf3_gen.py:
# CDF-1, CDF-2 and CDF-5, every type, fixed, scalar and record variables,
# one and several record variables, no records, fill values, a large
# header) mounted and compared value by value with netCDF4-python through
# the mount, hpcdump extract and the Python package's c.array()
# (tests/mount/netcdf3_verify.py); damaged headers refused with one line
# naming the field (libnetcdf refuses them too); bytes gone after the mount
# read as EIO while the daemon stays up.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
"$PY" -c 'import netCDF4, numpy' 2>/dev/null ||
    { echo "SKIP: python3-netcdf4 missing (tests/deps.sh)"; exit 77; }
. "$top_srcdir/tests/lib/python_env.sh"

G="$TMP/gen"
check "libnetcdf writes the files" "$PY" "$top_srcdir/tests/gen/netcdf3_gen.py" "$G"
n=0
for f in "$G"/*.nc; do
    b=$(basename "$f" .nc); mnt="$TMP/m-$b"
    n=$((n + 1))
    mount_container "$f" "$mnt" || { fail "$b: mount"; continue; }
    "$HPCDUMP" extract "$f" "$TMP/x-$b" > "$TMP/x-$b.err" 2>&1 || fail "$b: hpcdump extract: $(head -1 "$TMP/x-$b.err")"
    check "$b: mount, hpcdump and c.array() equal netCDF4-python" \
        pypkg "$top_srcdir/tests/mount/netcdf3_verify.py" "$f" "$mnt" "$TMP/x-$b"
    unmount_container "$mnt"
done
expect_eq "files written and checked" 15 "$n"
check "--version lists netcdf3" sh -c "'$HPCDUMP' --version | grep -q '^formats:.* netcdf3'"

# refused: what libnetcdf refuses, with one line naming the field, exit 1
refused() {   # NAME FILE FIELD
    local out rc=0
    out=$("$HPCMOUNT" "$2" "$TMP/never" 2>&1) || rc=$?
    expect_eq "$1: hpcmount exits 1" 1 "$rc"
    expect_eq "$1: one line" 1 "$(printf '%s\n' "$out" | wc -l)"
    case $out in *"field $3 at offset"*) pass "$1: names $3";; *) fail "$1: $out";; esac
    rc=0; "$HPCDUMP" info "$2" > /dev/null 2> "$TMP/err" || rc=$?
    expect_eq "$1: hpcdump exits 1 with one line" "1 1" "$rc $(wc -l < "$TMP/err")"
    [ -n "${4:-}" ] || return 0
    # libnetcdf refuses it (or crashes on it: a huge dimension count)
    check "$1: libnetcdf does not open it either" sh -c "! '$PY' -c '
import netCDF4, sys
netCDF4.Dataset(sys.argv[1]).close()' '$2' 2>/dev/null"
}
mkdir -p "$TMP/never"
src="$G/types_classic.nc"
head -c 100 "$src" > "$TMP/cut_header.nc"
refused "header cut at 100 bytes" "$TMP/cut_header.nc" att_list oracle
size=$(stat -c %s "$src")
head -c $((size - 1)) "$src" > "$TMP/cut_data.nc"
# libnetcdf reads the missing byte as 0; hpcmount invents no byte
refused "last record cut by one byte" "$TMP/cut_data.nc" numrecs
"$PY" - "$src" "$TMP/count.nc" <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into(">I", d, 12, 0x7fffffff)          # dim_list's nelems
open(sys.argv[2], "wb").write(d)
EOF
refused "dimension count past the end" "$TMP/count.nc" dim_list oracle

# read time: bytes truncated away after the mount (and never read before)
# are EIO, the daemon lives
"$PY" - "$TMP/shrinks.nc" <<'EOF'
import sys, netCDF4, numpy as np
d = netCDF4.Dataset(sys.argv[1], "w", format="NETCDF3_64BIT_OFFSET")
d.createDimension("x", 1 << 20)
d.createVariable("small", "i4", ())[...] = 7
d.createVariable("big", "f4", ("x",))[:] = np.arange(1 << 20, dtype="f4")
d.close()
EOF
mnt="$TMP/m-shrinks"
mount_container "$TMP/shrinks.nc" "$mnt" || fail "shrinks: mount"
truncate -s 2000000 "$TMP/shrinks.nc"
if cat "$mnt/big" > /dev/null 2> "$TMP/err"; then
    fail "a variable truncated away was served"
else
    case $(cat "$TMP/err") in *"Input/output error"*) pass "truncated away: EIO";; *) fail "truncated: $(cat "$TMP/err")";; esac
fi
expect_eq "the daemon is still up after EIO" "07000000" "$(od -An -tx1 "$mnt/small" | tr -d ' ')"
finish
