"""Container.array(): a file of the tree as a NumPy array."""
import ast
import ctypes
import errno
import math
import mmap
import os
import stat
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _lib
from ._lib import lib

_PIECE = 16 << 20            # bytes per read of the thread pool, at least
_ADVISE_MIN = 1 << 20        # maps smaller than this are left to the kernel's fault-around
_POPULATE_MAX = 4 << 30      # larger cached maps stay lazy: page tables for a slice's sake
_MADV_POPULATE_READ = 22     # Linux 5.14; not in Python 3.11's mmap module
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]


def _dtype(text):
    """The NumPy dtype a user.dtype names: a type string, or for a
    structured type (compound, array) one Python literal (docs/hdf5.md)."""
    return np.dtype(ast.literal_eval(text) if text[:1] in ("[", "{", "(") else text)


class Empty:
    """The value of an HDF5 dataset with a null dataspace (user.h5space
    null): a dtype and no data, as h5py's h5py.Empty, which it equals."""
    shape = None
    size = None

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def __eq__(self, other):
        return type(other).__name__ == "Empty" and getattr(other, "shape", 0) is None and \
            getattr(other, "dtype", None) == self.dtype

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return "Empty(dtype=%r)" % (self.dtype,)


def _parse_shape(value):
    text = value.decode().strip()
    return tuple(int(x) for x in text.split(",")) if text else ()


def _shape(c, path):
    return _parse_shape(c.getxattr(path, "user.shape"))


