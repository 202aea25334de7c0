#!/bin/sh
# hdf5_vlen.sh - datasets of variable-length sequences and of references
# (docs/hdf5.md) against h5py, through a real mount, hpcdump extract and
# the Python package (tests/mount/hdf5_vlen.py): sequences of ints and
# floats in 1-D, 2-D, scalar, chunked and big-endian datasets, empty
# sequences, object references (null ones too) and region references of
# hyperslabs, points, all; variable-length strings, and target paths,
# holding a newline: each element ended with NUL and user.h5eol nul (and
# strings without one: lines, no user.h5eol), through the mount, hpcdump
# cat/xattr/extract/refs and the package; string attributes (xattrs,
# zarr's attrs of the references) as h5py's, NUL-ended where one holds a
# newline; fixed-length strings holding NUL and a newline (scalar, 1-D,
# 2-D) as their S<n> bytes with user.attrdtype.NAME, decoding to h5py's
# attrs[NAME]; attributes of compound (nested, array members, padded,
# big-endian), array, opaque and complex types as hex with
# user.attrdtype.NAME, decoding to h5py's attrs[NAME], and no
# user.attrdtype on any other; a variable-length
# string with NUL in its heap bytes as h5py's C string; attribute shapes
# (user.attrshape.NAME) as h5py's; such bytes over 64 KiB cut to whole
# elements, a string longer than that left out, with warnings; a damaged
# global heap gives EIO
# and a log line.  Objects only a reference leads to (no path names
# them): /@ADDR, the reference's text, is the object (a dataset's file,
# a sequence's directory, a group) as h5py's f[ref], not listed, ENOENT
# at an address of no object header, a link of the root of that name
# wins; through the mount (and -o inproc, -o npy), hpcdump and the
# package.  With HPC_CORPUS: every such dataset (and of strings)
# of the corpus's HDF5 files that h5py reads, mounted and through the
# package, and JLD2's unlinked dataset.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/python_env.sh"
need_fuse

V="$top_srcdir/tests/mount/hdf5_vlen.py"
h5py_case "$V" "$TMP/vlen.h5" "mount: every sequence and reference equals h5py's"
check "a dataset of sequences is a directory of offsets and values" \
    test "$(ls "$M/int_1d" | tr '\n' ' ')" = "offsets values "
check "find descends into it" test "$(find "$M/g" -type f | sort | tr '\n' ' ')" = \
    "$M/g/float_2d/offsets $M/g/float_2d/values "
check ".info: read as sequences" grep -q "^/int_1d	6	O	.*	sequences	" "$M/.info"
check "null object reference: an empty line" test "$(sed -n 3p "$M/objrefs")" = ""
# bytes PATH PYTHON-BYTES: PATH holds exactly those bytes
bytes() {
    "$PY" -c "import sys; sys.exit(open(sys.argv[1], 'rb').read() != eval(sys.argv[2]))" "$@"
}
check "a string holding a newline: ended with NUL" bytes "$M/str_scalar_nl" "b'only\\none\\0'"
check "strings holding a newline: user.h5eol nul" \
    test "$(getfattr --only-values -n user.h5eol "$M/str_nl")" = nul
check "every string ended with NUL" bytes "$M/str_nl" "b'a\\nb\\0\\0plain\\0\\n\\0x\\n\\ny\\0\\xc3\\xbcn\\n\\0'"
check "strings without a newline: lines, no user.h5eol" sh -c \
    "test \"\$(cat '$M/str_plain' | tr '\\n' ,)\" = one,,three, && ! getfattr -n user.h5eol '$M/str_plain' 2>/dev/null"
check "a target path holding a newline: every path ended with NUL" \
    bytes "$M/objrefs_nl" "b'/target\\0/grp/new\\nline\\0\\0'"
check "a region's target path holding a newline: the same" \
    bytes "$M/regrefs_nl" "b'/grp/new\\nline/t\\n\\tblocks (0,1)-(1,1)\\0\\0'"
check "references without a newline: lines, no user.h5eol" sh -c "! getfattr -n user.h5eol '$M/objrefs' 2>/dev/null"
check "string attributes: each string ended with NUL where one holds a newline, as h5py's" \
    "$PY" "$V" attrs "$M" "$TMP/vlen.h5"
check "a string attribute holding a newline: NUL-ended" test \
    "$(getfattr --only-values -n user.attr.vl_scalar_nl "$M" | od -An -c | tr -s ' ')" = " x \\n y \\0"
