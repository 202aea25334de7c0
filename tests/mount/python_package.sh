#!/bin/bash
# python_package.sh - the Python package hpcmount (ctypes over
# libhpcmount) against real mounts of every fixture format and against
# h5py, gsd.fl and libhdf4's SDreaddata (tests/mount/python_package.py says what
# is checked).  Skipped (77) only when /dev/fuse cannot be used or a Debian
# Python module the checks need is missing.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
for m in numpy h5py gsd.fl fsspec; do
    "$PY" -c "import $m" 2>/dev/null || { echo "SKIP: python3 module $m missing (tests/deps.sh)"; exit 77; }
done
. "$top_srcdir/tests/lib/python_env.sh"

# the containers: every fixture of tests/data, the HDF5 files of
# tests/gen/hdf5_gen and an h5py file (contiguous and gzip+shuffle datasets)
LIST="$TMP/list"
: > "$LIST"
n=0
add() {
    local src=$1 mnt="$TMP/m$n"
    n=$((n + 1))
    if mount_container "$src" "$mnt" 2> "$mnt.err"; then
        printf '%s\t%s\t%s\n' "$src" "$mnt" "$mnt.err" >> "$LIST"
    else
        printf '%s\t-\t%s\n' "$src" "$mnt.err" >> "$LIST"
    fi
}
for f in "$DATA"/*.sion "$DATA"/gsd/*.gsd; do add "$f"; done
add "$DATA/fti/master-i64"
"$HPCDUMP" --version | grep -q '^formats:.* dhdf' && add "$DATA/dhdf/mhf.hdf"
mkdir -p "$TMP/h5"
"$top_builddir/tests/gen/hdf5_gen" "$TMP/h5" > /dev/null 2>&1 || fail "tests/gen/hdf5_gen wrote no files"
"$PY" - "$TMP/t.h5" "$TMP/bad.h5" <<'PYEOF' || fail "h5py wrote no test file"
import shutil, sys, h5py, numpy as np
good, bad = sys.argv[1:3]
with h5py.File(good, "w") as f:
    f["contig"] = np.arange(24, dtype="<f8").reshape(2, 3, 4)
    f.create_dataset("g/gz", data=np.arange(200000, dtype="<i4").reshape(2000, 100),
                     chunks=(100, 100), compression="gzip", shuffle=True)
    f["g"].attrs["a"] = 3
    rec = np.dtype([("x", "u1"), ("y", "<f8"), ("z", "S3")])
    f["rec"] = np.array([(i, i / 3, b"r%d" % i) for i in range(7)], rec)
    pad = np.dtype({"names": ["a", "b"], "formats": ["<i2", ("<f4", (2,))],
                    "offsets": [0, 8], "itemsize": 20})
    f.create_dataset("pad", data=np.arange(40, dtype="<i2").astype(pad), chunks=(8,),
                     compression="gzip")
    f.create_dataset("arr", (5,), dtype=("<i4", (3, 4)))[...] = np.arange(60).reshape(5, 3, 4)
    f.create_dataset("unset", (4, 3), dtype=rec, fillvalue=np.array((9, 2.5, b"f"), rec))
shutil.copy(good, bad)
with h5py.File(good, "r") as f:
    info = f["g/gz"].id.get_chunk_info(3)
with open(bad, "r+b") as fh:                    # one chunk's deflate stream
    fh.seek(info.byte_offset + 8)
    fh.write(b"\xff" * 64)
PYEOF
for f in "$TMP"/h5/*.h5 "$TMP/t.h5"; do add "$f"; done

# libhdf4's own reading of the distributed HDF pieces
mkdir -p "$TMP/oracle"
for f in "$DATA"/dhdf/*.hdf; do
    "$top_builddir/tests/gen/hdf4_oracle" "$f" > "$TMP/oracle/$(basename "$f").txt" 2>/dev/null ||
        rm -f "$TMP/oracle/$(basename "$f").txt"
done

if pypkg "$top_srcdir/tests/mount/python_package.py" "$LIST" "$TMP/t.h5" "$TMP/bad.h5" "$TMP/oracle"; then
    pass "the package equals the mounts and the formats' libraries"
else
    fail "tests/mount/python_package.py"
fi
finish