def _layout(getx, path, size, names):
    """(dtype, shape) from user.dtype and user.shape (names: the file's
    xattrs, getx(name) the value of one): uint8 and (size,) without them;
    their product must be the file's size (an array type's own axes trail
    the shape, as h5py gives them)."""
    dtype = np.dtype("u1")
    if "user.dtype" in names:
        dtype = _dtype(getx("user.dtype").decode().strip())
    if "user.shape" in names:
        shape = _parse_shape(getx("user.shape"))
    else:
        shape = (size // dtype.itemsize,)
    need = math.prod(shape) * dtype.itemsize
    if need != size:
        raise OSError(errno.EIO, "%s: user.shape %s of %s is %d bytes, the file %d"
                      % (path, ",".join(map(str, shape)), dtype.str, need, size))
    return dtype, shape


def _unchanged(c, ino):
    """The bytes taken from the sources are the library's only while the
    sources are the files it opened: raise (EIO, CHANGED) otherwise."""
    rc = lib.hpcmount_sources_unchanged(c._handle(), ino)
    if rc != 0:
        from . import _raise
        _raise(rc)


def _cached(m, addr):
    """Is every page of mapping m (at addr) in the page cache?"""
    vec = np.empty(-(-len(m) // mmap.PAGESIZE), np.uint8)
    if _libc.mincore(addr, len(m), vec.ctypes.data) != 0:
        return False
    return bool(np.bitwise_and.reduce(vec) & 1)


def _advise(a, off, populate):
    """Tell the kernel how a large map will be read.  populate None: when
    every page is in the page cache and the map is at most _POPULATE_MAX,
    map them now (MADV_POPULATE_READ), one call instead of a fault per
    page or folio on the first pass; else the map stays lazy (a slice reads
    only its pages), with readahead in huge pages (MADV_HUGEPAGE: fewer
    faults, and 2 MiB folios mapped whole later).  True: populate, reading
    what is not cached now; False: neither.  Kernels without the advice
    just fault."""
    m = a._mmap                # np.memmap's mapping, from off rounded down
    if populate is False or m is None or len(m) < _ADVISE_MIN:
        return
    addr = a.ctypes.data - off % mmap.ALLOCATIONGRANULARITY
    try:
        m.madvise(mmap.MADV_HUGEPAGE)
    except (OSError, AttributeError):
        pass
    if populate or (len(m) <= _POPULATE_MAX and _cached(m, addr)):
        try:
            m.madvise(_MADV_POPULATE_READ)
        except OSError:
            pass


def _mapped(c, st, ext, dtype, shape, populate):
    """A read-only memory map of the source when the file is exactly one
    verbatim extent of it, else None."""
    if ext is None or len(ext) != 1 or st.size == 0 or ext[0][2] != st.size:
        return None
    src, off, _ = ext[0]
    a = np.memmap(src, dtype=dtype, mode="r", offset=off, shape=shape)
    _unchanged(c, st.ino)
    _advise(a, off, populate)
    return a


def _read_all(f, a, size, threads):
    """Fill array a (size bytes) with open file f: one read, or pieces read
    by a thread pool (ctypes drops the GIL): the library computes pieces in
    parallel, and preads verbatim bytes straight into the array."""
    addr = a.ctypes.data
    if threads is None:
        threads = os.cpu_count() or 1
    piece = max(_PIECE, -(-size // (4 * threads)))
    spans = [(o, min(piece, size - o)) for o in range(0, size, piece)]

    def one(span):
        o, n = span
        got = f.readinto(addr + o, n, o)
        if got != n:
            raise OSError(errno.EIO, "%s: %d bytes at %d, the file ended after %d"
                          % (f.path, n, o, got))
    if threads <= 1 or len(spans) <= 1:
        for s in spans:
            one(s)
        return
    with ThreadPoolExecutor(min(threads, len(spans))) as pool:
        list(pool.map(one, spans))


def _objects(items, shape, path):
    """An object array of shape holding items (NumPy would make a
    2-D array of equal-length sequences); of a scalar, its one item."""
    if len(items) != math.prod(shape):
        raise OSError(errno.EIO, "%s: %d values for user.shape %s"
                      % (path, len(items), ",".join(map(str, shape))))
    if shape == ():
        return items[0]           # h5py's ds[()] of a scalar: the value itself
    a = np.empty(len(items), object)
    for i, v in enumerate(items):
        a[i] = v
    return a.reshape(shape)


def _sequences(c, path, threads, populate):
    """An HDF5 dataset of variable-length sequences (a directory of
    values and offsets): what h5py's ds[()] gives, an object array of
    NumPy arrays."""
    values = array(c, path + "/values", threads, populate)
    offsets = array(c, path + "/offsets", threads, populate)
    if len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(values) or \
            np.any(np.diff(offsets) < 0):
        raise OSError(errno.EIO, "%s: offsets do not split the values" % path)
    items = np.split(np.array(values), offsets[1:-1]) if len(offsets) > 1 else []
    return _objects(items, _shape(c, path), path)


def _target(path):
    """A reference's target path; None (h5py's name) for an object
    without one, which the tree gives as @ and its address."""
    return None if path.startswith("@") else path


def _region(line):
    """(path, selection) of a region reference's line (docs/hdf5.md)."""
    if not line:
        return None
    target, _, sel = line.rpartition("\t")
    return (_target(target), sel)


def _text(c, path, ref, eol):
    """A dataset served as text (variable-length strings, references):
    h5py's ds[()], an object array of bytes, of target paths (str, '' for
    a null reference) or of (path, selection) tuples (None for null).
    Each element ends with eol: NUL where user.h5eol says so, else a
    newline."""
    data = c.read(path)
    lines = data.split(eol)[:-1] if data else []
    if ref == "object":
        lines = [_target(os.fsdecode(x)) for x in lines]
    elif ref == "region":
        lines = [_region(os.fsdecode(x)) for x in lines]
    return _objects(lines, _shape(c, path), path)


def _members(c, path, getx, threads, populate):
    """An HDF5 compound holding variable-length data or references (a
    directory of one entry per member; getx(name): its xattrs): what
    h5py's ds[()] gives, a structured array with object members (of a
    scalar, its element)."""
    dtype = _dtype(getx("user.dtype").decode().strip())
    shape = _parse_shape(getx("user.shape"))
    a = np.empty(shape, dtype)
    for name in dtype.names:
        v = array(c, path + "/" + name, threads, populate)
        want = shape + dtype.fields[name][0].shape
        if np.shape(v) != want and not (want == () and dtype.fields[name][0].kind == "O"):
            raise OSError(errno.EIO, "%s/%s: shape %s, the compound's %s"
                          % (path, name, np.shape(v), want))
        if want == () and dtype.fields[name][0].kind == "O":
            a[name][()] = v
        else:
            a[name] = v
    return a[()] if shape == () else a


def array(c, path, threads=None, populate=None):
    p, st = c._follow(path)          # the one lookup of path: the node from here on
    names = c._listxattr_ino(st.ino)
    if "user.h5space" in names and c._getxattr_ino(st.ino, "user.h5space") == b"null":
        return Empty(_dtype(c._getxattr_ino(st.ino, "user.dtype").decode().strip()))
    if stat.S_ISDIR(st.mode) and "user.vlen" in names:
        return _sequences(c, p, threads, populate)
    if stat.S_ISDIR(st.mode) and "user.dtype" in names:
        return _members(c, p, lambda name: c._getxattr_ino(st.ino, name), threads, populate)
    with c._open(p, st.ino) as f:
        return _file_array(c, f, names, threads, populate)


def _file_array(c, f, names, threads, populate):
    """array() of open file f (names: its xattrs)."""
    st, p = f.st, f.path

    def getx(name):
        return c._getxattr_ino(st.ino, name)
    if "user.dtype" in names and getx("user.dtype") == b"O":
        ref = getx("user.h5ref").decode() if "user.h5ref" in names else None
        nul = "user.h5eol" in names and getx("user.h5eol") == b"nul"
        return _text(c, p, ref, b"\0" if nul else b"\n")
    dtype, shape = _layout(getx, p, st.size, names)
    ext = f.extents() if st.size else None
    a = _mapped(c, st, ext, dtype, shape, populate)
    if a is not None:
        return a
    a = np.empty(shape, dtype)
    if st.size:
        _read_all(f, a, st.size, threads)
    return a


__all__ = ["array", "Empty", "_lib"]
