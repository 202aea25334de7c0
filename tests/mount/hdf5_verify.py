#!/usr/bin/python3
"""hdf5_verify.py H5FILE MOUNTPOINT HPCDUMP [--odd N] - compare what hpcmount
shows for H5FILE (mounted at MOUNTPOINT) and what `hpcdump cat` prints with
what h5py reads.  One line per check: "ok: ..." or "FAIL: ...".

  hdf5_verify.py --expect H5FILE PATH   print the sha256 h5py expects for PATH

Expected bytes: ds[()] as little-endian C order (compound padding: the
file's where libhdf5 reads elements unconverted, zero where it converts);
variable-length strings each ended with a newline, or with NUL where one
holds a newline.  Expected xattrs: user.shape, user.dtype (parsed by
NumPy), user.h5eol (nul exactly then) and user.attr.<name> for every
attribute.
"""
import ast
import errno
import hashlib
import os
import posixpath
import random
import subprocess
import sys

import h5py
import numpy as np

# tests/lib's dump_cat
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import dump_cat  # noqa: E402


def vlen_strings(ds):
    """The strings of a dataset of variable-length strings, as bytes, in
    C order; None for a dataset of another type."""
    t = ds.id.get_type()
    if ds.shape is None or not (isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str()):
        return None
    a = ds[()]
    items = [a] if ds.shape == () else list(np.ravel(a))
    return [v.encode() if isinstance(v, str) else (v or b"") for v in items]


def text_eol(items):
    """What ends each element of text of items (bytes): a newline, or NUL
    where one holds a newline (docs/hdf5.md, user.h5eol)."""
    return b"\0" if any(b"\n" in v for v in items) else b"\n"


def expected_bytes(ds):
    if ds.shape is None:                     # null dataspace
        return b""
    t = ds.id.get_type()
    items = vlen_strings(ds)
    if items is not None:
        eol = text_eol(items)
        return b"".join(v + eol for v in items)
    if ds.dtype.kind == "O" or ds.dtype.hasobject:
        return b""                            # vlen sequences, references: not served
    if t.get_class() == h5py.h5t.OPAQUE and not t.get_tag().startswith(b"NUMPY:"):
        # h5py's own opaque type has another tag: read with the file's type
        # (a "NUMPY:<dtype>" tag is h5py's: ds[()] has that dtype)
        a = np.empty(ds.shape, dtype="V%d" % t.get_size())
        ds.id.read(h5py.h5s.ALL, h5py.h5s.ALL, a, mtype=t)
        return a.tobytes()
    v = ds[()]
    # a scalar fixed-length string comes back as bytes, which asarray
    # would cut to its length: keep the dataset's dtype
    a = np.asarray(v, dtype=ds.dtype if isinstance(v, bytes) else None)
    le = a.dtype.newbyteorder("<")
    if a.dtype.names is not None and a.dtype == le and a.size:
        return padded_bytes(ds, a.dtype)
    if a.dtype.names is None and a.dtype == le:
        return a.tobytes()      # already little-endian: the same bytes, one copy fewer
    exp = np.zeros(a.shape, dtype=le)
    exp[...] = a
    return exp.tobytes()


def padded_bytes(ds, dt):
    """Elements of a little-endian compound as H5Dread gives them, padding
    included: where libhdf5 copies elements unconverted, the file's bytes;
    where it converts member by member, it leaves padding alone (what was
    in the buffer): zero."""
    r0, r1 = prefilled_reads(ds, dt)
    return np.where(r0 == r1, r0, 0).astype(np.uint8).tobytes()


def prefilled_reads(ds, dt):
    """The bytes of ds read (H5Dread) as dt into a buffer of 00s and into
    one of ffs: where they differ, libhdf5 wrote nothing."""
    reads = []
    # an array type (compound elements of a subarray dtype): h5py reads it
    # with the memory type of the whole dtype into shape + the array's shape
    sub = ds.dtype.shape
    mtype = h5py.h5t.py_create(np.dtype((dt, sub)) if sub else dt)
    for pre in (0x00, 0xFF):
        b = np.empty(tuple(ds.shape) + sub, dtype=dt)
        b.reshape(-1).view(np.uint8)[...] = pre
        ds.id.read(h5py.h5s.ALL, h5py.h5s.ALL, b, mtype=mtype)
        reads.append(np.frombuffer(b.tobytes(), dtype=np.uint8))
    return reads


def le_dtype(ds):
    t = ds.id.get_type()
    if isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str():
        return "O"
    if ds.dtype.kind == "O" or ds.dtype.hasobject:
        return "O"
    return ds.dtype.newbyteorder("<")


def xattr_checks(ds, path, full):
    """(ok, description) of user.shape and user.dtype of dataset ds (HDF5
    path path), whose file in the mount is full."""
    out = []
    shape = "0" if ds.shape is None else ",".join(str(n) for n in ds.shape)
    xs = os.getxattr(full, "user.shape").decode()
    out.append((xs == shape, "%s: user.shape %r (got %r)" % (path, shape, xs)))
    xd = os.getxattr(full, "user.dtype").decode()
    want = le_dtype(ds)
    try:
        parsed = ast.literal_eval(xd)
    except (ValueError, SyntaxError):
        parsed = xd
    try:
        same = (xd == want) if isinstance(want, str) else np.dtype(parsed) == want
    except TypeError:
        same = False
    out.append((same, "%s: user.dtype %s (got %s)" % (path, want, xd)))
    items = vlen_strings(ds)
    if items is not None:
        want = "nul" if text_eol(items) == b"\0" else None
        got = os.getxattr(full, "user.h5eol").decode() if "user.h5eol" in os.listxattr(full) \
            else None
        out.append((got == want, "%s: user.h5eol %s (got %s)" % (path, want, got)))
    return out


def read_info(mnt):
    """The mount's .info as text (names that are not UTF-8 kept as
    surrogate escapes, as Python gives such names)."""
    with open(mnt + "/.info", "rb") as fh:
        return fh.read().decode("utf-8", "surrogateescape")


def sha(b):
    return hashlib.sha256(b).hexdigest()


