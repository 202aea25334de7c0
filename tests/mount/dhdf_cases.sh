#!/bin/sh
# dhdf_cases.sh - plain HDF4 files of every storage the SD interface writes
# (tests/gen/hdf4_cases: number types and byte orders, compression, chunks,
# unlimited dimensions, ranks 0-8, fill values and _FillValue attributes
# of other types, NOFILL, external data, dimension scales named like SDSs,
# odd names, DFSD data sets, GR images beside SDSs), a netCDF-style file
# written by ncgen-hdf, and hrepack's
# compressed and chunked copies of them, through a real mount and hpcdump
# against libhdf4's SDreaddata (tests/mount/conformance.py with
# tests/gen/hdf4_oracle), then `hpcdump refs` of each through fsspec and
# zarr against the same oracle; user.dims and the references' dimension
# names against the names libhdf4 gives (hdf4_oracle -d), their typed
# attributes and fill values against SDreadattr and SDgetfillvalue
# (hdf4_oracle -a).  Also: external data are found beside the
# file, never in the working directory; reads whose bytes libhdf4 leaves
# undefined fail with EIO and a line in .info; attributes of an SDS named
# like a dimension scale are the SDS's own; a rank-0 SDS is a scalar.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
GEN="$top_builddir/tests/gen/hdf4_cases"
O="$top_builddir/tests/gen/hdf4_oracle"
[ -x "$GEN" ] && [ -x "$O" ] || { echo "SKIP: tests/gen/hdf4_cases not built"; exit 77; }
$PY -c 'import numpy, fsspec, zarr' 2>/dev/null || { echo "SKIP: python3-numpy/fsspec/zarr missing"; exit 77; }
C="$TMP/cases"
mkdir -p "$C"
check "hdf4_cases writes its files" "$GEN" "$C"

# a netCDF-style file: variables with record dimensions written by the
# netCDF API of libhdf4 (ncgen-hdf), records of different counts, a
# coordinate variable, char and byte variables, _FillValue attributes
if command -v ncgen-hdf >/dev/null 2>&1; then
    cat >"$TMP/n.cdl" <<'EOF'
netcdf n {
dimensions:
	time = UNLIMITED ; lat = 3 ; lon = 4 ; len = 5 ;
variables:
	float temp(time, lat, lon) ; temp:_FillValue = -1.5f ; temp:units = "K" ;
	short rh(time, lat) ;
	double lat(lat) ;
	int lon(lon) ;
	byte flags(time) ;
	char name(time, len) ;
	long count(lat, lon) ;
	short never(lat, lon) ;
	double rec(time) ; rec:_FillValue = 99. ;
	byte b(lat) ; b:_FillValue = 7 ;
data:
	temp = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 ;
	rh = 1, 2, 3 ;
	lat = 10, 20, 30 ;
	lon = 1, 2, 3, 4 ;
	flags = 1, 2, 3 ;
	name = "abcde", "fghij" ;
	count = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;
}
EOF
    check "ncgen-hdf writes a netCDF-style HDF4 file" ncgen-hdf -b -o "$C/netcdf.hdf" "$TMP/n.cdl"
else
    echo "note: no ncgen-hdf (hdf4-tools): no netCDF-style file"
fi

# hrepack's copies: every SDS compressed (deflate, RLE, skipping Huffman)
# or chunked, with and without deflate
if command -v hrepack >/dev/null 2>&1; then
    for f in types_be comp chunk unlim fill nofill fillattr ranks netcdf; do
        i=0
        for opt in "-t *:GZIP 6" "-t *:RLE" "-t *:HUFF 2" "-c *:2x3" "-c *:3x2 -t *:GZIP 1"; do
            i=$((i + 1))
            # shellcheck disable=SC2086
            (cd "$C" && hrepack -i "$f.hdf" -o "repack${i}_$f.hdf" ${opt%% *} "${opt#* }" >/dev/null 2>&1) ||
                rm -f "$C/repack${i}_$f.hdf"
        done
    done
    n=$(ls "$C" | grep -c '^repack')
    check "hrepack copied most files ($n)" test "$n" -ge 20
else
    echo "note: no hrepack (hdf4-tools): its copies are not checked"
fi

# every SDS through the mount and hpcdump extract against SDreaddata, from
# a working directory holding decoys of the external files
W="$TMP/elsewhere"
mkdir -p "$W"
for x in ext_a.dat ext_b.dat ext_missing.dat; do head -c 4096 /dev/urandom >"$W/$x"; done
export top_srcdir top_builddir
check "every SDS as SDreaddata reads it (conformance.py over $(ls "$C" | grep -c 'hdf$') files)" \
    sh -c 'cd "$1" && "$2" "$3/tests/mount/conformance.py" -v -j 2 "$4" >"$5" 2>&1' \
    sh "$W" "$PY" "$top_srcdir" "$C" "$TMP/conf.out"
sed 's/^/  /' "$TMP/conf.out" | grep -v '^  ok ' | head -40
check "no SDS left out: repeated names and names that are no file name served too" \
    grep -q ', 0 not served$' "$TMP/conf.out"

# the cases' particulars
M="$TMP/m"
cd "$W" || exit 1
if mount_container "$C/ext.hdf" "$M"; then
    expect_eq "external data beside the file, not the decoy in the working directory" \
        "$(cd "$C" && "$HPCDUMP" cat ext.hdf ext | sha256sum)" "$(sha256sum <"$M/ext")"
    check "an external file that is missing gives EIO" sh -c '! cat "$1" >/dev/null 2>&1' sh "$M/ext_missing"
    check ".info names the missing external file" grep -q \
        "reads fail (EIO): .*ext_missing.*external file 'ext_missing.dat', which is not beside the file" "$M/.info"
    unmount_container "$M"