check "attribute shapes: user.attrshape.NAME as h5py's shape" "$PY" "$V" ashape "$M" "$TMP/vlen.h5"
check "a scalar and an array of one: the same text, user.attrshape on the array only" sh -c \
    "test \"\$(getfattr --only-values -n user.attr.scalar '$M/shapes')\" = 5 &&
     test \"\$(getfattr --only-values -n user.attr.one '$M/shapes')\" = 5 &&
     ! getfattr -n user.attrshape.scalar '$M/shapes' 2>/dev/null &&
     test \"\$(getfattr --only-values -n user.attrshape.one '$M/shapes')\" = 1"
check "string attributes without a newline: lines" test \
    "$(getfattr --only-values -n user.attr.vl_plain "$M" | tr '\n' ,)" = "one,,three"
# xattr PATH NAME PYTHON-BYTES: xattr NAME of PATH is exactly those bytes
xattr() {
    "$PY" -c "import os, sys; sys.exit(os.getxattr(sys.argv[1], sys.argv[2]) != eval(sys.argv[3]))" "$@"
}
# no_xattr PATH NAME
no_xattr() { ! getfattr -n "$2" "$1" >/dev/null 2>&1; }
fx_bytes() {
    xattr "$M" user.attrdtype.fx_nul_nl "b'|S3'" && xattr "$M" user.attr.fx_nul_nl "b'a\\0bc\\nde\\0\\0'"
}
fx_bytes_scalar() {
    xattr "$M" user.attrdtype.fx_nul_nl_scalar "b'|S8'" && no_xattr "$M" user.attrshape.fx_nul_nl_scalar &&
        xattr "$M" user.attr.fx_nul_nl_scalar "b'\\0x\\ny\\0\\0\\0\\0'"
}
fx_text() {
    for a in fx_nul fx_plain fx_nl fx_scalar_nl vl_nl vl_plain; do
        no_xattr "$M" user.attrdtype.$a || return 1
    done
    xattr "$M" user.attr.fx_nul "b'a\\0b\\ncd'" && xattr "$M" user.attr.fx_plain "b'ab\\nc'"
}
check "strings holding NUL and a newline: their S3 bytes, user.attrdtype |S3" fx_bytes
check "a scalar of them: its 8 bytes, no user.attrshape" fx_bytes_scalar
check "strings without both NUL and a newline: text as before, no user.attrdtype" fx_text
check "a variable-length string with NUL in the heap: the C string, as h5py" \
    xattr "$M" user.attr.vl_heap_nul "b'vl'"
check ".info: no warning about attributes" sh -c "! grep -q \"^warning: .*attribute\" '$M/.info'"
check "hpcdump xattr: the strings' bytes and user.attrdtype as getfattr -d shows them" sh -c \
    "'$HPCDUMP' xattr '$TMP/vlen.h5' / > '$TMP/x.hd' && getfattr -d -m - '$M' > '$TMP/x.gf' &&
     grep -qx 'user.attrdtype.fx_nul_nl=\"|S3\"' '$TMP/x.hd' &&
     grep 'fx_nul_nl' '$TMP/x.hd' | sort > '$TMP/x1' && grep 'fx_nul_nl' '$TMP/x.gf' | sort > '$TMP/x2' &&
     test \$(wc -l < '$TMP/x1') = 7 && cmp -s '$TMP/x1' '$TMP/x2'"
check "compound, array, opaque, complex: hex with user.attrdtype (user.dtype's text)" sh -c \
    "test \"\$(getfattr --only-values -n user.attrdtype.c8 '$M/typed')\" = '<c8' &&
     test \"\$(getfattr --only-values -n user.attr.c8 '$M/typed')\" = 0x0000803f00000040,0x00004040000080c0 &&
     test \"\$(getfattr --only-values -n user.attrdtype.array '$M/typed')\" = \"('<i4', (2, 3))\" &&
     test \"\$(getfattr --only-values -n user.attrdtype.big_endian '$M/typed')\" = \"[('a', '<i8'), ('b', '<f8')]\""
check "hpcdump xattr: hex attributes and user.attrdtype as getfattr -d shows them" sh -c \
    "'$HPCDUMP' xattr '$TMP/vlen.h5' /typed | sort > '$TMP/t1' &&
     getfattr -d -m - '$M/typed' | sed 's|^# file: .*|# file: typed|' | sort > '$TMP/t2' &&
     test \$(grep -c attrdtype '$TMP/t1') = 14 && cmp -s '$TMP/t1' '$TMP/t2'"