def not_served(ds):
    """The category of a dataset hpcmount deliberately does not serve
    (docs/hdf5.md, "Not served"), or None."""
    t = ds.id.get_type()
    if isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str():
        return None
    if ds.dtype.kind != "O" and not ds.dtype.hasobject:
        return None
    if h5py.check_dtype(ref=ds.dtype) is not None:
        return "reference"
    if h5py.check_dtype(vlen=ds.dtype) is not None:
        return "variable-length sequence"
    return "variable-length or reference member"


def name_bytes(name):
    """The bytes of a link name as h5py lists it (str, or bytes when the
    name is not UTF-8)."""
    return name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")


def walk(f, skipped=None):
    """(path, object, link kind, link value) for every link, breadth first.
    User-defined links go to skipped as (path, kind); objects h5py lists but cannot open come out as kind "broken"
    with the error as value."""
    out, seen, todo = [], set(), [("/", f)]
    try:
        seen.add(h5py.h5o.get_info(f.id).addr)
    except Exception as e:                    # noqa: BLE001 - h5py cannot describe the root
        return [("/", None, "broken", str(e))]
    while todo:
        path, g = todo.pop(0)
        try:
            names = sorted(g.keys(), key=name_bytes)
        except Exception as e:                # noqa: BLE001 - h5py cannot list the group
            out.append((path, None, "broken", str(e)))
            continue
        for name in names:
            # h5py gives a name that is not UTF-8 as bytes: the file name
            # in the mount has the same bytes (a surrogate-escaped str)
            p = posixpath.join(path, os.fsdecode(name_bytes(name)))
            try:
                # the low-level calls: h5py's get(getlink=True) decodes
                # the name and fails on one that is not UTF-8
                raw = name_bytes(name)
                ltype = g.id.links.get_info(raw).type
                lval = g.id.links.get_val(raw) if ltype != h5py.h5l.TYPE_HARD else None
            except Exception as e:            # noqa: BLE001 - h5py raises many kinds
                out.append((p, None, "broken", str(e)))
                continue
            if ltype == h5py.h5l.TYPE_SOFT:
                out.append((p, None, "soft", os.fsdecode(lval)))
                continue
            if ltype == h5py.h5l.TYPE_EXTERNAL:
                out.append((p, None, "external", tuple(os.fsdecode(x) for x in lval)))
                continue
            if ltype != h5py.h5l.TYPE_HARD:
                if skipped is not None:
                    skipped.append((p, "user-defined link"))
                continue
            try:
                obj = g[name]
                addr = h5py.h5o.get_info(obj.id).addr
            except Exception as e:            # noqa: BLE001
                out.append((p, None, "broken", str(e)))
                continue
            if isinstance(obj, h5py.Group):
                out.append((p, obj, "group", addr))
                if addr not in seen:
                    seen.add(addr)
                    todo.append((p, obj))
            elif isinstance(obj, h5py.Dataset):
                out.append((p, obj, "dataset", addr))
    return out


def attr_items(obj, which=True):
    """(name, value) of the attributes of obj h5py can read (one it cannot,
    e.g. of a 3-byte integer type, has no value to compare); which "var":
    only those of references, sequences and types holding them."""
    try:
        names = list(obj.attrs)
    except Exception:                         # noqa: BLE001 - h5py cannot list them
        return
    for name in names:
        try:
            if which == "var" and (not attr_is_var(obj, name) or
                                   crashes_h5py(obj.attrs.get_id(name).get_type())):
                continue
            v = obj.attrs[name]
        except Exception:                     # noqa: BLE001 - h5py has no NumPy type for it
            continue
        yield name, v


def crashes_h5py(tid):
    """Does h5py 3 crash reading type tid: sequences of region references
    (HDF Group's h5repack_attr_refs.h5: a segmentation fault)?"""
    c = tid.get_class()
    if c == h5py.h5t.VLEN:
        b = tid.get_super()
        return (b.get_class() == h5py.h5t.REFERENCE and b == h5py.h5t.STD_REF_DSETREG) or \
            crashes_h5py(b)
    if c == h5py.h5t.COMPOUND:
        return any(crashes_h5py(tid.get_member_type(k)) for k in range(tid.get_nmembers()))
    if c == h5py.h5t.ARRAY:
        return crashes_h5py(tid.get_super())
    return False


def type_has_var(tid):
    """Does HDF5 type tid hold references or variable-length data?"""
    c = tid.get_class()
    if c in (h5py.h5t.REFERENCE, h5py.h5t.VLEN):
        return True
    if c == h5py.h5t.STRING:
        return tid.is_variable_str()
    if c == h5py.h5t.COMPOUND:
        return any(type_has_var(tid.get_member_type(k)) for k in range(tid.get_nmembers()))
    if c == h5py.h5t.ARRAY:
        return type_has_var(tid.get_super())
    return False


def attr_is_var(obj, name):
    """An attribute of references, sequences, or compounds or arrays
    holding them or variable-length strings (docs/hdf5.md, "Attributes of
    references and sequences")?"""
    tid = obj.attrs.get_id(name).get_type()
    return tid.get_class() != h5py.h5t.STRING and type_has_var(tid)


def ref_line(obj, ref, region):
    """The text docs/hdf5.md gives reference ref (without its end)."""
    if not ref:
        return b""
    t = obj.file[ref]
    name = h5py.h5i.get_name(t.id) or b"@%d" % h5py.h5o.get_info(t.id).addr
    if not region:
        return name
    sid = h5py.h5r.get_region(ref, obj.id)
    k = sid.get_select_type()
    if k in (h5py.h5s.SEL_ALL, h5py.h5s.SEL_NONE):
        sel = "all" if k == h5py.h5s.SEL_ALL else "none"
    elif k == h5py.h5s.SEL_POINTS:
        sel = "points" + "".join(" (%s)" % ",".join(map(str, p))
                                 for p in sid.get_select_elem_pointlist())
    else:
        sel = "blocks" + "".join(" (%s)-(%s)" % (",".join(map(str, b[0])), ",".join(map(str, b[1])))
                                 for b in sid.get_select_hyper_blocklist())
    return name + b"\t" + sel.encode()


