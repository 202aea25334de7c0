"""A read-only zarr store over kerchunk references (version 1, as
`hpcdump refs` and Container.refs() write them) that reads each chunk with
one pread from a file it keeps open.

fsspec's "reference" filesystem opens the source file again for every
chunk and goes through several layers of its own; with many small chunks
(a GSD series: one per frame) that, not zarr and not the read, is most of
a chunk's time (docs/PERFORMANCE.md, bench/refs_floor.py).  The store is
a zarr store (read-only), so zarr, xarray (open_zarr) and dask
(from_zarr) take it as they take fsspec's mapper; pickled for a Dask
worker it carries the references and reopens the files there.
"""
import base64
import builtins
import errno
import json
import os
import threading

from zarr.storage import BaseStore


class RefStore(BaseStore):
    """refs: a dict as Container.refs() returns, or the path of a JSON file
    of `hpcdump refs`."""

    _writeable = False
    _erasable = False

    def __init__(self, refs):
        if not isinstance(refs, dict):
            with builtins.open(refs) as fh:
                refs = json.load(fh)
        if refs.get("version") != 1:
            raise ValueError("references of version %r: only version 1 is read"
                             % refs.get("version"))
        self._refs = refs
        self._entries = refs["refs"]
        self._templates = refs.get("templates") or {}
        self._fds = {}
        self._lock = threading.Lock()

    def __getstate__(self):
        return {"refs": self._refs}

    def __setstate__(self, state):
        self.__init__(state["refs"])

    def __del__(self):
        for fd in getattr(self, "_fds", {}).values():
            os.close(fd)

    def __len__(self):
        return len(self._entries)

    def __iter__(self):
        return iter(self._entries)

    def __setitem__(self, key, value):
        raise OSError(errno.EROFS, "hpcmount references are read-only")

    def __delitem__(self, key):
        raise OSError(errno.EROFS, "hpcmount references are read-only")

    def __contains__(self, key):   # without reading the chunk
        return key in self._entries

    def __getitem__(self, key):
        v = self._entries[key]
        if isinstance(v, str):
            return base64.b64decode(v[7:]) if v.startswith("base64:") else v.encode()
        return self._read(key, v)

    def _url(self, url):
        for name, value in self._templates.items():
            url = url.replace("{{%s}}" % name, value)
        return url[len("file://"):] if url.startswith("file://") else url

    def _fd(self, path):
        fd = self._fds.get(path)
        if fd is None:
            with self._lock:
                fd = self._fds.get(path)
                if fd is None:
                    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                    self._fds[path] = fd
        return fd

    def _read(self, key, ref):
        path = self._url(ref[0])
        fd = self._fd(path)
        if len(ref) == 1:
            return os.pread(fd, os.fstat(fd).st_size, 0)
        off, size = ref[1], ref[2]
        data = os.pread(fd, size, off)
        if len(data) != size:
            raise OSError(errno.EIO, "%s: %s: %d bytes at %d, the file gave %d"
                          % (path, key, size, off, len(data)))
        return data
