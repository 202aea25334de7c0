#!/bin/bash
# refs_xarray.sh - xarray through the references (hpcmount.open(f).dataset())
# sees netCDF-4 files written by netCDF4-python and HDF5 files written by
# h5py, with dimension scales and without, as xarray on the file itself
# does (engine="netcdf4", libnetcdf): the same variables, dimensions,
# coordinates, attributes and CF-decoded values, every group
# (tests/mount/refs_xarray.py).  The mount's user.dims are netCDF4-python's
# dimensions; the references' JSON holds typed values, NaN as zarr writes
# it, _FillValue in fill_value; the helper and -o inproc give the same.
# Soft links to groups are groups again, as libnetcdf shows them (a cycle
# is a note: libnetcdf loops on it).
# The public corpus' HDF5 files are compared so in tests/mount/refs_corpus.sh.
. "$(dirname "$0")/../lib/lib.sh"
for m in netCDF4 xarray zarr fsspec h5py; do
    "$PY" -c "import $m" 2>/dev/null || { echo "SKIP: python3 module $m missing (tests/deps.sh)"; exit 77; }
done
need_fuse
. "$top_srcdir/tests/lib/python_env.sh"
X="$top_srcdir/tests/mount/refs_xarray.py"

pypkg "$X" gen "$TMP/f" || fail "refs_xarray.py gen wrote no files"
check "xarray through the references equals xarray on the file (netCDF4-python and h5py files, every group)" \
    pypkg "$X" compare "$TMP"/f/*.nc "$TMP"/f/*.h5
for f in "$TMP"/f/*.nc "$TMP"/f/*.h5; do
    b=$(basename "$f")
    mount_container "$f" "$TMP/m-$b" || { fail "$b: mount"; continue; }
    check "$b: user.dims of every variable are netCDF4-python's dimensions" \
        pypkg "$X" dims "$TMP/m-$b" "$f"
done
"$HPCDUMP" refs "$TMP/f/cf.nc" >"$TMP/cf.json" || fail "refs of cf.nc"
"$HPCDUMP" refs "$TMP/f/scales_plain.h5" >"$TMP/cf_plain.json" || fail "refs of scales_plain.h5"
"$HPCDUMP" refs "$TMP/f/scales.h5" >"$TMP/cf_scales.json" || fail "refs of scales.h5"
check "references: typed attributes, netCDF's own hidden, NaN as zarr writes it, _FillValue as fill_value" \
    pypkg "$X" json "$TMP/cf.json"
"$HPCDUMP" refs "$TMP/f/cycle.hdf5" >"$TMP/cycle.json" || fail "refs of cycle.hdf5"
check "soft links to groups: walked under the link's name, a cycle and a dangling link noted" \
    $PY -c "import json,sys; r=json.load(open('$TMP/cycle.json'))['refs']; \
n=json.loads(r['.zattrs'])['hpcmount_not_covered']; u=json.loads(r['lg/.zattrs'])['hpcmount_not_covered']; \
sys.exit(0 if 'lg/d/0.0' in r and 'g/d/0.0' in r and 'cycle' in u['up'] and 'dangling' in n and \
not any(k.startswith(('lg/up', 'g/up')) for k in r) else 1)"
"$HPCDUMP" refs "$TMP/f/extlink.h5" >"$TMP/ext.json" || fail "refs of extlink.h5"
check "external links: the other file's chunks, named by its path, as libhdf5 found it" \
    $PY -c "import json,sys; d=json.load(open('$TMP/ext.json')); t=d['templates']; r=d['refs']; \
u=[k for k in t if t[k] == '$TMP/f/ext_data.hdf5']; \
sys.exit(0 if u and r['to_grid/temp/0.0'][0] == '{{%s}}' % u[0] and r['to_w/0.0'][0] == '{{%s}}' % u[0] else 1)"
"$HPCDUMP" refs "$TMP/f/up/ext_guards.hdf5" >"$TMP/guards.json" || fail "refs of ext_guards.hdf5"
check "external links: a missing file, a cycle, a file out of the directory are notes" \
    $PY -c "import json,sys; r=json.load(open('$TMP/guards.json'))['refs']; \
n=json.loads(r['.zattrs'])['hpcmount_not_covered']; \
sys.exit(0 if set(n) == {'missing', 'loop', 'out'} and 'ok/0' in r and \
not any(k.startswith(('missing/', 'loop/', 'out/')) for k in r) else 1)"
for f in "$TMP/f/cf.nc" "$TMP/f/scales.h5" "$TMP/f/links.h5" "$TMP/f/extlink.h5"; do
    "$HPCDUMP" refs "$f" >"$TMP/helper.json"
    "$HPCDUMP" -o inproc refs "$f" >"$TMP/inproc.json"
    check "$(basename "$f"): the same references through the helper and in process" \
        cmp -s "$TMP/helper.json" "$TMP/inproc.json"
done

finish
