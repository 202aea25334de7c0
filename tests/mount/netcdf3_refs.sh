#!/bin/bash
# netcdf3_refs.sh - netCDF-3 files (tests/gen/netcdf3_gen.py, written by
# libnetcdf) through the other ways out: `hpcdump refs` read back by zarr,
# xarray and a Dask cluster (tests/mount/netcdf3_refs.py), -o npy files
# numpy loads, and a run directory that picks the files up beside another
# format; each compared with netCDF4-python.
. "$(dirname "$0")/../lib/lib.sh"
$PY -c "import netCDF4, fsspec, zarr, xarray, dask.distributed" 2>/dev/null ||
    { echo "SKIP: python3-netcdf4/fsspec/zarr/xarray/dask missing (tests/deps.sh)"; exit 77; }
need_fuse
. "$top_srcdir/tests/lib/python_env.sh"
G="$TMP/gen"
check "libnetcdf writes the files" "$PY" "$top_srcdir/tests/gen/netcdf3_gen.py" "$G"

args=""
for f in "$G"/*.nc; do
    b=$(basename "$f" .nc)
    "$HPCDUMP" refs "$f" > "$TMP/$b.json" || fail "$b: hpcdump refs"
    args="$args $f $TMP/$b.json"
done
"$HPCDUMP" refs --inline=0 "$G/types_data.nc" > "$TMP/types0.json" || fail "refs --inline=0"
# shellcheck disable=SC2086
check "zarr and xarray read the references as netCDF4-python" \
    "$PY" "$top_srcdir/tests/mount/netcdf3_refs.py" $args
check "a dask cluster over references (no chunk inline) reads the record variables" \
    "$PY" "$top_srcdir/tests/mount/netcdf3_refs.py" --dask "$G/types_data.nc" "$TMP/types0.json"

mount_container "$G/types_data.nc" "$TMP/npy" -o npy || fail "mount -o npy"
check "-o npy: np.load equals netCDF4-python" "$PY" - "$G/types_data.nc" "$TMP/npy" <<'PYEOF'
import sys, netCDF4, numpy as np
d = netCDF4.Dataset(sys.argv[1]); d.set_auto_maskandscale(False); d.set_auto_chartostring(False)
le = lambda x: x.astype(x.dtype.newbyteorder("<"))
bad = [n for n, v in d.variables.items()
       if (lambda a, e: a.shape != e.shape or a.dtype != le(e).dtype or a.tobytes() != le(e).tobytes())(
           np.load("%s/%s.npy" % (sys.argv[2], n)), np.asarray(v[...]))]
print("npy differs:", bad)
sys.exit(1 if bad else 0)
PYEOF

mkdir -p "$TMP/run"
cp "$G/types_classic.nc" "$G/onerec_data.nc" "$DATA/a_4tasks.sion" "$TMP/run/"
mount_container "$TMP/run" "$TMP/mrun" || fail "mount the run directory"
expect_eq "the run directory shows the netCDF-3 files" "a_4tasks.sion onerec_data.nc types_classic.nc" \
    "$(ls "$TMP/mrun" | tr '\n' ' ' | sed 's/ $//')"
check "run directory: onerec_data.nc as netCDF4-python" \
    pypkg "$top_srcdir/tests/mount/netcdf3_verify.py" "$TMP/run/onerec_data.nc" "$TMP/mrun/onerec_data.nc"
finish
