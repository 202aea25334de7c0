"""The Python package hpcmount against real mounts and the formats' own
libraries (run by tests/mount/python_package.sh, which mounts every container).

    python_package.py LIST H5FILE BADH5 DHDF_ORACLE_DIR

LIST: lines "SOURCE<TAB>MOUNTPOINT<TAB>ERRORFILE": the container, where
hpcmount mounted it ("-" when the mount refused it) and hpcmount's stderr.
H5FILE: an h5py-written file with a contiguous and a gzip+shuffle dataset,
compounds, an array type and a dataset never written;
BADH5: the same with a gzip chunk overwritten; DHDF_ORACLE_DIR: one file
per HDF4 file of tests/data/dhdf with tests/gen/hdf4_oracle's output.
"""
import ctypes
import errno
import os
import random
import shutil
import stat
import sys
import tempfile
import threading
import unittest

import numpy as np

import hpcmount

LIST, H5FILE, BADH5, ORACLE_DIR = sys.argv[1:5]
DATA = os.path.join(os.environ["top_srcdir"], "tests", "data")


def containers():
    with open(LIST) as fh:
        return [ln.rstrip("\n").split("\t") for ln in fh if ln.strip()]


def mount_walk(mnt):
    """{relative path: lstat} of every node under mnt."""
    out = {}
    for d, dirs, files in os.walk(mnt):
        for n in dirs + files:
            p = os.path.join(d, n)
            out["/" + os.path.relpath(p, mnt)] = os.lstat(p)
    return out


def slurp(path, mode="rb"):
    with open(path, mode) as fh:
        return fh.read()


def read_or_errno(fn):
    try:
        return fn()
    except OSError as e:
        return ("errno", e.errno)


def mapped_kb(addr):
    """Rss (KiB) of this process's mapping that holds address addr."""
    inside = False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= addr < hi
            elif inside and head == "Rss:":
                return int(line.split()[1])
    raise AssertionError("no mapping holds %#x" % addr)


