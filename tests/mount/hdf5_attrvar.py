"""hdf5_attrvar.py - attributes of references, sequences and compounds
holding them (docs/hdf5.md, "Attributes of references and sequences")
against h5py's attrs[NAME].

  gen DIR            write attrvar.h5 (h5py) and dims.nc (netCDF4-python)
                     into DIR
  tree ROOT FILE     every such attribute of FILE against its xattrs in
                     ROOT (a mount)
  pkg FILE           the same through hpcmount.open(FILE).getxattr
  zattrs REFS        no .zattrs of hpcdump refs' REFS holds DIMENSION_LIST,
                     REFERENCE_LIST or any of these attributes
  list FILE...       print the files holding such an attribute

tree and pkg print one line per attribute and exit 1 on a difference or
when none was compared.
"""
import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdf5_verify  # noqa: E402 - after the path it is found on

REF, REGION = h5py.ref_dtype, h5py.regionref_dtype


def objarray(items, dtype=object):
    """A 1-D object array of items (NumPy would make a 2-D one of equal
    lengths)."""
    a = np.empty(len(items), dtype=dtype)
    for i, x in enumerate(items):
        a[i] = x
    return a


def refs_of(f, dtype, values):
    """values (references, None: null) as h5py reads them back: written
    to a dataset first, which h5py takes None in."""
    tmp = f.create_dataset("tmp", (len(values),), dtype=dtype)
    for i, v in enumerate(values):
        if v is not None:
            tmp[i] = v
    out = tmp[()]
    del f["tmp"]
    return out


def gen(out):
    with h5py.File(os.path.join(out, "attrvar.h5"), "w") as f:
        t = f.create_dataset("target", data=np.arange(20, dtype=np.int32).reshape(4, 5))
        g = f.create_group("grp")
        inner = g.create_dataset("inner", data=np.arange(3, dtype=np.int16))
        nl = f.create_group("new\nline")
        a = f.create_group("a")
        orefs = refs_of(f, REF, [t.ref, g.ref, None, inner.ref])
        a.attrs.create("objrefs", orefs, dtype=REF)
        a.attrs.create("objref_scalar", t.ref, dtype=REF)
        a.attrs.create("objref_null", refs_of(f, REF, [None])[0], shape=(), dtype=REF)
        a.attrs.create("objrefs_2d", refs_of(f, REF, [t.ref, None, g.ref, t.ref]).reshape(2, 2),
                       dtype=REF)
        a.attrs.create("objrefs_nl", refs_of(f, REF, [t.ref, nl.ref]), dtype=REF)
        sid = t.id.get_space()
        sid.select_elements(np.array([[0, 1], [3, 4], [2, 2]]))
        # (no null one: h5py 3 writes it to an attribute as a reference
        # to nothing, which neither it nor libhdf5 can follow)
        regs = refs_of(f, REGION, [t.regionref[1:3, 0:5:2], t.regionref[()],
                                   h5py.h5r.create(t.id, b".", h5py.h5r.DATASET_REGION, sid)])
        a.attrs.create("regrefs", regs, dtype=REGION)
        vi = h5py.vlen_dtype(np.int32)
        a.attrs.create("vint", objarray([np.array([1, -2, 3], np.int32), np.array([], np.int32),
                                         np.array([2**31 - 1], np.int32)]), dtype=vi)
        a.attrs.create("vint_empty", objarray([np.array([], np.int32)] * 3), dtype=vi)
        a.attrs.create("vfloat", objarray([np.array([0.1, 1e-300, -np.inf]), np.array([2.5])]),
                       dtype=h5py.vlen_dtype(np.float64))
        a.attrs.create("vf4", objarray([np.array([0.1, 3.25], np.float32)]),
                       dtype=h5py.vlen_dtype(np.float32))
        one = np.empty((), dtype=object)
        one[()] = np.array([7, 8, 9], dtype=np.uint8)
        a.attrs.create("vscalar", one, dtype=h5py.vlen_dtype(np.uint8))
        a.attrs.create("v2d", objarray([np.arange(i, dtype=np.int64) for i in range(4)])
                       .reshape(2, 2), dtype=h5py.vlen_dtype(np.int64))
        vr = h5py.vlen_dtype(REF)
        a.attrs.create("vrefs", objarray([refs_of(f, REF, [t.ref, g.ref]), refs_of(f, REF, []),
                                          refs_of(f, REF, [inner.ref, t.ref])]), dtype=vr)
        dt = np.dtype([("dataset", REF), ("dim_idx", "<i4")])
        rl = np.zeros(3, dtype=dt)
        for i, (r, k) in enumerate([(t.ref, 0), (inner.ref, 1), (None, -5)]):
            rl[i] = (refs_of(f, REF, [r])[0], k)
        a.attrs.create("reflist", rl, dtype=dt)
        a.attrs.create("reflist_scalar", rl[0], dtype=dt)
        mixed = np.dtype([("id", "<i8"), ("name", h5py.string_dtype()), ("seq", vi),
                          ("pos", [("x", "<f4"), ("y", "<f8")]), ("ok", "?"),
                          ("code", "S3"), ("tags", h5py.string_dtype(), (2,))])
        m = np.zeros(2, dtype=mixed)
        m[0] = (1, "one\ntwo", np.array([1, 2], np.int32), (0.5, 1.5), True, b"ab", ("x", ""))
        m[1] = (-2, "", np.array([], np.int32), (-1.0, 2.0), False, b"\0c", ("y", "z"))
        attr_via_dataset(f, a, "mixed", m)
        outer = np.dtype([("ref", REF), ("inner", [("k", "<u2"), ("s", vi)])])
        o = np.zeros(1, dtype=outer)
        o[0] = (t.ref, (3, np.array([4, 5], np.int32)))
        attr_via_dataset(f, a, "nested", o)
        t.dims[0].attach_scale(_scale(f, "x", 4))
        t.dims[1].attach_scale(_scale(f, "y", 5))
        inner.dims[0].attach_scale(_scale(f, "x3", 3))
    import netCDF4
    with netCDF4.Dataset(os.path.join(out, "dims.nc"), "w") as nc:
        nc.createDimension("time", None)
        nc.createDimension("lat", 3)
        nc.createDimension("bnds", 2)
        nc.createVariable("lat", "f4", ("lat",))[:] = [1, 2, 3]
        v = nc.createVariable("temp", "f8", ("time", "lat"))
        v[0:2, :] = np.arange(6).reshape(2, 3)
        nc.createVariable("lat_bnds", "f4", ("lat", "bnds"))[:] = np.zeros((3, 2))
        nc.createGroup("sub").createVariable("w", "i2", ("lat",))[:] = [4, 5, 6]


