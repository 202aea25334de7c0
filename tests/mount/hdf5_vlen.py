"""hdf5_vlen.py - variable-length sequences and references against h5py.

  gen DIR              write vlen.h5 (h5py), damaged.h5 and bigattr.h5 into DIR
  list FILE...         print the files holding a dataset of sequences or
                       references that h5py reads (the corpus check)
  tree ROOT FILE       compare every such dataset of FILE, and of
                       variable-length strings, with its form in ROOT (a
                       mount, or hpcdump extract's copy): docs/hdf5.md
  pkg FILE...          compare hpcmount.open(FILE).array(p) with h5py's ds[()]
                       for every such dataset, variable-length strings too
  attrs ROOT FILE      compare every string attribute of FILE with its
                       user.attr.NAME in ROOT (a mount, or extract's copy)
  pkgattrs FILE        the same through hpcmount.open(FILE).getxattr
  zattrs REFS FILE     the same through zarr's attrs of hpcdump refs' REFS
  anon ROOT FILE       every object that object references of FILE lead to
                       and no path names: ROOT/@ADDR (a mount, or hpcdump
                       cat's tree when ROOT is hpcdump:FILE) against h5py
  pkganon FILE         the same through hpcmount.open(FILE).array("@ADDR")
  ashape ROOT FILE     user.attrshape.NAME of every attribute of FILE in ROOT
                       (a mount, extract's copy, or "pkg" for the package)
                       against h5py's shape of it

tree and pkg print one line per dataset compared and exit 1 on the first
difference; 0 datasets compared in a file that has some is a failure.
"""
import ast
import errno
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdf5_verify  # noqa: E402 - after the path it is found on


def gen(out):
    with h5py.File(os.path.join(out, "vlen.h5"), "w") as f:
        rng = np.random.default_rng(35)
        i4 = f.create_dataset("int_1d", (6,), dtype=h5py.vlen_dtype(np.int32))
        for i, n in enumerate([3, 0, 1, 7, 0, 2]):
            i4[i] = rng.integers(-1000, 1000, n, dtype=np.int32)
        f8 = f.create_dataset("g/float_2d", (3, 4), dtype=h5py.vlen_dtype(np.float64))
        for i in range(3):
            for j in range(4):
                f8[i, j] = rng.standard_normal((i * 4 + j) % 5)
        f.create_dataset("empty_all", (4,), dtype=h5py.vlen_dtype(np.uint16))
        u8 = f.create_dataset("chunked_u8", (1000,), dtype=h5py.vlen_dtype(np.uint8),
                              chunks=(64,), compression="gzip")
        for i in range(0, 1000, 3):
            u8[i] = np.arange(i % 11, dtype=np.uint8)
        s = f.create_dataset("scalar_i8", (), dtype=h5py.vlen_dtype(np.int64))
        s[()] = np.array([2**40, -5], dtype=np.int64)
        be = f.create_dataset("big_endian", (2,), dtype=h5py.vlen_dtype(np.dtype(">i2")))
        be[0] = np.array([1, -2], dtype=">i2")
        be[1] = np.array([258], dtype=">i2")
        t = f.create_dataset("target", data=np.arange(20, dtype=np.int32).reshape(4, 5))
        f.create_group("grp/inner")
        refs = f.create_dataset("objrefs", (4,), dtype=h5py.ref_dtype)
        refs[0] = t.ref
        refs[1] = f["grp/inner"].ref
        refs[3] = f["g/float_2d"].ref
        regs = f.create_dataset("regrefs", (5,), dtype=h5py.regionref_dtype)
        regs[0] = t.regionref[1:3, 0:5:2]
        regs[1] = t.regionref[()]
        regs[3] = t.regionref[2, 4]
        sid = t.id.get_space()
        sid.select_elements(np.array([[0, 1], [3, 4], [2, 2]]))
        regs[4] = h5py.h5r.create(t.id, b".", h5py.h5r.DATASET_REGION, sid)
        r2 = f.create_dataset("objrefs_2d", (2, 2), dtype=h5py.ref_dtype)
        r2[0, 0] = f["grp"].ref
        r2[1, 1] = t.ref
        newlines(f, t)
        unlinked(f)
        shaped_attrs(f, t)
        typed_attrs(f, t)
    heap_nul(os.path.join(out, "vlen.h5"))
    damaged(out)
    with h5py.File(os.path.join(out, "bigattr.h5"), "w", libver="latest") as f:
        # more than an xattr holds (dense attribute storage): cut to whole
        # elements, and one string longer than an xattr: left out
        f.attrs["cut"] = np.array([b"a\0\n" + b"x" * 100] * 1000)
        f.attrs["huge"] = np.array(b"\0\n" + b"y" * 70000, dtype="S70002")