def page_cached(path):
    """Fraction of path's pages in the page cache (mincore of a map)."""
    import ctypes
    import mmap
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    with open(path, "rb") as fh:
        m = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        a = np.frombuffer(m, np.uint8)
        vec = np.zeros(-(-len(m) // mmap.PAGESIZE), np.uint8)
        rc = libc.mincore(a.ctypes.data, len(m), vec.ctypes.data)
        del a
        m.close()
    return float((vec & 1).mean()) if rc == 0 else -1.0


def evict(path):
    """Drop path's pages from the page cache (clean pages: written back first)."""
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())
        os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


class Tree(unittest.TestCase):
    """Every node, byte and attribute through the package equals the mount."""

    def compare(self, src, mnt):
        with hpcmount.open(src) as c:
            want = mount_walk(mnt)
            got = {}
            for d, dirs, files in c.walk("/"):
                for n in dirs + files:
                    p = (d.rstrip("/") + "/" + n)
                    got[p] = c.lstat(p)
            self.assertEqual(sorted(got), sorted(want), src)
            for p, ms in want.items():
                ps = got[p]
                for f in ("st_mode", "st_size", "st_nlink", "st_mtime", "st_uid", "st_gid"):
                    self.assertEqual(getattr(ps, f), getattr(ms, f), "%s %s %s" % (src, p, f))
                self.assertEqual(c.listdir(p) if stat.S_ISDIR(ms.st_mode) else None,
                                 os.listdir(mnt + p) if stat.S_ISDIR(ms.st_mode) else None, p)
                if stat.S_ISLNK(ms.st_mode):
                    self.assertEqual(c.readlink(p), os.readlink(mnt + p), p)
                    continue
                self.assertEqual(sorted(c.listxattr(p)), sorted(os.listxattr(mnt + p)), p)
                for x in os.listxattr(mnt + p):
                    self.assertEqual(c.getxattr(p, x), os.getxattr(mnt + p, x), "%s %s" % (p, x))
                if stat.S_ISREG(ms.st_mode) and p != "/.info":
                    self.assertEqual(read_or_errno(lambda: c.read(p)),
                                     read_or_errno(lambda: slurp(mnt + p)), p)
            self.assertEqual(c.info, slurp(mnt + "/.info", "r"), src)

    def test_every_container(self):
        n = 0
        for src, mnt, errfile in containers():
            with self.subTest(src=src):
                if mnt == "-":
                    # the mount refused it: the package refuses with the same line
                    line = slurp(errfile, "r").strip().splitlines()[-1]
                    with self.assertRaises(OSError) as cm:
                        hpcmount.open(src)
                    self.assertIn(cm.exception.strerror, line)
                    continue
                self.compare(src, mnt)
                n += 1
        self.assertGreaterEqual(n, 10)


class Files(unittest.TestCase):
    """open(), read() ranges, walk() and extents()."""

    def test_file_object(self):
        with hpcmount.open(os.path.join(DATA, "b_multichunk.sion")) as c:
            name = [n for n in c.listdir("/") if n.startswith("rank")][0]
            whole = c.read(name)
            self.assertGreater(len(whole), 0)
            with c.open(name) as f:
                self.assertTrue(f.seekable())
                self.assertEqual(f.read(), whole)
                f.seek(3)
                self.assertEqual(f.read(5), whole[3:8])
                f.seek(-4, os.SEEK_END)
                self.assertEqual(f.read(), whole[-4:])
                f.seek(0)
                b = bytearray(len(whole))
                self.assertEqual(f.readinto(b), len(whole))
                self.assertEqual(bytes(b), whole)
            self.assertEqual(c.read(name, 2, 3), whole[2:5])
            self.assertEqual(c.read(name, len(whole) + 10), b"")
            with self.assertRaises(OSError) as cm:
                c.open(name, "wb")
            self.assertEqual(cm.exception.errno, errno.EROFS)

    def test_walk_like_os_walk(self):
        src = os.path.join(DATA, "fti", "master-i64")
        with hpcmount.open(src) as c:
            tops = [d for d, _, _ in c.walk("/")]
            self.assertEqual(tops[0], "/")
            self.assertGreater(len(tops), 1)
            for d, dirs, files in c.walk("/"):
                self.assertEqual(sorted(dirs + files), sorted(c.listdir(d)))

    def test_extents_are_the_bytes(self):
        src = os.path.join(DATA, "c1_multifile.sion")
        with hpcmount.open(src) as c:
            seen = 0
            for d, _, files in c.walk("/"):
                for n in files:
                    p = d.rstrip("/") + "/" + n
                    ext = c.extents(p)
                    if ext is None:
                        continue
                    got = b"".join(slurp(s)[o:o + ln] for s, o, ln in ext)
                    self.assertEqual(got, c.read(p))
                    seen += 1
            self.assertGreater(seen, 0)
            self.assertIsNone(c.extents("/.info"))


class Arrays(unittest.TestCase):
    """array() equals the format's own library, and is a view where the
    bytes are one extent of one source file."""

    def test_hdf5_h5py(self):
        import h5py
        with hpcmount.open(H5FILE) as c, h5py.File(H5FILE, "r") as f:
            a = c.array("contig")
            np.testing.assert_array_equal(a, f["contig"][()])
            self.assertEqual(a.dtype, f["contig"].dtype)
            self.assertFalse(a.flags.owndata, "contiguous dataset: a view of the file")
            self.assertFalse(a.flags.writeable)
            for threads in (None, 1):
                g = c.array("g/gz", threads=threads)
                np.testing.assert_array_equal(g, f["g/gz"][()])
                self.assertTrue(g.flags.owndata, "gzip chunks: decoded into a new array")

    def test_hdf5_structured(self):
        """Compounds (packed, padded), array types and fill values: h5py's
        dtype, shape and bytes, from user.dtype's literal."""
        import h5py
        with hpcmount.open(H5FILE) as c, h5py.File(H5FILE, "r") as f:
            for name in ("rec", "pad", "arr", "unset"):
                with self.subTest(name=name):
                    a, want = c.array(name), f[name][()]
                    self.assertEqual(a.dtype, want.dtype)
                    self.assertEqual(a.shape, want.shape)
                    self.assertEqual(a.tobytes(), want.tobytes())

    def test_gsd_fl(self):
        import gsd.fl
        src = os.path.join(DATA, "gsd", "hoomd_traj.gsd")
        with hpcmount.open(src) as c, gsd.fl.open(src, "rb") as f:
            n = 0
            for fr in c.listdir("/frames"):
                for d, _, files in c.walk("/frames/" + fr):
                    for name in files:
                        p = d + "/" + name
                        chunk = p[len("/frames/" + fr) + 1:]
                        if "user.dtype" not in c.listxattr(p) or not f.chunk_exists(int(fr), chunk):
                            continue
                        want = f.read_chunk(int(fr), chunk)
                        got = c.array(p)
                        np.testing.assert_array_equal(got.reshape(want.shape), want, p)
                        self.assertEqual(got.flags.owndata, got.nbytes == 0,
                                         "%s: a frame's chunk is a view of the file" % p)
                        n += 1
            self.assertGreater(n, 0)
            series = [p for p in c.listdir("/series/particles") if not p.endswith(".frames")]
            self.assertIn("position", series)
            s = c.array("/series/particles/position")
            frames = c.array("/series/particles/position.frames")
            want = np.stack([f.read_chunk(int(i), "particles/position") for i in frames])
            self.assertEqual(s.shape, want.shape)
            np.testing.assert_array_equal(s, want)
            self.assertTrue(s.flags.owndata, "a series: the frames' chunks read into one array")

    def test_sion_view(self):
        src = os.path.join(DATA, "a_4tasks.sion")
        with hpcmount.open(src) as c:
            a = c.array("rank-000001")
            self.assertFalse(a.flags.owndata)
            self.assertEqual(a.tobytes(), c.read("rank-000001"))
        with hpcmount.open(os.path.join(DATA, "b_multichunk.sion")) as c:
            name = [n for n in c.listdir("/") if n.startswith("rank")][0]
            if c.extents(name) is not None and len(c.extents(name)) > 1:
                a = c.array(name)
                self.assertTrue(a.flags.owndata, "several chunks: one read into a new array")
                self.assertEqual(a.tobytes(), c.read(name))

    def test_dhdf_sdreaddata(self):
        oracle = {}
        for fn in os.listdir(ORACLE_DIR):
            if fn.startswith("mhf"):          # the master file: metadata, not the pieces
                continue
            lines = slurp(os.path.join(ORACLE_DIR, fn), "r").split("\n")
            for k in range(0, len(lines) - 1, 2):
                _, _, hname, shape, nt, _, status = lines[k].split(" ")
                if status == "ok":
                    oracle[bytes.fromhex(hname).decode()] = (bytes.fromhex(lines[k + 1]), shape)
        self.assertTrue(oracle)
        n = 0
        with hpcmount.open(os.path.join(DATA, "dhdf", "mhf.hdf")) as c:
            for d, _, files in c.walk("/"):
                for name in files:
                    if name in oracle:
                        data, shape = oracle[name]
                        a = c.array(d.rstrip("/") + "/" + name)
                        self.assertEqual(a.tobytes(), data, name)
                        self.assertEqual(",".join(map(str, a.shape)), shape, name)
                        n += 1
        self.assertGreater(n, 0)


class Scratch(unittest.TestCase):
    """A test class with a directory of its own (cls.dir), removed after."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix=cls.__name__ + "-", dir=os.environ.get("TMPDIR"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)


class BulkReads(Scratch):
    """Reads of 1 MiB and more take the bytes straight from the source
    files (no block cache): they equal the library's values, at any
    offset, through npy views, and never come from a changed source."""

    @classmethod
    def setUpClass(cls):
        import gsd.fl
        super().setUpClass()
        cls.gsd = os.path.join(cls.dir, "bulk.gsd")
        rng = np.random.default_rng(7)
        cls.pos = rng.random((300, 1000, 3), dtype=np.float32)   # 3.6 MB in 300 frames
        with gsd.fl.open(cls.gsd, "wb", application="t", schema="hoomd",
                         schema_version=[1, 4]) as f:
            for i in range(300):
                f.write_chunk("configuration/step", np.array([i], dtype=np.uint64))
                f.write_chunk("particles/position", cls.pos[i])
                f.end_frame()

    def test_series_and_ranges(self):
        want = self.pos.tobytes()
        with hpcmount.open(self.gsd) as c:
            p = "/series/particles/position"
            np.testing.assert_array_equal(c.array(p), self.pos)
            for threads in (1, 2):
                np.testing.assert_array_equal(c.array(p, threads=threads), self.pos)
            for off in (0, 5, 12000 - 7, 1234567):
                n = min(len(want) - off, (1 << 20) + 12345)
                self.assertEqual(c.read(p, off, n), want[off:off + n], "offset %d" % off)
            self.assertEqual(c.read(p, len(want) - 100, 2 << 20), want[-100:])

    def test_npy_view(self):
        with hpcmount.open(self.gsd, npy=True) as c:
            p = "/series/particles/position.npy"
            raw = c.read(p, 0, 8 << 20)
            self.assertEqual(len(raw), c.stat(p).st_size)
            import io
            np.testing.assert_array_equal(np.load(io.BytesIO(raw)), self.pos)

    def test_changed_source(self):
        import h5py
        src = os.path.join(self.dir, "changed.h5")
        want = np.arange(1 << 18, dtype="<f8")                  # 2 MiB, contiguous
        with h5py.File(src, "w") as f:
            f["d"] = want
            off = f["d"].id.get_offset()
        with hpcmount.open(src) as c:
            self.assertEqual(c.read("d", 0, 2 << 20), want.tobytes())
            with open(src, "r+b") as fh:      # same size, other bytes
                fh.seek(off + (1 << 20))
                fh.write(b"\xff" * 4096)
            got = read_or_errno(lambda: c.read("d", 0, 2 << 20))
            self.assertEqual(got, ("errno", errno.EIO), "a changed source: EIO, never its new bytes")


class MapAdvice(Scratch):
    """array() of a verbatim file is a view of the source: mapped at once
    when the page cache holds all of it, left lazy when it does not (a
    slice reads only its pages), as populate= says otherwise."""

    @classmethod
    def setUpClass(cls):
        import h5py
        super().setUpClass()
        cls.h5 = os.path.join(cls.dir, "contig.h5")
        cls.want = np.random.default_rng(3).random(1 << 20)          # 8 MiB of f8
        with h5py.File(cls.h5, "w") as f:
            f["d"] = cls.want

    def array(self, c, populate=None):
        a = c.array("d", populate=populate)
        self.assertFalse(a.flags.owndata, "a view of the file")
        self.assertFalse(a.flags.writeable)
        return a, mapped_kb(a.ctypes.data) * 1024

    def test_cached_is_mapped_at_once(self):
        slurp(self.h5)
        with hpcmount.open(self.h5) as c:
            a, rss = self.array(c)
            self.assertGreaterEqual(rss, a.nbytes, "every page of a cached file mapped")
            np.testing.assert_array_equal(a, self.want)
            a, rss = self.array(c, populate=False)
            self.assertEqual(rss, 0, "populate=False: nothing mapped before it is touched")
            np.testing.assert_array_equal(a, self.want)

    def test_uncached_stays_lazy(self):
        evict(self.h5)
        if page_cached(self.h5) != 0.0:
            self.skipTest("the page cache keeps %s (%.2f cached)" % (self.h5, page_cached(self.h5)))
        with hpcmount.open(self.h5) as c:
            a, rss = self.array(c)
            self.assertEqual(rss, 0, "a file not in the page cache: nothing read at array()")
            self.assertLess(page_cached(self.h5), 0.5, "array() read the file")
            np.testing.assert_array_equal(a[1000:1010], self.want[1000:1010])
            self.assertLess(mapped_kb(a.ctypes.data) * 1024, a.nbytes // 2,
                            "a slice reads only its pages")
            np.testing.assert_array_equal(a, self.want)
            del a
            evict(self.h5)
            a, rss = self.array(c, populate=True)
            self.assertGreaterEqual(rss, a.nbytes, "populate=True maps every page now")
            np.testing.assert_array_equal(a, self.want)


class GzipBulk(Scratch):
    """Compressed HDF5 chunks decoded straight into array()'s buffer (the
    chunks a read covers whole) and through the chunk cache (the others)
    give h5py's bytes, by the thread pool and at any offset."""

    @classmethod
    def setUpClass(cls):
        import h5py
        super().setUpClass()
        cls.h5 = os.path.join(cls.dir, "gz.h5")
        rng = np.random.default_rng(5)
        n = (5 << 20) + 123                        # 20 MiB of f4: pieces of the thread pool
        with h5py.File(cls.h5, "w") as f:
            f.create_dataset("f4", data=(np.sin(np.arange(n) / 999.0) * 50).astype("<f4"),
                             chunks=(1 << 16,), compression="gzip", compression_opts=1,
                             shuffle=True)
            f.create_dataset("i2", data=rng.integers(-900, 900, (3001, 500)).astype("<i2"),
                             chunks=(64, 500), compression="gzip", shuffle=True,
                             fletcher32=True)                      # whole rows
            f.create_dataset("f8", data=rng.random((600, 1000)), chunks=(50, 300),
                             compression="gzip", shuffle=True)     # parts of rows
            f.create_dataset("u8", data=np.arange(200001, dtype="<u8") * 7,
                             chunks=(4096,), compression="gzip")   # no shuffle
            f.create_dataset("shuf", data=np.arange(100003, dtype="<i4"), chunks=(1000,),
                             shuffle=True)                         # shuffle alone

    def test_equal_h5py(self):
        import h5py
        names = ("f4", "i2", "f8", "u8", "shuf")
        with h5py.File(self.h5, "r") as f:       # closed: inproc opens it in this process
            wants = {name: f[name][()] for name in names}
        with hpcmount.open(self.h5) as c, hpcmount.open(self.h5, inproc=True) as ci:
            for name in names:
                want = wants[name]
                raw = want.tobytes()
                for threads in (1, 2, 4):
                    got = c.array(name, threads=threads)
                    self.assertTrue(got.flags.owndata, name)
                    np.testing.assert_array_equal(got, want, "%s threads=%d" % (name, threads))
                np.testing.assert_array_equal(ci.array(name), want, "%s, inproc" % name)
                esize = want.dtype.itemsize
                for off in (0, esize, 1, 65536 * esize - 3, len(raw) // 3, len(raw) - 5000):
                    n = min(len(raw) - off, (1 << 20) + 4096 + 3)
                    self.assertEqual(c.read(name, off, n), raw[off:off + n],
                                     "%s at %d, %d bytes" % (name, off, n))


class BadInput(unittest.TestCase):
    """Errors raise with the one-line message; the interpreter lives."""

    def test_missing_source(self):
        with self.assertRaises(FileNotFoundError) as cm:
            hpcmount.open("/nonexistent/x.sion")
        self.assertIn("/nonexistent/x.sion", str(cm.exception))

    def test_bad_option(self):
        with self.assertRaises(ValueError) as cm:
            hpcmount.open(os.path.join(DATA, "a_4tasks.sion"), no_such_option="1")
        self.assertIn("no_such_option", str(cm.exception))

    def test_truncated_container(self):
        bad = os.path.join(os.path.dirname(LIST), "cut.sion")
        with open(os.path.join(DATA, "a_4tasks.sion"), "rb") as f, open(bad, "wb") as g:
            g.write(f.read()[:5000])
        with self.assertRaises(hpcmount.FormatError) as cm:
            hpcmount.open(bad)
        msg = cm.exception.strerror
        self.assertIn("cut.sion: field", msg)
        self.assertNotIn("\n", msg)

    def test_missing_paths(self):
        with hpcmount.open(os.path.join(DATA, "a_4tasks.sion")) as c:
            with self.assertRaises(FileNotFoundError):
                c.stat("/nope")
            with self.assertRaises(NotADirectoryError):
                c.listdir("/rank-000000")
            with self.assertRaises(IsADirectoryError):
                c.read("/")
            with self.assertRaises(OSError) as cm:
                c.getxattr("/rank-000000", "user.nothing")
            self.assertEqual(cm.exception.errno, errno.ENODATA)
        with self.assertRaises(ValueError):
            c.listdir("/")                  # closed

    def test_file_outlives_no_container(self):
        # closing the container closes the files still open in it (they
        # hold its containers): reading one then raises, closing it again
        # and collecting it are harmless
        c = hpcmount.open(os.path.join(DATA, "a_4tasks.sion"))
        f = c._open("/rank-000001")         # the library's open file itself
        buf = ctypes.create_string_buffer(10)
        self.assertEqual(f.readinto(ctypes.addressof(buf), 10, 0), 10)
        c.close()
        with self.assertRaises(ValueError):
            f.readinto(ctypes.addressof(buf), 10, 0)
        f.close()
        del f

    def test_damaged_hdf5_chunk(self):
        # libhdf5 runs in the helper: a damaged gzip chunk is EIO here
        with hpcmount.open(BADH5) as c:
            self.assertEqual(c.array("contig").shape, (2, 3, 4))
            for fn in (lambda: c.read("g/gz"), lambda: c.array("g/gz")):
                with self.assertRaises(OSError) as cm:
                    fn()
                self.assertEqual(cm.exception.errno, errno.EIO)
                self.assertTrue(cm.exception.strerror.startswith("g/gz: read at "),
                                cm.exception.strerror)
        # the truncated file: refused at open or EIO at read, never a crash
        cut = os.path.join(os.path.dirname(LIST), "cut.h5")
        with open(H5FILE, "rb") as f, open(cut, "wb") as g:
            g.write(f.read()[:3000])
        try:
            with hpcmount.open(cut) as c:
                for d, _, files in c.walk("/"):
                    for n in files:
                        try:
                            c.read(d.rstrip("/") + "/" + n)
                        except OSError as e:
                            self.assertTrue(e.strerror)
        except OSError as e:
            self.assertTrue(e.strerror)
            self.assertNotIn("\n", e.strerror)


class Threads(unittest.TestCase):
    """Threads reading one container at once get the right bytes."""

    def test_concurrent_reads(self):
        for src in (os.path.join(DATA, "b_multichunk.sion"), H5FILE,
                    os.path.join(DATA, "gsd", "hoomd_traj.gsd")):
            with hpcmount.open(src, cache_size="1M") as c:
                files = [d.rstrip("/") + "/" + n for d, _, fs in c.walk("/") for n in fs
                         if n != ".info"]
                whole = {p: c.read(p) for p in files}
                errors = []

                def reader(seed):
                    rnd = random.Random(seed)
                    for _ in range(300):
                        p = rnd.choice(files)
                        size = len(whole[p])
                        off = rnd.randrange(size + 1)
                        n = rnd.randrange(size - off + 1)
                        if c.read(p, off, n) != whole[p][off:off + n]:
                            errors.append((p, off, n))
                ts = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                self.assertEqual(errors, [], src)


class Fsspec(unittest.TestCase):
    """fsspec's "hpcmount" protocol equals the mount."""

    def test_fsspec(self):
        import fsspec
        for src, mnt, _ in containers():
            if mnt == "-" or not src.endswith((".h5", "b_multichunk.sion")):
                continue
            with self.subTest(src=src):
                fs = fsspec.filesystem("hpcmount", source=src, skip_instance_cache=True)
                want = mount_walk(mnt)
                files = sorted(p for p, s in want.items() if stat.S_ISREG(s.st_mode))
                self.assertEqual(sorted(fs.find("/")), files)
                top = sorted(fs.ls("/", detail=False))
                self.assertEqual(top, sorted("/" + n for n in os.listdir(mnt)))
                for d in fs.ls("/", detail=True):
                    ms = os.lstat(mnt + d["name"])
                    self.assertEqual(d["size"], ms.st_size)
                    self.assertEqual(d["type"] == "directory", stat.S_ISDIR(ms.st_mode))
                for p in files:
                    data = read_or_errno(lambda: slurp(mnt + p))
                    if isinstance(data, tuple):
                        # a dataset the mount refuses (EIO): fsspec too
                        with self.assertRaises(OSError) as cm:
                            fs.cat_file(p)
                        self.assertEqual(cm.exception.errno, data[1])
                        continue
                    self.assertEqual(fs.info(p)["size"], len(data))
                    self.assertEqual(fs.cat_file(p), data)
                    self.assertEqual(fs.cat_file(p, start=1, end=7), data[1:7])
                    self.assertEqual(fs.cat_file("hpcmount://" + p, start=-3), data[-3:])
                    with fs.open(p, "rb") as f:
                        f.seek(len(data) // 2)
                        self.assertEqual(f.read(), data[len(data) // 2:])
                walked = {d: sorted(dn + fn) for d, dn, fn in fs.walk("/")}
                self.assertEqual(sorted(walked["/"]), sorted(os.listdir(mnt)))
                with self.assertRaises(OSError) as cm:
                    fs.open("/x", "wb")
                self.assertEqual(cm.exception.errno, errno.EROFS)
                with self.assertRaises(FileNotFoundError):
                    fs.info("/no/such")
        # np.load of the -o npy view through fsspec, as libraries that open
        # paths through it do
        fs = fsspec.filesystem("hpcmount", source=H5FILE, npy=True, skip_instance_cache=True)
        with fs.open("/contig.npy", "rb") as f:
            a = np.load(f)
        import h5py
        with h5py.File(H5FILE, "r") as h:
            np.testing.assert_array_equal(a, h["contig"][()])


class Refs(unittest.TestCase):
    """hpcmount.refs() is hpcdump refs' document, and zarr reads it back
    as the package's own arrays."""

    def test_refs(self):
        import json
        import subprocess
        import fsspec
        import zarr
        dump = os.environ.get("HPCDUMP") or os.path.join(os.environ["top_builddir"], "dump", "hpcdump")
        compared = 0
        for src, mnt, _ in containers():
            if mnt == "-" or not src.endswith((".gsd", "b_multichunk.sion", ".h5")):
                continue
            with self.subTest(src=src):
                got = hpcmount.refs(src, inline_max=0)
                out = subprocess.run([dump, "refs", "--inline=0", src], check=True,
                                     stdout=subprocess.PIPE).stdout
                self.assertEqual(got, json.loads(out))
                fs = fsspec.filesystem("reference", fo=got, remote_protocol="file")
                root = zarr.open(fs.get_mapper(""), mode="r")
                seen = []
                root.visitvalues(lambda v: seen.append(v) if isinstance(v, zarr.Array) else None)
                with hpcmount.open(src) as c:
                    for arr in seen:
                        path = "/" + arr.path
                        try:
                            want = c.array(path)
                        except (OSError, ValueError):
                            continue
                        if want.shape != arr.shape:
                            continue
                        got = arr[...]
                        if want.dtype.names:     # zarr 2 names a padded compound's gaps
                            self.assertLessEqual(set(want.dtype.names), set(got.dtype.names))
                            for n in want.dtype.names:
                                np.testing.assert_array_equal(got[n], want[n])
                        else:
                            np.testing.assert_array_equal(got, want)
                        compared += 1
        self.assertGreater(compared, 10)
        with self.assertRaises(hpcmount.FormatError):
            hpcmount.refs(os.path.join(DATA, "a_4tasks.sion.manifest.txt"))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
