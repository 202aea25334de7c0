#!/usr/bin/python3
"""refs_h5gen.py OUT.h5 [big] - HDF5 datasets written by h5py for the
reference tests: every layout, the filters zarr can and cannot decode,
compound types (compounds()) and array types (array_types()).
With "big": a 64 MiB gzip dataset, and the same with shuffle (bench)."""
import sys

import h5py
import numpy

rng = numpy.random.default_rng(25)


def compounds(g):
    """Compound types as zarr v2 structured dtypes: packed, padded with
    big-endian members, nested with array members, bools, enums and h5py's
    complex numbers; contiguous, chunked with filters, sparse with a fill
    value; and what zarr cannot hold."""
    pair = numpy.dtype([("a", "<i4"), ("b", "<f8")])
    g.create_dataset("packed", data=numpy.array([(1, 2.0), (3, 4.0)], dtype=pair))
    padded = numpy.dtype({"names": ["x", "y", "s"], "formats": [">i2", ">f8", "S5"],
                          "offsets": [0, 8, 16], "itemsize": 24})
    v = numpy.zeros(50, padded)
    v["x"], v["y"] = numpy.arange(50), rng.random(50)
    v["s"] = [b"ab%d" % i for i in range(50)]
    g.create_dataset("padded_be", data=v)
    g.create_dataset("padded_be_gzip", data=v, chunks=(7,), compression="gzip", shuffle=True)
    inner = numpy.dtype([("p", "<i2"), ("q", ">f4", (2,))])
    nested = numpy.dtype([("id", "<u8"), ("in", inner, (3,)), ("ok", "?"), ("c", "<c16")])
    w = numpy.zeros((12, 5), nested)
    w["id"] = numpy.arange(60).reshape(12, 5)
    w["in"]["p"] = rng.integers(-100, 100, (12, 5, 3))
    w["in"]["q"] = rng.random((12, 5, 3, 2))
    w["ok"] = rng.random((12, 5)) > 0.5
    w["c"] = rng.random((12, 5)) + 1j
    g.create_dataset("nested", data=w, chunks=(5, 2), compression="gzip", fletcher32=True)
    g.create_dataset("complex", data=rng.random(30) + 1j * rng.random(30))
    g.create_dataset("complex_be", data=(rng.random(30) + 1j).astype(">c8"), chunks=(8,),
                     compression="gzip")
    s = g.create_dataset("sparse", shape=(40,), chunks=(8,), dtype=pair,
                         fillvalue=numpy.array((-1, 0.5), pair))
    s[3] = (7, 7.5)
    c = g.create_dataset("complex_sparse", shape=(40,), chunks=(8,), dtype="<c16",
                         fillvalue=1.5 - 2j)
    c[9] = 3j
    e = h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 42}, basetype="i1")
    g.create_dataset("enum_member", data=numpy.array([(1, 42), (2, 0)],
                                                     dtype=[("k", "<i4"), ("col", e)]))
    # not covered: a variable-length member; padding next to a member named
    # like numpy's padding fields
    g.create_dataset("vlen_member", data=numpy.array([(1, "x")], dtype=[
        ("k", "<i4"), ("s", h5py.string_dtype())]))
    g.create_dataset("f_names", data=numpy.zeros(3, {"names": ["f0", "f2"], "formats": ["<i4", "<i4"],
                                                     "offsets": [0, 8], "itemsize": 12}))

def array_types(g):
    """Array types, which h5py reads as trailing axes: contiguous, chunked
    big-endian with filters, of compounds, a scalar."""
    d = g.create_dataset("contig", shape=(10,), dtype=numpy.dtype(("<i4", (2, 3))))
    d[...] = numpy.arange(60).reshape(10, 2, 3)
    e = g.create_dataset("chunked_be", shape=(20, 4), chunks=(6, 3), dtype=numpy.dtype((">f8", (5,))),
                         compression="gzip", shuffle=True)
    e[...] = rng.random((20, 4, 5))
    pair = [("a", "<i2"), ("b", ">f4")]
    c = g.create_dataset("of_compound", shape=(7,), chunks=(3,), dtype=numpy.dtype((pair, (2,))))
    v = numpy.zeros((7, 2), pair)
    v["a"], v["b"] = numpy.arange(14).reshape(7, 2), rng.random((7, 2))
    c[...] = v
    g.create_dataset("scalar", shape=(), dtype=numpy.dtype(("<u2", (4,))))[()] = [1, 2, 3, 4]


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
    g.create_dataset("empty", shape=(0, 4), dtype="<f8")
    g.create_dataset("never_written", shape=(20,), dtype="<i4", fillvalue=3)
    compounds(f.create_group("cmp"))
    array_types(f.create_group("arr"))
# a compact dataset through the low-level API
with h5py.File(sys.argv[1], "a") as f:
    space = h5py.h5s.create_simple((40,))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    d = h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I32LE, space, dcpl=dcpl)
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, numpy.arange(40, dtype="<i4"))
    # deflate before shuffle (file order): numcodecs cannot unshuffle the
    # compressed bytes, which are no whole number of elements
    dcpl2 = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl2.set_chunk((100,))
    dcpl2.set_deflate(1)
    dcpl2.set_shuffle()
    d = h5py.h5d.create(f.id, b"grp/deflate_shuffle", h5py.h5t.STD_I64LE, h5py.h5s.create_simple((250,)),
                        dcpl=dcpl2)
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, numpy.arange(250, dtype="<i8") * 7)
    # a compact compound with a big-endian member: inline, as served
    cdt = numpy.dtype([("a", ">i4"), ("b", "<f4")])
    d = h5py.h5d.create(f.id, b"cmp/compact", h5py.h5t.py_create(cdt), h5py.h5s.create_simple((10,)),
                        dcpl=dcpl)
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, numpy.array([(i, i / 2) for i in range(10)], dtype=cdt))
