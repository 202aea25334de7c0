#!/bin/sh
# dhdf_mount.sh - distributed HDF sets through a real FUSE mount and hpcdump:
# the fixture set byte-exact against its MANIFEST.json (whole arrays, rows
# crossing the piece boundary, pieces against the fixture's formula), and
# sets written now with the HDF4 C API (tests/gen/dhdf_gen: 2-D tiling in both
# dimensions, 3-D, every HDF4 number type, 40 AHFs, holes with -o allowholes)
# against the generator's own copy of the data.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse

GEN="$top_builddir/tests/gen/dhdf_gen"
FIX="$TMP/fixture"
mkdir -p "$FIX"
cp "$DATA/dhdf/mhf.hdf" "$DATA/dhdf/ahf1.hdf" "$DATA/dhdf/ahf2.hdf" "$FIX/"
MAN="$DATA/dhdf/MANIFEST.json"
man() { $PY -c "import json,sys; m=json.load(open('$MAN')); print(eval(sys.argv[1]))" "$1"; }

# ---- the fixture set --------------------------------------------------
M="$TMP/m"
check "mount the fixture's main file" mount_container "$FIX/mhf.hdf" "$M"
expect_eq "root lists both arrays, their pieces and .info" \
    ".info sds1 sds1.pieces sds2 sds2.pieces" "$(ls -A "$M" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "sds1.pieces lists the chunk names" "sds1_chunk0 sds1_chunk1" \
    "$(ls "$M/sds1.pieces" | tr '\n' ' ' | sed 's/ $//')"
for a in sds1 sds2; do
    expect_eq "$a: size from the manifest" "$(man "m['sds']['$a']['nbytes']")" "$(stat -c %s "$M/$a")"
    expect_eq "$a: sha256 of the assembled array (manifest)" \
        "$(man "m['sds']['$a']['sha256_full_C_order_LE']")" "$(sha "$M/$a")"
    expect_eq "$a: hpcdump cat gives the same bytes" "$(sha "$M/$a")" \
        "$("$HPCDUMP" cat "$FIX/mhf.hdf" "$a" | sha256sum | cut -d' ' -f1)"
done
expect_eq "sds1 rows 290-309 across the piece boundary (manifest)" \
    "$(man "m['sds']['sds1']['rows_290_310_sha256']")" \
    "$(dd if="$M/sds1" bs=800 skip=290 count=20 2>/dev/null | sha256sum | cut -d' ' -f1)"
expect_eq "user.shape of sds1" "500,200" "$($PY -c "import os; print(os.getxattr('$M/sds1','user.shape').decode())")"
expect_eq "user.dtype of sds2" "<f4" "$($PY -c "import os; print(os.getxattr('$M/sds2','user.dtype').decode())")"
expect_eq "attribute units of sds1 (manifest)" "$(man "m['sds']['sds1']['attrs']['units']")" \
    "$($PY -c "import os; print(os.getxattr('$M/sds1','user.attr.units').decode())")"
expect_eq "attribute long_name of sds2 (manifest)" "$(man "m['sds']['sds2']['attrs']['long_name']")" \
    "$($PY -c "import os; print(os.getxattr('$M/sds2','user.attr.long_name').decode())")"
expect_eq "root xattr DHDF_SetId (manifest)" "$(man "m['files']['mhf.hdf']['attributes']['DHDF_SetId']")" \
    "$($PY -c "import os; print(os.getxattr('$M','user.attr.DHDF_SetId').decode())")"
expect_eq "user.origin of the second piece (manifest)" "300,0" \
    "$($PY -c "import os; print(os.getxattr('$M/sds1.pieces/sds1_chunk1','user.origin').decode())")"
