"""fsspec's "hpcmount" protocol: a read-only AbstractFileSystem over a
container's tree, so xarray, pandas and dask open paths inside a
container without a mount:

    fs = fsspec.filesystem("hpcmount", source="run.h5")
    fs.ls("/"), fs.cat_file("/data", start=0, end=64)
"""
import errno
import stat as _stat

import fsspec
from fsspec.spec import AbstractBufferedFile, AbstractFileSystem


def _rofs(*args, **kwargs):
    raise OSError(errno.EROFS, "hpcmount is read-only")


class HpcmountFileSystem(AbstractFileSystem):
    """Storage options: source=PATH (a container or a run directory) and
    hpcmount's -o options as keywords (cache_size="64M", npy=True, ...)."""

    protocol = "hpcmount"
    root_marker = "/"

    def __init__(self, source=None, **options):
        fs_keys = ("skip_instance_cache", "use_listings_cache", "listings_expiry_time",
                   "max_paths", "asynchronous", "loop")
        super().__init__(source=source, **options)
        if source is None:
            raise ValueError("hpcmount filesystem: the storage option source=PATH is needed")
        from . import open as _open
        self.container = _open(source, **{k: v for k, v in options.items() if k not in fs_keys})

    @classmethod
    def _strip_protocol(cls, path):
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = str(path)
        if path.startswith("hpcmount://"):
            path = path[len("hpcmount://"):]
        elif path.startswith("hpcmount:"):
            path = path[len("hpcmount:"):]
        path = "/" + path.lstrip("/")
        return path.rstrip("/") or "/"

    def _detail(self, path, st):
        kind = ("directory" if _stat.S_ISDIR(st.st_mode) else
                "link" if _stat.S_ISLNK(st.st_mode) else "file")
        d = {"name": path, "size": st.st_size, "type": kind, "mode": st.st_mode,
             "ino": st.st_ino, "nlink": st.st_nlink, "uid": st.st_uid, "gid": st.st_gid,
             "mtime": st.st_mtime, "islink": kind == "link"}
        if kind == "link":
            d["destination"] = self.container.readlink(path)
            try:                  # as fsspec's local filesystem: the target's type
                t = self.container.stat(path)
                d["type"] = "directory" if _stat.S_ISDIR(t.st_mode) else "file"
                d["size"] = t.st_size
            except OSError:
                pass
        return d

    def ls(self, path, detail=True, **kwargs):
        path = self._strip_protocol(path)
        st = self.container.stat(path)
        if not _stat.S_ISDIR(st.st_mode):
            out = [self._detail(path, self.container.lstat(path))]
        else:
            base = path.rstrip("/")
            out = [self._detail(base + "/" + n, s) for n, s in self.container.scandir(path)]
        return out if detail else [d["name"] for d in out]

    def walk(self, path, maxdepth=None, topdown=True, **kwargs):
        """fsspec's walk as os.walk on the mount: a link to a directory is
        listed among the directories but not entered (a link /grp/self ->
        ../grp would otherwise be walked round and round)."""
        path = self._strip_protocol(path)
        detail = kwargs.pop("detail", False)
        try:
            listing = self.ls(path, detail=True, **kwargs)
        except OSError:
            return
        dirs, files, enter = {}, {}, []
        for info in listing:
            name = info["name"].rsplit("/", 1)[-1]
            if info["type"] != "directory" or info["name"] == path:
                files[name if info["name"] != path else ""] = info
                continue
            dirs[name] = info
            if not info.get("islink"):
                enter.append(info["name"])
        out = (path, dirs, files) if detail else (path, list(dirs), list(files))
        if topdown:
            yield out
        if maxdepth is None or maxdepth > 1:
            for d in enter:
                yield from self.walk(d, None if maxdepth is None else maxdepth - 1,
                                     topdown, detail=detail, **kwargs)
        if not topdown:
            yield out

    def find(self, path, maxdepth=None, withdirs=False, detail=False, **kwargs):
        """fsspec's find less the links that lead nowhere in the tree (an
        HDF5 external link of a file opened alone): such a link names no
        file, and `find -L` leaves it out too."""
        out = super().find(path, maxdepth=maxdepth, withdirs=withdirs, detail=True, **kwargs)
        out = {k: v for k, v in out.items() if v.get("type") != "link"}
        return out if detail else sorted(out)

    def info(self, path, **kwargs):
        path = self._strip_protocol(path)
        return self._detail(path, self.container.lstat(path))

    def cat_file(self, path, start=None, end=None, **kwargs):
        path = self._strip_protocol(path)
        size = self.container.stat(path).st_size
        start = 0 if start is None else (start + size if start < 0 else start)
        end = size if end is None else (end + size if end < 0 else end)
        start, end = max(0, min(start, size)), max(0, min(end, size))
        if end <= start:
            return b""
        return self.container.read(path, start, end - start)

    def _open(self, path, mode="rb", block_size=None, autocommit=True, cache_options=None,
              **kwargs):
        if mode != "rb":
            _rofs()
        path = self._strip_protocol(path)
        self.container.stat(path)            # FileNotFoundError now, not on read
        return HpcmountFile(self, path, mode, block_size or "default",
                            cache_options=cache_options, **kwargs)

    def ukey(self, path):
        st = self.container.stat(self._strip_protocol(path))
        return "%s:%d:%d:%d" % (self.container.source, st.st_ino, st.st_size, st.st_mtime)

    # read-only: every change fails with EROFS
    mkdir = makedirs = rmdir = rm_file = _rm = rm = cp_file = put_file = pipe_file = _rofs
    touch = mv = copy = put = pipe = _rofs


class HpcmountFile(AbstractBufferedFile):
    """A file of the tree, read in ranges through Container.read."""

    def _fetch_range(self, start, end):
        return self.fs.cat_file(self.path, start, end)


def register():
    fsspec.register_implementation("hpcmount", HpcmountFileSystem, clobber=True)
