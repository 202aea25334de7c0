#!/usr/bin/python3
"""refs_floor.py GSD GSD_REFS [--figures] - what one frame of a GSD series
costs at each layer between the file and Dask's mean over references
(bench/refs_bench.sh runs it after refs_bench.py): the same mean of
particles/position over every frame,
  pread    the frames' bytes, one pread each from a file kept open, into
           arrays (the I/O floor of any reader);
  memstore zarr over a dict holding those bytes (zarr's own cost per chunk,
           no file at all);
  reffs    zarr over fsspec's reference filesystem, as Dask's tasks read it
           (adds the reference lookup and a file open per chunk);
  hoomd    a gsd.hoomd loop (the reference of refs_bench.sh's goal);
each with the same astype("f8") and sum per frame, best of RUNS (env, 3).
Prints microseconds per frame.  --figures: "refsfloor.SIDE us" lines."""
import json
import os
import sys

import numpy
import zarr

from refs_bench import best     # best of RUNS, as refs_bench.py times

NAME = "series/particles/position"


def mean_of(frames):
    acc, n = None, 0
    for p in frames:
        p = p.astype("f8")
        acc = p if acc is None else acc + p
        n += 1
    return acc / n


def refs_of(path):
    with open(path) as f:
        refs = json.load(f)["refs"]
    meta = json.loads(refs[NAME + "/.zarray"])
    keys = sorted((k for k in refs if k.startswith(NAME + "/") and "/." not in k),
                  key=lambda k: int(k[len(NAME) + 1:].split(".")[0]))
    return refs, meta, keys


def pread_side(gsdf, refs, meta, keys):
    shape, dt = meta["chunks"], numpy.dtype(meta["dtype"])
    fd = os.open(gsdf, os.O_RDONLY)
    try:
        def frames():
            for k in keys:
                _, off, ln = refs[k]
                yield numpy.frombuffer(os.pread(fd, ln, off), dt).reshape(shape[1:])
        return mean_of(frames())
    finally:
        os.close(fd)


def memstore(gsdf, refs, keys):
    """A zarr store in memory with the series' .zarray and its chunks."""
    store = {NAME + "/.zarray": refs[NAME + "/.zarray"].encode(), ".zgroup": b'{"zarr_format": 2}'}
    with open(gsdf, "rb") as f:
        for k in keys:
            _, off, ln = refs[k]
            f.seek(off)
            store[k] = f.read(ln)
    return store


def zarr_side(arr):
    return mean_of(arr[i] for i in range(arr.shape[0]))


def main():
    gsdf, gsdrefs = sys.argv[1:3]
    figures = "--figures" in sys.argv[3:]
    refs, meta, keys = refs_of(gsdrefs)
    nf = len(keys)
    rows = []
    t, m_pread = best(lambda: pread_side(gsdf, refs, meta, keys))
    rows.append(("pread", "one pread per frame, file kept open", t))
    mem = zarr.open_group(memstore(gsdf, refs, keys), mode="r")[NAME]
    t, m_mem = best(lambda: zarr_side(mem))
    rows.append(("memstore", "zarr over chunks held in memory", t))
    import fsspec
    fs = fsspec.filesystem("reference", fo=gsdrefs, remote_protocol="file")
    ref = zarr.open_group(fs.get_mapper(""), mode="r")[NAME]
    t, m_ref = best(lambda: zarr_side(ref))
    rows.append(("reffs", "zarr over fsspec's reference filesystem", t))
    import gsd.hoomd

    def hoomd():
        with gsd.hoomd.open(gsdf, "rb") as traj:
            return mean_of(fr.particles.position for fr in traj)
    t, m_hoomd = best(hoomd)
    rows.append(("hoomd", "gsd.hoomd loop", t))
    for m in (m_mem, m_ref, m_hoomd):
        assert numpy.array_equal(m, m_pread), "the means differ"
    for side, label, t in rows:
        us = t / nf * 1e6
        print("refsfloor.%s %.1f us" % (side, us) if figures
              else "%-44s %8.1f us/frame %7.2fx hoomd" % (label, us, rows[-1][2] / t))


if __name__ == "__main__":
    main()