else
    fail "mount ext.hdf"
fi
cd "$TMP" || exit 1
if mount_container "$C/fillattr.hdf" "$M"; then
    check "no data and a _FillValue shorter than an element: EIO" sh -c '! cat "$1" >/dev/null 2>&1' sh "$M/short"
    check ".info says why" grep -q "reads fail (EIO): .*'short': no data written and its _FillValue is shorter" "$M/.info"
    expect_eq "a _FillValue longer than an element: its first bytes" "xxxx" \
        "$(head -c 4 "$M/long_text_none")"
    unmount_container "$M"
else
    fail "mount fillattr.hdf"
fi
xa() { $PY -c "import os,sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode())" "$@"; }
if mount_container "$C/coords.hdf" "$M"; then
    expect_eq "lat (after a dimension scale lat): its own attribute" "mm" "$(xa "$M/lat" user.attr.units)"
    expect_eq "temp (a dimension named temp): its own attribute" "K" "$(xa "$M/temp" user.attr.units)"
    unmount_container "$M"
else
    fail "mount coords.hdf"
fi
expect_eq "rank 0: a scalar (user.shape empty)" "user.shape=\"\"" \
    "$("$HPCDUMP" xattr "$C/ranks.hdf" r0 | grep user.shape)"

# references: what zarr reads through them equals SDreaddata, or a note;
# every file's comparison in one interpreter (refs_verify.py --batch: the
# imports of zarr and numpy cost more than most files' comparison)
R="$TMP/refs"
bad=0
: >"$R.batch"
for f in "$C"/*.hdf; do
    b=$(basename "$f" .hdf)
    mkdir -p "$R/$b"
    if ! "$HPCDUMP" refs "$f" >"$R/$b/r.json" 2>"$R/$b/err"; then
        [ "$(wc -l <"$R/$b/err")" -eq 1 ] || { fail "$b: hpcdump refs refused without one line"; bad=1; }
        continue
    fi
    "$HPCDUMP" extract "$f" "$R/$b/x" >/dev/null 2>&1
    "$O" "$f" >"$R/$b/o" 2>/dev/null
    printf '%s\t%s %s --hdf4 %s --min-arrays 0 --no-xarray\n' \
        "$R/$b/v" "$R/$b/r.json" "$R/$b/x" "$R/$b/o" >>"$R.batch"
done
$PY "$top_srcdir/tests/mount/refs_verify.py" --batch "$R.batch" >"$R.out" 2>&1 ||
    { fail "refs_verify.py --batch: $(tail -3 "$R.out")"; bad=1; }
while IFS="$(printf '\t')" read -r v _; do
    b=$(basename "$(dirname "$v")")
    [ "$(tail -1 "$v" 2>/dev/null)" = "status: 0" ] ||
        { fail "$b: references: $(grep -m2 FAIL "$v" 2>/dev/null)"; bad=1; }
done <"$R.batch"
[ "$bad" -eq 0 ] && pass "references of every file read as SDreaddata does (or a note)"

# dimension names: user.dims and _ARRAY_DIMENSIONS are libhdf4's
# (SDdiminfo); attributes: typed in the references as libhdf4 reads them
# (SDreadattr), a _FillValue of the SDS's type as zarr's fill_value
# (SDgetfillvalue); every file's checks of both in one interpreter
# (refs_xarray.py batch: its start, under ASan above all, costs more than
# a file's checks)
. "$top_srcdir/tests/lib/python_env.sh"
bad=0 badattr=0 n=0
tab=$(printf '\t')
: >"$R.h4"
for f in "$C"/*.hdf; do
    b=$(basename "$f" .hdf)
    [ -s "$R/$b/r.json" ] || continue
    "$O" -d "$f" >"$R/$b/d" 2>/dev/null &&
        printf '%s\th4dims\t%s\t%s\t%s\n' "$R/$b/dv" "$R/$b/d" "$f" "$R/$b/r.json" >>"$R.h4"
    "$O" -a "$f" >"$R/$b/a" 2>/dev/null &&
        printf '%s\th4attrs\t%s\t%s\t%s\n' "$R/$b/av" "$R/$b/a" "$f" "$R/$b/r.json" >>"$R.h4"
done
pypkg "$top_srcdir/tests/mount/refs_xarray.py" batch "$R.h4" >"$R.h4.out" 2>&1 ||
    { fail "refs_xarray.py batch: $(tail -3 "$R.h4.out")"; bad=1; }
while IFS="$tab" read -r out cmd _; do
    b=$(basename "$(dirname "$out")")
    if [ "$cmd" = h4dims ]; then
        [ "$(tail -1 "$out" 2>/dev/null)" = "status: 0" ] ||
            { fail "$b: dimension names: $(grep -m2 -E 'FAIL|Error|checked: 0' "$out")"; bad=1; }
        continue
    fi
    [ "$(tail -1 "$out" 2>/dev/null)" = "status: 0" ] ||
        { fail "$b: attributes: $(grep -m2 -E 'FAIL|Error' "$out")"; badattr=1; }
    a=$(sed -n 's/^attributes checked: //p' "$out")
    n=$((n + ${a:-0}))
done <"$R.h4"
[ "$bad" -eq 0 ] && pass "user.dims and the references' dimension names are libhdf4's"
echo "  attributes compared: $n"
[ "$badattr" -eq 0 ] && check "the references' attributes are libhdf4's, typed (some compared)" test "$n" -gt 100

finish