def shaped_attrs(f, t):
    """Attributes of every shape: a scalar and an array of one element
    have the same text, user.attrshape tells them apart."""
    g = f.create_group("shapes")
    g.attrs["scalar"] = np.int32(5)
    g.attrs["one"] = np.array([5], dtype=np.int32)
    g.attrs["vec"] = np.array([1.5, 2.5])
    g.attrs["zero"] = np.zeros(0, dtype=np.int16)
    g.attrs["grid"] = np.arange(6, dtype=np.uint8).reshape(2, 3)
    g.attrs["cube"] = np.ones((1, 1, 1), dtype=np.float32)
    g.attrs["null"] = h5py.Empty("f4")
    g.attrs["str1"] = np.array([b"x"])
    g.attrs.create("vstr1", np.array(["a"], dtype=object), dtype=h5py.string_dtype())
    t.attrs["one"] = np.array([7], dtype=np.int64)


def typed_attrs(f, t):
    """Attributes of compound (nested, array members, big-endian, padded),
    array, opaque and complex types: hex with user.attrdtype.NAME."""
    g = f.create_group("typed")
    inner = np.dtype([("x", "<i2"), ("y", "<f4")])
    nested = np.dtype([("a", "<i4"), ("b", inner), ("c", "<f8", (2, 3)), ("d", "S3")])
    g.attrs["nested"] = np.array([(1, (2, 3.5), np.arange(6).reshape(2, 3), b"ab"),
                                  (-4, (5, -6.5), np.ones((2, 3)), b"xyz")], dtype=nested)
    g.attrs["nested_scalar"] = np.array((7, (8, 9.25), np.zeros((2, 3)), b"q"), dtype=nested)[()]
    g.attrs["big_endian"] = np.array([(1, 2.0), (-3, 4.5)], dtype=[("a", ">i8"), ("b", ">f8")])
    padded = np.dtype({"names": ["p", "q"], "formats": ["<i2", "<f8"], "offsets": [0, 8],
                       "itemsize": 24})
    g.attrs["padded"] = np.array([(1, 1.5), (2, 2.5)], dtype=padded)
    g.attrs["nested_2d"] = np.zeros((2, 2), dtype=nested)
    g.attrs["c8"] = np.array([1 + 2j, 3 - 4j], dtype="<c8")
    g.attrs["c16"] = np.complex128(-1.5 + 0.25j)
    g.attrs["opaque"] = np.void(b"\x01\x00\xff")
    g.attrs["opaque_1d"] = np.array([b"ab", b"\0c"], dtype="V2")
    g.attrs.create("array", np.arange(12, dtype=">i4").reshape(2, 2, 3),
                   dtype=np.dtype((">i4", (2, 3))))
    g.attrs.create("array_scalar", np.arange(6, dtype="<u2").reshape(2, 3),
                   dtype=np.dtype(("<u2", (2, 3))))
    g.attrs.create("array_of_compounds", np.zeros((3, 2), dtype=inner),
                   dtype=np.dtype((inner, (2,))))
    g.attrs["empty"] = h5py.Empty(nested)
    g.attrs["zero"] = np.zeros(0, dtype=nested)
    t.attrs["c16"] = np.array([[1j, 2], [3, 4j]], dtype="<c16")


def hdf5_lib():
    """libhdf5 as h5py loaded it (the same library, so the same ids)."""
    import ctypes
    for line in open("/proc/self/maps"):
        p = line.split()[-1]
        if "/libhdf5" in p and "_hl" not in p and ".so" in p:
            return ctypes.CDLL(p)
    raise SystemExit("libhdf5 not found in this process")


