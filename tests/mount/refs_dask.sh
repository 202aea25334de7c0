#!/bin/bash
# refs_dask.sh - a dask.distributed cluster of 2 worker processes over
# `hpcdump refs` output: a GSD series mean, an HDF5 gzip dataset sum, a SION
# rank's byte histogram, equal to numpy on the libraries' values
# (tests/mount/refs_dask.py).  The SION bytes compared are the mount's.
. "$(dirname "$0")/../lib/lib.sh"
$PY -c "import fsspec, zarr, dask.array, dask.distributed, h5py, gsd.fl" 2>/dev/null ||
    { echo "SKIP: python3-dask/distributed/zarr/fsspec/h5py/gsd missing (tests/deps.sh)"; exit 77; }
need_fuse
G="$DATA/gsd/hoomd_traj.gsd"
S="$DATA/b_multichunk.sion"
$PY "$top_srcdir/tests/gen/refs_h5gen.py" "$TMP/t.h5"
"$HPCDUMP" refs --inline=0 "$G" >"$TMP/gsd.json" || fail "refs of $G"
"$HPCDUMP" refs --inline=0 "$TMP/t.h5" >"$TMP/h5.json" || fail "refs of t.h5"
"$HPCDUMP" refs --inline=0 "$S" >"$TMP/sion.json" || fail "refs of $S"
mount_container "$S" "$TMP/m-sion" || fail "mount $S"
check "dask cluster over references: GSD mean, HDF5 gzip sum, SION histogram" \
    $PY "$top_srcdir/tests/mount/refs_dask.py" "$TMP/gsd.json" "$G" "$TMP/h5.json" "$TMP/t.h5" \
    grp/gzip_shuffle "$TMP/sion.json" "$TMP/m-sion/rank-000002" rank-000002
finish