def var_encode(out, obj, tid, elems, member, name, space=()):
    """Into out, xattr name -> what it holds for h5py's elems (flat, C
    order, of shape space) of type tid at member (":k..."): bytes, ("num",
    values) for the text of numbers, or None for a dtype or hex not
    compared here."""
    key = "user.%%s%s.%s" % (member, name)
    c = tid.get_class()
    if c == h5py.h5t.REFERENCE:
        region = tid == h5py.h5t.STD_REF_DSETREG
        lines = [ref_line(obj, r, region) for r in elems]
        eol = b"\0" if any(b"\n" in ln for ln in lines) else b"\n"
        out[key % "attr"] = b"".join(ln + eol for ln in lines)
        out[key % "attrref"] = b"region" if region else b"object"
    elif c == h5py.h5t.VLEN:
        offs, flat = [0], []
        for e in elems:
            flat += list(np.ravel(e))
            offs.append(len(flat))
        base = tid.get_super()
        if base.get_class() in (h5py.h5t.INTEGER, h5py.h5t.FLOAT) and flat and \
                base.get_order() == h5py.h5t.ORDER_BE:
            # h5py 3 gives a big-endian base's bytes as stored under the
            # native dtype (as for datasets, docs/hdf5.md): libhdf5's values
            flat = list(np.asarray(flat).byteswap())
        out[key % "attroffsets"] = ",".join(map(str, offs)).encode()
        var_encode(out, obj, tid.get_super(), flat, member, name, (len(flat),))
    elif c == h5py.h5t.COMPOUND and type_has_var(tid):
        out[key % "attrdtype"] = None
        out[key % "attr"] = b""
        for k in range(tid.get_nmembers()):
            m = "%s:%d" % (member, k)
            mt = tid.get_member_type(k)
            var_encode(out, obj, mt, [e[k] for e in elems], m, name, space)
            if mt.get_class() == h5py.h5t.ARRAY:
                shape = attr_var_shape(space, mt)
                if shape is not None:
                    out["user.attrshape%s.%s" % (m, name)] = shape.encode()
    elif c == h5py.h5t.ARRAY:
        var_encode(out, obj, tid.get_super(), [x for e in elems for x in np.ravel(e)], member, name,
                   tuple(space) + tuple(tid.get_array_dims()))
    elif c == h5py.h5t.STRING:
        strs = [x if isinstance(x, bytes) else str(x).encode("utf-8", "surrogateescape")
                for x in elems]
        if any(b"\n" in x for x in strs):
            out[key % "attr"] = b"".join(x + b"\0" for x in strs)
        elif tid.is_variable_str():
            out[key % "attr"] = b"\n".join(strs)
        else:                                  # fixed-length: their bytes, |S<n>
            out[key % "attr"] = None
            out[key % "attrdtype"] = None
    elif c in (h5py.h5t.INTEGER, h5py.h5t.FLOAT, h5py.h5t.ENUM):
        a = np.asarray(elems)
        if a.dtype.kind == "b":
            out[key % "attr"] = ",".join("TRUE" if x else "FALSE" for x in a).encode()
        elif a.dtype.kind in "iuf" and a.dtype.itemsize in ((4, 8) if a.dtype.kind == "f" else
                                                            (1, 2, 4, 8)):
            out[key % "attr"] = ("num", a)
        else:
            out[key % "attr"] = out[key % "attrdtype"] = None
    else:                                      # hex of a type with a byte image
        out[key % "attr"] = out[key % "attrdtype"] = None


def seq_of_seq(tid):
    """Does type tid hold sequences whose values are sequences or
    compounds holding variable data (at any depth)?  Their values have no
    text: left out (docs/hdf5.md)."""
    c = tid.get_class()
    if c == h5py.h5t.VLEN:
        b = tid.get_super()
        while b.get_class() == h5py.h5t.ARRAY:
            b = b.get_super()
        return b.get_class() == h5py.h5t.VLEN or (b.get_class() == h5py.h5t.COMPOUND and
                                                  type_has_var(b))
    if c == h5py.h5t.COMPOUND:
        return any(seq_of_seq(tid.get_member_type(k)) for k in range(tid.get_nmembers()))
    if c == h5py.h5t.ARRAY:
        return seq_of_seq(tid.get_super())
    return False


def attr_var_shape(space, tid):
    """user.attrshape's text for dataspace shape space (None: null) of
    type tid (an array type's axes after it), or None where the values'
    count tells it."""
    if space is None:
        return "null"
    shape = tuple(space) + (tuple(tid.get_array_dims()) if tid.get_class() == h5py.h5t.ARRAY
                            else ())
    if shape == () or (len(shape) == 1 and shape[0] != 1):
        return None
    return ",".join(map(str, shape))


def var_xattrs(listed, name):
    """The xattrs of listed that attribute name's forms make
    (user.attr<FAMILY><:k...>.<name>)."""
    out = []
    for x in listed:
        if not x.startswith("user.attr"):
            continue
        rest = x[len("user.attr"):].lstrip("abcdefghijklmnopqrstuvwxyz")
        while rest[:1] == ":" and rest[1:2].isdigit():
            rest = rest[1:].lstrip("0123456789")
        if rest == "." + name:
            out.append(x)
    return out


def num_same(text, want):
    """Is text the numbers of want joined by ','?"""
    parts = text.split(b",") if text else []
    if len(parts) != len(want):
        return False
    single = want.dtype == np.float32
    for p, x in zip(parts, want):
        if want.dtype.kind == "f":
            g = np.float32(float(p)) if single else float(p)
            if not (g == x or (np.isnan(x) and p == b"nan")):
                return False
        elif int(p) != int(x):
            return False
    return True


