"""hpcmount: the tree of HPC container files (SIONlib, FTI, GSD, HDF5,
distributed HDF, netCDF-3) without FUSE, over libhpcmount.

    import hpcmount
    with hpcmount.open("run.sion") as c:
        print(c.listdir("/"))
        a = c.array("/rank-000000")          # zero-copy where it can be

The same names, bytes and extended attributes as the hpcmount(1) mount.
Errors raise with hpcmount's one-line message: FileNotFoundError,
NotADirectoryError, IsADirectoryError, hpcmount.FormatError (a bad or
unsupported container), OSError with errno EIO for bytes that cannot be
served exactly.  Every call may be made from many threads at once.
"""
import builtins
import ctypes
import errno
import io
import json
import os
import posixpath
import stat as _stat
import threading
import weakref

from . import _lib
from ._lib import lib

from ._array import Empty

__all__ = ["open", "refs", "refs_dataset", "refs_store", "Container", "Empty", "FormatError",
           "version"]



class FormatError(OSError):
    """The container is damaged, inconsistent or of a kind not served."""


def version():
    return lib.hpcmount_version().decode()


def _message():
    return lib.hpcmount_last_error().decode(errors="replace")


_ERRORS = {
    _lib.E_NOENT: FileNotFoundError,
    _lib.E_NOTDIR: NotADirectoryError,
    _lib.E_ISDIR: IsADirectoryError,
}
_FORMAT = (_lib.E_CORRUPT, _lib.E_UNSUPPORTED, _lib.E_CHECKSUM)


def _raise(rc, opening=False, path=None):
    """Raise the exception of return code rc with the library's message
    (named by path where the library only knows the node's id)."""
    msg = _message()
    if path is not None and msg.startswith("node "):
        msg = "%s: %s" % (path, msg.split(": ", 1)[-1])
    num = lib.hpcmount_errno(rc)
    if opening and rc == _lib.E_INVAL:
        raise ValueError(msg)
    if opening and rc in _FORMAT:
        raise FormatError(num, msg)
    raise _ERRORS.get(rc, OSError)(num, msg)


def _check(rc, opening=False, path=None):
    if rc != 0:
        _raise(rc, opening, path)


def _option_string(options):
    """open()'s keyword options as the -o string: npy=True -> "npy"."""
    parts = []
    for k, v in options.items():
        if v is True:
            parts.append(k)
        elif v is False or v is None:
            continue
        else:
            parts.append("%s=%s" % (k, v))
    return ",".join(parts)


def _bytes(s):
    return os.fsencode(s)