check "objects no path names: /@ADDR equals h5py's f[ref]" "$PY" "$V" anon "$M" "$TMP/vlen.h5"
A=$(sed -n 1p "$M/anonrefs")       # an unlinked dataset
G=$(sed -n 2p "$M/anonrefs")       # an unlinked group
check "a reference's text, read back: the object" sh -c "'$HPCDUMP' cat '$TMP/vlen.h5' '$A' | cmp -s - '$M/$A'"
check "an unlinked group: a directory" test "$(ls "$M/$G" | tr '\n' ' ')" = "sub x "
check "not listed: only the link of the root named so" test "$(ls -a "$M" | grep -c '^@')" = 1
check ".info: the object a link of the root hides" grep -q "^/@[0-9]* -> a link of the root: the object at" "$M/.info"
check "an address of no object header: ENOENT" sh -c "! stat '$M/@1' && ! stat '$M/@$((${A#@} + 1))' &&
    ! stat '$M/@0${A#@}' && ! stat '$M/@99999999999' && ! stat '$M/@18446744073709551616'" 2>/dev/null
check "still mounted" is_mounted "$M"
"$HPCDUMP" refs "$TMP/vlen.h5" > "$TMP/vlen.json" 2> "$TMP/refs.err" || fail "hpcdump refs: $(cat "$TMP/refs.err")"
if "$PY" -c "import fsspec, zarr, numcodecs" 2>/dev/null; then
    check "hpcdump refs: zarr reads strings and paths holding a newline whole, as h5py" \
        "$PY" "$top_srcdir/tests/mount/refs_verify.py" "$TMP/vlen.json" "$M" --h5 "$TMP/vlen.h5" --no-xarray
    check "hpcdump refs: zarr's attrs hold h5py's strings" "$PY" "$V" zattrs "$TMP/vlen.json" "$TMP/vlen.h5"
fi
unmount_container "$M"

mount_container "$TMP/vlen.h5" "$M" -o npy || fail "mount vlen.h5 -o npy"
check "-o npy: values.npy and offsets.npy load as the plain files" "$PY" -c "
import sys, numpy as np
m = sys.argv[1]
v, o = np.load(m + '/g/float_2d/values.npy'), np.load(m + '/g/float_2d/offsets.npy')
sys.exit(v.dtype != np.float64 or o.dtype != np.int64 or o[-1] != len(v) or len(o) != 13)" "$M"
check "-o npy: /@ADDR.npy" "$PY" -c "
import sys, h5py, numpy as np
f = h5py.File(sys.argv[2])
sys.exit(not np.array_equal(np.load(sys.argv[1]), f[f['anonrefs'][0]][()]))" "$M/$A.npy" "$TMP/vlen.h5"
unmount_container "$M"
mount_container "$TMP/vlen.h5" "$M" -o inproc || fail "mount vlen.h5 -o inproc"
check "-o inproc: /@ADDR equals h5py's f[ref]" "$PY" "$V" anon "$M" "$TMP/vlen.h5"
unmount_container "$M"

X="$TMP/extract"
"$HPCDUMP" extract "$TMP/vlen.h5" "$X" >/dev/null 2>&1 || fail "hpcdump extract"
check "hpcdump extract: every value equals h5py's" "$PY" "$V" tree "$X" "$TMP/vlen.h5"
check "hpcdump cat of a region reference: path, tab, selection" test \
    "$("$HPCDUMP" cat "$TMP/vlen.h5" regrefs | sed -n 5p)" = "/target	points (0,1) (3,4) (2,2)"
check "hpcdump cat of strings holding a newline: the mount's bytes" \
    sh -c "'$HPCDUMP' cat '$TMP/vlen.h5' str_nl | cmp -s - '$X/str_nl'"
check "hpcdump xattr of them: user.h5eol" \
    sh -c "'$HPCDUMP' xattr '$TMP/vlen.h5' /objrefs_nl | grep -qx 'user.h5eol=\"nul\"'"
check "hpcdump ls of a dataset of sequences" test \
    "$("$HPCDUMP" ls "$TMP/vlen.h5" /g/float_2d | tr '\n' ' ')" = "offsets values "
check "hpcdump extract: string attributes as h5py's" "$PY" "$V" attrs "$X" "$TMP/vlen.h5"
check "hpcdump extract: attribute shapes as h5py's" "$PY" "$V" ashape "$X" "$TMP/vlen.h5"
check "hpcdump xattr: a NUL-ended attribute as getfattr shows it" sh -c "'$HPCDUMP' xattr '$TMP/vlen.h5' / |
    grep -qx 'user.attr.fx_scalar_nl=\"history: made by h5py\\\\012line 2\\\\012\\\\000\"'"
