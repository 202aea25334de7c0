#!/bin/sh
# hdf5_attrvar.sh - attributes of object and region references (null ones,
# a scalar, 2-D, a path holding a newline), of variable-length sequences
# (ints, floats, empty ones, a scalar, 2-D, of references) and of
# compounds holding references, sequences and strings (netCDF-4's
# REFERENCE_LIST, nested, array members) against h5py's attrs[NAME]
# (docs/hdf5.md, "Attributes of references and sequences"): through a real
# mount, hpcdump xattr and the package's getxattr; netCDF4-python's
# DIMENSION_LIST and REFERENCE_LIST the same, and kept out of the zarr
# attributes of hpcdump refs, as libnetcdf keeps them out of xarray's.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/python_env.sh"
need_fuse
"$PY" -c "import netCDF4" 2>/dev/null || { echo "SKIP: python3-netcdf4 missing"; exit 77; }

V="$top_srcdir/tests/mount/hdf5_attrvar.py"
h5py_case "$V" "$TMP/attrvar.h5" "mount: every such attribute equals h5py's"
# xattr PATH NAME PYTHON-BYTES: xattr NAME of PATH is exactly those bytes
xattr() {
    "$PY" -c "import os, sys; sys.exit(os.getxattr(sys.argv[1], sys.argv[2]) != eval(sys.argv[3]))" "$@"
}
check "object references: the targets a line, null ones empty" \
    xattr "$M/a" user.attr.objrefs "b'/target\\n/grp\\n\\n/grp/inner\\n'"
check "user.attrref: object" xattr "$M/a" user.attrref.objrefs "b'object'"
check "a null reference alone: one empty line" xattr "$M/a" user.attr.objref_null "b'\\n'"
check "a target path holding a newline: every element NUL-ended" \
    xattr "$M/a" user.attr.objrefs_nl "b'/target\\0/new\\nline\\0'"
check "region references: path, tab, selection" xattr "$M/a" user.attr.regrefs \
    "b'/target\\tblocks (1,0)-(2,0) (1,2)-(2,2) (1,4)-(2,4)\\n/target\\tall\\n/target\\tpoints (0,1) (3,4) (2,2)\\n'"
check "user.attrref: region" xattr "$M/a" user.attrref.regrefs "b'region'"
check "sequences: the values' text and user.attroffsets" sh -c \
    "test \"\$(getfattr --only-values -n user.attr.vint '$M/a')\" = 1,-2,3,2147483647 &&
     test \"\$(getfattr --only-values -n user.attroffsets.vint '$M/a')\" = 0,3,3,4"
check "empty sequences: no values, equal offsets" sh -c \
    "test \"\$(getfattr --only-values -n user.attr.vint_empty '$M/a')\" = '' &&
     test \"\$(getfattr --only-values -n user.attroffsets.vint_empty '$M/a')\" = 0,0,0,0"
check "a compound of a reference and an int: one xattr per member, its dtype" sh -c \
    "test \"\$(getfattr --only-values -n user.attr:1.reflist '$M/a')\" = 0,1,-5 &&
     test \"\$(getfattr --only-values -n user.attrref:0.reflist '$M/a')\" = object &&
     test \"\$(getfattr --only-values -n user.attrdtype.reflist '$M/a')\" = \"[('dataset', 'O'), ('dim_idx', '<i4')]\""
check "no (no text form) left" sh -c "! getfattr -d -m - -R '$M' 2>/dev/null | grep -q 'no text form'"
check ".info: no warning about attributes" sh -c "! grep -q '^warning: .*attribute' '$M/.info'"
# (getfattr drops a value's last NUL where it shows text: not compared)
check "hpcdump xattr: as getfattr -d shows them" sh -c \
    "'$HPCDUMP' xattr '$TMP/attrvar.h5' /a | grep -v objrefs_nl | sort > '$TMP/x1' &&
     getfattr -d -m - '$M/a' | sed 's|^# file: .*|# file: a|' | grep -v objrefs_nl | sort > '$TMP/x2' &&
     test \$(grep -c '^user.attr' '$TMP/x1') -gt 40 && cmp '$TMP/x1' '$TMP/x2'"
check "package: getxattr as h5py's" pypkg "$V" pkg "$TMP/attrvar.h5"
unmount_container "$M"

mount_container "$TMP/dims.nc" "$M" || fail "mount dims.nc"
check "netCDF-4: DIMENSION_LIST and REFERENCE_LIST as h5py's" "$PY" "$V" tree "$M" "$TMP/dims.nc"
check "DIMENSION_LIST: one sequence of one scale per axis" sh -c \
    "test \"\$(getfattr --only-values -n user.attr.DIMENSION_LIST '$M/temp' | tr '\\n' ' ')\" = '/time /lat ' &&
     test \"\$(getfattr --only-values -n user.attroffsets.DIMENSION_LIST '$M/temp')\" = 0,1,2"
check "package: the same" pypkg "$V" pkg "$TMP/dims.nc"
unmount_container "$M"
"$HPCDUMP" refs "$TMP/dims.nc" > "$TMP/dims.json" 2> "$TMP/refs.err" || fail "hpcdump refs: $(cat "$TMP/refs.err")"
check "hpcdump refs: no DIMENSION_LIST or REFERENCE_LIST in .zattrs" "$PY" "$V" zattrs "$TMP/dims.json"
"$HPCDUMP" refs "$TMP/attrvar.h5" > "$TMP/attrvar.json" 2> "$TMP/refs.err" || fail "hpcdump refs: $(cat "$TMP/refs.err")"
check "hpcdump refs: none of these attributes in .zattrs" sh -c \
    "'$PY' '$V' zattrs '$TMP/attrvar.json' && ! grep -q 'objrefs\\|reflist\\|vint' '$TMP/attrvar.json'"
if "$PY" -c "import xarray, fsspec, zarr" 2>/dev/null; then
    check "xarray opens the references of dims.nc with its dimensions" "$PY" -c "
import sys, xarray as xr
ds = xr.open_dataset('reference://', engine='zarr', backend_kwargs={'consolidated': False,
     'storage_options': {'fo': sys.argv[1], 'remote_protocol': 'file'}})
sys.exit(ds['temp'].dims != ('time', 'lat') or 'DIMENSION_LIST' in ds['temp'].attrs
         or 'REFERENCE_LIST' in ds['lat'].attrs)" "$TMP/dims.json"
fi
finish
