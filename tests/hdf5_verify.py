#!/usr/bin/python3
"""hdf5_verify.py H5FILE MOUNTPOINT HPCDUMP [--odd N] - compare what hpcmount
shows for H5FILE (mounted at MOUNTPOINT) and what `hpcdump cat` prints with
what h5py reads.  One line per check: "ok: ..." or "FAIL: ...".

  hdf5_verify.py --expect H5FILE PATH   print the sha256 h5py expects for PATH

Expected bytes: ds[()] as little-endian C order (compound padding: the
file's where libhdf5 reads elements unconverted, zero where it converts);
variable-length strings as lines.  Expected xattrs: user.shape, user.dtype
(parsed by NumPy) and user.attr.<name> for every attribute.
"""
import ast
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
    if t.get_class() == h5py.h5t.OPAQUE:
        # h5py's own opaque type has another tag: read with the file's type
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
    for pre in (0x00, 0xFF):
        b = np.empty(ds.shape, dtype=dt)
        b.reshape(-1).view(np.uint8)[...] = pre
        ds.read_direct(b)
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
    return out


def sha(b):
    return hashlib.sha256(b).hexdigest()


def walk(f):
    """(path, object, link kind, link value) for every link, breadth first."""
    out, seen, todo = [], set(), [("/", f)]
    seen.add(h5py.h5o.get_info(f.id).addr)
    while todo:
        path, g = todo.pop(0)
        for name in sorted(g.keys()):
            p = posixpath.join(path, name)
            link = g.get(name, getlink=True)
            if isinstance(link, h5py.SoftLink):
                out.append((p, None, "soft", link.path))
                continue
            if isinstance(link, h5py.ExternalLink):
                continue
            obj = g[name]
            addr = h5py.h5o.get_info(obj.id).addr
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
    if isinstance(v, h5py.Empty):
        return text == ""
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


def main():
    if sys.argv[1] == "--expect":
        os.chdir(os.path.dirname(os.path.abspath(sys.argv[2])))
        with h5py.File(os.path.basename(sys.argv[2]), "r") as f:
            print(sha(expected_bytes(f[sys.argv[3]])))
        return 0
    h5file, mnt, hpcdump = (os.path.abspath(a) for a in sys.argv[1:4])
    # libhdf5 1.10 resolves external raw data files against the working directory
    os.chdir(os.path.dirname(h5file))
    nodd = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--odd" else 20
    rnd = random.Random(17)
    results = []

    def check(ok, desc):
        results.append(("ok: " if ok else "FAIL: ") + desc)

    with h5py.File(h5file, "r") as f:
        inodes = {}
        ndatasets = set()
        for path, obj, kind, val in walk(f):
            full = mnt + path
            if kind == "soft":
                want = val if not val.startswith("/") else \
                    posixpath.relpath(val, posixpath.dirname(path))
                try:
                    got = os.readlink(full)
                except OSError as e:
                    got = "error %s" % e
                check(got == want, "%s: symlink -> %s (got %s)" % (path, want, got))
                continue
            if kind == "group":
                if val in inodes:      # second name of a group: a symlink to the first
                    check(os.path.islink(full) and os.path.realpath(full) ==
                          os.path.realpath(mnt + inodes[val][1]), "%s: group hard link" % path)
                else:
                    check(os.path.isdir(full), "%s: directory" % path)
                    inodes[val] = (os.stat(full).st_ino, path)
                    for name, v in obj.attrs.items():
                        text = os.getxattr(full, "user.attr." + name).decode()
                        check(attr_matches(text, v), "%s: attribute %s (got %r)" % (path, name, text))
                continue
            ds = obj
            exp = expected_bytes(ds)
            st = os.stat(full)
            if val in inodes:
                check(st.st_ino == inodes[val][0], "%s: same inode as %s" % (path, inodes[val][1]))
            else:
                inodes[val] = (st.st_ino, path)
                ndatasets.add(val)
            try:
                with open(full, "rb") as fh:
                    got = fh.read()
            except OSError as e:
                check(False, "%s: read: %s" % (path, e))
                continue
            check(len(got) == len(exp) == st.st_size,
                  "%s: size %d (got %d, st_size %d)" % (path, len(exp), len(got), st.st_size))
            check(sha(got) == sha(exp), "%s: sha256 through the mount" % path)
            r = subprocess.run([hpcdump, "cat", h5file, path], capture_output=True)
            check(r.returncode == 0 and sha(r.stdout) == sha(exp),
                  "%s: sha256 through hpcdump (rc %d)" % (path, r.returncode))
            for ok, desc in xattr_checks(ds, path, full):
                check(ok, desc)
            for name, v in ds.attrs.items():
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
        for name, v in f.attrs.items():
            key = "user.attr." + name
            text = os.getxattr(mnt, key).decode()
            check(attr_matches(text, v), "/: attribute %s (got %r)" % (name, text))
        info = open(mnt + "/.info").read()
        line = [ln for ln in info.splitlines() if ln.startswith("datasets: ")]
        check(line == ["datasets: %d" % len(ndatasets)], ".info: datasets: %d (got %s)" % (len(ndatasets), line))
    print("\n".join(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