def unlinked(f):
    """Objects only a reference leads to (as JLD2 writes them): each one's
    count of references raised (H5Oincr_refcount) before it is unlinked,
    so that it stays; /anonrefs leads to them.  /@ADDR, a link of the root
    named as one of them, wins over it."""
    import ctypes
    lib = hdf5_lib()
    lib.H5Oincr_refcount.argtypes = [ctypes.c_int64]
    u = f.create_dataset("u_ds", data=np.arange(12, dtype=">f4").reshape(3, 4), chunks=(2, 2),
                         compression="gzip")
    u.attrs["units"] = "m"
    g = f.create_group("u_grp")
    g.create_dataset("x", data=np.array([1, 2, 3], dtype=np.int16))
    g.create_group("sub").create_dataset("y", data=7.5)
    seq = f.create_dataset("u_seq", (2,), dtype=h5py.vlen_dtype(np.int32))
    seq[0] = [1, 2, 3]
    hidden = f.create_dataset("u_hidden", data=np.int8(5))
    refs = f.create_dataset("anonrefs", (6,), dtype=h5py.ref_dtype)
    for i, o in enumerate([u, g, seq, g["x"], hidden, g["sub"]]):
        refs[i] = o.ref
    for o in (u, g, seq, hidden):
        if lib.H5Oincr_refcount(o.id.id) < 0:
            raise SystemExit("H5Oincr_refcount failed")
    f["@%d" % h5py.h5o.get_info(hidden.id).addr] = np.arange(3, dtype=np.uint8)
    for name in ("u_ds", "u_grp", "u_seq", "u_hidden"):
        del f[name]


def newlines(f, t):
    """Strings and target paths holding a newline: each element of their
    text ends with NUL (user.h5eol nul); strings without one stay lines."""
    s = h5py.string_dtype()
    f.create_dataset("str_nl", data=np.array([["a\nb", "", "plain"], ["\n", "x\n\ny", "\u00fcn\n"]],
                                             dtype=object), dtype=s)
    f.create_dataset("str_scalar_nl", data="only\none", dtype=s)
    f.create_dataset("str_plain", data=["one", "", "three"], dtype=s)
    g = f.create_group("grp/new\nline")
    nt = g.create_dataset("t\n", data=np.arange(6, dtype="<i2").reshape(2, 3))
    refs = f.create_dataset("objrefs_nl", (3,), dtype=h5py.ref_dtype)
    refs[0] = t.ref
    refs[1] = g.ref
    regs = f.create_dataset("regrefs_nl", (2,), dtype=h5py.regionref_dtype)
    regs[0] = nt.regionref[0:2, 1]
    string_attrs(f, nt)


def string_attrs(f, ds):
    """String attributes, several or one, holding a newline or not: the
    text of those holding one ends each element with NUL."""
    s = h5py.string_dtype()
    f.attrs.create("vl_nl", np.array(["a\nb", "", "c\n"], dtype=object), dtype=s)
    f.attrs.create("vl_scalar_nl", "x\ny", dtype=s)
    f.attrs.create("vl_plain", np.array(["one", "", "three"], dtype=object), dtype=s)
    f.attrs.create("vl_empty_last", np.array(["one", ""], dtype=object), dtype=s)
    f.attrs["fx_nl"] = np.array([b"a\nb", b"cd", b""])
    f.attrs["fx_scalar_nl"] = np.bytes_(b"history: made by h5py\nline 2\n")
    f.attrs["fx_plain"] = np.array([b"ab", b"c"])
    f.attrs["fx_nul"] = np.array([b"a\0b", b"cd"])       # NUL inside, no newline: lines
    # NUL inside and a newline: no text form, the bytes (user.attrdtype):
    # 1-D, scalar, an array of one, 2-D; leading, inner and trailing NULs,
    # strings filling their size
    f.attrs["fx_nul_nl"] = np.array([b"a\0b", b"c\nd", b"e"])
    f.attrs["fx_nul_nl_scalar"] = np.array(b"\0x\ny", dtype="S8")
    f.attrs["fx_nul_nl_one"] = np.array([b"p\0q\n"])
    ds.attrs["fx_nul_nl_2d"] = np.array([[b"\0\0z", b"\n", b""],
                                         [b"full\0\nxy", b"a\0", b"12345678"]], dtype="S8")
    f.attrs["vl_heap_nul"] = "vlQQheap"                  # heap_nul puts NULs in it
    ds.attrs.create("grid_nl", np.array([["1\n", "2"], ["3", "\n"]], dtype=object), dtype=s)
    ds.attrs.create("utf8", np.array(["\u00fc\n", "\u00e9"], dtype=object), dtype=s)


