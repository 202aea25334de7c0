#!/bin/sh
# hdf5_objects.sh - compounds and arrays holding variable-length data or
# references, sequences of sequences, strings and references, null
# dataspaces and storage never allocated, strings holding a newline (a
# compound's member, an array member, an array, a sequence's values: each
# element ended with NUL, user.h5eol nul; the other members' lines)
# (docs/hdf5.md) written by h5py, against h5py: through a real mount and
# an hpcdump extract read with os and NumPy only, hpcdump cat, and the
# Python package's array() (tests/mount/hdf5_objects.py); a struct
# written by Julia's JLD2 (tests/data/jld2_struct.jld2).  With
# HPC_CORPUS: every dataset of the corpus's JLD2 files (Julia's JLD2
# writes structs as such compounds, after a user block) through the
# package equals h5py's value, and the HDF Group's h5diff_comp_vl_strs.h5
# (compound members of strings holding newlines) mounted, extracted and
# through the package.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/python_env.sh"
need_fuse
"$PY" -c "import h5py" 2>/dev/null || { echo "SKIP: python3 module h5py missing (tests/deps.sh)"; exit 77; }

O="$top_srcdir/tests/mount/hdf5_objects.py"
F="$TMP/objects.h5"
h5py_case "$O" "$F" "mount: every dataset read as documented equals h5py's"
check "a compound is a directory of its members, in the file's order" \
    test "$(ls -f "$M/comp" | grep -v '^\.' | tr '\n' ' ')" = "id name seq ref pos tags "
check "its user.dtype has object members" \
    test "$(getfattr --only-values -n user.dtype "$M/comp")" = \
    "[('id', '<i8'), ('name', 'O'), ('seq', 'O'), ('ref', 'O'), ('pos', [('x', '<f4'), ('y', '<f8')]), ('tags', 'O', (2,))]"
check "a reference member: one target a line, null empty" \
    test "$(cat "$M/comp/ref" | tr '\n' ,)" = "/target,/grp,,"
check "an array member of strings: user.shape has its axis" \
    test "$(getfattr --only-values -n user.shape "$M/comp/tags")" = "3,2"
check "a sequence member: offsets and values" test "$(ls "$M/comp/seq" | tr '\n' ' ')" = "offsets values "
check "a sequence of sequences: values is itself a sequence directory" \
    test -f "$M/vlen_vlen/values/offsets"
check "an array of strings at the top is text" test "$(head -3 "$M/arr_str" | tr '\n' ,)" = "a,bb,ccc,"
check "no .info warning for these datasets" sh -c "! grep -q 'not served' '$M/.info'"
check "a null dataspace: an empty file" test -f "$M/null/f8" -a ! -s "$M/null/f8"
check "a null dataspace: user.h5space null, user.shape 0, user.dtype" test \
    "$(getfattr --only-values -n user.h5space "$M/null/f8") $(getfattr --only-values -n user.shape "$M/null/f8") $(getfattr --only-values -n user.dtype "$M/null/f8")" = "null 0 <f8"
check "an empty 1-D dataset has no user.h5space" \
    sh -c "! getfattr -n user.h5space '$M/empty_1d' 2>/dev/null | grep -q null"
# no_eol PATH...: none of them has user.h5eol
no_eol() {
    "$PY" -c "import os, sys; sys.exit(any('user.h5eol' in os.listxattr(p) for p in sys.argv[1:]))" "$@"
}
for p in comp_nl/name comp_nl/tags arr_str_nl vlen_str_nl/values; do
    check "$p: strings holding a newline: user.h5eol nul" \
        test "$(getfattr --only-values -n user.h5eol "$M/$p" 2>/dev/null)" = nul
done
check "a member of strings holding a newline: each string and NUL" "$PY" -c "
import sys; sys.exit(open(sys.argv[1], 'rb').read() != b'two\nlines\0\0\n\0')" "$M/comp_nl/name"
check "an array member of them: the array's axis in user.shape" \
    test "$(getfattr --only-values -n user.shape "$M/comp_nl/tags")" = "3,2"
check "the members without a newline: lines, no user.h5eol" \
    no_eol "$M/comp_nl/plain" "$M/comp_nl/ref" "$M/comp/name" "$M/comp/tags" "$M/arr_str" "$M/comp_nl"
check "the other members' text: lines" test "$(cat "$M/comp_nl/plain" | tr '\n' ,)" = "x,y,,"
unmount_container "$M"