# pieces and unaligned reads crossing piece boundaries against the
# fixture's formula (sds1 = row*1000+col, sds2 = row+col/100): numpy's
# own computation, with reads of odd lengths at odd offsets
check "pieces, unaligned and boundary-crossing reads match the fixture's formula" $PY - "$M" <<'EOF'
import numpy as np, os, sys
m = sys.argv[1]
r, c = np.mgrid[0:500, 0:200]
sds1 = (r * 1000 + c).astype('<i4').tobytes()
r, c = np.mgrid[0:100, 0:100]
sds2 = (r.astype(np.float32) + c.astype(np.float32) / np.float32(100)).astype('<f4').tobytes()
assert open(m + '/sds1.pieces/sds1_chunk0', 'rb').read() == sds1[:240000]
assert open(m + '/sds1.pieces/sds1_chunk1', 'rb').read() == sds1[240000:]
b = open(m + '/sds2', 'rb').read()
assert np.allclose(np.frombuffer(b, '<f4'), np.frombuffer(sds2, '<f4'), rtol=0, atol=1e-5)
fd = os.open(m + '/sds1', os.O_RDONLY)
for off, n in [(239998, 7), (239999, 1), (240001, 3), (1, 399998), (123457, 131073), (399990, 100)]:
    assert os.pread(fd, n, off) == sds1[off:off + n], (off, n)
os.close(fd)
a = np.fromfile(m + '/sds1', os.getxattr(m + '/sds1', 'user.dtype').decode())
shape = tuple(int(x) for x in os.getxattr(m + '/sds1', 'user.shape').decode().split(','))
assert a.reshape(shape)[499, 199] == 499199
EOF
check ".info names the set id" grep -q '^set_id: 19990101T000000Z:mhf.hdf:0$' "$M/.info"
check ".info has the File_Info table" grep -q '^2	ahf2.hdf	localhost	' "$M/.info"
check ".info has every chunk table" grep -q '^1	2	sds1_chunk1	200,200	300,0$' "$M/.info"
check ".info: ChunkName width taken from the vdata (64)" grep -q 'ChunkName width 64' "$M/.info"
check "write is refused (read-only)" sh -c "! echo x 2>/dev/null > '$M/sds1'"

# dimension names: user.dims of every array and piece, and the names in the
# references, are those libhdf4 gives each SDS's dimensions (SDdiminfo);
# attributes: the references' typed values are SDreadattr's, of the main
# file (root and arrays) and of each piece's own SDS.  All six checks in
# one interpreter (refs_xarray.py batch: its start, with the ASan runtime
# preloaded in sanitizer builds, costs more than a check)
. "$top_srcdir/tests/lib/python_env.sh"
O="$top_builddir/tests/gen/hdf4_oracle"
"$HPCDUMP" refs "$FIX/mhf.hdf" >"$TMP/fix.json" || fail "hpcdump refs of the fixture"
tab=$(printf '\t')
: >"$TMP/h4.batch"
for f in mhf ahf1 ahf2; do
    dirs=""
    [ $f = mhf ] || dirs="${tab}sds1.pieces,sds2.pieces"
    "$O" -d "$FIX/$f.hdf" >"$TMP/$f.dims" || fail "hdf4_oracle -d $f.hdf"
    "$O" -a "$FIX/$f.hdf" >"$TMP/$f.attrs" || fail "hdf4_oracle -a $f.hdf"
    printf '%s\th4dims\t%s\t%s\t%s%s\n' "$TMP/$f.dv" "$TMP/$f.dims" "$FIX/mhf.hdf" "$TMP/fix.json" "$dirs" \
        >>"$TMP/h4.batch"
    printf '%s\th4attrs\t%s\t%s\t%s%s\n' "$TMP/$f.av" "$TMP/$f.attrs" "$FIX/mhf.hdf" "$TMP/fix.json" "$dirs" \
        >>"$TMP/h4.batch"
done
pypkg "$top_srcdir/tests/mount/refs_xarray.py" batch "$TMP/h4.batch" >"$TMP/h4.out" 2>&1 ||
    fail "refs_xarray.py batch: $(tail -3 "$TMP/h4.out")"
