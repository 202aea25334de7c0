"""Container.array(): a file of the tree as a NumPy array."""
import errno
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _lib
from ._lib import lib

_PIECE = 16 << 20            # bytes per read of the thread pool, at least


def _layout(c, path, size):
    """(dtype, shape) from user.dtype and user.shape: uint8 and (size,)
    without them; their product must be the file's size."""
    names = c.listxattr(path)
    dtype = np.dtype("u1")
    if "user.dtype" in names:
        dtype = np.dtype(c.getxattr(path, "user.dtype").decode().strip())
    if "user.shape" in names:
        text = c.getxattr(path, "user.shape").decode().strip()
        shape = tuple(int(x) for x in text.split(",")) if text else ()
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


def _mapped(c, st, ext, dtype, shape):
    """A read-only memory map of the source when the file is exactly one
    verbatim extent of it, else None."""
    if ext is None or len(ext) != 1 or st.size == 0 or ext[0][2] != st.size:
        return None
    src, off, _ = ext[0]
    a = np.memmap(src, dtype=dtype, mode="r", offset=off, shape=shape)
    _unchanged(c, st.ino)
    return a


def _read_all(c, path, ino, a, size, threads):
    """Fill array a (size bytes) with the file: one read, or pieces read by
    a thread pool (ctypes drops the GIL): the library computes pieces in
    parallel, and preads verbatim bytes straight into the array."""
    addr = a.ctypes.data
    if threads is None:
        threads = os.cpu_count() or 1
    piece = max(_PIECE, -(-size // (4 * threads)))
    spans = [(o, min(piece, size - o)) for o in range(0, size, piece)]

    def one(span):
        o, n = span
        got = c._readinto(ino, addr + o, n, o, path)
        if got != n:
            raise OSError(errno.EIO, "%s: %d bytes at %d, the file ended after %d"
                          % (path, n, o, got))
    if threads <= 1 or len(spans) <= 1:
        for s in spans:
            one(s)
        return
    with ThreadPoolExecutor(min(threads, len(spans))) as pool:
        list(pool.map(one, spans))


def array(c, path, threads=None):
    st = c._file(path)
    dtype, shape = _layout(c, path, st.size)
    ext = c.extents(path) if st.size else None
    a = _mapped(c, st, ext, dtype, shape)
    if a is not None:
        return a
    a = np.empty(shape, dtype)
    if st.size:
        _read_all(c, path, st.ino, a, st.size, threads)
    return a


__all__ = ["array", "_lib"]
