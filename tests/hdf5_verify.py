#!/usr/bin/python3
"""hdf5_verify.py H5FILE MOUNTPOINT HPCDUMP [--odd N] - compare what hpcmount
shows for H5FILE (mounted at MOUNTPOINT) and what `hpcdump cat` prints with
what h5py reads.  One line per check: "ok: ..." or "FAIL: ...".

  hdf5_verify.py --expect H5FILE PATH   print the sha256 h5py expects for PATH

Expected bytes: ds[()] as little-endian C order (compound padding zero);
variable-length strings as lines.  Expected xattrs: user.shape, user.dtype
(parsed by NumPy) and user.attr.<name> for every attribute.
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


def expected_bytes(ds):
    if ds.shape is None:                     # null dataspace
        return b""
    t = ds.id.get_type()
    if isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str():
        a = ds[()]
        items = [a] if ds.shape == () else list(np.ravel(a))
        out = b""
        for v in items:
            out += (v.encode() if isinstance(v, str) else (v or b"")) + b"\n"
        return out
    if ds.dtype.kind == "O" or ds.dtype.hasobject:
        return b""                            # vlen sequences, references: not served
    if t.get_class() == h5py.h5t.BITFIELD:
        # h5py has no conversion for bitfields: libhdf5 reads them with the
        # file's type, in the file's byte order
        order = ">" if t.get_order() == h5py.h5t.ORDER_BE else "<"
        a = np.empty(ds.shape, dtype="%su%d" % (order, t.get_size()))
        ds.id.read(h5py.h5s.ALL, h5py.h5s.ALL, a, mtype=t)
        return a.astype(a.dtype.newbyteorder("<")).tobytes()
    if t.get_class() == h5py.h5t.OPAQUE:
        # h5py's own opaque type has another tag: read with the file's type
        a = np.empty(ds.shape, dtype="V%d" % t.get_size())
        ds.id.read(h5py.h5s.ALL, h5py.h5s.ALL, a, mtype=t)
        return a.tobytes()
    a = np.asarray(ds[()])
    le = a.dtype.newbyteorder("<")
    exp = np.zeros(a.shape, dtype=le)
    exp[...] = a
    return exp.tobytes()


def le_dtype(ds):
    t = ds.id.get_type()
    if isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str():
        return "O"
    if ds.dtype.kind == "O" or ds.dtype.hasobject:
        return "O"
    return ds.dtype.newbyteorder("<")


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


def walk(f, skipped=None):
    """(path, object, link kind, link value) for every link, breadth first.
    Links not followed (external, user-defined) go to skipped as (path,
    kind); objects h5py lists but cannot open come out as kind "broken"
    with the error as value."""
    out, seen, todo = [], set(), [("/", f)]
    seen.add(h5py.h5o.get_info(f.id).addr)
    while todo:
        path, g = todo.pop(0)
        for name in sorted(g.keys()):
            p = posixpath.join(path, name)
            try:
                link = g.get(name, getlink=True)
            except Exception as e:            # noqa: BLE001 - h5py raises many kinds
                out.append((p, None, "broken", str(e)))
                continue
            if isinstance(link, h5py.SoftLink):
                out.append((p, None, "soft", link.path))
                continue
            if isinstance(link, h5py.ExternalLink):
                if skipped is not None:
                    skipped.append((p, "external link"))
                continue
            if not isinstance(link, h5py.HardLink):
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


def attr_matches(text, v):
    """Does the xattr text render attribute value v?"""
    if isinstance(v, (bytes, str)):
        return text == (v.decode() if isinstance(v, bytes) else v)
    a = np.asarray(v)
    if a.dtype.kind == "O" or a.dtype.kind in "SU":
        vals = [x.decode() if isinstance(x, bytes) else str(x) for x in np.ravel(a)]
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


def check_broken(mnt, path, why, check):
    """An object h5py lists but cannot open: left out, or shown with reads
    giving EIO and .info naming it as damaged."""
    full = mnt + path
    if not os.path.lexists(full):
        check(True, "%s: left out (h5py: %s)" % (path, why))
        return
    info = open(mnt + "/.info").read()
    check(any(ln.startswith("damaged: " + path + " ") for ln in info.splitlines()),
          "%s: .info names it damaged (h5py: %s)" % (path, why))
    if os.path.isfile(full):
        try:
            open(full, "rb").read()
            check(False, "%s: read gives EIO (h5py: %s), got data" % (path, why))
        except OSError as e:
            check(e.errno == errno.EIO, "%s: read gives EIO (got %s)" % (path, e))


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


def check_not_served(full, path, kind, check):
    """A dataset hpcmount deliberately does not serve: empty, user.dtype O."""
    check(os.stat(full).st_size == 0, "%s: %s not served: empty file" % (path, kind))
    check(os.getxattr(full, "user.dtype").decode() == "O",
          "%s: %s not served: user.dtype O" % (path, kind))


def verify(h5file, mnt, hpcdump, nodd=20, notserved=None, extracted=None, attrs=True):
    """Compare the mount of h5file at mnt and hpcdump with h5py.  Returns
    the list of "ok: ..." / "FAIL: ..." lines; appends (path, category) of
    what is deliberately not served to notserved.  extracted: the directory
    `hpcdump extract` wrote (compared instead of one `hpcdump cat` per
    dataset); attrs: compare attributes too.  The caller chdirs to the
    file's directory (libhdf5 1.10 resolves external raw data files against
    the working directory)."""
    rnd = random.Random(17)
    results = []
    skipped = [] if notserved is None else notserved

    def check(ok, desc):
        results.append(("ok: " if ok else "FAIL: ") + desc)

    opts = dict(nodd=nodd, rnd=rnd, extracted=extracted, attrs=attrs)
    with h5py.File(h5file, "r") as f:
        inodes = {}
        ndatasets = set()
        for path, obj, kind, val in walk(f, skipped):
            try:
                verify_link(h5file, mnt, hpcdump, path, obj, kind, val, inodes, ndatasets,
                            opts, skipped, check)
            except Exception as e:            # noqa: BLE001 - any error is a failed check
                check(False, "%s: %s: %s" % (path, type(e).__name__, e))
        for name, v in (f.attrs.items() if attrs else ()):
            key = "user.attr." + name
            text = os.getxattr(mnt, key).decode()
            check(attr_matches(text, v), "/: attribute %s (got %r)" % (name, text))
        info = open(mnt + "/.info").read()
        line = [ln for ln in info.splitlines() if ln.startswith("datasets: ")]
        check(line == ["datasets: %d" % len(ndatasets)], ".info: datasets: %d (got %s)" % (len(ndatasets), line))
    return results


def verify_link(h5file, mnt, hpcdump, path, obj, kind, val, inodes, ndatasets, opts,
                skipped, check):
    full = mnt + path
    if kind == "broken":
        check_broken(mnt, path, val, check)
        return
    if kind == "soft":
        want = val if not val.startswith("/") else \
            posixpath.relpath(val, posixpath.dirname(path))
        try:
            got = os.readlink(full)
        except OSError as e:
            got = "error %s" % e
        check(got == want, "%s: symlink -> %s (got %s)" % (path, want, got))
        return
    if kind == "group":
        if val in inodes:      # second name of a group: a symlink to the first
            check(os.path.islink(full) and os.path.realpath(full) ==
                  os.path.realpath(mnt + inodes[val][1]), "%s: group hard link" % path)
        else:
            check(os.path.isdir(full), "%s: directory" % path)
            inodes[val] = (os.stat(full).st_ino, path)
            for name, v in (obj.attrs.items() if opts["attrs"] else ()):
                text = os.getxattr(full, "user.attr." + name).decode()
                check(attr_matches(text, v), "%s: attribute %s (got %r)" % (path, name, text))
        return
    ds = obj
    st = os.stat(full)
    if val in inodes:
        check(st.st_ino == inodes[val][0], "%s: same inode as %s" % (path, inodes[val][1]))
    else:
        inodes[val] = (st.st_ino, path)
        ndatasets.add(val)
    ns = not_served(ds)
    if ns is not None:
        skipped.append((path, ns))
        check_not_served(full, path, ns, check)
        return
    try:
        exp = expected_bytes(ds)
    except Exception as e:                    # noqa: BLE001 - h5py cannot read it
        check_unreadable(mnt, None if opts["extracted"] else hpcdump, h5file, path,
                         "%s: %s" % (type(e).__name__, e), check)
        return
    verify_dataset(h5file, mnt, hpcdump, path, ds, exp, st, opts, check)


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
        r = subprocess.run([hpcdump, "cat", h5file, path], capture_output=True)
        check(r.returncode == 0 and sha(r.stdout) == sha(exp),
              "%s: sha256 through hpcdump (rc %d)" % (path, r.returncode))
    shape = "0" if ds.shape is None else ",".join(str(n) for n in ds.shape)
    xs = os.getxattr(full, "user.shape").decode()
    check(xs == shape, "%s: user.shape %r (got %r)" % (path, shape, xs))
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
    check(same, "%s: user.dtype %s (got %s)" % (path, want, xd))
    for name, v in (ds.attrs.items() if opts["attrs"] else ()):
        key = "user.attr." + name
        if len(key) > 255:
            check(key not in os.listxattr(full), "%s: over-long attribute name left out" % path)
            continue
        text = os.getxattr(full, key).decode()
        check(attr_matches(text, v), "%s: attribute %s = %r (got %r)" % (path, name, v, text))
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