class _Closes:
    """Closed by a with statement's end or when collected (close())."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:          # interpreter shutdown: the module may be gone
            pass


class Container(_Closes):
    """An open SOURCE (container or run directory).  Use hpcmount.open()."""

    def __init__(self, source, **options):
        self.source = os.fspath(source)
        self._h = None
        self._lock = threading.Lock()
        self._files = weakref.WeakSet()    # closed first: they hold containers
        h = ctypes.c_void_p()
        rc = lib.hpcmount_open(_bytes(self.source), _option_string(options).encode(),
                               ctypes.byref(h))
        _check(rc, opening=True)
        self._h = h

    # -- lifetime ------------------------------------------------------------
    def close(self):
        """Close; calls still running in other threads must have returned."""
        with self._lock:
            h, self._h = self._h, None
            files, self._files = list(self._files), weakref.WeakSet()
        for f in files:
            f.close()
        if h:
            lib.hpcmount_close(h)

    def _handle(self):
        h = self._h
        if not h:
            raise ValueError("I/O operation on a closed hpcmount container")
        return h

    # -- nodes ---------------------------------------------------------------
    def _resolve(self, path, follow_last):
        st = _lib.Stat()
        _check(lib.hpcmount_resolve_follow(self._handle(), _bytes(path), int(follow_last),
                                           ctypes.byref(st)))
        return st

    def _lstat(self, path):
        """Stat of path, links in its middle followed (as lstat(2))."""
        return self._resolve(path, False)

    def _readlink_ino(self, ino):
        p = ctypes.c_void_p()
        _check(lib.hpcmount_readlink(self._handle(), ino, ctypes.byref(p)))
        try:
            return os.fsdecode(ctypes.string_at(p.value)) if p.value else ""
        finally:
            lib.hpcmount_free(p)

    def _follow(self, path):
        """(path, stat) of the node path names, symlinks followed in the
        library the way the kernel follows them on the mount (a target
        above the root: FileNotFoundError; more than 40: errno ELOOP)."""
        path = os.fspath(path)
        return path, self._resolve(path, True)

    def _open(self, path, ino=None):
        """The open file (_File) at path, symlinks followed in the library;
        or of node ino, found before (path then only names it)."""
        h = ctypes.c_void_p()
        if ino is None:
            rc = lib.hpcmount_file_open(self._handle(), _bytes(path), ctypes.byref(h))
        else:
            rc = lib.hpcmount_file_open_node(self._handle(), ino, ctypes.byref(h))
        _check(rc, path=path)
        f = _File(self, h, path)
        with self._lock:
            self._files.add(f)
        return f

    def stat(self, path, follow_symlinks=True):
        """os.stat_result of path, as os.stat on the mount."""
        st = self._follow(path)[1] if follow_symlinks else self._lstat(path)
        return _stat_result(st)

    def lstat(self, path):
        return self.stat(path, follow_symlinks=False)

    def readlink(self, path):
        return self._readlink_ino(self._lstat(path).ino)

    def _entries(self, path):
        """[(name, Stat)] of directory path, in the mount's order."""
        path, st = self._follow(path)
        if not _stat.S_ISDIR(st.mode):
            raise NotADirectoryError(errno.ENOTDIR, "%s: not a directory" % path)
        out = []

        def one(_ctx, name, s):
            c = _lib.Stat()
            ctypes.pointer(c)[0] = s[0]
            out.append((os.fsdecode(name), c))
            return 0
        _check(lib.hpcmount_readdir(self._handle(), st.ino, _lib.DIRENT_FN(one), None))
        return out

    def listdir(self, path="/"):
        """Names in directory path (no "." and ".."), as os.listdir."""
        return [n for n, _ in self._entries(path)]

    def scandir(self, path="/"):
        """[(name, os.stat_result)] of directory path (not following links)."""
        return [(n, _stat_result(s)) for n, s in self._entries(path)]

    def walk(self, top="/"):
        """(dirpath, dirnames, filenames) top-down, as os.walk (links are
        listed as files and not followed)."""
        try:
            entries = self._entries(top)
        except OSError:
            return
        dirs = [n for n, s in entries if _stat.S_ISDIR(s.mode)]
        files = [n for n, s in entries if not _stat.S_ISDIR(s.mode)]
        yield top, dirs, files
        for d in dirs:
            yield from self.walk(posixpath.join(top, d))

    # -- bytes ---------------------------------------------------------------
    def read(self, path, offset=0, size=-1):
        """Bytes [offset, offset+size) of file path (to the end: size -1)."""
        if offset < 0:
            raise ValueError("negative offset")
        with self._open(path) as f:
            end = max(f.st.size - offset, 0)
            size = end if size is None or size < 0 else min(size, end)
            buf = ctypes.create_string_buffer(size) if size else None
            n = f.readinto(buf, size, offset) if size else 0
        return buf.raw[:n] if size else b""

    def readinto(self, path, buffer, offset=0):
        """Fill a writable buffer from offset; returns the bytes read."""
        with self._open(path) as f:
            mv = memoryview(buffer).cast("B")
            if len(mv) == 0:
                return 0
            addr = ctypes.addressof((ctypes.c_char * len(mv)).from_buffer(mv))
            return f.readinto(addr, len(mv), offset)

    def open(self, path, mode="rb", buffering=io.DEFAULT_BUFFER_SIZE):
        """A seekable binary file object (io.BufferedReader) of file path."""
        if mode not in ("r", "rb"):
            raise OSError(errno.EROFS, "%s: hpcmount is read-only" % path)
        return io.BufferedReader(_RawFile(self._open(path)), buffering)

    # -- attributes ----------------------------------------------------------
    def getxattr(self, path, name):
        """Value of extended attribute name (bytes)."""
        return self._getxattr_ino(self._follow(path)[1].ino, name)

    def _getxattr_ino(self, ino, name):
        v, n = ctypes.c_void_p(), ctypes.c_size_t()
        _check(lib.hpcmount_getxattr(self._handle(), ino, _bytes(name), ctypes.byref(v),
                                     ctypes.byref(n)))
        return _lib.take_bytes(v, n.value)

    def listxattr(self, path):
        """Names of the extended attributes of path."""
        return self._listxattr_ino(self._follow(path)[1].ino)

    def _listxattr_ino(self, ino):
        v, n = ctypes.c_void_p(), ctypes.c_size_t()
        _check(lib.hpcmount_listxattr(self._handle(), ino, ctypes.byref(v), ctypes.byref(n)))
        raw = _lib.take_bytes(v, n.value)
        return [os.fsdecode(x) for x in raw.split(b"\0") if x]

    @property
    def info(self):
        """The text of /.info."""
        v, n = ctypes.c_void_p(), ctypes.c_size_t()
        _check(lib.hpcmount_info(self._handle(), ctypes.byref(v), ctypes.byref(n)))
        return _lib.take_bytes(v, n.value).decode(errors="replace")

    def refs(self, path="/", inline_max=500):
        """kerchunk references (version 1, a zarr v2 hierarchy) of the tree
        under path, as a dict for fsspec's "reference" filesystem (fo=...).
        Chunks of at most inline_max bytes are inline (docs/refs.md)."""
        v, n = ctypes.c_void_p(), ctypes.c_size_t()
        _check(lib.hpcmount_refs(self._handle(), _bytes(path), inline_max, ctypes.byref(v),
                                 ctypes.byref(n)), path=path)
        return json.loads(_lib.take_bytes(v, n.value))

    def dataset(self, group="/", inline_max=500, netcdf=True, **kwargs):
        """The xarray.Dataset of directory group read through the
        references (refs()): xarray.open_dataset("reference://",
        engine="zarr") over the container's own files, with no mount and
        no copy.  netcdf: leave out the HDF5 datasets libnetcdf shows no
        variable for (types netCDF has none for), as xarray on the file
        does; their names and why are in .encoding["hpcmount_not_netcdf"].
        Keyword arguments go to xarray.open_dataset (chunks={} for Dask
        arrays, decode_times=False, ...).  The references' own attributes
        (hpcmount_path, hpcmount_source, hpcmount_not_covered) are moved to
        .encoding, so .attrs hold the file's (docs/refs.md)."""
        return refs_dataset(self.refs(group, inline_max), netcdf=netcdf, **kwargs)

    def extents(self, path):
        """[(source_path, offset, length)] where the bytes of file path lie
        verbatim in the source files, or None when they are computed."""
        with self._open(path) as f:
            return f.extents()

    def array(self, path, threads=None, populate=None):
        """A NumPy array of file path with the dtype and shape of its
        user.dtype and user.shape (uint8, 1-D without them): a read-only
        memory map of the source file where the bytes are one verbatim
        extent, else one read into a new array (large computed files in
        parallel pieces, so the library decodes on every core).  A map
        of 1 MiB to 4 GiB whose pages are all in the page cache is mapped
        at once (populate=None); populate=True maps (and reads) every
        page now, False leaves the map lazy."""
        from . import _array
        return _array.array(self, path, threads, populate)