def heap_nul(path):
    """Turn the stored variable-length string "vlQQheap" into "vl\\0\\0heap"
    (h5py refuses to write NUL into one): libhdf5 and h5py read it as the
    C string "vl", and so must the mount."""
    with open(path, "r+b") as fh:
        data = fh.read()
        assert data.count(b"vlQQheap") == 1
        fh.seek(data.index(b"vlQQheap") + 2)
        fh.write(b"\0\0")


def damaged(out):
    """damaged.h5: sequences and region references whose global heap
    collection lost its signature: libhdf5 cannot read their values."""
    p = os.path.join(out, "damaged.h5")
    with h5py.File(p, "w") as f:
        v = f.create_dataset("seq", (2,), dtype=h5py.vlen_dtype(np.int32))
        v[0] = [1, 2, 3]
        f.create_dataset("fine", data=np.arange(4))
    data = bytearray(open(p, "rb").read())
    at = data.find(b"GCOL")
    assert at > 0, "no global heap collection"
    data[at:at + 4] = b"XXXX"
    open(p, "wb").write(bytes(data))


def sequence(w, base):
    """h5py's sequence w with the values libhdf5 reads: h5py 3.7 gives a
    big-endian base's bytes as stored under the native dtype (h5dump
    reads 1 where h5py has 256)."""
    w = np.asarray(w)
    if base.byteorder == ">" and w.dtype == base.newbyteorder("="):
        return w.view(base)
    return w


def scalar_as_array(ds, value):
    """h5py gives a scalar dataset's one value itself: as a 0-d object array."""
    if ds.shape != ():
        return value
    a = np.empty((), object)
    a[()] = value
    return a


def plain_base(ds):
    """Whether a sequence's values have a byte image (docs/hdf5.md:
    sequences of sequences or of references are not served)."""
    base = h5py.check_vlen_dtype(ds.dtype)
    return base is not None and not base.hasobject and \
        ds.id.get_type().get_super().detect_class(h5py.h5t.REFERENCE) is False


def kind(ds):
    """'seq', 'obj', 'reg', 'str' or None for a dataset's type."""
    t = ds.id.get_type()
    c = t.get_class()
    if c == h5py.h5t.VLEN:
        return "seq"
    if c == h5py.h5t.REFERENCE:
        return "obj" if t.equal(h5py.h5t.STD_REF_OBJ) else "reg"
    if c == h5py.h5t.STRING and t.is_variable_str():
        return "str"
    return None


def datasets(f, with_strings=False):
    """(path, kind, value) of every dataset of sequences or references
    (and variable-length strings) that h5py reads."""
    found = []

    def visit(name, obj):
        if not isinstance(obj, h5py.Dataset):
            return
        k = kind(obj)
        if k == "seq" and not plain_base(obj):
            print("skip %s: sequences of variable-length data or references (not served)"
                  % obj.name, file=sys.stderr)
        elif k and (k != "str" or with_strings):
            try:
                found.append((obj.name, k, scalar_as_array(obj, obj[()])))
            except Exception:       # h5py cannot read it: nothing to compare
                pass
    f.visititems(visit)
    return found


def selection(sid):
    t = sid.get_select_type()
    if t == h5py.h5s.SEL_ALL:
        return "all"
    if t == h5py.h5s.SEL_NONE:
        return "none"
    if t == h5py.h5s.SEL_POINTS:
        return "points" + "".join(" (%s)" % ",".join(map(str, p))
                                  for p in sid.get_select_elem_pointlist())
    return "blocks" + "".join(" (%s)-(%s)" % (",".join(map(str, b[0])), ",".join(map(str, b[1])))
                              for b in sid.get_select_hyper_blocklist())


def ref_text(f, ds, ref, k):
    """The line docs/hdf5.md gives a reference."""
    if not ref:
        return ""
    name = f[ref].name or "@%d" % h5py.h5o.get_info(f[ref].id).addr
    if k == "obj":
        return name
    return name + "\t" + selection(h5py.h5r.get_region(ref, ds.id))


def xattr(path, name):
    return os.getxattr(path, name).decode()


