#!/usr/bin/python3
"""hdf5_gen.py OUTDIR - write the HDF5 test files of the h5py side.

basic.h5    default (earliest) format: every element type, big-endian twins,
            compound, scalar, empty, strings, layouts, filters, fill values,
            external raw data, links, attributes of every kind.
latest.h5   libver='latest': the four newer chunk indexes, dense link and
            attribute storage, creation-order tracking, a virtual dataset
            (sources in vds_src.h5), one of a source in the same file.
userblock.h5 a 1 KiB user block before the superblock.
big.h5      a 4 MiB shuffle+gzip dataset and a contiguous one (concurrency).
lzf.h5      h5py's own LZF filter, which libhdf5 decodes only with a plugin
            (the reader decodes it itself).
nofilter.h5 big-endian LZF: neither libhdf5 (no plugin) nor the reader.
fidelity.h5 the chunk decoder's hard cases; fill.h5 every fill/alloc time.
structs.h5  nested compounds, arrays of compounds, arrays of arrays, unpacked
            compounds, a scalar compound.
plugins.h5  LZ4, BZip2 and Blosc through filter plugins (those installed).
numpy.h5    h5py's own type mapping: enums of FALSE/TRUE of any base (bool),
            compounds {r, i} wherever their members lie (complex), floats
            by size, mantissa and exponent range (half in 4 bytes, shifted
            biases, bfloat16, x87 with an implied bit), members served in
            fewer bytes; and what h5py has no NumPy type for (3- and 16-byte
            integers, complex of halves, quad floats) or reads into another
            layout (members served in more bytes): EIO; link names "." and
            "..", a name that is not UTF-8, enum attributes.
"""
import os
import sys

import h5py
import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(5)


def attrs_all(obj):
    obj.attrs["int"] = np.int32(-7)
    obj.attrs["uint64"] = np.uint64(2**63 + 5)
    obj.attrs["float"] = 0.1
    obj.attrs["float32"] = np.float32(1.5)
    obj.attrs["be_double"] = np.array(2.25, dtype=">f8")
    obj.attrs["ints"] = np.arange(5, dtype=">i2")
    obj.attrs["text"] = "hello, world"
    obj.attrs["bytes"] = np.bytes_(b"fixed")
    obj.attrs["texts"] = ["a", "bc"]
    obj.attrs["flag"] = True


