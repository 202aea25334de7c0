#!/usr/bin/python3
"""hdf5_diff.py H5FILE MOUNTPOINT HPCDUMP XDIR - every byte of every dataset of
H5FILE, as hpcmount serves it (mounted at MOUNTPOINT) and as `hpcdump cat`
prints it, against what libhdf5 reads (tests/mount/hdf5_verify.py's expected
bytes: ds[()] little-endian, C order).  One line per dataset: "ok: ..." or
"FAIL: ...", naming the first differing offset.

The mount is read the ways the reader's partial paths see: first with
O_DIRECT (so that the daemon gets exactly these requests, not the page
cache's) at odd offsets and sizes, across chunk boundaries, then in one
pass of odd-sized reads; then through the page cache in one read; then the
file `hpcdump extract H5FILE XDIR` wrote (where it differs, `hpcdump cat`
decides: extract stops at its first error).  user.shape and user.dtype are checked as hdf5_verify.py does.

Where libhdf5 itself leaves bytes unwritten (chunks or storage never
written with fill time "never", or an undefined fill value: H5Dread into
buffers pre-set to 00 and ff differs) there is no library answer: those
bytes may be the fill value or zero, or the read may fail with EIO.
"""
import errno
import os
import random
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hdf5_verify import expected_bytes, prefilled_reads, walk, xattr_checks  # noqa: E402

SIZES = [1, 3, 7, 13, 4096 + 5, 65536 + 3, 200001]
# hpcdump cat takes a while to start: at most MAX_CATS per file (only
# where extract differed, i.e. once something already failed)
MAX_CATS = 10
CATS = [MAX_CATS]
NOTES = []


def undefined_mask(ds, exp):
    """(bytes H5Dread gives into a zeroed buffer, mask of the bytes it
    leaves unwritten, one fill element) or (exp, None, None)."""
    plist = ds.id.get_create_plist()
    never = plist.get_fill_time() == h5py.h5d.FILL_TIME_NEVER
    undef = plist.fill_value_defined() == h5py.h5d.FILL_VALUE_UNDEFINED
    if not (never or undef) or ds.shape is None or ds.dtype.kind not in "iufb" or not exp:
        return exp, None, None
    le = ds.dtype.newbyteorder("<")
    reads = prefilled_reads(ds, le)
    mask = reads[0] != reads[1]
    fill = np.zeros(1, dtype=le)
    if not undef:
        f = np.zeros(1, dtype=ds.dtype)
        plist.get_fill_value(f)
        fill[0] = f[0]
    return reads[0].tobytes(), mask, np.frombuffer(fill.tobytes(), dtype=np.uint8)


class Want:
    """The expected bytes of a dataset and what may stand where libhdf5
    writes nothing."""

    def __init__(self, ds):
        self.esize = ds.dtype.itemsize if ds.dtype.kind != "O" else 1
        self.lib_error = None
        try:
            self.exp = expected_bytes(ds)
            self.exp, self.undef, self.fill = undefined_mask(ds, self.exp)
        except OSError as e:
            # libhdf5 cannot read it (storage never allocated, fill value
            # undefined): every read must fail
            self.lib_error = str(e)
            n = 0 if ds.shape is None else int(np.prod(ds.shape, dtype=np.int64))
            self.exp = bytes(n * self.esize)
            self.undef = np.ones(len(self.exp), dtype=bool)
            self.fill = None

    def first_bad(self, got, off):
        """Offset of the first wrong byte of got (read at off), or None."""
        want = self.exp[off:off + len(got)]
        if self.lib_error and got:
            return off
        if got == want:
            return None
        n = min(len(got), len(want))
        g = np.frombuffer(got[:n], dtype=np.uint8)
        w = np.frombuffer(want, dtype=np.uint8)[:n]
        bad = g != w
        if self.undef is not None:
            u = self.undef[off:off + n]
            fillrep = self.fill[(np.arange(off, off + n) % len(self.fill))]
            bad = np.where(u, (g != 0) & (g != fillrep), bad)
        idx = np.flatnonzero(bad)
        if idx.size:
            return off + int(idx[0])
        return None if len(got) == len(want) else off + n

    def eio_allowed(self, off, n):
        return self.undef is not None and bool(self.undef[off:off + n].any()) or \
            bool(self.lib_error)


