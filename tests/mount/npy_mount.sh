#!/bin/sh
# npy_mount.sh - the -o npy view through real mounts: every array of HDF5
# files written at test time (h5py and the C API), of every GSD fixture and
# of the distributed HDF fixture loads with np.load (plain and mmap) equal
# to what h5py / gsd.fl return, or to the raw file's bytes
# (tests/mount/npy_verify.py); hpcdump -o npy shows the same; without the option
# nothing changes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse
"$PY" -c 'import h5py, gsd.fl' 2>/dev/null || { echo "SKIP: python3-h5py or python3-gsd missing"; exit 77; }

# verify KIND SOURCE: mount SOURCE with and without -o npy, run the verifier
verify() {
    kind=$1 src=$2 name=$(basename "$2")
    npy="$TMP/npy-$name" raw="$TMP/raw-$name"
    if ! mount_container "$src" "$npy" -o npy || ! mount_container "$src" "$raw"; then
        fail "mount $name"; return
    fi
    "$PY" "$top_srcdir/tests/mount/npy_verify.py" "$kind" "$src" "$npy" "$raw" > "$TMP/verify.log" 2>&1
    rc=$?
    n=0
    while IFS= read -r line; do
        case $line in
            ok:*) n=$((n + 1)) ;;
            FAIL:*) fail "$name: ${line#FAIL: }" ;;
            *) echo "$line" ;;
        esac
    done < "$TMP/verify.log"
    [ "$rc" -eq 0 ] && [ "$n" -gt 0 ] && pass "$name: $n checks of np.load" ||
        fail "$name: verifier exit $rc after $n checks"
}

G="$TMP/h5"
if [ -x "$top_builddir/tests/gen/hdf5_gen" ]; then
    check "h5py generator" "$PY" "$top_srcdir/tests/gen/hdf5_gen.py" "$G"
    check "C API generator" "$top_builddir/tests/gen/hdf5_gen" "$G"
    for f in basic capi; do verify hdf5 "$G/$f.h5"; done
fi
for f in "$DATA"/gsd/*.gsd; do verify gsd "$f"; done
[ -f "$DATA/dhdf/mhf.hdf" ] && grep -q HAVE_HDF4 "$top_builddir/config.h" && verify raw "$DATA/dhdf/mhf.hdf"

# hpcdump -o npy cat: the same bytes as the mount
if [ -x "$top_builddir/tests/gen/hdf5_gen" ]; then
    M="$TMP/npy-basic.h5"
    p=$(cd "$M" && find . -name '*.npy' | head -1)
    "$HPCDUMP" -o npy cat "$G/basic.h5" "${p#./}" > "$TMP/dump.npy"
    check "hpcdump -o npy cat = mount (${p#./})" cmp -s "$TMP/dump.npy" "$M/$p"
    check "without -o npy no .npy names" sh -c "! find '$TMP/raw-basic.h5' -name '*.npy' | grep -q ."
    # the references describe the file's raw bytes: none lies under a view
    check "hpcdump refs" sh -c "'$HPCDUMP' refs '$G/basic.h5' > '$TMP/raw.refs'"
    check "hpcdump -o npy refs" sh -c "'$HPCDUMP' -o npy refs '$G/basic.h5' > '$TMP/npy.refs'"
    check "refs without -o npy name the file" grep -q '"u": ' "$TMP/raw.refs"
    check "refs with -o npy name no byte of it" sh -c "! grep -q '\"u\": ' '$TMP/npy.refs'"
    check ".npy body is 64-byte aligned" "$PY" -c "
import numpy as np, sys
with open(sys.argv[1], 'rb') as f:
    v = np.lib.format.read_magic(f)
    np.lib.format._read_array_header(f, v)
    sys.exit(f.tell() % 64)" "$M/$p"
fi
finish
