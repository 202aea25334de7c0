#!/bin/bash
# refs_damaged.sh - `hpcdump refs` of HDF5 files damaged in one dataset
# (tests/gen/refs_damage.py: an object header, a chunk index, a chunk or
# contiguous data past the end of the file, a chunk whose checksum fails
# after two good ones): exit 0, the damaged dataset
# left out and listed with its reason in the group's hpcmount_not_covered,
# every other dataset referenced and read through zarr and xarray equal to
# h5py's values.  Damage in the container's own structure (the superblock),
# or asking for the damaged dataset itself: exit 1, one line, nothing on
# stdout.  No FUSE: the tree is `hpcdump extract`'s.
. "$(dirname "$0")/../lib/lib.sh"
$PY -c "import fsspec, zarr, xarray, h5py" 2>/dev/null ||
    { echo "SKIP: python3-fsspec/zarr/xarray/h5py missing (tests/deps.sh)"; exit 77; }
. "$top_srcdir/tests/lib/refs_lib.sh"
$PY "$top_srcdir/tests/gen/refs_damage.py" "$TMP" >"$TMP/list" || { fail "refs_damage.py"; finish; }
expect_eq "five copies damaged in one dataset" 5 "$(wc -l <"$TMP/list")"
while read -r f ds; do
    b=${f%.h5}
    check "$b: h5py cannot read /$ds (the damage is real)" \
        $PY -c "import h5py,sys
try:
    h5py.File('$TMP/$f', 'r')['$ds'][()]
except Exception:
    sys.exit(0)
sys.exit(1)"
    "$HPCDUMP" refs "$TMP/$f" >"$TMP/$b.json" 2>"$TMP/$b.err"; rc=$?
    expect_eq "$b: refs exit 0" 0 $rc
    # a node whose reads fail is logged; a chunk table pointing past the
    # end is a reason found without reading (the group's note only)
    case $b in header|index)
        check "$b: stderr names /$ds as left out" grep -q "/$ds: left out: " "$TMP/$b.err" ;;
    esac
    check "$b: /$ds listed with its reason, none of its keys written" \
        $PY -c "import json,sys; r=json.load(open('$TMP/$b.json'))['refs']; \
n=json.loads(r['.zattrs'])['hpcmount_not_covered']; \
sys.exit(0 if list(n)==['$ds'] and len(n['$ds'])>10 and not [k for k in r if k.startswith('$ds/')] else 1)"
    "$HPCDUMP" extract "$TMP/$f" "$TMP/$b.tree" >/dev/null 2>&1
    refs_queue "$b: the other four datasets read through zarr and xarray equal h5py's" \
        "$TMP/$b.json" "$TMP/$b.tree" --h5 "$TMP/$f" --min-arrays 4
    "$HPCDUMP" refs "$TMP/$f" "/$ds" >"$TMP/out" 2>"$TMP/err"; rc=$?
    expect_eq "$b: refs of /$ds itself: exit 1, one line, nothing on stdout" "1 1 0" \
        "$rc $(wc -l <"$TMP/err") $(wc -c <"$TMP/out")"
done <"$TMP/list"
refs_batch
# the reader finds the bad checksum after listing chunks: its reason, not
# references to the good chunks and the fill value for the rest
check "checksum: /e's reason is the checksum that does not match" \
    $PY -c "import json,sys; r=json.load(open('$TMP/checksum.json'))['refs']; \
n=json.loads(r['.zattrs'])['hpcmount_not_covered']; \
sys.exit(0 if 'checksum of a chunk does not match' in n['e'] else 1)"
"$HPCDUMP" refs "$TMP/super.h5" >"$TMP/out" 2>"$TMP/err"; rc=$?
expect_eq "a broken superblock: exit 1, one line, nothing on stdout" "1 1 0" \
    "$rc $(wc -l <"$TMP/err") $(wc -c <"$TMP/out")"
finish