for f in mhf ahf1 ahf2; do
    check "$f.hdf: user.dims and the references' dimension names are libhdf4's" \
        test "$(tail -1 "$TMP/$f.dv" 2>/dev/null)" = "status: 0"
    check "$f.hdf: the references' attributes are libhdf4's, typed" \
        test "$(tail -1 "$TMP/$f.av" 2>/dev/null)" = "status: 0"
    grep -h -E 'FAIL|Error' "$TMP/$f.dv" "$TMP/$f.av" 2>/dev/null | head -4
done

# ---- sets written now with the HDF4 C API ----------------------------
# every array and every piece against the generator's own copy of the data
for case in tile2d cube3d types many; do
    S="$TMP/$case"
    check "dhdf_gen $case" "$GEN" "$S" "$case"
    MP="$TMP/m_$case"
    check "mount $case" mount_container "$S/main.hdf" "$MP"
    # the generator's copies against the mount (one sha256sum each) and
    # against one `hpcdump cat` of them all in turn (each array on its own
    # only when the whole differs, to name it)
    (cd "$S" && for e in *.expect *.pieces/*.expect; do [ -f "$e" ] && echo "${e%.expect}"; done) >"$TMP/$case.list"
    n=$(wc -l <"$TMP/$case.list")
    check "$case: the generator wrote arrays and pieces" test "$n" -gt 0
    (cd "$S" && sed 's/$/.expect/' "$TMP/$case.list" | xargs -r -d '\n' sha256sum) | sed 's/\.expect$//' >"$TMP/$case.want"
    (cd "$MP" && xargs -r -d '\n' sha256sum <"$TMP/$case.list") >"$TMP/$case.got" 2>&1
    diff "$TMP/$case.want" "$TMP/$case.got" | sed -n "s|^< [0-9a-f]*  |  differs: $case/|p" >"$TMP/$case.diff"
    bad=$(wc -l <"$TMP/$case.diff")
    cat "$TMP/$case.diff"
    want=$(cd "$S" && sed 's/$/.expect/' "$TMP/$case.list" | xargs -d '\n' cat | sha256sum)
    got=$(xargs -d '\n' "$HPCDUMP" cat "$S/main.hdf" <"$TMP/$case.list" | sha256sum)
    if [ "$want" != "$got" ]; then
        bad=$((bad + 1))
        while read -r rel; do
            [ "$(sha "$S/$rel.expect")" = "$("$HPCDUMP" cat "$S/main.hdf" "$rel" | sha256sum | cut -d' ' -f1)" ] ||
                echo "  hpcdump differs: $case/$rel"
        done <"$TMP/$case.list"
    fi
    expect_eq "$case: $n arrays and pieces byte-exact through the mount and hpcdump" 0 "$bad"
done
# compressed pieces larger than the memory allowed for decoded pieces
# (cache_size) are read box by box instead of whole: same bytes
expect_eq "cube3d: compressed piece read box by box with a tiny cache" "$(sha "$TMP/cube3d/line.expect")" \
    "$("$HPCDUMP" -o cache_size=4K,blocksize=512 cat "$TMP/cube3d/main.hdf" line | sha256sum | cut -d' ' -f1)"
expect_eq "types: int16 dtype" "<i2" "$($PY -c "import os; print(os.getxattr('$TMP/m_types/int16','user.dtype').decode())")"
expect_eq "types: little-endian stored float64 dtype" "<f8" "$($PY -c "import os; print(os.getxattr('$TMP/m_types/lfloat64','user.dtype').decode())")"
expect_eq "tile2d: the plain SDS of the main file is an array" "5,6" \
    "$($PY -c "import os; print(os.getxattr('$TMP/m_tile2d/plain','user.shape').decode())")"
expect_eq "tile2d: numeric attributes rendered as text" "-3,9" \
    "$($PY -c "import os; print(os.getxattr('$TMP/m_tile2d/temp','user.attr.valid_range').decode())")"
expect_eq "tile2d: 12 pieces" 12 "$(ls "$TMP/m_tile2d/temp.pieces" | wc -l)"
check "cube3d: strided 3-D reads of odd sizes match" $PY - "$TMP/m_cube3d/cube" "$TMP/cube3d/cube.expect" <<'EOF'
import os, sys, random
want = open(sys.argv[2], 'rb').read()
fd = os.open(sys.argv[1], os.O_RDONLY)
rnd = random.Random(7)
for _ in range(300):
    off = rnd.randrange(len(want)); n = rnd.randrange(1, 3000)
    assert os.pread(fd, n, off) == want[off:off + n], (off, n)
EOF

# holes: refused without the option (dhdf_bad.sh), zeros with it
S="$TMP/holes"
"$GEN" "$S" holes
MH="$TMP/m_holes"
check "mount a set with holes with -o allowholes" mount_container "$S/main.hdf" "$MH" -o allowholes
expect_eq "holes served as zeros" "$(sha "$S/temp.expect")" "$(sha "$MH/temp")"
check ".info says holes are served as zeros" grep -q '^holes: 32 elements uncovered, served as zeros (-o allowholes)$' "$MH/.info"

# a plain HDF4 file (no DHDF attributes): its SDSs as arrays
S="$TMP/plain"
"$GEN" "$S" plain
MPL="$TMP/m_plain"
check "mount a plain HDF4 file" mount_container "$S/main.hdf" "$MPL"
expect_eq "its SDS is served byte-exact" "$(sha "$S/counts.expect")" "$(sha "$MPL/counts")"
check ".info says it is a plain HDF4 file" grep -q '^role: plain HDF4 file' "$MPL/.info"

# an unlimited dimension without records (netCDF-style files): an empty
# array whose user.shape keeps the 0, as SDgetinfo gives it
S="$TMP/unw"
"$GEN" "$S" unwritten
MU="$TMP/m_unw"
check "mount a plain file of unwritten SDSs" mount_container "$S/main.hdf" "$MU"
expect_eq "no records: an empty file" 0 "$(stat -c %s "$MU/norecords")"
expect_eq "no records: user.shape 0,3" "0,3" \
    "$($PY -c "import os; print(os.getxattr('$MU/norecords','user.shape').decode())")"
check "no records: .info has no warning" sh -c "! grep -q '^warning:' '$MU/.info'"
expect_eq "unwritten SDS: libhdf4's fill value" "$(sha "$S/part.expect")" "$(sha "$MU/part")"

# an associated file mounted alone: its pieces as plain arrays
MA="$TMP/m_ahf"
check "mount an associated file alone" mount_container "$FIX/ahf1.hdf" "$MA"
expect_eq "its piece is a plain array with the piece's bytes" \
    "$(sha "$M/sds1.pieces/sds1_chunk0")" "$(sha "$MA/sds1_chunk0")"
check ".info says it is an associated file" grep -q '^role: associated file mounted alone' "$MA/.info"

# an associated file that changes under the mount: reads fail (EIO), never
# old metadata with new bytes; .info says which file changed
S="$TMP/changing"
"$GEN" "$S" tile2d
MC="$TMP/m_changing"
check "mount a set whose AHF will change" mount_container "$S/main.hdf" "$MC"
expect_eq "before the change: the array byte-exact" "$(sha "$S/temp.expect")" "$(sha "$MC/temp")"
truncate -s 3000 "$S/ahf2.hdf"
# libhdf4's files are checked (fstat and path) after every read
check "after ahf2.hdf was truncated: reading the array fails" \
    wait_until sh -c "! cat '$MC/temp' '$MC'/temp.pieces/* >/dev/null 2>&1"
check ".info names the changed file" grep -q "ahf2.hdf changed since mount" "$MC/.info"

finish