X="$TMP/extract"
"$HPCDUMP" extract "$F" "$X" >/dev/null 2>&1 || fail "hpcdump extract"
check "hpcdump extract: every value equals h5py's" "$PY" "$O" tree "$X" "$F"
check "hpcdump cat of a region member: path, tab, selection" test \
    "$("$HPCDUMP" cat "$F" regions/where | head -1)" = "/target	blocks (1,0)-(2,0) (1,2)-(2,2) (1,4)-(2,4)"
check "hpcdump xattr of a null dataspace: user.h5space" \
    sh -c "'$HPCDUMP' xattr '$F' /null/seq | grep -qx 'user.h5space=\"null\"'"
check "hpcdump xattr of strings holding a newline: user.h5eol" \
    sh -c "'$HPCDUMP' xattr '$F' /comp_nl/tags | grep -qx 'user.h5eol=\"nul\"'"
check "hpcdump cat of them: each string and NUL" "$PY" -c "
import subprocess, sys
out = subprocess.run(sys.argv[1:], capture_output=True, check=True).stdout
sys.exit(out != b'a\0b\n\0\0\0c\r\n\0d\0')" "$HPCDUMP" cat "$F" comp_nl/tags
check "hpcdump extract keeps user.h5eol" \
    test "$(getfattr --only-values -n user.h5eol "$X/arr_str_nl" 2>/dev/null)" = nul
check "python: array() equals h5py's ds[()] for every dataset" pypkg "$O" package "$F"
check "python: a null dataspace is an hpcmount.Empty of its dtype" pypkg -c "
import hpcmount, numpy
e = hpcmount.open('$F').array('/null/fixed')
assert isinstance(e, hpcmount.Empty) and e.shape is None, e
assert e.dtype == numpy.dtype([('a', '<i4'), ('b', '<f8')]), e"

# a struct of Julia's JLD2 (after a user block): its field y refers to
# an object no path leads to (h5py names it None)
JL="$DATA/jld2_struct.jld2"
mount_container "$JL" "$M" || fail "mount jld2_struct.jld2"
check "JLD2: every dataset read as documented equals h5py's" "$PY" "$O" tree "$M" "$JL"
check "JLD2: a reference to an object without a name is @ and its address" \
    grep -qx '@[0-9][0-9]*' "$M/b/y"
unmount_container "$M"
check "JLD2: python: array() equals h5py's" pypkg "$O" package "$JL"

J="${HPC_CORPUS:+$HPC_CORPUS/hdf5/JuliaIO+JLD2.jl}"
if [ -n "$J" ] && [ -d "$J" ]; then
    check "JLD2 corpus: array() equals h5py's for every dataset h5py reads" \
        pypkg "$top_srcdir/tests/mount/hdf5_objects_survey.py" -q "$J"
else
    echo "note: HPC_CORPUS not set: JLD2 files not checked"
fi

C=$(find "${HPC_CORPUS:-/nonexistent}/hdf5" -name h5diff_comp_vl_strs.h5 2>/dev/null | head -1)
if [ -n "$C" ]; then
    mount_container "$C" "$M" || fail "mount h5diff_comp_vl_strs.h5"
    check "h5diff_comp_vl_strs.h5: every dataset read as documented equals h5py's" "$PY" "$O" tree "$M" "$C"
    check "h5diff_comp_vl_strs.h5: an array member of strings holding a newline: user.h5eol nul" \
        test "$(getfattr --only-values -n user.h5eol "$M/group/Compound_dset1/VLEN_STR_ARRAY1" 2>/dev/null)" = nul
    check "h5diff_comp_vl_strs.h5: a member without: no user.h5eol" no_eol "$M/group/Compound_dset1/VLEN_STR1"
    unmount_container "$M"
    "$HPCDUMP" extract "$C" "$TMP/x-comp" >/dev/null 2>&1 || fail "hpcdump extract h5diff_comp_vl_strs.h5"
    check "h5diff_comp_vl_strs.h5: hpcdump extract equals h5py's" "$PY" "$O" tree "$TMP/x-comp" "$C"
    check "h5diff_comp_vl_strs.h5: python: array() equals h5py's" pypkg "$O" package "$C"
else
    echo "note: HPC_CORPUS not set: h5diff_comp_vl_strs.h5 not checked"
fi
finish
