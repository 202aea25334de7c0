#!/bin/sh
# hdf5_diff.sh - differential test of the HDF5 reader's own paths (chunks
# decoded by hdf5_chunk.c, contiguous pread, n-bit/scale-offset conversions,
# large elements) against libhdf5: tests/hdf5_diff writes files covering
# every chunk index, filter pipelines in several orders, partial edge chunks
# left unfiltered, alloc/fill times, H5Dset_extent, element types, ranks 1-4
# and odd chunk shapes (libver earliest and latest); tests/hdf5_diff.py
# compares every byte served through a real mount (O_DIRECT reads at odd
# offsets and across chunk boundaries, a whole read) and by hpcdump with
# what h5py (H5Dread) reads, and user.shape/user.dtype.
#
#   HDF5_DIFF_FILES="index fill ..."  only these generator files
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_fuse
"$PY" -c 'import h5py' 2>/dev/null || { echo "SKIP: python3-h5py missing"; exit 77; }

G="$TMP/h5"
mkdir -p "$G"
# shellcheck disable=SC2086
check "generator" sh -c '"$0" "$@" > "'"$TMP"'/gen.log"' "$top_builddir/tests/hdf5_diff" "$G" ${HDF5_DIFF_FILES:-}
sed -n 's/^skip: /refused by libhdf5 (not written): /p' "$TMP/gen.log"

for f in "$G"/*.h5; do
    b=$(basename "$f" .h5)
    mnt="$TMP/mnt-$b"
    if ! mount_container "$f" "$mnt"; then fail "mount $b"; continue; fi
    rm -rf "$TMP/x-$b"
    "$HPCDUMP" extract "$f" "$TMP/x-$b" 2> "$TMP/extract.log" || head -3 "$TMP/extract.log"
    "$PY" "$top_srcdir/tests/hdf5_diff.py" "$f" "$mnt" "$HPCDUMP" "$TMP/x-$b" > "$TMP/diff.log" 2>&1
    rc=$?
    n=0
    while IFS= read -r line; do
        case $line in
            ok:*) pass "${line#ok: }"; n=$((n + 1)) ;;
            FAIL:*) fail "${line#FAIL: }"; n=$((n + 1)) ;;
            *) echo "$line" ;;
        esac
    done < "$TMP/diff.log"
    [ "$rc" -eq 0 ] && [ "$n" -gt 0 ] || fail "$b: hdf5_diff.py exit $rc after $n datasets"
    check "$b: still mounted" is_mounted "$mnt"
    unmount_container "$mnt"
    rm -rf "$TMP/x-$b"
done

finish
