#!/usr/bin/python3
"""refs_bench.py H5 H5_REFS H5_MOUNTED GSD GSD_REFS [--figures] - the
side-by-side run of bench/refs_bench.sh: Dask (threaded scheduler, 2
threads, the machine's cores) over hpcmount references vs over h5py vs over
the mount on an HDF5 gzip dataset, and a GSD series mean over references vs
a gsd.hoomd loop.  Every result is compared with the first; best of RUNS
(env, default 3).  --figures prints one "name value unit" line per figure
instead of the table (what bench/compare.sh reads): refsdask.GROUP.SIDE in
seconds and refsdask.GROUP.REF/SIDE, the reference's time over the side's."""
import os
import sys
import time

import dask
import dask.array as da
import h5py
import numpy

RUNS = int(os.environ.get("RUNS", "3"))
FRAMES_PER_TASK = int(os.environ.get("FRAMES_PER_TASK", "10"))


def best(fn):
    times, out = [], None
    for _ in range(RUNS):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def refs(fo, comp, chunks=None):
    return da.from_zarr("reference://", component=comp, chunks=chunks,
                        storage_options={"fo": fo, "remote_protocol": "file"})


def stored(fo, comp, chunks=None):
    """The same over hpcmount.refs_store(): a pread per chunk from files
    it keeps open, in place of fsspec's reference filesystem."""
    import hpcmount
    return da.from_zarr(hpcmount.refs_store(fo), component=comp, chunks=chunks)


def hdf5_rows(ds, name, h5refs, mounted):
    """The sum of dataset name three ways; rows of (group, side, reference
    side, measure, s, MB)."""
    chunks = ds.chunks
    mb = ds.size * ds.dtype.itemsize / 1e6
    t_refs, s_refs = best(lambda: refs(h5refs, name).sum().compute())
    t_h5, s_h5 = best(lambda: da.from_array(ds, chunks=chunks).sum().compute())
    mm = numpy.memmap(mounted, dtype=ds.dtype, mode="r", shape=ds.shape)
    t_mnt, s_mnt = best(lambda: da.from_array(mm, chunks=chunks).sum().compute())
    assert s_refs == s_h5 == s_mnt, (s_refs, s_h5, s_mnt)
    return [(name, "refs", "h5py", "hdf5 %s sum, Dask over hpcmount refs" % name, t_refs, mb),
            (name, "h5py", "h5py", "hdf5 %s sum, Dask over h5py" % name, t_h5, mb),
            (name, "mount", "h5py", "hdf5 %s sum, Dask over the mount (memmap)" % name, t_mnt, mb)]


def report(rows, figures):
    """The table of rows, or their figures; the reference of a group is the
    row whose side is its reference side."""
    ref = {(g, side): t for g, side, _, _, t, _ in rows}
    if not figures:
        print("%-48s %8s %8s %9s" % ("measure", "s", "MB/s", "x ref"))
    for g, side, ref_side, label, t, mb in rows:
        r = ref[(g, ref_side)]
        if not figures:
            print("%-48s %8.3f %8.0f %9.2f" % (label, t, mb / t, r / t))
            continue
        print("refsdask.%s.%s %.6g s" % (g, side, t))
        if side != ref_side:
            print("refsdask.%s.%s/%s %.6g x" % (g, ref_side, side, r / t))


def main():
    h5, h5refs, h5mnt, gsdf, gsdrefs = sys.argv[1:6]
    figures = sys.argv[6:7] == ["--figures"]
    dask.config.set(scheduler="threads", num_workers=2)
    f = h5py.File(h5, "r")
    rows = []
    for name in ("gzip", "gzip_shuffle"):
        rows += hdf5_rows(f[name], name, h5refs, os.path.join(h5mnt, name))
    mb = f["gzip"].size * 8 / 1e6
    chunks = f["gzip"].chunks
    import gsd.hoomd

    def hoomd_loop():
        with gsd.hoomd.open(gsdf, "rb") as t:
            acc = None
            for fr in t:
                p = fr.particles.position.astype("f8")
                acc = p if acc is None else acc + p
            return acc / len(t)
    t_loop, m_loop = best(hoomd_loop)
    # one Dask task per FRAMES_PER_TASK frames: zarr reads their chunks
    # (one reference each) in one call, and the task overhead of one task
    # per 120 KB frame is gone; a few frames per task, not hundreds, keep
    # each task's arrays small (250 frames per task: 30 MB, then 60 MB as
    # f8, per task, which took 8x longer than 10 here)
    series = refs(gsdrefs, "series/particles/position")
    per = (FRAMES_PER_TASK,) + series.shape[1:]
    t_gref, m_gref = best(lambda: refs(gsdrefs, "series/particles/position", per)
                          .astype("f8").mean(axis=0).compute())
    t_g1, m_g1 = best(lambda: series.astype("f8").mean(axis=0).compute())
    t_gst, m_gst = best(lambda: stored(gsdrefs, "series/particles/position", per)
                        .astype("f8").mean(axis=0).compute())
    t_gst1, m_gst1 = best(lambda: stored(gsdrefs, "series/particles/position")
                          .astype("f8").mean(axis=0).compute())
    gmb = os.path.getsize(gsdf) / 1e6
    for m in (m_gref, m_g1, m_gst, m_gst1):
        assert numpy.allclose(m_loop, m, rtol=1e-9), "gsd means differ"
    rows += [("gsd", "refs", "hoomd", "gsd series mean, Dask refs, %d frames/task"
              % FRAMES_PER_TASK, t_gref, gmb),
             ("gsd", "refs1", "hoomd", "gsd series mean, Dask refs, 1 frame/task", t_g1, gmb),
             ("gsd", "store", "hoomd", "gsd series mean, Dask refs_store, %d frames/task"
              % FRAMES_PER_TASK, t_gst, gmb),
             ("gsd", "store1", "hoomd", "gsd series mean, Dask refs_store, 1 frame/task",
              t_gst1, gmb),
             ("gsd", "hoomd", "hoomd", "gsd series mean, gsd.hoomd loop", t_loop, gmb)]
    print("# %s: %.0f MB f8 gzip (and +shuffle), chunks %s; gsd %.0f MB; best of %d; load %s" %
          (os.path.basename(h5), mb, chunks, gmb, RUNS, os.getloadavg()))
    report(rows, figures)


if __name__ == "__main__":
    sys.exit(main())