def attr_var_served(obj, name, v, listed, getx):
    """(ok, what differs): are attribute name's xattrs those docs/hdf5.md
    gives h5py's v (its attrs[name])?"""
    aid = obj.attrs.get_id(name)
    tid, space = aid.get_type(), aid.shape
    # an array type's v has its axes after the dataspace's: one piece
    whole = space == () or tid.get_class() == h5py.h5t.ARRAY
    elems = [] if space is None else [v] if whole else list(np.ravel(v))
    got = set(var_xattrs(listed, name))
    if seq_of_seq(tid):                        # left out (a .info warning)
        return not got, "sequences of sequences: %s" % sorted(got)
    want = {}
    try:
        var_encode(want, obj, tid, elems, "", name, space or (0,))
    except (KeyError, ValueError) as e:        # h5py cannot follow a reference: left out
        return not got, "a reference h5py cannot follow (%s): %s" % (e, sorted(got))
    shape = attr_var_shape(space, tid)
    if shape is not None:
        want["user.attrshape.%s" % name] = shape.encode()
    if got != set(want):
        return False, "xattrs %s, expected %s" % (sorted(got), sorted(want))
    for x, w in want.items():
        g = getx(x)
        if isinstance(w, tuple) and not num_same(g, w[1]):
            return False, "%s = %r, h5py %r" % (x, g[:200], w[1][:20])
        if isinstance(w, bytes) and g != w:
            return False, "%s = %r, expected %r" % (x, g[:200], w[:200])
    return True, None


def attr_checked(obj, name, v, listed, getx):
    """(ok, what was got): attribute name of obj as docs/hdf5.md serves it."""
    if attr_is_var(obj, name):
        return attr_var_served(obj, name, v, listed, getx)
    return attr_served(listed, getx, name, v)


def attr_shape_text(v, space=None):
    """user.attrshape.<name> of an attribute h5py reads as v (docs/hdf5.md):
    None where the text's element count tells the shape (one element: a
    scalar, else 1-D), "null" for h5py.Empty, else the shape.  space: the
    attribute's dataspace shape (attrs.get_id(name).shape), which an array
    type's v extends with the array's axes."""
    if isinstance(v, h5py.Empty):
        return "null"
    shape = np.shape(v) if space is None else space
    if shape == () or (len(shape) == 1 and shape[0] != 1):
        return None
    return ",".join(str(n) for n in shape)


def attr_shape_got(listed, getx, name):
    key = "user.attrshape." + name
    return getx(key).decode() if key in listed else None


def attr_dtype(text):
    """numpy's dtype of a user.dtype or user.attrdtype text (docs/hdf5.md)."""
    return np.dtype(ast.literal_eval(text) if text[0] in "[{(" else text)


def attr_bytes(listed, getx, name):
    """h5py's value of an attribute served as bytes or hex with its dtype
    (user.attrdtype.<name>, docs/hdf5.md), or None for one served as text."""
    key = "user.attrdtype." + name
    if key not in listed:
        return None
    v, dt = getx("user.attr." + name), attr_dtype(getx(key).decode())
    if dt.kind != "S":                        # hex: "0x<bytes>" joined by ","
        v = b"".join(bytes.fromhex(e[2:].decode()) for e in v.split(b",")) if v else b""
    a = np.frombuffer(v, dt)                  # array types expand into trailing axes
    shape = attr_shape_got(listed, getx, name)
    if shape == "null":
        return h5py.Empty(dt)
    if shape is not None:
        return a.reshape(tuple(int(n) for n in shape.split(",")) + a.shape[1:])
    return a[0] if len(a) == 1 else a


def attr_same(got, v):
    """Is got, decoded from bytes or hex, h5py's v (which may be big-endian:
    the mount's bytes are little-endian)?"""
    if isinstance(v, h5py.Empty):
        return isinstance(got, h5py.Empty) and got.dtype == v.dtype.newbyteorder("<")
    a, b = np.asarray(got), np.asarray(v)
    if type(got) is not type(v) or a.shape != b.shape:
        return False
    if a.dtype != b.dtype.newbyteorder("<"):
        return False
    return a.tobytes() == b.astype(a.dtype).tobytes() or bool(np.array_equal(a, b))


def attr_served(listed, getx, name, v):
    """(ok, what was got): do the xattrs of attribute name give h5py's v?"""
    got = attr_bytes(listed, getx, name)
    if got is None:
        text = getx("user.attr." + name).decode()
        return attr_matches(text, v), text
    return attr_same(got, v), got


def attr_matches(text, v):
    """Does the xattr text render attribute value v?"""
    if isinstance(v, h5py.Empty):
        return text == ""
    if isinstance(v, (bytes, str)):
        v = v.decode() if isinstance(v, bytes) else v
        return text == (v + "\0" if "\n" in v else v)
    a = np.asarray(v)
    if a.size == 0:
        return text == ""
    names = h5py.check_enum_dtype(a.dtype)
    if names is not None and a.dtype.kind != "b":
        # enums by member name, "?" for a value that is none
        byval = {int(val): name for name, val in names.items()}
        return text == ",".join(byval.get(int(x), "?") for x in np.ravel(a))
    if a.dtype.kind == "O" or a.dtype.kind in "SU":
        # one a line, or each ended with NUL where one holds a newline
        vals = [x.decode() if isinstance(x, bytes) else str(x) for x in np.ravel(a)]
        if any("\n" in x for x in vals):
            return text == "".join(x + "\0" for x in vals)
        return text == "\n".join(vals)
    if a.dtype.kind == "b":
        return text == ",".join("TRUE" if x else "FALSE" for x in np.ravel(a))
    parts = text.split(",")
    flat = np.ravel(a)
    if len(parts) != len(flat):
        return False
    if a.dtype.kind in "iu":
        return all(int(p) == int(x) for p, x in zip(parts, flat))
    if a.dtype.kind == "f":
        return all(np.array(float(p), dtype=a.dtype) == x or (np.isnan(x) and p == "nan")
                   for p, x in zip(parts, flat))
    return True                                # other kinds: shown as hex


def foreign_float_bytes(ds):
    """Floats of an order h5py has no dtype for (VAX): libhdf5 converts them
    to IEEE little-endian of the same size; None when it cannot."""
    t = ds.id.get_type()
    if t.get_class() != h5py.h5t.FLOAT or t.get_size() not in (4, 8):
        return None
    mt, dt = (h5py.h5t.IEEE_F64LE, "<f8") if t.get_size() == 8 else (h5py.h5t.IEEE_F32LE, "<f4")
    shape = ds.id.shape
    a = np.empty(shape, dtype=dt)
    try:
        ds.id.read(h5py.h5s.ALL, h5py.h5s.ALL, a, mtype=mt)
    except Exception:                         # noqa: BLE001 - no conversion in libhdf5 either
        return None
    return a.tobytes()