check "package: array() equals h5py's ds[()]" pypkg "$V" pkg "$TMP/vlen.h5"
check "package: getxattr's string attributes as h5py's" pypkg "$V" pkgattrs "$TMP/vlen.h5"
check "package: attribute shapes as h5py's" pypkg "$V" ashape pkg "$TMP/vlen.h5"
check "package: array('@ADDR') equals h5py's f[ref][()]" pypkg "$V" pkganon "$TMP/vlen.h5"
check "hpcdump ls of an unlinked group" test "$("$HPCDUMP" ls "$TMP/vlen.h5" "$G" | tr '\n' ' ')" = "sub x "

# a damaged global heap: the values cannot be read
mount_container "$TMP/damaged.h5" "$M" -o log="$TMP/damaged.log" || fail "mount damaged.h5"
cat "$M/seq/values" > /dev/null 2> "$TMP/err"
check "damaged sequences: EIO" grep -q "Input/output error" "$TMP/err"
check "damaged sequences: a log line" grep -q "hdf5: /seq: " "$TMP/damaged.log"
check "damaged sequences: the rest served" "$PY" -c "
import sys, h5py, numpy as np
want = np.ascontiguousarray(h5py.File(sys.argv[1])['fine'][()]).astype('<i8').tobytes()
sys.exit(open(sys.argv[2], 'rb').read() != want)" "$TMP/damaged.h5" "$M/fine"
check "damaged sequences: still mounted" is_mounted "$M"
unmount_container "$M"

# strings' bytes beyond an xattr's 64 KiB: cut to whole elements (636 of
# 103 bytes, as h5py's first 636), one longer string left out
mount_container "$TMP/bigattr.h5" "$M" || fail "mount bigattr.h5"
check "strings' bytes cut to whole elements: h5py's first ones" "$PY" -c "
import os, sys, h5py
v = os.getxattr(sys.argv[1], 'user.attr.cut')
sys.exit(v != h5py.File(sys.argv[2]).attrs['cut'][:636].tobytes())" "$M" "$TMP/bigattr.h5"
check "the cut: a warning" grep -q "^warning: /: attribute 'cut' cut to 65508 bytes" "$M/.info"
check "a string longer than an xattr: left out, a warning" sh -c "! getfattr -n user.attr.huge '$M' 2>/dev/null &&
    ! getfattr -n user.attrdtype.huge '$M' 2>/dev/null &&
    grep -q \"^warning: /: attribute 'huge': strings of 70002 bytes .*not shown\" '$M/.info'"
unmount_container "$M"

# the corpus: every file holding such datasets, mounted
if [ -n "${HPC_CORPUS:-}" ] && [ -d "$HPC_CORPUS/hdf5" ]; then
    find "$HPC_CORPUS/hdf5" -type f ! -name SOURCES.txt | sort > "$TMP/all"
    xargs "$PY" "$V" list < "$TMP/all" > "$TMP/files" 2>/dev/null
    check "corpus: files with sequences or references found" test -s "$TMP/files"
    # every file mounted, then all compared by one interpreter (its start
    # and h5py's import cost more than most files' comparison)
    n=0
    : > "$TMP/trees"
    while read -r f; do
        n=$((n + 1))
        if mount_container "$f" "$M.$n"; then
            printf '%s\t%s\n' "$M.$n" "$f" >> "$TMP/trees"
        else
            fail "corpus: mount $f"
        fi
    done < "$TMP/files"
    "$PY" "$V" trees "$TMP/trees" > "$TMP/trees.out" 2>&1 || fail "hdf5_vlen.py trees: exit $?"
    tab=$(printf '\t')
    while IFS=$tab read -r m f; do
        if grep -qxF "status: $f 0" "$TMP/trees.out"; then
            pass "corpus mount: $f"
        else
            fail "corpus mount: $f"
            grep -F "$(basename "$f"):" "$TMP/trees.out" | grep -v '^ok ' | head -5
        fi
        unmount_container "$m"
    done < "$TMP/trees"
    check "corpus: the package's array() equals h5py's" pypkg "$V" pkg $(cat "$TMP/files")
    J="$HPC_CORPUS/hdf5/JuliaIO+JLD2.jl/test/test.jld2"
    if [ -f "$J" ]; then
        mount_container "$J" "$M" || fail "mount $J"
        check "JLD2: b/y's reference text leads to its unlinked dataset" \
            sh -c "'$PY' '$V' anon '$M' '$J' && test -f '$M/'\$(cat '$M/b/y')"
        unmount_container "$M"
        check "JLD2: the package's array('@ADDR')" pypkg "$V" pkganon "$J"
    fi
else
    echo "HPC_CORPUS not set: corpus part skipped"
fi
finish