def boundary_reads(ds, size, esize, rnd):
    """(offset, length) pairs that start just before chunk boundaries."""
    if ds.chunks is None or not ds.shape or size == 0:
        return []
    shape, chunks = ds.shape, ds.chunks
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    edges = []
    for k in range(len(shape)):
        for c in range(chunks[k], shape[k], chunks[k]):
            edges.append(c * strides[k])
    rnd.shuffle(edges)
    out = []
    row = esize * chunks[-1]
    for e in edges[:6]:
        for back in (1, esize // 2 + 1):
            off = e * esize - back
            if off >= 0:
                out.append((off, rnd.choice([2, esize + 2, 2 * row + 5, strides[0] * esize + 3])))
    return out


def read_direct(full, reads, want, size):
    """Reads through O_DIRECT (or the page cache where O_DIRECT is refused):
    a list of problems."""
    problems = []
    try:
        fd = os.open(full, os.O_RDONLY | os.O_DIRECT)
    except OSError as e:
        if e.errno != errno.EINVAL:
            return ["open: %s" % e]
        fd = os.open(full, os.O_RDONLY)
    try:
        for off, n in reads:
            try:
                got = os.pread(fd, n, off)
            except OSError as e:
                if not (e.errno == errno.EIO and want.eio_allowed(off, n)):
                    problems.append("pread(%d, %d): %s" % (off, n, e.strerror))
                continue
            if off >= size:
                if got:
                    problems.append("pread(%d, %d) past the end gave %d bytes" % (off, n, len(got)))
                continue
            bad = want.first_bad(got, off)
            if bad is not None:
                problems.append("pread(%d, %d): first wrong byte at %d (got %s, want %s)" % (
                    off, n, bad, got[bad - off:bad - off + 8].hex(), want.exp[bad:bad + 8].hex()))
    finally:
        os.close(fd)
    return problems


def check_dataset(h5file, path, ds, full, hpcdump, rnd, extracted):
    want = Want(ds)
    size = len(want.exp)
    problems = []
    st = os.stat(full)
    if st.st_size != size:
        problems.append("st_size %d, want %d" % (st.st_size, size))
    esize = max(want.esize, 1)
    # a chunk over 16 MiB costs a second or more per read: a few reads
    huge = ds.chunks is not None and np.prod(ds.chunks, dtype=np.int64) * esize > (16 << 20)
    reads = [] if huge else boundary_reads(ds, size, esize, rnd)
    if size:
        reads += [(rnd.randrange(size), rnd.choice(SIZES)) for _ in range(1 if huge else 8)]
        reads += [(size - 1, 9)] if huge else [(0, 1), (size - 1, 9), (max(size - esize - 1, 0), esize + 2)]
        step = 4093 if size <= (1 << 18) else (size // 12) | 1
        reads += [] if huge else [(off, step) for off in range(0, size, step)]
    reads.append((size + 5, 10))
    problems += read_direct(full, reads, want, size)
    try:
        with open(full, "rb") as fh:
            got = fh.read()
        bad = want.first_bad(got, 0)
        if bad is not None:
            problems.append("whole read: %d bytes, first wrong byte at %d" % (len(got), bad))
    except OSError as e:
        if not (e.errno == errno.EIO and want.eio_allowed(0, size)):
            problems.append("whole read: %s" % e.strerror)
    # hpcdump: the file `hpcdump extract` wrote, confirmed by `hpcdump cat`
    # where it differs (extract stops at its first error)
    try:
        with open(extracted, "rb") as fh:
            ok = want.first_bad(fh.read(), 0) is None
    except OSError:
        ok = False
    if not ok and CATS[0] == 0:
        NOTES.append("%s: hpcdump extract differs, cat not run (more than %d such)" % (path, MAX_CATS))
    elif not ok:
        CATS[0] -= 1
        r = subprocess.run([hpcdump, "cat", h5file, path], capture_output=True)
        if r.returncode != 0:
            if not want.eio_allowed(0, size):
                problems.append("hpcdump cat: rc %d %s" % (r.returncode, r.stderr.decode().strip()))
        else:
            bad = want.first_bad(r.stdout, 0)
            if bad is not None:
                problems.append("hpcdump cat: %d bytes, first wrong byte at %d" % (len(r.stdout), bad))
    problems += [desc for ok, desc in xattr_checks(ds, path, full) if not ok]
    return problems


def info_rows(mnt):
    """dataset path -> (layout, filters, read) from .info."""
    rows = {}
    try:
        text = open(os.path.join(mnt, ".info")).read()
    except OSError:
        return rows
    for ln in text.splitlines():
        f = ln.split("\t")
        if len(f) >= 10 and f[0].startswith("/"):
            rows[f[0]] = "%s %s %s" % (f[3], f[4], f[7])
    return rows


def main():
    h5file, mnt, hpcdump, xdir = (os.path.abspath(a) for a in sys.argv[1:5])
    rnd = random.Random(21)
    name = os.path.basename(h5file)
    results = []
    with h5py.File(h5file, "r") as f:
        for path, obj, kind, _ in walk(f):
            if kind != "dataset":
                continue
            try:
                probs = check_dataset(h5file, path, obj, mnt + path, hpcdump, rnd, xdir + path)
            except OSError as e:
                probs = ["%s" % e]
            results.append((path, probs))
    rows = info_rows(mnt)
    for path, probs in results:
        if probs:
            print("FAIL: %s:%s [%s]: %s" % (name, path, rows.get(path, "?"), "; ".join(probs[:4]) +
                                            ("; ... %d more" % (len(probs) - 4) if len(probs) > 4 else "")))
        else:
            print("ok: %s:%s" % (name, path))
    for n in NOTES:
        print("note: %s:%s" % (name, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
