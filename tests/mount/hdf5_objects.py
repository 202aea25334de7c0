#!/usr/bin/python3
"""hdf5_objects.py - compounds and arrays holding variable-length data or
references, and sequences of such data (docs/hdf5.md, "Compounds with
variable members"), against h5py.

  gen DIR          write DIR/objects.h5 with h5py
  tree ROOT FILE   every dataset of FILE read from the tree at ROOT (a
                   mount or an hpcdump extract) with os and NumPy only,
                   as docs/hdf5.md says, equals h5py's value
  package FILE     c.array(p) of every dataset equals h5py's"""
import ast
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hdf5_objects_survey import Norm, same  # noqa: E402


def gen(d):
    with h5py.File(os.path.join(d, "objects.h5"), "w") as f:
        t = f.create_dataset("target", data=np.arange(20, dtype="<i4").reshape(4, 5))
        g = f.create_group("grp")
        s, sb = h5py.string_dtype(), h5py.string_dtype("ascii")
        vi, r, rr = h5py.vlen_dtype(np.int32), h5py.ref_dtype, h5py.regionref_dtype
        dt = np.dtype([("id", "<i8"), ("name", s), ("seq", vi), ("ref", r),
                       ("pos", [("x", "<f4"), ("y", "<f8")]), ("tags", sb, (2,))])
        a = np.zeros(3, dt)
        a["id"] = [1, 2, 3]
        a["name"] = ["alpha", "", "gamma"]
        a["seq"] = [np.array([1, 2, 3], "<i4"), np.array([], "<i4"), np.array([7], "<i4")]
        a["ref"] = [t.ref, g.ref, h5py.Reference()]
        a["pos"]["x"] = [0.5, 1.5, 2.5]
        a["pos"]["y"] = [-1, -2, -3]
        a["tags"] = [["a", "b"], ["c", ""], ["", "d"]]
        f["comp"] = a
        f.create_dataset("comp_scalar", data=a[0])
        f.create_dataset("comp_2d", data=np.resize(a, 6).reshape(2, 3), chunks=(1, 3),
                         compression="gzip")
        reg = np.zeros(2, [("k", "<u2"), ("where", rr)])
        reg["k"] = [4, 5]
        reg["where"] = [t.regionref[1:3, 0:5:2], h5py.RegionReference()]
        f["regions"] = reg
        inner = np.dtype([("k", "<i2"), ("s", s)])
        fixed = np.dtype([("k", "<i2"), ("w", "<f4")])
        b = np.zeros(2, [("n", inner), ("v", h5py.vlen_dtype(fixed))])
        b["n"]["k"] = [5, 6]
        b["n"]["s"] = ["five", "six"]
        b["v"] = [np.array([(1, 0.5)], fixed), np.array([(2, 1.5), (3, 2.5)], fixed)]
        f["nested"] = b
        f.create_dataset("vlen_vlen", (3,), dtype=h5py.vlen_dtype(vi))
        vs = f.create_dataset("vlen_str", (2,), dtype=h5py.vlen_dtype(s))
        vr = f.create_dataset("vlen_ref", (2,), dtype=h5py.vlen_dtype(r))
        vr[0] = np.array([t.ref, g.ref], dtype=r)
        arr = f.create_dataset("arr_str", (2,), dtype=np.dtype((s, (3,))))
        arr[0] = ["a", "bb", "ccc"]
        arr[1] = ["", "e", "f"]
        f.create_dataset("arr_vlen", (2,), dtype=np.dtype((vi, (2,))))
        del vs
        newlines(f, s, t, g)
        empties(f, dt)


def newlines(f, s, t, g):
    """Strings holding a newline: in a compound member, an array member,
    an array at the top, a sequence of strings; the text of each ends its
    elements with NUL (user.h5eol nul), the other members' with newlines."""
    dt = np.dtype([("k", "<i4"), ("name", s), ("plain", s), ("tags", s, (2,)),
                   ("ref", h5py.ref_dtype)])
    a = np.zeros(3, dt)
    a["k"] = [1, 2, 3]
    a["name"] = ["two\nlines", "", "\n"]
    a["plain"] = ["x", "y", ""]
    a["tags"] = [["a", "b\n"], ["", ""], ["c\r\n", "d"]]
    a["ref"] = [t.ref, h5py.Reference(), g.ref]
    f["comp_nl"] = a
    f.create_dataset("comp_nl_scalar", data=a[0])
    arr = f.create_dataset("arr_str_nl", (2,), dtype=np.dtype((s, (2,))))
    arr[0] = ["p\nq", ""]
    arr[1] = ["r", "s"]
    vs = f.create_dataset("vlen_str_nl", (2,), dtype=h5py.vlen_dtype(s))
    vs[0] = np.array(["one\n", "two"], dtype=object)
    vs[1] = np.array([], dtype=object)