def _stat_result(st):
    t = int(st.mtime)
    blocks = (st.size + 511) // 512
    return os.stat_result((st.mode, st.ino, 0, st.nlink, st.uid, st.gid, st.size,
                           t, t, t, t, t, t, None, None, None, st.blksize, blocks))


class _File(_Closes):
    """An open file of a Container (libhpcmount's hpcmount_file): its node
    found once, then read any number of times, from any thread."""

    def __init__(self, container, handle, path):
        self._c, self._f, self.path = container, handle, path
        self.st = _lib.Stat()
        _check(lib.hpcmount_file_stat(handle, ctypes.byref(self.st)))

    def readinto(self, addr, size, offset):
        """Read [offset, offset+size) to address addr: the bytes read."""
        self._c._handle()          # ValueError once the container is closed
        n = ctypes.c_size_t()
        _check(lib.hpcmount_file_read(self._f, addr, size, offset, ctypes.byref(n)),
               path=self.path)
        return n.value

    def extents(self):
        """[(source_path, offset, length)], or None for computed bytes."""
        self._c._handle()
        ext, n = ctypes.POINTER(_lib.Extent)(), ctypes.c_size_t()
        rc = lib.hpcmount_file_extents(self._f, ctypes.byref(ext), ctypes.byref(n))
        if rc == _lib.E_NOTSUP:
            return None
        _check(rc, path=self.path)
        try:
            return [(os.fsdecode(ext[i].path), ext[i].offset, ext[i].length)
                    for i in range(n.value)]
        finally:
            lib.hpcmount_extents_free(ext, n.value)

    def close(self):
        f, self._f = self._f, None
        if f:
            lib.hpcmount_file_close(f)