def unsound_layout(dt):
    """The name of a member of structured dtype dt (at any depth) that
    overlaps the member after it or the end of the element, or None.
    h5py gives such a dtype to a compound whose member it reads in more
    bytes than the file has (a 3-byte float as f4), and its bytes for it
    follow another layout (its memory type moves the members): the mount
    must refuse it (EIO, named in .info) rather than serve them."""
    if dt.subdtype is not None:
        return unsound_layout(dt.subdtype[0])
    if dt.names is None:
        return None
    fields = sorted((dt.fields[n][1], n) for n in dt.names)
    for k, (off, n) in enumerate(fields):
        end = fields[k + 1][0] if k + 1 < len(fields) else dt.itemsize
        sub = dt.fields[n][0]
        if off + sub.itemsize > end:
            return n
        inner = unsound_layout(sub)
        if inner is not None:
            return n + "." + inner
    return None


def opaque_be_member(dt):
    """Whether structured dtype dt holds (at any depth) a member of a
    big-endian NumPy type h5py keeps in an opaque HDF5 type: the mount
    swaps whole elements only, so it refuses such compounds."""
    if dt.subdtype is not None:
        return opaque_be_member(dt.subdtype[0])
    if dt.names is None:
        return False
    for n in dt.names:
        sub = dt.fields[n][0]
        if (sub.metadata or {}).get("h5py_opaque") and sub.byteorder == ">":
            return True
        if opaque_be_member(sub):
            return True
    return False


def check_refused(mnt, path, why, check):
    """A dataset the mount must not serve: reads give EIO and .info has a
    warning line naming it and saying so."""
    try:
        open(mnt + path, "rb").read()
        check(False, "%s: %s: the mount served data" % (path, why))
    except OSError as e:
        check(e.errno == errno.EIO, "%s: %s: EIO (got %s)" % (path, why, e))
    info = read_info(mnt)
    check(any(ln.startswith("warning: %s: " % path) and "EIO" in ln for ln in info.splitlines()),
          "%s: %s: .info warning" % (path, why))


def readlink_or_error(full):
    """A symlink's target, or the error reading it as text (compared as a
    target, so it never equals one)."""
    try:
        return os.readlink(full)
    except OSError as e:
        return "error %s" % e


def check_broken(mnt, path, why, check):
    """An object h5py lists but cannot open: left out, or shown with reads
    giving EIO and .info naming it as damaged."""
    full = mnt + path
    if not os.path.lexists(full):
        check(True, "%s: left out (h5py: %s)" % (path, why))
        return
    info = read_info(mnt)
    check(any(ln.startswith("damaged: " + path + " ") for ln in info.splitlines()),
          "%s: .info names it damaged (h5py: %s)" % (path, why))
    try:
        if os.path.isdir(full):
            os.listdir(full)
        else:
            open(full, "rb").read()
        check(False, "%s: reading it gives EIO (h5py: %s), got data" % (path, why))
    except OSError as e:
        check(e.errno == errno.EIO, "%s: reading it gives EIO (got %s)" % (path, e))


def check_unreadable(mnt, hpcdump, h5file, path, why, check):
    """A dataset h5py opens but cannot read: the mount and hpcdump give EIO."""
    try:
        open(mnt + path, "rb").read()
        check(False, "%s: h5py cannot read it (%s), the mount served data" % (path, why))
    except OSError as e:
        check(e.errno == errno.EIO, "%s: EIO like h5py's error (got %s)" % (path, e))
    if hpcdump is None:
        return
    r = subprocess.run([hpcdump, "cat", h5file, path], capture_output=True)
    check(r.returncode != 0, "%s: hpcdump cat fails like h5py (rc %d)" % (path, r.returncode))


def served_object(ds):
    """Sequences of values with a byte image, object and region
    references: served in the forms of docs/hdf5.md."""
    import hdf5_vlen
    return hdf5_vlen.kind(ds) in ("obj", "reg") or hdf5_vlen.plain_base(ds)


def check_objects(root, path, ds, ns, check):
    """Sequences (a directory of values and offsets) and references
    (lines of target paths) under root equal h5py's ds[()]
    (tests/mount/hdf5_vlen.py); EIO where h5py cannot read them."""
    import hdf5_vlen
    try:
        val = hdf5_vlen.scalar_as_array(ds, ds[()])
    except Exception as e:                    # noqa: BLE001 - h5py cannot read it
        part = "/values" if ns == "variable-length sequence" else ""
        why = hdf5_vlen.unfollowed(root + path + part, e)
    else:
        k = hdf5_vlen.kind(ds)
        why = hdf5_vlen.tree_seq(root, ds, path, val) if k == "seq" else \
            hdf5_vlen.tree_text(root, ds.file, path, k, val)
    check(why is None, "%s: %s equal to h5py's%s" % (path, ns, ": " + why if why else ""))


def check_members(root, path, ds, ns, check, skipped):
    """A dataset served as a directory of parts (compounds holding
    variable-length data or references, sequences of such data), read as
    docs/hdf5.md says (tests/mount/hdf5_objects.py), equals h5py's ds[()];
    where h5py cannot read it, its listing fails with EIO."""
    import hdf5_objects
    from hdf5_objects_survey import Norm, same
    try:
        want = Norm(ds.file, ds).value(ds[()])
    except Exception as e:                    # noqa: BLE001 - h5py cannot read it
        try:
            os.listdir(root + path) if os.path.isdir(root + path) else open(root + path, "rb").read()
            check(False, "%s: h5py cannot read it (%s), the mount served it" % (path, e))
        except OSError as err:
            check(err.errno == errno.EIO, "%s: h5py cannot read it: EIO (got %s)" % (path, err))
        return
    try:
        got = hdf5_objects.entry(root + path)
        ok = same(got if not isinstance(got, np.ndarray) or got.shape else got[()], want)
    except Exception as e:                    # noqa: BLE001 - the reason, whatever it is
        ok, got = False, e
    info = root + "/.info"
    if not ok and os.path.exists(info) and any(
            ln.startswith("warning: %s: " % path) and "not served" in ln
            for ln in read_info(root).splitlines()):
        skipped.append((path, ns))
        return
    check(ok, "%s: %s equal to h5py's (got %r)" % (path, ns, got if not ok else ""))