def attr_via_dataset(f, obj, name, value):
    """obj.attrs[name] = value (1-D), through a dataset of it: attrs.create
    of compounds holding sequences and strings corrupts h5py 3's heap (its
    conversion of them; a dataset's write is sound)."""
    tmp = f.create_dataset("tmp", data=value)
    aid = h5py.h5a.create(obj.id, name.encode(), tmp.id.get_type(),
                          h5py.h5s.create_simple(value.shape))
    aid.write(np.ascontiguousarray(tmp[()]))
    aid.close()
    del f["tmp"]


def _scale(f, name, n):
    s = f.create_dataset(name, data=np.arange(n, dtype=np.float32))
    s.make_scale(name)
    return s


def var_attrs(f):
    """(path, object, name) of every attribute of these types in f."""
    out = []
    for p, obj in [("/", f)] + [("/" + n, o) for n, o in _objects(f)]:
        for name in obj.attrs:
            if hdf5_verify.attr_is_var(obj, name):
                out.append((p, obj, name))
    return out


def _objects(f):
    found = []
    f.visititems(lambda n, o: found.append((n, o)))
    return found


def compare(f, getx, names, label):
    bad = compared = 0
    for p, obj, name in var_attrs(f):
        try:
            ok, why = hdf5_verify.attr_var_served(obj, name, obj.attrs[name], names(p),
                                                  lambda k: getx(p, k))
        except OSError as e:
            ok, why = False, str(e)
        compared += 1
        bad += not ok
        print("%s %s %r@%r %s" % ("ok" if ok else "FAIL", label, p, name, why or ""))
    print("%s: %d attributes compared, %d differ" % (label, compared, bad))
    return 1 if bad or not compared else 0


def tree(root, h5):
    with h5py.File(h5, "r") as f:
        return compare(f, lambda p, k: os.getxattr(root + p, k),
                       lambda p: os.listxattr(root + p), "xattr")


def pkg(h5):
    import hpcmount
    with h5py.File(h5, "r") as f, hpcmount.open(h5) as c:
        return compare(f, c.getxattr, c.listxattr, "pkg")


def zattrs(refs):
    """No .zattrs holds netCDF-4's dimension scale attributes nor any
    attribute these forms serve (the names this test writes)."""
    with open(refs) as fh:
        r = json.load(fh)
    r = r.get("refs", r)
    bad = 0
    for k, v in r.items():
        if not k.endswith(".zattrs"):
            continue
        attrs = json.loads(v)
        hit = [n for n in attrs if n in ("DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME")
               or n.startswith("user.")]
        if hit:
            print("FAIL %s: %s" % (k, hit))
            bad += 1
    return 1 if bad else 0


def listing(files):
    for h5 in files:
        try:
            with h5py.File(h5, "r") as f:
                if var_attrs(f):
                    print(h5)
        except Exception:                      # noqa: BLE001 - not one h5py reads
            pass
    return 0


def main(argv):
    cmd = argv[1]
    if cmd == "gen":
        return gen(argv[2]) or 0
    if cmd == "tree":
        return tree(argv[2], argv[3])
    if cmd == "pkg":
        return pkg(argv[2])
    if cmd == "zattrs":
        return zattrs(argv[2])
    if cmd == "list":
        return listing(argv[2:])
    raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
