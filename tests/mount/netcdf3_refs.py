#!/usr/bin/python3
"""netcdf3_refs.py [--dask] FILE REFS [FILE REFS ...] - `hpcdump refs` of
netCDF-3 files read back by zarr and xarray against netCDF4-python: every
variable's values, its dimension names (_ARRAY_DIMENSIONS from the netCDF
dimensions) and, in zarr, one chunk per record of a record variable.
--dask: also a dask.distributed cluster of 2 worker processes reads every
numeric record variable of the first file: its values and maximum.  Exit 1 when anything differs.
"""
import json
import sys

import fsspec
import netCDF4
import numpy as np
import xarray as xr
import zarr


def le_bytes(x):
    return x.astype(x.dtype.newbyteorder("<")).tobytes()


def library(path):
    d = netCDF4.Dataset(path)
    d.set_auto_maskandscale(False)
    d.set_auto_chartostring(False)
    return d


def mapper(refs):
    with open(refs) as fh:
        return fsspec.filesystem("reference", fo=json.load(fh)).get_mapper("")


def check_file(path, refs):
    bad = []
    d, m = library(path), mapper(refs)
    g = zarr.open_group(m, mode="r")
    ds = xr.open_dataset(m, engine="zarr", backend_kwargs=dict(consolidated=False),
                         mask_and_scale=False, decode_times=False)
    nrec = max((len(x) for x in d.dimensions.values() if x.isunlimited()), default=0)
    for n, v in d.variables.items():
        e, a = np.asarray(v[...]), g[n]
        if a.shape != e.shape or le_bytes(a[...]) != le_bytes(e):
            bad.append("%s: zarr %s differs from netCDF4 %s" % (n, a.shape, e.shape))
        if v.dimensions and d.dimensions[v.dimensions[0]].isunlimited() and a.chunks[0] != 1:
            bad.append("%s: chunks %s, want one record each" % (n, a.chunks))
        x = ds[n]
        if x.dims != v.dimensions or le_bytes(x.values) != le_bytes(e):
            bad.append("%s: xarray %s differs (netCDF4 dims %s)" % (n, x.dims, v.dimensions))
    print("%s: %d variables, %d records, %d differences" % (path, len(d.variables), nrec, len(bad)))
    return bad


def dask_reads(path, refs):
    import dask.array as da
    from dask.distributed import Client, LocalCluster
    d, bad = library(path), []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cl, Client(cl):
        g = zarr.open_group(mapper(refs), mode="r")
        for n, v in d.variables.items():
            if not v.dimensions or not d.dimensions[v.dimensions[0]].isunlimited() or v.dtype.kind not in "iuf":
                continue
            arr = da.from_zarr(g[n])
            got, top = arr.compute(), da.nanmax(arr).compute()
            e = np.asarray(v[...])
            if le_bytes(got) != le_bytes(e) or not np.array_equal(top, np.nanmax(e), equal_nan=True):
                bad.append("%s: dask's values or maximum differ from netCDF4's" % n)
    print("dask: record variables of %d variables, %d differences" % (len(d.variables), len(bad)))
    return bad


def main(argv):
    use_dask = argv[1:2] == ["--dask"]
    args = argv[2:] if use_dask else argv[1:]
    bad = []
    for path, refs in zip(args[::2], args[1::2]):
        bad += check_file(path, refs)
    if use_dask:
        bad += dask_reads(args[0], args[1])
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