def eol_of(path):
    """What ends each element of the text file path: NUL where user.h5eol
    says so, else a newline (docs/hdf5.md)."""
    return b"\0" if "user.h5eol" in os.listxattr(path) and xattr(path, "user.h5eol") == "nul" \
        else b"\n"


def text_bytes(items):
    """The text docs/hdf5.md gives elements items (bytes)."""
    eol = b"\0" if any(b"\n" in v for v in items) else b"\n"
    return b"".join(v + eol for v in items), eol

def shape_of(path):
    s = xattr(path, "user.shape")
    return tuple(int(x) for x in s.split(",") if x)


def dtype_of(text):
    return np.dtype(ast.literal_eval(text) if text[:1] in "[{(" else text)


def array_of(path):
    a = np.fromfile(path, dtype=dtype_of(xattr(path, "user.dtype")))
    if a.shape != shape_of(path):
        raise AssertionError("%s: %s elements, user.shape %s" % (path, a.shape, shape_of(path)))
    return a


def tree_seq(root, ds, p, value):
    d = root + p
    if not os.path.isdir(d):
        return "not a directory"
    if shape_of(d) != value.shape or xattr(d, "user.dtype") != "O":
        return "user.shape %s / user.dtype, h5py %s" % (shape_of(d), value.shape)
    values, offsets = array_of(d + "/values"), array_of(d + "/offsets")
    flat = value.reshape(-1)
    base = h5py.check_vlen_dtype(ds.dtype)
    if offsets.dtype != np.dtype("<i8") or len(offsets) != flat.size + 1:
        return "offsets: %s of %s" % (len(offsets), offsets.dtype)
    for i, (got, want) in enumerate(zip(np.split(values, offsets[1:-1]), flat)):
        want = sequence(want, base)
        if not same_seq(got, want, base):
            return "element %d: %r, h5py %r" % (i, got, want)
    if dtype_of(xattr(d, "user.vlen")) != values.dtype:
        return "user.vlen %s, values %s" % (xattr(d, "user.vlen"), values.dtype.str)
    return None


def unfollowed(path, e):
    """A reference h5py cannot follow (e): the mount's file reads EIO."""
    try:
        with open(path, "rb") as fh:
            fh.read()
    except OSError as err:
        return None if err.errno == errno.EIO else "h5py: %s; the mount: %s" % (e, err)
    return "h5py cannot follow a reference (%s), the mount served it" % e


def as_bytes(w):
    return w.encode() if isinstance(w, str) else w


def tree_text(root, f, p, k, value):
    """References or strings (k "str") served as text."""
    path = root + p
    try:
        want = [as_bytes(w) if k == "str" else os.fsencode(ref_text(f, f[p], w, k))
                for w in value.reshape(-1)]
    except (KeyError, ValueError, RuntimeError) as e:
        return unfollowed(path, e)
    ref = None if k == "str" else "object" if k == "obj" else "region"
    got_ref = xattr(path, "user.h5ref") if "user.h5ref" in os.listxattr(path) else None
    if shape_of(path) != value.shape or got_ref != ref:
        return "user.shape %s / user.h5ref %s" % (shape_of(path), got_ref)
    text, eol = text_bytes(want)
    if eol_of(path) != eol:
        return "elements end with %r, h5py's hold a newline: %s" % (eol_of(path), eol == b"\0")
    with open(path, "rb") as fh:
        got = fh.read()
    if got != text:
        return "text %r, h5py %r" % (got[:200], want[:8])
    return None


def tree(root, h5):
    bad = 0
    with h5py.File(h5, "r") as f:
        found = datasets(f, with_strings=True)
        for p, k, value in found:
            why = tree_seq(root, f[p], p, value) if k == "seq" else tree_text(root, f, p, k, value)
            print("%s %s:%s %s" % ("FAIL" if why else "ok", os.path.basename(h5), p, why or k))
            bad += why is not None
    return 1 if bad else 0


def trees(listfile):
    """tree() of each MOUNT<TAB>H5FILE line of listfile in this one
    interpreter; after each file's lines, "status: H5FILE N" (N as
    tree()'s exit status, 1 also for an exception)."""
    import traceback
    for line in open(listfile):
        root, h5 = line.rstrip("\n").split("\t")
        try:
            rc = tree(root, h5)
        except Exception:              # one file's failure, not the others'
            traceback.print_exc(file=sys.stdout)
            rc = 1
        print("status: %s %d" % (h5, rc), flush=True)
    return 0