def check_not_served(full, path, kind, check):
    """A dataset hpcmount deliberately does not serve: empty, user.dtype O."""
    check(os.stat(full).st_size == 0, "%s: %s not served: empty file" % (path, kind))
    check(os.getxattr(full, "user.dtype").decode() == "O",
          "%s: %s not served: user.dtype O" % (path, kind))


def verify(h5file, mnt, hpcdump, nodd=20, notserved=None, extracted=None, attrs=True):
    """Compare the mount of h5file at mnt and hpcdump with h5py.  Returns
    the list of "ok: ..." / "FAIL: ..." lines; appends (path, category) of
    what is deliberately not served to notserved.  extracted: the directory
    `hpcdump extract` wrote (compared instead of an `hpcdump cat` of every
    dataset); attrs: compare attributes too ("var": only those of
    references, sequences and types holding them).  The caller chdirs to the
    file's directory (libhdf5 1.10 resolves external raw data files against
    the working directory)."""
    rnd = random.Random(17)
    results = []
    skipped = [] if notserved is None else notserved

    def check(ok, desc):
        # one line each, whatever the names hold
        results.append(("ok: " if ok else "FAIL: ") + desc.replace("\n", "\\n"))

    opts = dict(nodd=nodd, rnd=rnd, extracted=extracted, attrs=attrs, cats=[])
    with h5py.File(h5file, "r") as f:
        inodes = {}
        ndatasets = set()
        walked = walk(f, skipped)
        for path, obj, kind, val in walked:
            try:
                verify_link(h5file, mnt, hpcdump, path, obj, kind, val, inodes, ndatasets,
                            opts, skipped, check)
            except Exception as e:            # noqa: BLE001 - any error is a failed check
                check(False, "%s: %s: %s" % (path, type(e).__name__, e))
        for name, v in (attr_items(f, attrs) if attrs else ()):
            ok, got = attr_checked(f, name, v, os.listxattr(mnt), lambda k: os.getxattr(mnt, k))
            check(ok, "/: attribute %s (got %r)" % (name, got))
        cat_all(h5file, hpcdump, opts["cats"], check)
        info = read_info(mnt)
        # objects h5py cannot open may be counted (as damaged datasets)
        line = [ln for ln in info.splitlines() if ln.startswith("datasets: ")]
        nbroken = sum(1 for _, _, kind, _ in walked if kind == "broken")
        check(len(line) == 1 and len(ndatasets) <= int(line[0].split()[1]) <= len(ndatasets) + nbroken,
              ".info: datasets: %d (got %s)" % (len(ndatasets), line))
    return results


def cat_all(h5file, hpcdump, cats, check):
    """The datasets of cats, (path, size, sha256 of h5py's bytes), through
    one `hpcdump cat` of them all (dump_cat): each one's bytes must be
    h5py's, and the call must succeed."""
    if not cats:
        return
    sums, rc, rest, err = dump_cat.cat_each(hpcdump, h5file, [(c[0], c[1]) for c in cats], sha)
    for (path, _, want), b in zip(cats, sums):
        check(b == want, "%s: sha256 through hpcdump" % path)
    check(rc == 0 and rest == 0, "hpcdump cat of the %d datasets: exit %d, %d bytes after them%s"
          % (len(cats), rc, rest, ": " + err[:300] if err else ""))


def check_behind_no_name(mnt, path, obj, kind, val, check):
    """The object of a hard link whose name is no file name: .info names
    its "@ADDR" (the line of the link itself, the last name on path), which
    the root resolves: to a symlink where another path of the mount names
    it, else to the object, a dataset's bytes h5py's (docs/hdf5.md)."""
    if kind not in ("group", "dataset") or not is_no_name(path.rsplit("/", 1)[-1]):
        return
    at = "@%d" % val
    check(any(ln.endswith("; its object: " + at) for ln in read_info(mnt).splitlines()),
          "%s: .info names its object %s" % (path[:80], at))
    full = os.path.join(mnt, at)
    check(os.path.lexists(full), "%s: %s resolves" % (path[:80], at))
    if kind != "dataset" or os.path.islink(full) or not_served(obj) is not None or \
            nbytes(obj) > (64 << 20):
        return
    try:
        exp = expected_bytes(obj)
    except Exception:                         # noqa: BLE001 - h5py cannot read it
        return
    with open(full, "rb") as fh:
        check(fh.read() == exp, "%s: %s serves h5py's bytes" % (path[:80], at))


def is_no_name(name):
    b = os.fsencode(name)
    return b in (b".", b"..") or len(b) > 255


