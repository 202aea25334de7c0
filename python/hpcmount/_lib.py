"""The C-call layer: libhpcmount loaded with ctypes and the signature of
every call in one place (a new C call is one line in _SIGNATURES).

ctypes releases the GIL during each call, so threads read in parallel.
"""
import ctypes
import ctypes.util
import os

c_int, c_char_p, c_void_p, c_size_t, c_uint64 = (
    ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint64)
P = ctypes.POINTER

E_IO, E_CORRUPT, E_NOMEM, E_NOENT, E_NOTDIR, E_ISDIR, E_INVAL, E_UNSUPPORTED, \
    E_NODATA, E_RANGE, E_CHECKSUM, E_NOTSUP, E_CHANGED, E_LOOP = range(-1, -15, -1)
INO_ROOT = 1


class Stat(ctypes.Structure):
    """struct hpcmount_stat"""
    _fields_ = [("ino", ctypes.c_uint64), ("mode", ctypes.c_uint32),
                ("nlink", ctypes.c_uint32), ("size", ctypes.c_uint64),
                ("mtime", ctypes.c_int64), ("uid", ctypes.c_uint32),
                ("gid", ctypes.c_uint32), ("blksize", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32)]


class Extent(ctypes.Structure):
    """struct hpcmount_extent"""
    _fields_ = [("path", c_char_p), ("offset", ctypes.c_uint64),
                ("length", ctypes.c_uint64)]


DIRENT_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_char_p, P(Stat))

_SIGNATURES = {
    # name: (restype, argtypes)
    "hpcmount_open": (c_int, [c_char_p, c_char_p, P(c_void_p)]),
    "hpcmount_close": (None, [c_void_p]),
    "hpcmount_last_error": (c_char_p, []),
    "hpcmount_strerror": (c_char_p, [c_int]),
    "hpcmount_errno": (c_int, [c_int]),
    "hpcmount_options_check": (c_int, [c_char_p]),
    "hpcmount_resolve": (c_int, [c_void_p, c_char_p, P(Stat)]),
    "hpcmount_resolve_follow": (c_int, [c_void_p, c_char_p, c_int, P(Stat)]),
    "hpcmount_lookup": (c_int, [c_void_p, c_uint64, c_char_p, P(Stat)]),
    "hpcmount_getattr": (c_int, [c_void_p, c_uint64, P(Stat)]),
    "hpcmount_readdir": (c_int, [c_void_p, c_uint64, DIRENT_FN, c_void_p]),
    "hpcmount_read": (c_int, [c_void_p, c_uint64, c_void_p, c_size_t, c_uint64, P(c_size_t)]),
    "hpcmount_file_open": (c_int, [c_void_p, c_char_p, P(c_void_p)]),
    "hpcmount_file_open_node": (c_int, [c_void_p, c_uint64, P(c_void_p)]),
    "hpcmount_file_stat": (c_int, [c_void_p, P(Stat)]),
    "hpcmount_file_read": (c_int, [c_void_p, c_void_p, c_size_t, c_uint64, P(c_size_t)]),
    "hpcmount_file_extents": (c_int, [c_void_p, P(P(Extent)), P(c_size_t)]),
    "hpcmount_file_close": (None, [c_void_p]),
    "hpcmount_readlink": (c_int, [c_void_p, c_uint64, P(c_void_p)]),
    "hpcmount_getxattr": (c_int, [c_void_p, c_uint64, c_char_p, P(c_void_p), P(c_size_t)]),
    "hpcmount_listxattr": (c_int, [c_void_p, c_uint64, P(c_void_p), P(c_size_t)]),
    "hpcmount_info": (c_int, [c_void_p, P(c_void_p), P(c_size_t)]),
    "hpcmount_refs": (c_int, [c_void_p, c_char_p, c_uint64, P(c_void_p), P(c_size_t)]),
    "hpcmount_extents": (c_int, [c_void_p, c_uint64, P(P(Extent)), P(c_size_t)]),
    "hpcmount_extents_free": (None, [P(Extent), c_size_t]),
    "hpcmount_sources_unchanged": (c_int, [c_void_p, c_uint64]),
    "hpcmount_free": (None, [c_void_p]),
    "hpcmount_version": (c_char_p, []),
    "hpcmount_formats": (c_int, [P(c_void_p)]),
}


def _library_path():
    """$HPCMOUNT_LIBRARY, else the path make wrote into _libpath.py (the
    build tree's library, or libdir's once installed)."""
    env = os.environ.get("HPCMOUNT_LIBRARY")
    if env:
        return env, None
    try:
        from . import _libpath
        return _libpath.LIBRARY, _libpath.HELPER
    except ImportError:
        return ctypes.util.find_library("hpcmount") or "libhpcmount.so.0", None


def _load():
    path, helper = _library_path()
    if helper and not os.environ.get("HPCMOUNT_HELPER"):
        # the build tree: the helper is not where the library was built for
        os.environ["HPCMOUNT_HELPER"] = helper
    lib = ctypes.CDLL(path)
    for name, (res, args) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


lib = _load()


def take_bytes(ptr, n):
    """Copy n bytes at C pointer ptr (from the library) and free it."""
    if not ptr:
        return b""
    try:
        return ctypes.string_at(ptr, n)
    finally:
        lib.hpcmount_free(ptr)