def same_seq(got, want, base):
    return got.dtype == base.newbyteorder("<") and np.array_equal(got, want)


def same_ref(g, line, k):
    if k == "obj":
        return g == (None if line.startswith("@") else line)
    return line == "" if g is None else "\t".join(g) == line


def same_object(got, want, f, ds, k):
    if k == "seq":
        base = h5py.check_vlen_dtype(ds.dtype)
        return all(same_seq(g, sequence(w, base), base)
                   for g, w in zip(got.reshape(-1), want.reshape(-1)))
    if k == "str":
        return all(g == (w.encode() if isinstance(w, str) else w)
                   for g, w in zip(got.reshape(-1), want.reshape(-1)))
    return all(same_ref(g, ref_text(f, ds, w, k), k)
               for g, w in zip(got.reshape(-1), want.reshape(-1)))


def pkg(files):
    import hpcmount
    bad = compared = 0
    for h5 in files:
        with h5py.File(h5, "r") as f, hpcmount.open(h5) as c:
            for p, k, want in datasets(f, with_strings=True):
                try:
                    got = scalar_as_array(f[p], c.array(p))
                    ok = got.shape == want.shape and same_object(got, want, f, f[p], k)
                    why = None if ok else "values differ"
                except OSError as e:
                    why = str(e)
                compared += 1
                print("%s pkg %s:%s %s" % ("FAIL" if why else "ok", os.path.basename(h5), p,
                                           why or k))
                bad += why is not None
    print("pkg: %d datasets compared, %d differ" % (compared, bad))
    return 1 if bad or not compared else 0


def string_items(obj):
    """(name, [bytes, ...]) of the string attributes of obj, in C order."""
    for name in obj.attrs:
        try:
            v = obj.attrs[name]
        except Exception:        # noqa: BLE001 - h5py cannot read it: nothing to compare
            continue
        a = np.asarray(v)
        if isinstance(v, (bytes, str)) or a.dtype.kind in "OSU":
            if a.dtype.kind == "O" and not all(isinstance(x, (bytes, str)) for x in a.ravel()):
                continue
            yield name, [as_bytes(x) for x in a.ravel()]


def attr_value(text):
    """The strings of an attribute's xattr (docs/hdf5.md): NUL-ended
    elements where the value ends with NUL, else lines."""
    return text.split(b"\0")[:-1] if text.endswith(b"\0") else text.split(b"\n")


def objects(f):
    out = [("/", f)]
    f.visititems(lambda name, o: out.append(("/" + name, o)))
    return out


def compare_attrs(f, getx, names, label):
    """getx(path, xattr name) -> bytes, names(path) -> xattr names: every
    string attribute equals h5py's: as text, or, where its strings hold NUL
    and a newline (and only there), as their bytes (user.attrdtype.NAME,
    read as docs/hdf5.md says) equal to h5py's attrs[NAME], type, dtype
    and shape included."""
    bad = compared = 0
    for p, obj in objects(f):
        listed = names(p)
        for name, want in string_items(obj):
            key = "user.attr." + name
            textless = any(b"\0" in w for w in want) and any(b"\n" in w for w in want)
            if textless != ("user.attrdtype." + name in listed):
                why = "user.attrdtype %s" % ("missing" if textless else "on a text")
            elif textless:
                ok, got = hdf5_verify.attr_served(listed, lambda k: getx(p, k), name,
                                                  obj.attrs[name])
                why = None if ok else "%r, h5py %r" % (got, obj.attrs[name])
            else:
                got = getx(p, key)
                why = None if attr_value(got) == want else "%r, h5py %r" % (got, want)
            compared += 1
            print("%s %s %r@%r %s" % ("FAIL" if why else "ok", label, p, name, why or ""))
            bad += why is not None
    print("%s: %d string attributes compared, %d differ" % (label, compared, bad))
    return 1 if bad or not compared else compare_typed(f, getx, names, label)


HEX_CLASSES = (h5py.h5t.COMPOUND, h5py.h5t.ARRAY, h5py.h5t.OPAQUE)