with h5py.File(os.path.join(out, "basic.h5"), "w") as f:
    attrs_all(f)
    g = f.create_group("types")
    for t in ["i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8",
              ">i2", ">u2", ">i4", ">u4", ">i8", ">f4", ">f8"]:
        a = (rng.standard_normal(37) * 1000).astype(t) if "f" in t else \
            rng.integers(np.iinfo(t).min, np.iinfo(t).max, 37, dtype=np.dtype(t).newbyteorder("="), endpoint=True).astype(t)
        name = t.replace("<", "le_").replace(">", "be_").replace("|", "")
        g.create_dataset(name, data=a)
    g["bool"] = np.array([True, False, True])
    g["complex"] = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype(">c16")
    g["enum"] = np.array([0, 1, 2, 1], dtype=h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 2}, basetype=">i2"))
    cd = np.dtype([("x", ">i4"), ("y", "<f8"), ("v", ">u2", (3,)), ("s", "S5")])
    c = np.zeros(11, dtype=cd)
    c["x"] = np.arange(11) * -3
    c["y"] = np.linspace(0, 1, 11)
    c["v"] = np.arange(33).reshape(11, 3)
    c["s"] = [b"k%d" % i for i in range(11)]
    g["compound"] = c
    g["compound_2d"] = np.zeros((4, 3), dtype=[("a", "<i8"), ("b", "<f4")])
    g["fixed_str"] = np.array([b"alpha", b"be", b"gamma!!!"], dtype="S8")
    # opaque types tagged "NUMPY:<dtype>" (h5py.opaque_dtype): h5py gives that dtype
    t0 = np.array(["2026-11-24T12:00:00", "1970-01-01", "1900-02-28T23:59:59"], dtype="<M8[s]")
    g["opaque_datetime"] = t0.astype(h5py.opaque_dtype(t0.dtype))
    g["opaque_td_ms"] = np.array([5, -7, 2**40], dtype="<m8[ms]").astype(h5py.opaque_dtype(np.dtype("<m8[ms]")))
    sv = np.array([b"opaque-bytes", b"x"], dtype="S12")
    g["opaque_str"] = sv.astype(h5py.opaque_dtype(sv.dtype))
    g.create_dataset("vlen_str", data=["first line", "second", "", "ünïcode"], dtype=h5py.string_dtype())
    g.create_dataset("vlen_ascii", data=[b"x", b"yy"], dtype=h5py.string_dtype("ascii"))
    # strings holding a newline: each ends with NUL (user.h5eol nul)
    g.create_dataset("vlen_str_nl", data=["two\nlines", "", "\n"], dtype=h5py.string_dtype())
    g["array2d"] = rng.integers(0, 1000, (3, 4, 2)).astype(">i4")

    s = f.create_group("shapes")
    s["scalar"] = np.float64(3.5)
    s["scalar_be"] = np.array(77, dtype=">i8")
    s["empty"] = np.zeros((0,), dtype="<f4")
    s["empty2d"] = np.zeros((5, 0), dtype="<i4")
    s["null"] = h5py.Empty("f8")
    s["one"] = np.array([42], dtype="<u2")
    s["r4"] = rng.integers(0, 2**31, (3, 5, 7, 11)).astype(">i4")

    lay = f.create_group("layout")
    lay.create_dataset("contig_unwritten", shape=(1000,), dtype="<i4", fillvalue=-5)
    # compact: through the low-level property list
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    space = h5py.h5s.create_simple((20, 3))
    dsid = h5py.h5d.create(lay.id, b"compact", h5py.h5t.STD_I16BE, space, dcpl=dcpl)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(60, dtype=">i2").reshape(20, 3))
    # chunked with edge chunks, unallocated chunks read as the fill value
    d = lay.create_dataset("chunk_edges", shape=(101, 67), chunks=(10, 16), dtype="<f8", fillvalue=7.25)
    d[0:35, 0:20] = rng.standard_normal((35, 20))
    d[90:, 60:] = 1.0
    lay.create_dataset("chunk_be", data=rng.standard_normal((53, 17)).astype(">f4"), chunks=(7, 5))
    lay.create_dataset("gzip_shuffle", data=np.arange(50000, dtype="<i8").reshape(500, 100) % 977,
                       chunks=(33, 41), compression="gzip", compression_opts=6, shuffle=True)
    lay.create_dataset("fletcher", data=rng.standard_normal(3000), chunks=(256,), fletcher32=True)
    lay.create_dataset("scaleoffset", data=rng.integers(0, 5000, (40, 40)).astype("<i4"),
                       chunks=(16, 16), scaleoffset=0)
    lay.create_dataset("scaleoffset_f", data=np.round(rng.standard_normal(500), 2), chunks=(64,),
                       scaleoffset=2)
    lay.create_dataset("gzip_3d", data=rng.integers(0, 9, (13, 9, 21)).astype(">u2"),
                       chunks=(4, 4, 5), compression="gzip")
    lay.create_dataset("gzip_str", data=np.array([b"s%03d" % i for i in range(300)]),
                       chunks=(50,), compression="gzip")
    if h5py.h5z.filter_avail(h5py.h5z.FILTER_SZIP):
        try:
            lay.create_dataset("szip", data=np.arange(4096, dtype="<i4"), chunks=(512,),
                               compression="szip")
        except Exception:
            pass
    # external raw data in two files next to the .h5 (relative names)
    ext = rng.integers(0, 2**16, 300).astype("<u2")
    with open(os.path.join(out, "ext_a.bin"), "wb") as e:
        e.write(b"HEADER!!" + ext[:100].tobytes())
    with open(os.path.join(out, "ext_b.bin"), "wb") as e:
        e.write(ext[100:].tobytes())
    lay.create_dataset("external", shape=(300,), dtype="<u2",
                       external=[("ext_a.bin", 8, 200), ("ext_b.bin", 0, 400)])

    attrs_all(f["layout/gzip_shuffle"])
    attrs_all(f["types"])
    f["links/soft_abs"] = h5py.SoftLink("/layout/gzip_shuffle")
    f["links/soft_rel"] = h5py.SoftLink("../types/le_i4")
    f["links/dangling"] = h5py.SoftLink("/no/such/thing")
    f["links/hard_to_types_f8"] = f["types/le_f8"]
    f["links/deep/hard_again"] = f["types/le_f8"]
    f["links/group_hard"] = f["shapes"]