class _RawFile(io.RawIOBase):
    """The raw, seekable side of Container.open(), over one _File."""

    def __init__(self, f):
        super().__init__()
        self._f, self._size, self.name = f, f.st.size, f.path
        self._pos = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, b):
        mv = memoryview(b).cast("B")
        want = min(len(mv), max(self._size - self._pos, 0))
        if want == 0:
            return 0
        addr = ctypes.addressof((ctypes.c_char * len(mv)).from_buffer(mv))
        n = self._f.readinto(addr, want, self._pos)
        self._pos += n
        return n

    def seek(self, pos, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + pos < 0:
            raise OSError(errno.EINVAL, "negative seek position")
        self._pos = base + pos
        return self._pos

    def tell(self):
        return self._pos

    def close(self):
        if not self.closed:
            self._f.close()
        super().close()


def refs_dataset(refs, group="/", netcdf=True, **kwargs):
    """The xarray.Dataset of group of references refs (a dict as refs()
    returns, or the path of `hpcdump refs` output), as Container.dataset()
    opens it: engine="zarr" over fsspec's "reference" filesystem, without
    the arrays netCDF shows no variable for (netcdf=True), the
    references' own attributes in .encoding."""
    import xarray
    if not isinstance(refs, dict):
        with builtins.open(refs) as fh:
            refs = json.load(fh)
    prefix = group.strip("/")
    backend = dict(kwargs.pop("backend_kwargs", None) or {})
    backend.setdefault("consolidated", False)
    backend["storage_options"] = {"fo": refs, "remote_protocol": "file"}
    skip = {}
    for key, text in refs["refs"].items() if netcdf else ():
        name, _, last = key.rpartition("/")
        parent, _, name = name.rpartition("/")
        if last == ".zattrs" and name and parent == prefix and "hpcmount_not_netcdf" in text:
            skip[name] = json.loads(text)["hpcmount_not_netcdf"]
    if skip:
        kwargs["drop_variables"] = list(kwargs.get("drop_variables") or ()) + sorted(skip)
    if prefix:
        kwargs["group"] = prefix
    ds = xarray.open_dataset("reference://", engine="zarr", backend_kwargs=backend, **kwargs)
    if skip:
        ds.encoding["hpcmount_not_netcdf"] = skip
    for obj in [ds] + list(ds.variables.values()):
        for k in [k for k in obj.attrs if k.startswith("hpcmount_")]:
            obj.encoding[k] = obj.attrs.pop(k)
    return ds


def refs_store(refs):
    """A read-only zarr store over references refs (a dict as refs()
    returns, or the path of `hpcdump refs` output) that reads every chunk
    with one pread from a file it keeps open: what zarr.open(), xarray's
    open_zarr() and dask.array.from_zarr() take in place of fsspec's
    "reference://" mapper, with the same bytes and a fraction of the cost
    per chunk (docs/refs.md).  Picklable, for Dask's workers."""
    from ._refstore import RefStore
    return RefStore(refs)


def refs(source, path="/", inline_max=500, **options):
    """kerchunk references of the tree under path of SOURCE (a dict);
    options as for open()."""
    with Container(source, **options) as c:
        return c.refs(path, inline_max)


def open(source, **options):
    """Open SOURCE (a container or a run directory) with hpcmount's -o
    options as keywords (cache_size="64M", npy=True, ...).  A Container,
    also a context manager."""
    return Container(source, **options)


try:                         # fsspec's "hpcmount" protocol, when fsspec is there
    from . import _fsspec as _fsspec_impl
    _fsspec_impl.register()
except ImportError:
    pass
