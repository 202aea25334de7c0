#!/bin/sh
# hdf5_objects.sh - compounds and arrays holding variable-length data or
# references, sequences of sequences, strings and references, null
# dataspaces and storage never allocated
# (docs/hdf5.md) written by h5py, against h5py: through a real mount and
# an hpcdump extract read with os and NumPy only, hpcdump cat, and the
# Python package's array() (tests/mount/hdf5_objects.py); a struct
# written by Julia's JLD2 (tests/data/jld2_struct.jld2).  With
# HPC_CORPUS: every dataset of the corpus's JLD2 files (Julia's JLD2
# writes structs as such compounds, after a user block) through the
# package equals h5py's value.
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
unmount_container "$M"

X="$TMP/extract"
"$HPCDUMP" extract "$F" "$X" >/dev/null 2>&1 || fail "hpcdump extract"
check "hpcdump extract: every value equals h5py's" "$PY" "$O" tree "$X" "$F"
check "hpcdump cat of a region member: path, tab, selection" test \
    "$("$HPCDUMP" cat "$F" regions/where | head -1)" = "/target	blocks (1,0)-(2,0) (1,2)-(2,2) (1,4)-(2,4)"
check "hpcdump xattr of a null dataspace: user.h5space" \
    sh -c "'$HPCDUMP' xattr '$F' /null/seq | grep -qx 'user.h5space=\"null\"'"
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
finish