with h5py.File(os.path.join(out, "latest.h5"), "w", libver="latest") as f:
    f.create_dataset("farray", data=rng.standard_normal((64, 48)), chunks=(16, 16), compression="gzip")
    f.create_dataset("earray", data=rng.integers(0, 100, (70, 10)).astype(">i4"), chunks=(8, 10),
                     maxshape=(None, 10), compression="gzip", shuffle=True)
    f.create_dataset("bt2", data=rng.integers(0, 100, (30, 20)).astype("<i2"), chunks=(7, 6),
                     maxshape=(None, None))
    f.create_dataset("single", data=np.arange(1000, dtype=">f8"), chunks=(1000,), compression="gzip")
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((10, 10))
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    dsid = h5py.h5d.create(f.id, b"implicit", h5py.h5t.STD_U32LE, h5py.h5s.create_simple((35, 25)), dcpl=dcpl)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(875, dtype="<u4").reshape(35, 25))
    dense = f.create_group("dense")
    for i in range(60):
        dense["d%02d" % i] = np.full(i + 1, i, dtype="<i4")
    many = f["farray"]
    for i in range(40):
        many.attrs["attr%02d" % i] = i * 1.5
    many.attrs["long_" + "x" * 100] = "long name"
    ordered = f.create_group("ordered", track_order=True)
    for n in ["zeta", "alpha", "mid"]:
        ordered[n] = np.frombuffer(n.encode(), dtype="u1")
    f["ordered"].attrs["note"] = "creation order tracked"


# a virtual dataset of two sources in another file (a relative name)
with h5py.File(os.path.join(out, "vds_src.h5"), "w") as f:
    f["a"] = np.arange(40, dtype=">i4").reshape(4, 10)
    f["b"] = np.arange(100, 140, dtype="<i4").reshape(4, 10)
with h5py.File(os.path.join(out, "latest.h5"), "a") as f:
    lay = h5py.VirtualLayout(shape=(8, 10), dtype="<i4")
    lay[0:4] = h5py.VirtualSource("vds_src.h5", "a", shape=(4, 10))
    lay[4:8] = h5py.VirtualSource("vds_src.h5", "b", shape=(4, 10))
    f.create_virtual_dataset("virtual", lay, fillvalue=-1)
    # a source in the same file ("."), met (and opened) by a reader first:
    # the mount's open of it must not keep libhdf5 from opening it for the
    # virtual dataset (which would read the fill value instead)
    f["vds_local_src"] = np.arange(20, dtype="<u2")
    lay = h5py.VirtualLayout(shape=(10,), dtype="<u2")
    lay[:] = h5py.VirtualSource(".", "vds_local_src", shape=(20,))[::2]
    f.create_virtual_dataset("virtual_local", lay, fillvalue=9)

with h5py.File(os.path.join(out, "userblock.h5"), "w", userblock_size=1024) as f:
    f["data"] = np.arange(1000, dtype="<f4")
    f["be"] = np.arange(100, dtype=">i8")
with open(os.path.join(out, "userblock.h5"), "r+b") as fh:
    fh.write(b"USERBLOCK" * 10)

with h5py.File(os.path.join(out, "big.h5"), "w") as f:
    x = np.cumsum(rng.standard_normal(1 << 19)).astype("<f8")
    f.create_dataset("gz", data=x.reshape(512, 1024), chunks=(64, 128), compression="gzip",
                     compression_opts=1, shuffle=True)
    f["contig"] = x
    f.create_dataset("be3d", data=x.astype(">f8").reshape(64, 64, 128), chunks=(8, 32, 32))

with h5py.File(os.path.join(out, "lzf.h5"), "w") as f:
    f.create_dataset("lzf", data=np.arange(10000, dtype="<i4"), chunks=(1000,), compression="lzf")
    f["ok"] = np.arange(10, dtype="<i4")

# a filter libhdf5 lacks on data the reader does not decode (big-endian LZF)
with h5py.File(os.path.join(out, "nofilter.h5"), "w") as f:
    f.create_dataset("lzf_be", data=np.arange(10000, dtype=">i4"), chunks=(1000,), compression="lzf")
    f["ok"] = np.arange(10, dtype="<i4")