def compare_typed(f, getx, names, label):
    """Every attribute of a compound, array or opaque type (complex too)
    has user.attrdtype.NAME, and its hex decodes (hdf5_verify.attr_bytes)
    to h5py's attrs[NAME], type, dtype (little-endian) and shape included;
    no attribute of another type but strings' bytes has user.attrdtype."""
    bad = compared = 0
    for p, obj in objects(f):
        listed = names(p)
        for name in obj.attrs:
            hexed = obj.attrs.get_id(name).get_type().get_class() in HEX_CLASSES
            if not hexed:
                if obj.attrs.get_id(name).get_type().get_class() != h5py.h5t.STRING:
                    bad += "user.attrdtype." + name in listed
                continue
            if "user.attrdtype." + name not in listed:
                ok, got = False, "no user.attrdtype"
            else:
                ok, got = hdf5_verify.attr_served(listed, lambda k: getx(p, k), name,
                                                  obj.attrs[name])
            compared += 1
            print("%s %s typed %r@%r %s" % ("ok" if ok else "FAIL", label, p, name,
                                            "" if ok else "%r, h5py %r" % (got, obj.attrs[name])))
            bad += not ok
    print("%s: %d typed attributes compared, %d differ" % (label, compared, bad))
    return 1 if bad or compared < 15 else 0


def attrs(root, h5):
    with h5py.File(h5, "r") as f:
        return compare_attrs(f, lambda p, k: os.getxattr(root + p, k),
                             lambda p: os.listxattr(root + p), "xattr")


def pkgattrs(h5):
    import hpcmount
    with h5py.File(h5, "r") as f, hpcmount.open(h5) as c:
        return compare_attrs(f, c.getxattr, c.listxattr, "pkg")


def zattrs(refs, h5):
    """The references' attributes: zarr's attrs hold h5py's strings (a
    list of them, in C order, for several; the string for one)."""
    import fsspec
    import zarr
    fs = fsspec.filesystem("reference", fo=refs, remote_protocol="file")
    root = zarr.open(fs.get_mapper(""), mode="r")
    bad = compared = 0
    with h5py.File(h5, "r") as f:
        for p, obj in objects(f):
            if p != "/" and p.strip("/") not in root:
                continue           # not an array for zarr (references, sequences)
            node = root[p.strip("/")] if p != "/" else root
            for name, want in string_items(obj):
                lossy = any(b"\0" in w for w in want)    # netCDF's: up to the first NUL
                got = node.attrs.get(name)
                text = [w.decode() for w in want]
                # netCDF4-python's, as refs.md: one string (a scalar's, an
                # array of one's) is that string, more a list
                ok = lossy or got == (text if len(text) != 1 else text[0])
                compared += 1
                print("%s zattrs %r@%r %s" % ("ok" if ok else "FAIL", p, name,
                                              "" if ok else "%r, h5py %r" % (got, text)))
                bad += not ok
    print("zattrs: %d string attributes compared, %d differ" % (compared, bad))
    return 1 if bad or not compared else 0


def unnamed(f):
    """{address: object} of the objects the object references of f (in
    datasets and compound members) lead to that no path names."""
    out = {}

    def refs_of(a):
        for r in np.asarray(a).reshape(-1):
            if isinstance(r, h5py.Reference) and r and f[r].name is None:
                out[h5py.h5o.get_info(f[r].id).addr] = f[r]

    def visit(name, o):
        if not isinstance(o, h5py.Dataset) or o.dtype.kind not in "OV":
            return
        if h5py.check_dtype(ref=o.dtype) is h5py.Reference:
            refs_of(o[()])
        for field in o.dtype.names or ():
            if h5py.check_dtype(ref=o.dtype.fields[field][0]) is h5py.Reference:
                refs_of(o[()][field])
    f.visititems(visit)
    return out


def same_dataset(path, ds):
    """The file or directory path against h5py's dataset ds; None or why."""
    if h5py.check_vlen_dtype(ds.dtype) is not None:
        return tree_seq(path, ds, "", ds[()])
    want = np.ascontiguousarray(ds[()])
    want = want.astype(want.dtype.newbyteorder("<"))
    got = np.fromfile(path, dtype=dtype_of(xattr(path, "user.dtype"))).reshape(shape_of(path))
    if got.dtype != want.dtype or got.tobytes() != want.tobytes():
        return "values %r, h5py %r" % (got, want)
    for name, value in ds.attrs.items():
        if isinstance(value, str) and xattr(path, "user.attr." + name) != value:
            return "attribute %s" % name
    return None


