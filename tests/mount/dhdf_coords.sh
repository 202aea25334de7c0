#!/bin/sh
# dhdf_coords.sh - HDF4 coordinate variables (dimension scales) written by
# libhdf4 itself (tests/gen/hdf4_cases: coordvars.hdf) through a real
# mount, hpcdump and the Python package, against libhdf4
# (tests/gen/hdf4_oracle: SDreaddata's bytes, SDdiminfo's names): scales
# set with SDsetdimscale (a dimension shared by two SDSs, an unlimited
# one), a dimension with attributes and no scale (a coordinate variable
# with no data: its fill value), a dimension named with SDsetdimname only
# (no coordinate variable), and a scale named like an SDS (the SDS keeps
# the name; the scale is served as t~6, dhdf_names.sh).  The references
# make the scales xarray coordinates, as libnetcdf's HDF4 layer does.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
GEN="$top_builddir/tests/gen/hdf4_cases"
O="$top_builddir/tests/gen/hdf4_oracle"
[ -x "$GEN" ] && [ -x "$O" ] || { echo "SKIP: tests/gen/hdf4_cases not built"; exit 77; }
$PY -c 'import numpy, fsspec, zarr, xarray' 2>/dev/null || { echo "SKIP: python3-numpy/fsspec/zarr/xarray missing"; exit 77; }
. "$top_srcdir/tests/lib/python_env.sh"
mkdir -p "$TMP/all"
check "hdf4_cases writes its files" "$GEN" "$TMP/all"
C="$TMP/c"
mkdir -p "$C"
cp "$TMP/all/coordvars.hdf" "$C/"
F="$C/coordvars.hdf"
"$O" "$F" >"$TMP/o" && "$O" -d "$F" >"$TMP/d"
check "libhdf4 lists 5 coordinate variables" test "$(grep -c '^coord ' "$TMP/o")" -eq 5

# every SDS and coordinate variable: bytes, shape, type as SDreaddata
# (conformance.py: the mount and hpcdump extract, by index; the scale
# named like an SDS under its alias)
export top_srcdir top_builddir
"$PY" "$top_srcdir/tests/mount/conformance.py" -v -j 1 "$C" >"$TMP/conf" 2>&1
sed 's/^/  /' "$TMP/conf"
check "conformance: every coordinate variable compared, the one named like an SDS too" \
    grep -Eq "^ok coordvars.hdf( \([0-9.]+ CPU s\))?$" "$TMP/conf"

M="$TMP/m"
hexof() { od -An -v -tx1 "$1" | tr -d ' \n'; }
want() {    # SDreaddata's bytes of the first block named $1 ("coord" or "sds" $2)
    h=$(printf %s "$1" | od -An -tx1 | tr -d ' \n')
    awk -v k="$2" -v h="$h" '$1 == k && $3 == h { getline; print; f = 1; exit }
        END { if (!f) print "(not in the oracle)" }' "$TMP/o"
}
xa() { $PY -c "import os,sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode())" "$@"; }
if mount_container "$F" "$M"; then
    for n in y x time no_scale; do
        expect_eq "$n: the mount's bytes are SDreaddata's" "$(want "$n" coord)" "$(hexof "$M/$n")"
        expect_eq "$n: user.dims is its own dimension" "$n" "$(xa "$M/$n" user.dims)"
        expect_eq "$n: hpcdump cat gives the mount's bytes" "$(hexof "$M/$n")" \
            "$("$HPCDUMP" cat "$F" "$n" | od -An -v -tx1 | tr -d ' \n')"
    done
    expect_eq "y: user.shape" "3" "$(xa "$M/y" user.shape)"
    expect_eq "y: user.dtype (a float64 scale)" "<f8" "$(xa "$M/y" user.dtype)"
    expect_eq "x: user.dtype (an int16 scale)" "<i2" "$(xa "$M/x" user.dtype)"
    expect_eq "y: SDsetdimstrs' label as long_name" "northing" "$(xa "$M/y" user.attr.long_name)"
    expect_eq "y: SDsetdimstrs' unit as units" "km" "$(xa "$M/y" user.attr.units)"
    expect_eq "time: the unlimited dimension's scale, 6 records" "6" "$(xa "$M/time" user.shape)"
    expect_eq "no_scale: attributes without a scale" "described only" \
        "$(xa "$M/no_scale" user.attr.long_name)"
    check "no dimension named with SDsetdimname only is a file" test ! -e "$M/only_named"
    expect_eq "t: the SDS keeps the name, its bytes" "$(want t sds)" "$(hexof "$M/t")"
    expect_eq "t: the SDS's own attribute" "own" "$(xa "$M/t" user.attr.units)"
    expect_eq "data: its dimensions are the scales' names" "y,x" "$(xa "$M/data" user.dims)"
    check ".info: the scales are coordinate arrays" \
        test "$(grep -c '^[a-z_~0-9]*	coordinate	' "$M/.info")" -eq 5
    check ".info: the scale named like an SDS is served under another name, with why" grep -qx \
        "note: coordinate variable 6 't' served as 't~6': SDS 0 has its name (it is the scale of a dimension of that name)" \
        "$M/.info"
    unmount_container "$M"