# structured types in depth: nested compounds, arrays of compounds, arrays
# of arrays (HDF5 array types built with the low-level API), unpacked ones
inner = np.dtype([("x", ">i4"), ("y", "<f8", (2,))])
nested = np.dtype([("a", inner), ("b", "S3"), ("c", [("deep", [("z", ">u2")])])])
pt = np.dtype([("p", "<i2"), ("q", ">f4")])
with h5py.File(os.path.join(out, "structs.h5"), "w") as f:
    a = np.zeros(7, dtype=nested)
    a["a"]["x"] = np.arange(7) - 3
    a["a"]["y"] = rng.standard_normal((7, 2))
    a["b"] = [b"b%d" % i for i in range(7)]
    a["c"]["deep"]["z"] = np.arange(7) * 1000
    f["nested"] = a
    m = np.zeros(5, dtype=[("id", "<i8"), ("pts", pt, (3,)), ("grid", "<f4", (2, 2))])
    m["id"] = np.arange(5)
    m["pts"]["p"] = np.arange(15).reshape(5, 3)
    m["pts"]["q"] = np.linspace(0, 1, 15).reshape(5, 3)
    m["grid"] = rng.standard_normal((5, 2, 2))
    f["member_arrays"] = m
    loose = np.dtype({"names": ["a", "b"], "formats": ["<i4", pt], "offsets": [0, 12], "itemsize": 24})
    u = np.zeros(4, dtype=loose)
    u["a"] = [1, 2, 3, 4]
    u["b"]["q"] = [0.5, 1.5, 2.5, 3.5]
    f["unpacked"] = u

    def lowlevel(name, tid, shape, data):
        space = h5py.h5s.create_simple(shape)
        ds = h5py.h5d.create(f.id, name.encode(), tid, space)
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, data, mtype=tid)

    # 4 elements, each an array [2] of compounds
    ac = h5py.h5t.array_create(h5py.h5t.py_create(pt), (2,))
    d = np.zeros((4, 2), dtype=pt)
    d["p"] = np.arange(8).reshape(4, 2)
    d["q"] = np.arange(8).reshape(4, 2) / 8
    lowlevel("array_of_compound", ac, (4,), d)
    # 3 elements, each an array [4] of arrays [6,3] of int32 big-endian
    aa = h5py.h5t.array_create(h5py.h5t.array_create(h5py.h5t.STD_I32BE, (6, 3)), (4,))
    lowlevel("array_of_array", aa, (3,), np.arange(3 * 4 * 18, dtype=">i4").reshape(3, 4, 6, 3))
    s = f.create_dataset("scalar_struct", data=np.zeros((), dtype=nested))
    s.attrs["unit"] = "m"

