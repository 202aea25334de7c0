#!/usr/bin/python3
"""refs_dask.py GSD_REFS GSD_FILE H5_REFS H5_FILE H5_DATASET SION_REFS SION_RANK_BYTES RANK

A dask.distributed LocalCluster of 2 worker processes computes, over arrays
opened from `hpcdump refs` output (no mount, no copy): the mean over frames
of a GSD series, the sum of an HDF5 gzip dataset, the byte histogram of a
SION rank stream; each is compared with numpy on what the libraries read
(gsd.fl, h5py, the mount's bytes of the rank).  Integer results must be
equal; the float mean may differ only by the order of the additions.
"""
import sys

import dask.array as da
import numpy
from dask.distributed import Client, LocalCluster


def refs_array(refs, component):
    return da.from_zarr("reference://", component=component,
                        storage_options={"fo": refs, "remote_protocol": "file"})


def main():
    gsd_refs, gsd_file, h5_refs, h5_file, h5_ds, sion_refs, sion_bytes, rank = sys.argv[1:9]
    import gsd.fl
    import h5py
    with gsd.fl.open(gsd_file, "rb") as f:
        frames = [i for i in range(f.nframes) if f.chunk_exists(i, "particles/position")]
        pos = numpy.stack([f.read_chunk(i, "particles/position") for i in frames])
    with h5py.File(h5_file, "r") as f:
        h5 = f[h5_ds][()]
    raw = numpy.fromfile(sion_bytes, dtype="u1")
    bad = 0
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        series = refs_array(gsd_refs, "series/particles/position")
        mean = series.astype("f8").mean(axis=0)
        total = refs_array(h5_refs, h5_ds).astype("i8").sum()
        hist = da.bincount(refs_array(sion_refs, rank), minlength=256)
        got_mean, got_total, got_hist = client.compute([mean, total, hist], sync=True)
        workers = len(client.scheduler_info()["workers"])
    if workers != 2:
        print("FAIL: %d workers" % workers); bad += 1
    if series.numblocks[0] != len(frames):
        print("FAIL: the series is not one chunk per frame"); bad += 1
    if not numpy.allclose(got_mean, pos.astype("f8").mean(axis=0), rtol=1e-12, atol=0):
        print("FAIL: GSD series mean"); bad += 1
    if got_total != h5.astype("i8").sum():
        print("FAIL: HDF5 sum %s != %s" % (got_total, h5.astype("i8").sum())); bad += 1
    if not numpy.array_equal(got_hist, numpy.bincount(raw, minlength=256)) or got_hist.sum() == 0:
        print("FAIL: SION byte histogram"); bad += 1
    print("gsd mean over %d frames, hdf5 sum %d, sion histogram of %d bytes: %s" %
          (len(frames), got_total, raw.size, "ok" if not bad else "FAILED"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