else
    fail "mount coordvars.hdf"
fi

# hpcdump ls and extract: the same arrays and attributes
expect_eq "hpcdump ls: every SDS and every coordinate variable" \
    ".info data described named no_scale other rec series t time t~6 x y" \
    "$("$HPCDUMP" ls "$F" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
"$HPCDUMP" extract "$F" "$TMP/x" >/dev/null 2>&1
expect_eq "hpcdump extract: y's bytes" "$(want y coord)" "$(hexof "$TMP/x/y")"

# Python: c.array() equals SDreaddata's values; the references (and
# dataset()) make the scales xarray coordinates with libhdf4's values and
# dimension names
"$HPCDUMP" refs "$F" >"$TMP/r.json"
check "Python and xarray through the references: coordinates as libhdf4 reads them" \
    pypkg - "$F" "$TMP/o" "$TMP/r.json" <<'EOF'
import sys, numpy as np, xarray as xr, hpcmount
path, oracle, refs = sys.argv[1:]
lines = open(oracle).read().split("\n")
lib = {}
for i in range(0, len(lines) - 1, 2):
    kind, _, h, shape, _, _, _ = lines[i].split()
    name = bytes.fromhex(h).decode()
    lib.setdefault(name, (kind, bytes.fromhex(lines[i + 1]), [int(s) for s in shape.split(",")]))
bad = []
ds = xr.open_dataset("reference://", engine="zarr", backend_kwargs=dict(
    consolidated=False, storage_options=dict(fo=refs, remote_protocol="file")))
with hpcmount.open(path) as c:
    for name, (kind, data, shape) in lib.items():
        a = c.array("/" + name)
        want = np.frombuffer(data, a.dtype).reshape(shape)
        if not np.array_equal(a, want):
            bad.append("%s: c.array() %s, libhdf4 %s" % (name, a, want))
        v = ds[name]
        if kind == "coord" and (name not in ds.coords or v.dims != (name,)):
            bad.append("%s: not an xarray coordinate of its dimension (%s)" % (name, v.dims))
        if not np.array_equal(v.values, want):
            bad.append("%s: xarray %s, libhdf4 %s" % (name, v.values, want))
with hpcmount.open(path) as c:     # the one-line way: the same Dataset
    one = c.dataset()
    for name in ("y", "x", "time", "no_scale"):
        if name not in one.indexes or not np.array_equal(one[name].values, ds[name].values):
            bad.append("dataset(): %s is no index coordinate equal to the references'" % name)
for name in ("y", "x"):
    if not np.array_equal(ds["data"][name].values, ds[name].values):
        bad.append("data's %s coordinate differs" % name)
if ds["data"].dims != ("y", "x"):
    bad.append("data: dims %s" % (ds["data"].dims,))
print("\n".join(bad) or "%d arrays" % len(lib))
sys.exit(1 if bad else 0)
EOF
finish