# filters from plugins (Debian: hdf5-filter-plugin, hdf5-filter-plugin-blosc-
# serial), written only where the plugin is installed (LZF: lzf.h5)
with h5py.File(os.path.join(out, "plugins.h5"), "w") as f:
    x = (np.arange(60000, dtype="<i4") // 7).reshape(300, 200)
    for name, fid, opts in [("lz4", 32004, ()), ("bzip2", 307, (9,)), ("blosc", 32001, (0, 0, 0, 0, 5, 1, 1))]:
        if h5py.h5z.filter_avail(fid):
            f.create_dataset(name, data=x, chunks=(50, 200), compression=fid, compression_opts=opts)
    f["plain"] = np.arange(10, dtype="<i4")

# a dataset of more bytes than the largest file (2^63 - 1): left out
with h5py.File(os.path.join(out, "huge.h5"), "w") as f:
    f.create_dataset("huge", shape=(2**60 + 1,), dtype="<i8", chunks=(4096,))
    f["small"] = np.arange(5, dtype="<i2")


# fidelity.h5: the chunk decoder's hard cases (tests/mount/hdf5_fidelity.sh)
def lowlevel_ds(f, name, dtype, shape, dcpl, maxshape=None, data=None, box=None):
    space = h5py.h5s.create_simple(shape, maxshape)
    tid = h5py.h5t.py_create(np.dtype(dtype))
    ds = h5py.Dataset(h5py.h5d.create(f.id, name.encode(), tid, space, dcpl=dcpl))
    if data is not None:
        ds[box if box is not None else ()] = data
    return ds


def pipeline(chunks, *filters, fill=None, fill_time=None, alloc_time=None):
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    if chunks:
        dcpl.set_chunk(chunks)
    for name, arg in filters:
        if name == "shuffle":
            dcpl.set_shuffle()
        elif name == "fletcher32":
            dcpl.set_fletcher32()
        elif name == "deflate":
            dcpl.set_deflate(arg)
        elif name == "lzf":
            dcpl.set_filter(32000, h5py.h5z.FLAG_OPTIONAL)
    if fill is not None:
        dcpl.set_fill_value(np.array(fill))
    if fill_time is not None:
        dcpl.set_fill_time(fill_time)
    if alloc_time is not None:
        dcpl.set_alloc_time(alloc_time)
    return dcpl


with h5py.File(os.path.join(out, "fidelity.h5"), "w", libver="latest") as f:
    # extensible-array index over an unlimited second dimension: libhdf5
    # 1.10's H5Dget_chunk_info* give these chunks wrong coordinates
    ea = f.create_dataset("ea_dim1", (4, 6), "<i4", chunks=(2, 3), maxshape=(10, None))
    ea[:, 0:3] = np.arange(24, dtype="<i4").reshape(4, 6)[:, 0:3]
    ea2 = f.create_dataset("ea_dim1_gzip", (9, 40), "<f8", chunks=(2, 3), maxshape=(9, None),
                           compression="gzip", shuffle=True)
    ea2[:, :] = rng.standard_normal((9, 40))
    ea2[:, 10:20] = 0
    ea3 = f.create_dataset("ea_dim1_sparse", (6, 30), "<i2", chunks=(4, 7), maxshape=(20, None),
                           fillvalue=-3, compression="gzip")
    ea3[4:6, 20:30] = 5
    ea3[0:1, 0:2] = 9
    # fletcher32 between shuffle and deflate, and first (the file's order)
    x = (np.arange(40 * 20, dtype="<i4") * 7919 % 1000).reshape(40, 20)
    lowlevel_ds(f, "shuffle_fletcher_deflate", "<i4", (40, 20),
                pipeline((20, 10), ("shuffle", 0), ("fletcher32", 0), ("deflate", 9)), data=x)
    lowlevel_ds(f, "fletcher_shuffle_deflate", "<u1", (3, 5),
                pipeline((2, 3), ("fletcher32", 0), ("shuffle", 0), ("deflate", 1)),
                data=np.arange(15, dtype="<u1").reshape(3, 5))
    lowlevel_ds(f, "deflate_fletcher_edges", "<f4", (13, 11),
                pipeline((5, 4), ("deflate", 4), ("fletcher32", 0)),
                data=rng.standard_normal((13, 11)).astype("<f4"))
    # LZF (h5py's filter, optional: incompressible chunks are stored raw)
    y = (np.arange(30000, dtype="<i8") // 13).reshape(300, 100)
    f.create_dataset("lzf", data=y, chunks=(64, 100), compression="lzf")
    f.create_dataset("lzf_shuffle", data=y.astype("<f4"), chunks=(50, 30), compression="lzf",
                     shuffle=True)
    f.create_dataset("lzf_random", data=rng.integers(0, 2**63, (500,), dtype="<u8"), chunks=(128,),
                     compression="lzf")
    f.create_dataset("lzf_fletcher_unwritten", (1000,), "<i2", chunks=(100,), compression="lzf",
                     shuffle=True, fletcher32=True, fillvalue=11)[200:450] = np.arange(250)

# fill.h5: storage never allocated or chunks never written, for every fill
# time, allocation time and fill value (defined or not); before each, a
# dataset of the same size full of bytes (so leftover buffers would show)
with h5py.File(os.path.join(out, "fill.h5"), "w") as f:
    times = {"ifset": h5py.h5d.FILL_TIME_IFSET, "alloc": h5py.h5d.FILL_TIME_ALLOC,
             "never": h5py.h5d.FILL_TIME_NEVER}
    allocs = {"late": h5py.h5d.ALLOC_TIME_LATE, "early": h5py.h5d.ALLOC_TIME_EARLY,
              "incr": h5py.h5d.ALLOC_TIME_INCR}
    n = 0
    for lay in ("contig", "chunked", "gzip"):
        for tn, t in times.items():
            for an, a in allocs.items():
                if lay == "contig" and an == "incr":
                    continue
                for fill in (None, 7):
                    for written in ("none", "part"):
                        name = "%s_%s_%s_%s_%s" % (lay, tn, an, "fill7" if fill else "nofill", written)
                        f["a%03d_bytes" % n] = np.full((50, 30), -1, dtype="<i4")
                        chunks = None if lay == "contig" else (16, 8)
                        flt = [("deflate", 4)] if lay == "gzip" else []
                        dcpl = pipeline(chunks, *flt, fill=fill, fill_time=t, alloc_time=a)
                        lowlevel_ds(f, "a%03d_%s" % (n, name), "<i4", (50, 30), dcpl,
                                    data=np.arange(30, dtype="<i4").reshape(3, 10) if written == "part" else None,
                                    box=np.s_[20:23, 5:15])
                        n += 1

# longname.h5: link names longer than a file name (255 bytes) beside a short one
with h5py.File(os.path.join(out, "longname.h5"), "w") as f:
    g = f.create_group("grp")
    g["short"] = np.arange(3, dtype="<i4")
    g["L" * 300] = np.arange(4, dtype="<i4")
    g["S" * 400] = h5py.SoftLink("/grp/short")


# numpy.h5: h5py's mapping of HDF5 types to NumPy's, and the types it has
# none for (tests/mount/hdf5_values.sh)
def numpy_file(path):
    h5t, h5s, h5d = h5py.h5t, h5py.h5s, h5py.h5d
    with h5py.File(path, "w") as f:
        def ll(name, tid, data, mtype=None, loc=f):
            ds = h5d.create(loc.id, name.encode(), tid, h5s.create_simple(np.shape(data)))
            ds.write(h5s.ALL, h5s.ALL, np.ascontiguousarray(data), mtype=mtype or tid)

        def enum(base, members):
            e = h5t.enum_create(base)
            for name, v in members:
                e.enum_insert(name, v)
            return e

        def cmp(size, *members):
            c = h5t.create(h5t.COMPOUND, size)
            for name, off, t in members:
                c.insert(name, off, t)
            return c

        def flt(base, size, fields, ebias, prec=None):
            t = base.copy()
            t.set_fields(*fields)
            if size < t.get_size():
                t.set_precision(prec or 8 * size)
                t.set_offset(0)
                t.set_size(size)
            elif prec:
                t.set_precision(prec)
            t.set_ebias(ebias)
            return t

        # enums of FALSE = 0 and TRUE = 1 are NumPy's bool whatever the base;
        # other values become ff, as h5py converts them
        tf = [(b"FALSE", 0), (b"TRUE", 1)]
        for name, base in [("bool_i4", h5t.STD_I32LE), ("bool_u2be", h5t.STD_U16BE),
                           ("bool_u8", h5t.STD_U64LE), ("bool_i1", h5t.STD_I8LE)]:
            bt = base.dtype
            ll(name, enum(base, tf), np.array([0, 1, 1, 0, 7, -1 if bt.kind == "i" else 9], dtype=bt),
               mtype=base)
        ll("bool_true_first", enum(h5t.STD_U8LE, tf[::-1]), np.array([1, 0, 1], dtype="u1"))
        ll("enum_true_m1", enum(h5t.STD_I8LE, [(b"FALSE", 0), (b"TRUE", -1)]), np.array([0, -1], dtype="i1"))
        # enums are their numbers, members or not, whatever the base's
        # precision and order
        b12 = h5t.STD_I16LE.copy()
        b12.set_precision(12)
        ll("enum_prec12", enum(b12, [(b"A", 1), (b"B", -5)]), np.array([1, -5, 7, 100], dtype="<i2"),
           mtype=h5t.STD_I16LE)
        b40 = h5t.STD_I64BE.copy()
        b40.set_precision(40)
        b40.set_offset(8)
        ll("enum_be_prec40", enum(b40, [(b"A", 1), (b"B", 2)]), np.array([1, 2, 3, -1], dtype="<i8"),
           mtype=h5t.NATIVE_INT64)
        ll("enum_u8_nonmember", enum(h5t.STD_U8LE, [(b"A", 1), (b"B", 2)]), np.array([1, 2, 3, 255], dtype="u1"),
           mtype=h5t.STD_U8LE)
        b2 = enum(h5t.STD_I16BE, tf)
        ll("array_bool2", h5t.array_create(b2, (3,)), np.array([[0, 1, 1], [1, 0, 0]], dtype=">i2"),
           mtype=h5t.array_create(h5t.STD_I16BE, (3,)))
        c = cmp(12, (b"flag", 0, enum(h5t.STD_I32LE, tf)), (b"x", 4, h5t.IEEE_F64LE))
        a = np.zeros(3, dtype=[("flag", "<i4"), ("x", "<f8")])
        a["flag"], a["x"] = [1, 0, 1], [1.5, 2.5, -3]
        ll("cmp_bool4", c, a, mtype=cmp(12, (b"flag", 0, h5t.STD_I32LE), (b"x", 4, h5t.IEEE_F64LE)))

        # complex: r then i of one float and order, wherever they lie
        z = np.array([(1, 2), (3, -4), (5.5, 6)], dtype=[("r", "<f8"), ("i", "<f8")])
        ll("complex_gap", cmp(24, (b"r", 0, h5t.IEEE_F64LE), (b"i", 16, h5t.IEEE_F64LE)),
           z.astype({"names": ["r", "i"], "formats": ["<f8", "<f8"], "offsets": [0, 16], "itemsize": 24}))
        ll("complex_swapped", cmp(16, (b"r", 8, h5t.IEEE_F64LE), (b"i", 0, h5t.IEEE_F64LE)),
           z.astype({"names": ["r", "i"], "formats": ["<f8", "<f8"], "offsets": [8, 0], "itemsize": 16}))
        ll("complex_be", cmp(8, (b"r", 0, h5t.IEEE_F32BE), (b"i", 4, h5t.IEEE_F32BE)),
           z.astype([("r", ">f4"), ("i", ">f4")]))
        ll("complex_mixed", cmp(16, (b"r", 0, h5t.IEEE_F64BE), (b"i", 8, h5t.IEEE_F64LE)),
           z.astype([("r", ">f8"), ("i", "<f8")]))
        ll("complex_ir", cmp(8, (b"i", 0, h5t.IEEE_F32LE), (b"r", 4, h5t.IEEE_F32LE)),
           z.astype([("i", "<f4"), ("r", "<f4")]))
        ld = h5t.NATIVE_LDOUBLE
        ll("complex_ld", cmp(32, (b"r", 0, ld), (b"i", 16, ld)), np.array([1 + 2j, 3 - 4j], dtype=np.clongdouble))
        cz = np.zeros(2, dtype=[("z", "<c8"), ("n", ">i4")])
        cz["z"], cz["n"] = [1 + 2j, 3 - 4j], [5, 6]
        ll("cmp_complex", cmp(12, (b"z", 0, h5t.py_create(np.dtype("<c8"))), (b"n", 8, h5t.STD_I32BE)), cz)

        # floats: the first NumPy float as large as the type that holds
        # its mantissa and exponent range
        v = np.array([1.5, -2.25, 1000.0, 0.1, 6e4, 1e-5, 0.0, -0.0])
        D = h5t.NATIVE_DOUBLE
        ll("half_in_4", flt(h5t.IEEE_F32LE, 4, (15, 10, 5, 0, 10), 15, prec=16), v, D)
        ll("f4_bias63", flt(h5t.IEEE_F32LE, 4, (31, 23, 8, 0, 23), 63), v, D)
        ll("f4_bias200", flt(h5t.IEEE_F32LE, 4, (31, 23, 8, 0, 23), 200), v * 1e-30, D)
        ll("f4_in_8", flt(h5t.IEEE_F64LE, 8, (63, 55, 8, 32, 23), 127), v, D)
        ll("bfloat16", flt(h5t.IEEE_F32LE, 2, (15, 7, 8, 0, 7), 127), v, D)
        ll("float24", flt(h5t.IEEE_F32BE, 3, (23, 16, 7, 0, 16), 63), v, D)
        ll("half_be", flt(h5t.IEEE_F32BE, 2, (15, 10, 5, 0, 10), 15), v, D)
        imp = h5t.NATIVE_LDOUBLE.copy()
        imp.set_norm(h5t.NORM_IMPLIED)
        ll("ld_implied", imp, v, D)

        # members served in fewer bytes than stored keep their offsets
        c = cmp(12, (b"h", 0, flt(h5t.IEEE_F32LE, 4, (15, 10, 5, 0, 10), 15, prec=16)), (b"b", 4, b2),
                (b"c", 8, h5t.STD_I32LE))
        ll("cmp_smaller", c, np.frombuffer(bytes(range(36)), dtype="V12"), c)

        # opaque types h5py tagged with a NumPy dtype: big-endian numbers
        # are served little-endian (also chunked); others EIO
        for name, dt, vals in [("opaque_be_f8", ">f8", [1.5, -2.0, 1e300]),
                               ("opaque_be_m8", ">M8[s]", ["2020-01-01", "1970-01-02", "1900-03-04"]),
                               ("opaque_be_i2", ">i2", [1, -2, 300]), ("opaque_u3", "<U3", ["ab", "xyz", ""])]:
            x = np.array(vals, dtype=dt)
            f[name] = x.astype(h5py.opaque_dtype(x.dtype))
            f.create_dataset(name + "_chunked", data=np.tile(x, 50).astype(h5py.opaque_dtype(x.dtype)),
                             chunks=(16,), compression="gzip")
        x = np.array([1 + 2j, 3j], dtype=">c8")
        f["opaque_be_c8"] = x.astype(h5py.opaque_dtype(x.dtype))
        bad = h5t.create(h5t.OPAQUE, 4)
        bad.set_tag(b"NUMPY:<f8")
        ll("opaque_tag_wrong_size", bad, np.frombuffer(b"abcdefgh", dtype="V4"), bad)
        ot = h5t.create(h5t.OPAQUE, 8)
        ot.set_tag(b"NUMPY:>f8")
        ll("cmp_opaque_be", cmp(12, (b"v", 0, ot), (b"n", 8, h5t.STD_I32LE)),
           np.frombuffer(bytes(range(24)), dtype="V12"), cmp(12, (b"v", 0, ot), (b"n", 8, h5t.STD_I32LE)))

        # member names numpy keeps as they are (user.dtype escapes them)
        odd = [b"new\nline", b"tab\tx", b"quo'te", b"back\\slash", "\u00fcn\u00ef".encode(), b'dq"x']
        c = cmp(4 * len(odd), *[(n, 4 * i, h5t.STD_I32LE) for i, n in enumerate(odd)])
        ll("member_names", c, np.arange(2 * len(odd), dtype="<i4").view("V%d" % (4 * len(odd))), c)
        c = cmp(8, (b"ok", 0, h5t.STD_I32LE), (b"\xff\xfebad", 4, h5t.STD_I32LE))
        ll("member_name_not_utf8", c, np.arange(4, dtype="<i4").view("V8"), c)

        # no NumPy image: EIO (h5py raises, or reads another layout)
        i3 = h5t.STD_I32LE.copy()
        i3.set_size(3)
        ll("int3", i3, np.array([1, -2, 3], dtype="<i4"), h5t.NATIVE_INT32)
        i16 = h5t.STD_U64LE.copy()
        i16.set_size(16)
        ll("int16", i16, np.array([1, 2, 3], dtype="<u8"), h5t.NATIVE_UINT64)
        ll("enum_int3", enum(i3, [(b"A", 5), (b"B", 6)]), np.array([5, 6], dtype="<i4"), h5t.NATIVE_INT32)
        ll("bool_int3", enum(i3, tf), np.array([1, 0, 1], dtype="<i4"), h5t.NATIVE_INT32)
        f2 = h5t.py_create(np.dtype("<f2"))
        ll("complex_f2", cmp(4, (b"r", 0, f2), (b"i", 2, f2)), np.zeros(2, dtype=[("r", "<f2"), ("i", "<f2")]))
        q = h5t.IEEE_F64LE.copy()
        q.set_size(16)
        q.set_precision(128)
        q.set_fields(127, 112, 15, 0, 112)
        q.set_ebias(16383)
        ll("quad", q, v[:3], D)
        c = cmp(7, (b"a", 0, flt(h5t.IEEE_F32BE, 3, (23, 16, 7, 0, 16), 63)), (b"b", 3, h5t.STD_I32LE))
        ll("cmp_float24", c, np.frombuffer(bytes(range(14)), dtype="V7"), c)
        ld12 = h5t.NATIVE_LDOUBLE.copy()
        ld12.set_size(12)
        c = cmp(16, (b"a", 0, ld12), (b"b", 12, h5t.STD_I32LE))
        ll("cmp_ld12", c, np.frombuffer(bytes(range(32)), dtype="V16"), c)
        c = cmp(7, (b"a", 0, i3), (b"b", 3, h5t.STD_I32LE))
        ll("cmp_int3", c, np.frombuffer(bytes(range(14)), dtype="V7"), c)

        # link names: "." is the group itself to HDF5, ".." is a name
        g = f.create_group("names")
        g[".."] = np.arange(3, dtype="<i2")
        g["..."] = np.arange(4, dtype="<i2")
        g["a\nb"] = np.arange(2, dtype="<i2")
        g.id.links.create_hard(b"bad\xff\xfename", g.id, b"...")
        # attributes by member name (enums) and empty ones
        f.attrs["enum"] = np.array([1, 2, 3], dtype=h5py.enum_dtype({"A": 1, "B": 2}, "u1"))
        f.attrs["zero_len"] = np.zeros((0,), dtype="<f8")
        f.attrs["bool_i4"] = np.array([1, 0, 7], dtype=h5py.enum_dtype({"FALSE": 0, "TRUE": 1}, "<i4"))
        # a float attribute h5py reads as <f8 (single-precision fields, bias 63)
        a = h5py.h5a.create(f.id, b"f4_bias63", flt(h5t.IEEE_F32LE, 4, (31, 23, 8, 0, 23), 63),
                            h5s.create_simple((3,)))
        a.write(np.array([0.1, 1.5, 1e-5]), mtype=h5t.NATIVE_DOUBLE)


numpy_file(os.path.join(out, "numpy.h5"))
