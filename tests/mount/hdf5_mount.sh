#!/bin/sh
# hdf5_mount.sh - HDF5 files written at test time (h5py: tests/gen/hdf5_gen.py,
# C API: tests/gen/hdf5_gen) mounted for real: every dataset's sha256 through the
# mount and through hpcdump equals h5py's ds[()] as little-endian C-order
# bytes; shape, dtype and attribute xattrs; symlinks, hard links; reads at
# odd offsets (tests/mount/hdf5_verify.py); 8 concurrent readers.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/hdf5_lib.sh"
need_fuse

h5_generate

for f in basic latest userblock capi sb1 big; do
    h5_verify "$G/$f.h5"
done

# hpcdump and the mount show the same tree and the same .info
M="$TMP/mnt-basic"
mount_container "$G/basic.h5" "$M" || fail "mount basic.h5"
expect_eq "hpcdump info = .info" "$(cat "$M/.info")" "$("$HPCDUMP" info "$G/basic.h5")"
expect_eq "hpcdump ls = ls" "$(ls -A "$M/types" | sort)" "$("$HPCDUMP" ls "$G/basic.h5" types | sort)"
check ".info: layout/filters/chunks of a chunked dataset" \
    grep -q "^/layout/gzip_shuffle	500,100	<i8	chunked/btree-v1	shuffle,deflate(6)	33,41	400000	decode" "$M/.info"
check ".info: external raw data" grep -q "^/layout/external	300	<u2	contiguous+external(2)" "$M/.info"
check "hard link: link count 3" test "$(stat -c %h "$M/types/le_f8")" = 3
check "write refused" sh -c "! (echo x > '$M/types/le_i4') 2>/dev/null"
check "read-only modes" test "$(stat -c %a "$M/types/le_i4")" = 444
rm -rf "$TMP/extract"
check "hpcdump extract" "$HPCDUMP" extract "$G/basic.h5" "$TMP/extract"
expect_eq "extracted dataset bytes" "$(sha "$M/layout/gzip_shuffle")" "$(sha "$TMP/extract/layout/gzip_shuffle")"
unmount_container "$M"

# from another working directory, external raw data still resolve against
# the .h5 file's directory
(cd / && "$HPCDUMP" cat "$G/capi.h5" external_i8 > "$TMP/ext.out")
expect_eq "external raw data from another cwd" \
    "$("$PY" "$top_srcdir/tests/mount/hdf5_verify.py" --expect "$G/capi.h5" external_i8 2>&1)" \
    "$(sha "$TMP/ext.out")"

# a run directory served in one process (-o inproc), where a virtual
# dataset's source file is a container too: whichever of the two is
# opened first, libhdf5 must open the other (one locking setting for every
# open of a file), or the source is missing or the virtual dataset reads
# its fill value
want_vds=$("$PY" "$top_srcdir/tests/mount/hdf5_verify.py" --expect "$G/latest.h5" virtual)
want_src=$("$PY" "$top_srcdir/tests/mount/hdf5_verify.py" --expect "$G/vds_src.h5" a)
for first in latest.h5/virtual vds_src.h5/a; do
    M="$TMP/mnt-inproc"
    mount_container "$G" "$M" -o inproc || fail "mount $G -o inproc"
    cat "$M/$first" >/dev/null
    expect_eq "inproc run directory, $first first: the virtual dataset" "$want_vds" "$(sha "$M/latest.h5/virtual")"
    expect_eq "inproc run directory, $first first: its source" "$want_src" "$(sha "$M/vds_src.h5/a")"
    unmount_container "$M"
done

# 8 concurrent readers of compressed, big-endian chunked and contiguous data
M="$TMP/mnt-big"
mount_container "$G/big.h5" "$M" || fail "mount big.h5"
for d in gz be3d contig; do
    eval "want_$d=\$(\"\$PY\" \"\$top_srcdir/tests/mount/hdf5_verify.py\" --expect \"\$G/big.h5\" $d)"
done
i=0
for d in gz gz gz be3d be3d be3d contig contig; do
    i=$((i + 1))
    case $i in
        1|4|7) (sha256sum < "$M/$d" | cut -d' ' -f1 > "$TMP/r$i.$d") & ;;
        *) (dd if="$M/$d" bs=$((4096 * i + 3)) status=none | sha256sum | cut -d' ' -f1 > "$TMP/r$i.$d") & ;;
    esac
done
wait
for r in "$TMP"/r*.*; do
    d=${r##*.}
    eval "want=\$want_$d"
    expect_eq "concurrent reader $(basename "$r")" "$want" "$(cat "$r")"
done
check "still mounted after the readers" is_mounted "$M"
unmount_container "$M"

finish
