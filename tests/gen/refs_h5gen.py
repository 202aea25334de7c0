#!/usr/bin/python3
"""refs_h5gen.py OUT.h5 [big] - HDF5 datasets written by h5py for the
reference tests: every layout and the filters zarr can and cannot decode.
With "big": a 64 MiB gzip dataset, and the same with shuffle (bench)."""
import sys

import h5py
import numpy

rng = numpy.random.default_rng(25)
with h5py.File(sys.argv[1], "w") as f:
    if len(sys.argv) > 2 and sys.argv[2] == "big":
        data = (rng.random((4096, 2048)) * 1000).astype("<f8")
        f.create_dataset("gzip", data=data, chunks=(256, 2048), compression="gzip",
                         compression_opts=4)
        f.create_dataset("gzip_shuffle", data=data, chunks=(256, 2048), compression="gzip",
                         compression_opts=4, shuffle=True)
        sys.exit(0)
    a = rng.random((50, 30))
    f.create_dataset("contig_le", data=a)
    f.create_dataset("contig_be", data=a.astype(">f4"))
    f.create_dataset("contig_i16be", data=numpy.arange(1000, dtype=">i2").reshape(10, 100))
    f.create_dataset("scalar", data=numpy.float64(3.5))
    g = f.create_group("grp")
    g.attrs["title"] = "chunked datasets"
    g.attrs["answer"] = 42
    g.create_dataset("gzip", data=a, chunks=(16, 7), compression="gzip", compression_opts=6)
    g.create_dataset("gzip_shuffle", data=(a * 1e6).astype("<i4"), chunks=(10, 10),
                     compression="gzip", shuffle=True)
    g.create_dataset("gzip_be", data=a.astype(">f8"), chunks=(8, 8), compression="gzip")
    g.create_dataset("plain_chunks", data=numpy.arange(97, dtype="<u2"), chunks=(10,))
    g.create_dataset("fletcher", data=a, chunks=(10, 30), fletcher32=True)
    g.create_dataset("gzip_fletcher", data=a, chunks=(25, 15), compression="gzip",
                     fletcher32=True)
    s = g.create_dataset("sparse", shape=(100, 100), chunks=(10, 10), dtype="<i8",
                         fillvalue=-7)
    s[0:10, 0:10] = 5
    s[55, 99] = 9
    t = g.create_dataset("sparse_f", shape=(40,), chunks=(8,), dtype="<f4",
                         fillvalue=numpy.nan)
    t[3] = 1.5
    g.create_dataset("lzf", data=a, chunks=(10, 10), compression="lzf")
    g.create_dataset("strings", data=numpy.array([b"alpha", b"be", b"gamma!"], dtype="S6"),
                     chunks=(2,), compression="gzip")
    g.create_dataset("vlen", data=["a", "bb", "ccc"], dtype=h5py.string_dtype())
    g.create_dataset("scaleoffset", data=numpy.arange(100, dtype="<i4"), chunks=(10,),
                     scaleoffset=0)
    g.create_dataset("compound", data=numpy.array([(1, 2.0), (3, 4.0)],
                                                  dtype=[("a", "<i4"), ("b", "<f8")]))
    g.create_dataset("empty", shape=(0, 4), dtype="<f8")
    g.create_dataset("never_written", shape=(20,), dtype="<i4", fillvalue=3)
# a compact dataset through the low-level API
with h5py.File(sys.argv[1], "a") as f:
    space = h5py.h5s.create_simple((40,))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    d = h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I32LE, space, dcpl=dcpl)
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, numpy.arange(40, dtype="<i4"))