def anon(root, h5):
    """ROOT/@ADDR of every unnamed object: a dataset's file (or directory)
    and xattrs, a group's entries; a root link of that name wins."""
    bad = compared = 0
    with h5py.File(h5, "r") as f:
        for addr, obj in sorted(unnamed(f).items()):
            p = "%s/@%d" % (root, addr)
            if "@%d" % addr in f:
                why = None if os.path.getsize(p) == f["@%d" % addr].nbytes else "not the link"
            elif isinstance(obj, h5py.Group):
                why = None if sorted(os.listdir(p)) == sorted(obj) else "entries %s" % os.listdir(p)
            else:
                why = same_dataset(p, obj)
            compared += 1
            print("%s anon %s:@%d %s" % ("FAIL" if why else "ok", os.path.basename(h5), addr,
                                         why or type(obj).__name__))
            bad += why is not None
    print("anon: %d objects compared, %d differ" % (compared, bad))
    return 1 if bad or not compared else 0


def pkganon(h5):
    """hpcmount.open(FILE).array("@ADDR") is h5py's f[ref][()]."""
    import hpcmount
    bad = compared = 0
    with h5py.File(h5, "r") as f, hpcmount.open(h5) as c:
        for addr, obj in sorted(unnamed(f).items()):
            name = "@%d" % addr
            if name in f:              # a link of the root wins
                ok = np.array_equal(c.array(name), f[name][()])
            elif isinstance(obj, h5py.Group):
                ok = sorted(c.listdir(name)) == sorted(obj)
            elif h5py.check_vlen_dtype(obj.dtype) is not None:
                got, want = c.array(name), obj[()]
                ok = got.shape == want.shape and same_object(got, want, f, obj, "seq")
            else:
                got, want = c.array(name), obj[()]
                ok = np.shape(got) == np.shape(want) and np.array_equal(got, want)
            compared += 1
            print("%s pkganon %s:%s" % ("ok" if ok else "FAIL", os.path.basename(h5), name))
            bad += not ok
    print("pkganon: %d objects compared, %d differ" % (compared, bad))
    return 1 if bad or not compared else 0


def ashape(root, h5):
    """user.attrshape.NAME (hdf5_verify.attr_shape_text) of every attribute,
    as h5py's shape of it; root "pkg": through the package."""
    bad = compared = 0
    c = None
    if root == "pkg":
        import hpcmount
        c = hpcmount.open(h5)
    with h5py.File(h5, "r") as f:
        for p, obj in objects(f):
            full = root + p
            listed = c.listxattr(p) if c else os.listxattr(full)
            getx = (lambda k: c.getxattr(p, k)) if c else (lambda k: os.getxattr(full, k))
            for name in obj.attrs:
                v = obj.attrs[name]
                got = hdf5_verify.attr_shape_got(listed, getx, name)
                ok = got == hdf5_verify.attr_shape_text(v, obj.attrs.get_id(name).shape)
                compared += 1
                print("%s ashape %r@%r %s %r" % ("ok" if ok else "FAIL", p, name, np.shape(v), got))
                bad += not ok
    if c:
        c.close()
    print("ashape: %d attributes compared, %d differ" % (compared, bad))
    return 1 if bad or not compared else 0


def listing(files):
    for h5 in files:
        try:
            with h5py.File(h5, "r") as f:
                if datasets(f):
                    print(h5)
        except Exception:
            pass
    return 0


def main(argv):
    cmd = argv[1]
    if cmd == "gen":
        return gen(argv[2]) or 0
    if cmd == "list":
        return listing(argv[2:])
    if cmd == "tree":
        return tree(argv[2], argv[3])
    if cmd == "trees":
        return trees(argv[2])
    if cmd == "pkg":
        return pkg(argv[2:])
    if cmd == "attrs":
        return attrs(argv[2], argv[3])
    if cmd == "pkgattrs":
        return pkgattrs(argv[2])
    if cmd == "zattrs":
        return zattrs(argv[2], argv[3])
    if cmd == "anon":
        return anon(argv[2], argv[3])
    if cmd == "pkganon":
        return pkganon(argv[2])
    if cmd == "ashape":
        return ashape(argv[2], argv[3])
    raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
