#!/usr/bin/python3
"""hdf5_objects_survey.py DIR... - every dataset h5py reads in the HDF5
files under DIR, compared with the Python package's c.array(p): prints
one line per dataset that differs or raises, then counts by kind (the
dtype class of the dataset), and exits 1 when any differs.

h5py's value is normalised as the package gives it (docs/hdf5.md): an
object reference is its target's path ('' when null), a region
reference (path, selection text) (None when null); a target without a
name has the path None, as h5py names it."""
import collections
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hdf5_vlen import selection  # noqa: E402  (the text docs/hdf5.md gives)


def kind(dt):
    """A name for what the dtype holds."""
    if h5py.check_string_dtype(dt) and dt.kind == "O":
        return "vlen-string"
    ref = h5py.check_ref_dtype(dt)
    if ref is not None:
        return "region-ref" if ref is h5py.RegionReference else "object-ref"
    base = h5py.check_vlen_dtype(dt)
    if base is not None:
        inner = kind(base)
        return "vlen" if inner == "fixed" else "vlen-of-" + inner
    if dt.names:
        inner = sorted({kind(dt.fields[n][0]) for n in dt.names} - {"fixed"})
        return "compound-with-" + "+".join(inner) if inner else "fixed"
    if dt.subdtype:
        inner = kind(dt.subdtype[0])
        return "fixed" if inner == "fixed" else "array-of-" + inner
    return "fixed"


class Norm:
    def __init__(self, f, ds):
        self.f, self.ds = f, ds

    def ref(self, r):
        if isinstance(r, h5py.RegionReference):
            if not r:
                return None
            sp = h5py.h5r.get_region(r, self.ds.id)
            return (self.f[r].name, selection(sp))
        return self.f[r].name if r else ""

    def value(self, v):
        """v with every reference replaced, recursively."""
        if isinstance(v, (h5py.Reference, h5py.RegionReference)):
            return self.ref(v)
        if isinstance(v, np.ndarray) and v.dtype.kind == "O":
            out = np.empty(v.shape, object)
            for i, x in np.ndenumerate(v):
                out[i] = self.value(x)
            return out
        if isinstance(v, np.void) and v.dtype.names:
            return self.value(np.array(v))[()]
        if isinstance(v, np.ndarray) and v.dtype.names and v.dtype.hasobject:
            out = v.copy()
            for n in v.dtype.names:
                out[n] = self.value(v[n])
            return out
        return v


def same(a, b):
    """Equal values, element by element (NaN equal to NaN); h5py.Empty
    equals an Empty (the package's) of its dtype, little-endian."""
    if isinstance(a, h5py.Empty) or isinstance(b, h5py.Empty):
        return type(a).__name__ == type(b).__name__ == "Empty" and \
            a.shape is None and b.shape is None and same(np.empty(0, a.dtype), np.empty(0, b.dtype))
    if isinstance(a, np.void) and isinstance(b, np.void) and a.dtype.names:
        return a.dtype.names == b.dtype.names and all(same(a[n], b[n]) for n in a.dtype.names)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape:
            return False
        if a.dtype.names or b.dtype.names:
            if a.dtype.names != b.dtype.names:
                return False
            return all(same(a[n], b[n]) for n in a.dtype.names)
        if a.dtype.kind == "O" or b.dtype.kind == "O":
            return all(same(x, y) for x, y in zip(a.ravel(), b.ravel()))
        if a.dtype != b.dtype and not (a.dtype.kind == b.dtype.kind and a.dtype.itemsize == b.dtype.itemsize):
            return False
        return a.tobytes() == b.tobytes() or bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is not type(b) and not (isinstance(a, np.generic) or isinstance(b, np.generic)):
        return False
    if isinstance(a, np.generic) or isinstance(b, np.generic):
        return same(np.asarray(a), np.asarray(b))
    return a == b


def datasets(f):
    out = []
    f.visititems(lambda name, o: out.append("/" + name) if isinstance(o, h5py.Dataset) else None)
    return out


def survey(path, counts, show):
    import hpcmount               # (the other functions serve tests without the package)
    try:
        f = h5py.File(path, "r")
    except Exception:
        return
    with f:
        try:
            names = datasets(f)
        except Exception:
            return
        c = None
        for p in names:
            try:
                ds = f[p]
                want = Norm(f, ds).value(ds[()])
                k = kind(ds.dtype)
            except Exception:
                continue
            try:
                if c is None:
                    c = hpcmount.open(path)
                got = c.array(p)
                ok = same(got, want)
                why = "differs"
            except Exception as e:
                ok, why = False, "%s: %s" % (type(e).__name__, str(e)[:160])
            counts[k][0 if ok else 1] += 1
            if not ok and show:
                print("%s %s [%s] %s" % (path, p, k, why))
        if c is not None:
            c.close()


def main():
    show = "-q" not in sys.argv
    counts = collections.defaultdict(lambda: [0, 0])
    for top in [a for a in sys.argv[1:] if a != "-q"]:
        for d, _, files in os.walk(top):
            for n in sorted(files):
                survey(os.path.join(d, n), counts, show)
    bad = 0
    for k in sorted(counts):
        print("%-40s equal %5d  not %5d" % (k, counts[k][0], counts[k][1]))
        bad += counts[k][1]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