def empties(f, dt):
    """Null dataspaces (h5py.Empty) of every kind of type, and contiguous
    datasets whose storage was never allocated (h5py reads the fill
    value, or zeros where the fill time is never)."""
    for name, t in [("f8", "<f8"), ("be", ">i4"), ("s5", "S5"), ("str", h5py.string_dtype()),
                    ("seq", h5py.vlen_dtype(np.int32)), ("ref", h5py.ref_dtype),
                    ("comp", dt), ("fixed", [("a", "<i4"), ("b", "<f8")])]:
        f.create_dataset("null/" + name, data=h5py.Empty(t))
    f["null/f8"].attrs["units"] = "m"
    f.create_dataset("empty_1d", shape=(0,), dtype="<f8")
    f.create_dataset("unalloc/fill", shape=(3, 4), dtype="<i4", fillvalue=7)
    f.create_dataset("unalloc/default", shape=(5,), dtype=">f4")
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    sp = h5py.h5s.create_simple((4,))
    h5py.h5d.create(f.id, b"unalloc/never", h5py.h5t.STD_I16LE, sp, dcpl=dcpl)


def xattr(p, name):
    try:
        return os.getxattr(p, name).decode()
    except OSError:
        return None


def shape_of(p):
    return tuple(int(n) for n in xattr(p, "user.shape").split(",") if n)


def objects(items, shape):
    a = np.empty(len(items), object)
    for i, v in enumerate(items):
        a[i] = v
    return a.reshape(shape)


def entry(p):
    """The value of tree entry p, read as docs/hdf5.md says."""
    dtype, shape = xattr(p, "user.dtype"), shape_of(p)
    if xattr(p, "user.h5space") == "null":
        assert os.path.isdir(p) or os.path.getsize(p) == 0, p
        return h5py.Empty(np.dtype(ast.literal_eval(dtype) if dtype[0] in "[{(" else dtype))
    if os.path.isdir(p) and xattr(p, "user.vlen") is not None:
        values, offsets = entry(p + "/values"), np.fromfile(p + "/offsets", "<i8")
        items = np.split(values, offsets[1:-1]) if len(offsets) > 1 else []
        return objects(items, shape)
    if os.path.isdir(p):
        dt = np.dtype(ast.literal_eval(dtype))
        a = np.empty(shape, dt)
        for n in dt.names:
            a[n] = entry(p + "/" + n)
        return a
    if dtype == "O":
        eol = b"\0" if xattr(p, "user.h5eol") == "nul" else b"\n"
        with open(p, "rb") as fh:
            lines = fh.read().split(eol)[:-1]
        ref = xattr(p, "user.h5ref")
        name = lambda x: None if x.startswith("@") else x  # noqa: E731 (no name: @address)
        if ref == "object":
            lines = [name(x.decode()) for x in lines]
        elif ref == "region":
            lines = [(name(x.decode().rsplit("\t", 1)[0]), x.decode().rsplit("\t", 1)[1])
                     if x else None for x in lines]
        return objects(lines, shape)
    dt = np.dtype(ast.literal_eval(dtype) if dtype[0] in "[{(" else dtype)
    return np.fromfile(p, dt).reshape(shape + dt.shape if dt.shape else shape)


def compare(f, get):
    bad = 0
    names = []
    f.visititems(lambda n, o: names.append("/" + n) if isinstance(o, h5py.Dataset) else None)
    for n in names:
        ds = f[n]
        want = Norm(f, ds).value(ds[()])
        try:
            got = get(n)
            ok = same(got if got.shape else got[()], want) if isinstance(got, np.ndarray) \
                else same(got, want)
        except Exception as e:  # a reason to report, whatever it is
            ok, got = False, e
        if not ok:
            print("%s: %r, h5py %r" % (n, got, want))
            bad += 1
    return bad


def main():
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
        return 0
    if sys.argv[1] == "tree":
        root = sys.argv[2]
        with h5py.File(sys.argv[3], "r") as f:
            return 1 if compare(f, lambda n: entry(root + n)) else 0
    import hpcmount
    with h5py.File(sys.argv[2], "r") as f, hpcmount.open(sys.argv[2]) as c:
        return 1 if compare(f, c.array) else 0


if __name__ == "__main__":
    sys.exit(main())
