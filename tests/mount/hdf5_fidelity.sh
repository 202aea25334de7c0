#!/bin/sh
# hdf5_fidelity.sh - every byte equal to the library's: files
# written at test time by libhdf5 (tests/gen/hdf5_gen.py: fidelity.h5, fill.h5;
# tests/gen/hdf5_gen: edges.h5) read through a real mount and hpcdump and
# compared with h5py (tests/mount/hdf5_verify.py):
#  - extensible-array chunk indexes over an unlimited second dimension,
#    whose chunks libhdf5 1.10's H5Dget_chunk_info* misplace;
#  - filter pipelines in the file's order (fletcher32 before deflate, first,
#    last), LZF with and without shuffle, LZF chunks stored raw (optional
#    filter), partial edge chunks stored unfiltered;
#  - storage never allocated and chunks never written for every fill time,
#    allocation time and fill value, each after a dataset full of bytes;
#  - n-bit and scale-offset chunks with fill values, elements of 1.5 MiB.
# The public files of the HDF Group and jhdf that showed these bugs are
# checked too when HPC_H5_CORPUS names a directory holding them.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/hdf5_lib.sh"
need_fuse

H5_ODD=8
h5_generate
for f in fidelity fill edges; do
    h5_verify "$G/$f.h5"
done

# the reader's own decoder served them (not only libhdf5's H5Dread)
read_of() { "$HPCDUMP" info "$G/$1" | awk -F'\t' -v d="/$2" '$1 == d { print $8 }'; }
# decoded FILE DATASET...: .info says "decode", and reading them all logs no
# chunk the reader failed to decode (libhdf5 would have read it)
decoded() {
    f=$1; shift
    M="$TMP/mnt-log-$f"
    mount_container "$G/$f.h5" "$M" -o log="$TMP/$f.log" || fail "mount $f.h5 with a log"
    for d in "$@"; do
        expect_eq "$f.h5 /$d: decoded by the reader" decode "$(read_of "$f.h5" "$d")"
        cat "$M/$d" > /dev/null || fail "$f.h5 /$d: read"
    done
    unmount_container "$M"
    check "$f.h5: every written chunk decoded by the reader itself" \
        sh -c "! grep -q 'read by libhdf5' '$TMP/$f.log'"
}
lzf=""
grep -q "define HAVE_LIBLZF 1" "$top_builddir/config.h" &&
    lzf="lzf lzf_shuffle lzf_random lzf_fletcher_unwritten"
# shellcheck disable=SC2086
decoded fidelity ea_dim1 ea_dim1_gzip ea_dim1_sparse shuffle_fletcher_deflate \
    fletcher_shuffle_deflate deflate_fletcher_edges $lzf
decoded edges partial_raw_deflate partial_raw_fletcher_deflate partial_raw_sparse bigelem_le
# spelled out: h5py's ds[()] of /ea_dim1 (rows of 0 1 2 then zeros)
expect_eq "ea_dim1: rows in place" "0 1 2 0 0 0 6 7 8 0 0 0 12 13 14 0 0 0 18 19 20 0 0 0" \
    "$("$HPCDUMP" cat "$G/fidelity.h5" ea_dim1 | od -An -td4 -v | tr -s ' \n' ' ' | sed 's/^ //;s/ $//')"
expect_eq "var2 (storage never allocated, fill time never): zeros" \
    "$(head -c 16384 /dev/zero | sha256sum | cut -d' ' -f1)" \
    "$(M="$TMP/mnt-v"; mount_container "$G/edges.h5" "$M" && cat "$M/bigelem_le" "$M/var2" | tail -c 16384 | sha256sum | cut -d' ' -f1; unmount_container "$M")"

# names longer than a file name are left out (the group stays listable)
M="$TMP/mnt-long"
mount_container "$G/longname.h5" "$M" || fail "mount longname.h5"
expect_eq "long link names: left out, the group listed" "short" "$(ls "$M/grp" 2>&1)"
check "long link names: .info says why" grep -q "^/grp/LLLL.*name of 300 bytes, longer than a file name (255): not shown" "$M/.info"
# ... and names the object's @ADDR, which serves it (no other path names it)
addr=$(sed -n 's#^/grp/LLLL.* not shown; its object: @\([1-9][0-9]*\)$#\1#p' "$M/.info")
check "long link names: .info names the object's @ADDR" test -n "$addr"
expect_eq "long link names: @ADDR serves h5py's value" \
    "$("$PY" -c 'import sys, h5py; print(h5py.File(sys.argv[1])["grp"]["L" * 300][()].tobytes().hex())' "$G/longname.h5")" \
    "$(od -An -tx1 -v "$M/@$addr" | tr -d ' \n')"
expect_eq "long link names: @ADDR's shape" 4 "$(getfattr --only-values -n user.shape "$M/@$addr" 2>/dev/null)"
check "long link names: the soft link names no object" sh -c "! grep -q '^/grp/SSSS.*its object' '$M/.info'"
unmount_container "$M"

# the public files (HPC_H5_CORPUS: e.g. a copy of the HDF Group's hdf5
# test and tools files and jhdf's test resources)
if [ -n "${HPC_H5_CORPUS:-}" ] && [ -d "$HPC_H5_CORPUS" ]; then
    find "$HPC_H5_CORPUS" \( -name 'h5fc_*.h5' -o -name h5repack_filters.h5 \
        -o -name bitfield_datasets.hdf5 \) -type f | sort > "$TMP/corpus.list"
    check "corpus: files found" test -s "$TMP/corpus.list"
    while IFS= read -r f; do
        h5_verify "$f"
    done < "$TMP/corpus.list"
    t=$(find "$HPC_H5_CORPUS" -name tlayouto.h5 -type f | head -1)
    if [ -n "$t" ]; then
        check "tlayouto.h5: the 2^63-byte dataset is left out of the listing" \
            sh -c "! '$HPCDUMP' ls '$t' | grep -qx Dataset"
        check "tlayouto.h5: .info says why" sh -c \
            "'$HPCDUMP' info '$t' | grep -q '^warning: /Dataset: more bytes than the largest file size'"
    fi
else
    echo "note: HPC_H5_CORPUS not set: the public files are not checked"
fi
finish