def verify_link(h5file, mnt, hpcdump, path, obj, kind, val, inodes, ndatasets, opts,
                skipped, check):
    full = mnt + path
    if any(c in (".", "..") for c in path.split("/")):
        # "." and ".." are no file names: left out, and .info says so
        skipped.append((path, "name that is no file name"))
        check(any(ln.startswith(path + " -> ") for ln in read_info(mnt).splitlines()),
              "%s: left out, named in .info" % path)
        check_behind_no_name(mnt, path, obj, kind, val, check)
        return
    if any(len(os.fsencode(c)) > 255 for c in path.split("/")):
        # no file name can be that long: left out, and .info says so
        skipped.append((path, "name longer than a file name"))
        check(not os.path.lexists(full), "%s: over-long name left out" % path[:80])
        check_behind_no_name(mnt, path, obj, kind, val, check)
        return
    if kind == "broken":
        check_broken(mnt, path, val, check)
        return
    if kind == "soft":
        want = val if not val.startswith("/") else \
            posixpath.relpath(val, posixpath.dirname(path))
        got = readlink_or_error(full)
        check(got == want, "%s: symlink -> %s (got %s)" % (path, want, got))
        return
    if kind == "external":
        # docs/hdf5.md: up to the file's directory, the file, //, the object
        fn, target = val
        want = fn + "//" + target.lstrip("/")
        if not fn.startswith("/"):
            want = "../" * path.count("/") + want
        got = readlink_or_error(full)
        check(got == want, "%s: external link -> %s (got %s)" % (path, want, got))
        return
    if kind == "group":
        if val in inodes:      # second name of a group: a symlink to the first
            check(os.path.islink(full) and os.path.realpath(full) ==
                  os.path.realpath(mnt + inodes[val][1]), "%s: group hard link" % path)
        else:
            check(os.path.isdir(full), "%s: directory" % path)
            inodes[val] = (os.stat(full).st_ino, path)
            for name, v in (attr_items(obj, opts["attrs"]) if opts["attrs"] else ()):
                ok, got = attr_checked(obj, name, v, os.listxattr(full),
                                       lambda k: os.getxattr(full, k))
                check(ok, "%s: attribute %s (got %r)" % (path, name, got))
        return
    ds = obj
    if ds.shape is not None and nbytes(ds) > (1 << 63) - 1:
        # no file can be that large: left out of the listing, named in .info
        skipped.append((path, "larger than the largest file size"))
        check(not os.path.lexists(full), "%s: larger than a file can be: not listed" % path)
        info = read_info(mnt)
        check(path.lstrip("/") in info, "%s: larger than a file can be: named in .info" % path)
        return
    st = os.stat(full)
    if val in inodes:
        check(st.st_ino == inodes[val][0], "%s: same inode as %s" % (path, inodes[val][1]))
    else:
        inodes[val] = (st.st_ino, path)
        ndatasets.add(val)
    try:
        ns = not_served(ds)
    except Exception as e:                    # noqa: BLE001 - h5py has no dtype for it (VAX floats)
        exp = foreign_float_bytes(ds)
        if exp is None:
            check_unreadable(mnt, None if opts["extracted"] else hpcdump, h5file, path,
                             "%s: %s" % (type(e).__name__, e), check)
        else:
            got = open(full, "rb").read()
            check(got == exp, "%s: floats h5py has no dtype for, as libhdf5 converts them "
                  "to IEEE little-endian (%d bytes, got %d)" % (path, len(exp), len(got)))
        return
    if ns in ("reference", "variable-length sequence") and served_object(ds):
        for root in (mnt, opts["extracted"]):
            if root:
                check_objects(root, path, ds, ns, check)
        return
    if ns in ("variable-length sequence", "variable-length or reference member"):
        for root in (mnt, opts["extracted"]):
            if root:
                check_members(root, path, ds, ns, check, skipped)
        return
    if ns is not None:
        skipped.append((path, ns))
        check_not_served(full, path, ns, check)
        return
    bad = unsound_layout(ds.dtype)
    if bad is not None:
        check_refused(mnt, path, "h5py's dtype overlaps at member %s" % bad, check)
        return
    if opaque_be_member(ds.dtype):
        check_refused(mnt, path, "a big-endian opaque NumPy member", check)
        return
    if is_big(ds) and nbytes(ds) > HUGE:
        verify_huge(mnt, path, ds, st, check)
        return
    if is_big(ds):
        verify_big(mnt, path, ds, st, opts, check)
        return
    try:
        exp = expected_bytes(ds)
    except Exception as e:                    # noqa: BLE001 - h5py cannot read it
        check_unreadable(mnt, None if opts["extracted"] else hpcdump, h5file, path,
                         "%s: %s" % (type(e).__name__, e), check)
        return
    verify_dataset(h5file, mnt, hpcdump, path, ds, exp, st, opts, check)


BIG = 256 << 20                               # larger datasets are compared in slices


def nbytes(ds):
    """The dataset's size in bytes (Python integers: h5py's size can
    overflow for exabyte-sized dataspaces; the file type's size, since h5py
    has no dtype for some types, e.g. VAX floats)."""
    n = ds.id.get_type().get_size()
    for d in ds.shape or ():
        n *= int(d)
    return n


def is_big(ds):
    t = ds.id.get_type()
    if ds.shape is None or ds.shape == () or isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str():
        return False
    if t.get_class() in (h5py.h5t.OPAQUE, h5py.h5t.BITFIELD):
        return False
    return nbytes(ds) > BIG


HUGE = 4 << 30                                # larger ones: sampled rows


def verify_huge(mnt, path, ds, st, check):
    """A dataset too large to read whole through the mount in a test (up to
    exabytes of fill value): the first elements of the first, last and 6
    random rows, read through h5py and at their offsets through the mount."""
    full = mnt + path
    isz = ds.dtype.itemsize
    rowelems = nbytes(ds) // isz // ds.shape[0]
    m = min(ds.shape[-1], 4096) if ds.ndim > 1 else min(ds.shape[0], 4096)
    rnd = random.Random(5)
    rows = sorted({0, ds.shape[0] - 1} | {rnd.randrange(ds.shape[0]) for _ in range(6)})
    le = ds.dtype.newbyteorder("<")
    bad = []
    with open(full, "rb", buffering=0) as fh:
        for r in rows:
            sel = (r,) + (0,) * (ds.ndim - 2) + (slice(0, m),) if ds.ndim > 1 else slice(r, r + 1)
            part = ds[sel]
            exp = np.zeros(np.shape(part), dtype=le)
            exp[...] = part
            exp = exp.tobytes()
            off = r * rowelems * isz
            if os.pread(fh.fileno(), len(exp), off) != exp:
                bad.append(r)
    check(not bad and st.st_size == nbytes(ds), "%s: %d bytes, rows %s sampled%s"
          % (path, st.st_size, rows, " differ: %s" % bad if bad else ""))
    for ok, desc in xattr_checks(ds, path, full):
        check(ok, desc)


