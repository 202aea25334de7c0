#!/usr/bin/python3
"""netcdf3_verify.py - a netCDF-3 file through hpcmount against libnetcdf
(netCDF4-python with set_auto_maskandscale(False) and
set_auto_chartostring(False)): the module tests/mount/netcdf3_mount.sh and
tests/mount/conformance.py share.

    netcdf3_verify.py FILE MOUNTPOINT [EXTRACT_DIR]

For every variable: /<name> holds np.ascontiguousarray(var[...]) as
little-endian bytes through the mount, in hpcdump's extract and from the
Python package's c.array(); user.shape, user.dtype (numpy's, char as |S1)
and user.dims (the netCDF dimensions); every variable attribute is
user.attr.<name> and every global attribute one on the root, their text
reading back as the library's values.  Prints one line per failed check
and exits 1 when any failed.
"""
import os
import sys

import numpy as np


class Result:
    def __init__(self):
        self.fails, self.checks = [], 0

    def check(self, ok, desc):
        self.checks += 1
        if not ok:
            self.fails.append(desc)


def library(path):
    """The open netCDF4.Dataset, or None when libnetcdf refuses the file."""
    import netCDF4
    try:
        ds = netCDF4.Dataset(path, "r")
    except OSError:
        return None
    ds.set_auto_maskandscale(False)
    ds.set_auto_chartostring(False)
    return ds


def expected(var):
    """The library's values of var, as the mount serves them."""
    a = np.asarray(var[...])
    if a.ndim:          # ascontiguousarray would make a 0-d array 1-d
        a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return a


def attr_matches(text, value):
    """Does the xattr text read back as the library's attribute value?"""
    if isinstance(value, str):
        # netCDF4-python decodes chars as UTF-8 and drops every NUL
        return text.decode("utf-8", "replace").replace("\0", "") == value
    if isinstance(value, (bytes, np.bytes_)):     # a char variable's _FillValue
        return text.replace(b"\0", b"") == bytes(value).replace(b"\0", b"")
    v = np.atleast_1d(np.asarray(value))
    if v.size == 0:
        return text == b""
    words = text.decode().split(",")
    if len(words) != v.size:
        return False
    conv = float if v.dtype.kind == "f" else int
    got = np.array([conv(w) for w in words], dtype=v.dtype)
    return np.array_equal(got, v.ravel(), equal_nan=v.dtype.kind == "f")


def check_attrs(res, where, path, names, getattr_):
    xa = {n[len("user.attr."):]: n for n in os.listxattr(path) if n.startswith("user.attr.")}
    want = {n for n in names if len("user.attr." + n) <= 255}
    res.check(set(xa) == want, "%s: attributes %s, library %s" % (where, sorted(xa)[:8], sorted(want)[:8]))
    for n in want & set(xa):
        text = os.getxattr(path, xa[n])
        val = getattr_(n)
        res.check(attr_matches(text, val), "%s: user.attr.%s = %r, library %r" % (where, n, text[:80], val))


def read_bytes(p):
    with open(p, "rb") as fh:
        return fh.read()


def check_var(res, name, var, mnt, xdir, pkg):
    exp = expected(var)
    want = exp.tobytes()
    full = os.path.join(mnt, name)
    if not os.path.isfile(full):
        res.check(False, "%s: not in the mount" % name)
        return
    got = read_bytes(full)
    res.check(got == want, "%s: %d bytes through the mount differ from the library's %d" % (name, len(got), len(want)))
    if xdir is not None:
        xp = os.path.join(xdir, name)
        res.check(os.path.isfile(xp) and read_bytes(xp) == want, "%s: hpcdump extract differs or lacks it" % name)
    shape = os.getxattr(full, "user.shape").decode()
    dtype = os.getxattr(full, "user.dtype").decode()
    res.check(shape == ",".join(str(n) for n in exp.shape), "%s: user.shape %r, library %r" % (name, shape, exp.shape))
    res.check(np.dtype(dtype) == exp.dtype and dtype == exp.dtype.str,
              "%s: user.dtype %r, library %r" % (name, dtype, exp.dtype.str))
    if var.dimensions:
        dims = os.getxattr(full, "user.dims").decode()
        res.check(dims == ",".join(var.dimensions), "%s: user.dims %r, library %r" % (name, dims, var.dimensions))
    check_attrs(res, name, full, var.ncattrs(), var.getncattr)
    if pkg is not None:
        a = pkg.array("/" + name)
        res.check(a.shape == exp.shape and a.dtype == exp.dtype and a.tobytes() == want,
                  "%s: c.array() %s %s differs from the library's %s %s" % (name, a.shape, a.dtype, exp.shape, exp.dtype))


def servable(name):
    return name and "/" not in name and "\0" not in name and name not in (".", "..", ".info")


def verify(res, ds, path, mnt, xdir=None, use_package=True):
    """Compare everything of ds (the library's view of path) with the mount."""
    pkg = None
    if use_package:
        import hpcmount
        pkg = hpcmount.open(path)
    try:
        names = [n for n in ds.variables if servable(n)]
        files = sorted(n for n in os.listdir(mnt) if n != ".info")
        res.check(files == sorted(names), "files %s, library's variables %s" % (files[:8], sorted(names)[:8]))
        for n in names:
            check_var(res, n, ds.variables[n], mnt, xdir, pkg)
        check_attrs(res, "/", mnt, ds.ncattrs(), ds.getncattr)
    finally:
        if pkg is not None:
            pkg.close()


def main(argv):
    path, mnt = argv[1], argv[2]
    xdir = argv[3] if len(argv) > 3 else None
    res = Result()
    ds = library(path)
    if ds is None:
        print("FAIL: libnetcdf refuses %s" % path)
        return 1
    verify(res, ds, path, mnt, xdir)
    for f in res.fails:
        print("FAIL: %s: %s" % (os.path.basename(path), f))
    print("%s: %d checks, %d failed" % (os.path.basename(path), res.checks, len(res.fails)))
    return 1 if res.fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