def verify_big(mnt, path, ds, st, opts, check):
    """A dataset too large to hold twice in memory: ds[a:b] slice by slice
    (little-endian, as expected_bytes) against the mount and the extract."""
    full = mnt + path
    x = opts["extracted"] + path if opts["extracted"] else None
    row = max(1, nbytes(ds) // ds.shape[0] if ds.shape[0] else 0)
    step = max(1, (64 << 20) // row)
    reader = SliceReader(ds, step)
    total, bad = 0, []
    with open(full, "rb") as fh, open(x if x and os.path.isfile(x) else os.devnull, "rb") as xh:
        for a in range(0, ds.shape[0], step):
            exp = reader.read(a)
            if not same_bytes(fh, reader, exp):
                bad.append("mount at row %d" % a)
            if x and not same_bytes(xh, reader, exp):
                bad.append("extract at row %d" % a)
            total += len(exp)
            if bad:
                break
        if not bad and (fh.read(1) != b"" or (x and xh.read(1) != b"")):
            bad.append("longer than %d bytes" % total)
    check(not bad and st.st_size == total, "%s: %d bytes in slices of %d rows%s"
          % (path, st.st_size, step, " differ: %s" % bad if bad else ""))
    for ok, desc in xattr_checks(ds, path, full):
        check(ok, desc)


class SliceReader:
    """ds[a:a + step] as little-endian bytes, slice after slice, into
    buffers made once: a fresh 64 MiB array per slice costs more CPU in
    page faults than libhdf5's read, and the big datasets of the corpus
    (GiBs of fill value) take tens of slices.  A dataset of a plain
    little-endian type is read into the buffer with its own dtype, as
    ds[a:b] reads it; any other as before, ds[a:b] converted by NumPy."""

    def __init__(self, ds, step):
        self.ds, self.step = ds, step
        self.le = ds.dtype.newbyteorder("<")
        plain = ds.dtype.names is None and ds.dtype.subdtype is None and ds.dtype == self.le
        self.buf = np.empty((min(step, ds.shape[0]),) + ds.shape[1:], dtype=ds.dtype) if plain else None
        self.got = None         # the mount's or the extract's bytes (same_bytes)

    def read(self, a):
        """The little-endian bytes of rows a.., a memoryview valid until the next read."""
        b = min(a + self.step, self.ds.shape[0])
        if self.buf is None:
            part = self.ds[a:b]
            exp = np.zeros(part.shape, dtype=self.le)
            exp[...] = part
            return memoryview(exp.tobytes())
        out = self.buf[:b - a]
        self.ds.read_direct(out, np.s_[a:b], np.s_[0:b - a])
        return memoryview(out.reshape(-1)).cast("B")


def same_bytes(fh, reader, exp):
    """Are the next len(exp) bytes of fh exp (read into a buffer kept
    by reader)?"""
    if reader.got is None or len(reader.got) < len(exp):
        reader.got = bytearray(len(exp))
    got = memoryview(reader.got)[:len(exp)]
    n = fh.readinto(got)
    return n == len(exp) and np.array_equal(np.frombuffer(got, np.uint8), np.frombuffer(exp, np.uint8))


def verify_dataset(h5file, mnt, hpcdump, path, ds, exp, st, opts, check):
    nodd, rnd = opts["nodd"], opts["rnd"]
    full = mnt + path
    with open(full, "rb") as fh:
        got = fh.read()
    check(len(got) == len(exp) == st.st_size,
          "%s: size %d (got %d, st_size %d)" % (path, len(exp), len(got), st.st_size))
    check(sha(got) == sha(exp), "%s: sha256 through the mount" % path)
    if opts["extracted"]:
        x = opts["extracted"] + path
        got = open(x, "rb").read() if os.path.isfile(x) else None
        check(got is not None and sha(got) == sha(exp), "%s: sha256 through hpcdump extract%s"
              % (path, "" if got is not None else " (not extracted)"))
    else:
        opts["cats"].append((path, len(exp), sha(exp)))     # cat_all()
    for ok, desc in xattr_checks(ds, path, full):
        check(ok, desc)
    for name, v in (attr_items(ds, opts["attrs"]) if opts["attrs"] else ()):
        key = "user.attr." + name
        if len(key) > 255:
            check(key not in os.listxattr(full), "%s: over-long attribute name left out" % path)
            continue
        ok, got = attr_checked(ds, name, v, os.listxattr(full), lambda k: os.getxattr(full, k))
        check(ok, "%s: attribute %s = %r (got %r)" % (path, name, v, got))
        if len(key) <= 250 and not attr_is_var(ds, name):
            got = attr_shape_got(os.listxattr(full), lambda k: os.getxattr(full, k), name)
            check(got == attr_shape_text(v, ds.attrs.get_id(name).shape),
                  "%s: attribute %s of shape %s (user.attrshape %r)"
                  % (path, name, np.shape(v), got))
    # reads at odd offsets and sizes, and past the end
    if exp:
        with open(full, "rb", buffering=0) as fh:
            fd = fh.fileno()
            bad = []
            for i in range(nodd):
                off = rnd.randrange(len(exp))
                n = rnd.choice([1, 3, 7, 13, 4096 + 5, 65536 + 3, 200001])
                if i == 0:
                    off, n = len(exp) - 1, 9
                if os.pread(fd, n, off) != exp[off:off + n]:
                    bad.append((off, n))
            if os.pread(fd, 10, len(exp) + 5) != b"":
                bad.append(("past end",))
        check(not bad, "%s: %d reads at odd offsets%s" % (path, nodd, " %r" % bad if bad else ""))


def main():
    # names that are not UTF-8 come as surrogate escapes: print them escaped
    sys.stdout.reconfigure(errors="backslashreplace")
    if sys.argv[1] == "--expect":
        os.chdir(os.path.dirname(os.path.abspath(sys.argv[2])))
        with h5py.File(os.path.basename(sys.argv[2]), "r") as f:
            print(sha(expected_bytes(f[sys.argv[3]])))
        return 0
    h5file, mnt, hpcdump = (os.path.abspath(a) for a in sys.argv[1:4])
    os.chdir(os.path.dirname(h5file))
    nodd = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--odd" else 20
    print("\n".join(verify(h5file, mnt, hpcdump, nodd)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
