#!/usr/bin/python3
"""conformance.py [-j N] [--skip FMT,...] [DIR] - hpcmount against the formats' own libraries
over a directory of real files (DIR, else $HPC_CORPUS; exit 77 when absent).

Every file is recognised by its magic bytes (HDF5, HDF4, GSD, SION), then,
in a worker process under `ulimit -v 4194304` (one per job, reused from
file to file until a file fails; --child FMT FILE checks one file alone),
mounted with fuse/hpcmount
(a real libfuse3 mount) and extracted with `hpcdump extract`, and both are
compared with the library that is the oracle of its format:

  hdf5  h5py, through tests/mount/hdf5_verify.py (bytes of every dataset,
        user.shape/user.dtype, attributes, soft and hard links)
  gsd   gsd.fl (mode 'rb'): every chunk of every frame byte for byte,
        user.shape/user.dtype, the frame list; for HOOMD files the links to
        frame 0's chunks against what gsd.hoomd gives
  hdf4  libhdf4's SD interface through tests/gen/hdf4_oracle: every SDS and
        coordinate variable by its index, under the name docs/dhdf.md gives
        it (tests/mount/h4names.py), SDreaddata's bytes, shape and type, and
        user.h4name
  sion  the siondump output SIONlib recorded beside the file
        (<name>_stdout.log): tasks, global ranks, stream lengths
  netcdf3  libnetcdf through netCDF4-python, by tests/mount/netcdf3_verify.py:
        every variable's values through the mount, hpcdump extract and the
        Python package's c.array(), user.shape/dtype/dims, attributes

A file the library refuses must be refused by hpcmount and hpcdump with one
line and exit 1.  One line per file: "ok FILE", "FAIL FILE: reason" or
"NOT-SERVED FILE: categories" (the file holds something hpcmount
deliberately does not serve, docs/conformance.md; all else in it checked),
each ended by the CPU seconds the file cost ("(1.2 CPU s)": the
checker's, and the programs' it ran, the daemon and its helper included),
then "N passed, N failed, N not served".  Exit 1 when any file FAILs.

Environment: top_builddir (fuse/hpcmount, dump/hpcdump, tests/gen/hdf4_oracle),
top_srcdir.  -v prints every failed check of a failing file.  --skip leaves
the files of the formats named out (the sanitizer build of tests/run-all.sh
skips hdf5, whose library runs in the helper process).
"""
import ctypes
import errno
import hashlib
import json
import os
import resource
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("top_srcdir", os.path.dirname(HERE))
BUILD = os.environ.get("top_builddir", SRC)
HPCMOUNT = os.path.join(BUILD, "fuse", "hpcmount")
HPCDUMP = os.environ.get("HPCDUMP") or os.path.join(BUILD, "dump", "hpcdump")
ORACLE4 = os.path.join(BUILD, "tests", "gen", "hdf4_oracle")
MEM_LIMIT = 4194304 * 1024          # ulimit -v 4194304 (KiB)
PR_SET_CHILD_SUBREAPER = 36
SANITIZED = b"libasan" in subprocess.run(["ldd", HPCMOUNT], capture_output=True).stdout
FILE_TIMEOUT = 1800                 # a safety net against a hang, not a measure

FORMATS = ("hdf5", "hdf4", "gsd", "sion", "netcdf3")
# the files are mounted with the default options: the helper process
# judges libhdf5/libhdf4 by CPU time, never by how busy the machine is
MOUNT_OPTS = []


def sniff(path):
    """The format of path by its magic bytes, or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
            if head[:4] == b"\x0e\x03\x13\x01":
                return "hdf4"
            if head == b"\xdf\x65\xdf\x65\xdf\x65\xdf\x65":
                return "gsd"
            if head[:4] == b"sion":
                return "sion"
            if head[:3] == b"CDF" and head[3:4] in (b"\x01", b"\x02", b"\x05"):
                return "netcdf3"
            off = 0
            size = os.fstat(fh.fileno()).st_size
            while off + 8 <= size:      # HDF5: 0, 512, 1024, 2048, ...
                fh.seek(off)
                if fh.read(8) == b"\x89HDF\r\n\x1a\n":
                    return "hdf5"
                off = 512 if off == 0 else off * 2
    except OSError:
        return None
    return None


def corpus_files(top):
    """(format, path) of every recognised file below top, sorted; the
    folders hdf5/ hdf4/ gsd/ sion/ only when top has them (the corpus's
    other folders, e.g. hdf5-cve, are tested elsewhere)."""
    roots = [os.path.join(top, d) for d in FORMATS if os.path.isdir(os.path.join(top, d))]
    out = []
    for root in roots or [top]:
        for d, _, names in os.walk(root):
            for n in names:
                p = os.path.join(d, n)
                fmt = sniff(p)
                if fmt is not None:
                    out.append((fmt, p))
    return sorted(out, key=lambda x: (FORMATS.index(x[0]), x[1]))


# ---------------------------------------------------------------- a file


class Result:
    def __init__(self):
        self.fails = []
        self.notserved = []         # (path, category)
        self.checks = 0

    def check(self, ok, desc):
        self.checks += 1
        if not ok:
            self.fails.append(desc)


def sha(b):
    return hashlib.sha256(b).hexdigest()


def one_line_refusal(cmd, res, what):
    """cmd must exit 1 with exactly one line on stderr and nothing served."""
    os.makedirs(cmd[-1], exist_ok=True) if what == "hpcmount" else None
    r = subprocess.run(cmd, capture_output=True, timeout=FILE_TIMEOUT)
    lines = r.stderr.decode(errors="replace").splitlines()
    res.check(r.returncode == 1 and len(lines) == 1,
              "%s of a file the library refuses: exit %d, %d stderr lines (want 1, 1)"
              % (what, r.returncode, len(lines)))


class Mount:
    """A real mount of src in a fresh directory; unmounted on exit, after
    which the daemon's exit is awaited (sanitizer reports land in tmp)."""

    def __init__(self, src, tmp, args=()):
        self.src, self.tmp, self.args = src, tmp, list(args)
        self.mnt = os.path.join(tmp, "mnt")
        os.makedirs(self.mnt, exist_ok=True)
        self.mounted = False

    def mount(self):
        os.makedirs(self.mnt, exist_ok=True)
        r = subprocess.run([HPCMOUNT] + MOUNT_OPTS + self.args + [self.src, self.mnt],
                           capture_output=True, timeout=FILE_TIMEOUT)
        self.mounted = r.returncode == 0
        return r

    def umount(self):
        if not self.mounted:
            return
        # the daemon's pidfd, taken while it still serves the mount, turns
        # readable when it has exited: no poll of /proc every tenth of a
        # second, which cost each file a tenth of a second of waiting
        pidfds = daemon_pidfds(self.mnt)
        subprocess.run(["fusermount3", "-u", self.mnt], capture_output=True)
        self.mounted = False
        for fd in pidfds:
            select.select([fd], [], [], 120)
            os.close(fd)


def daemon_pidfds(mnt):
    """A pidfd of each hpcmount process of mountpoint mnt.  Read from
    /proc here: a pgrep costs more than most files' checks."""
    tail = os.fsencode(mnt)
    fds = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as fh:
                argv = fh.read().rstrip(b"\0").split(b"\0")
            if argv[-1] == tail and any(b"hpcmount" in a for a in argv[:-1]):
                fds.append(os.pidfd_open(int(pid)))
        except OSError:
            continue                            # gone meanwhile
    return fds


def hpcmount_refuses(path, tmp, res):
    """Does hpcmount refuse path?  If it does, with one line and exit 1?"""
    mnt = os.path.join(tmp, "mnt")
    os.makedirs(mnt, exist_ok=True)
    r = subprocess.run([HPCMOUNT] + MOUNT_OPTS + [path, mnt], capture_output=True, timeout=FILE_TIMEOUT)
    if r.returncode == 0:
        subprocess.run(["fusermount3", "-u", mnt], capture_output=True)
        return False
    lines = r.stderr.decode(errors="replace").splitlines()
    res.check(r.returncode == 1 and len(lines) == 1,
              "hpcmount refused it with exit %d and %d lines (want 1, 1)" % (r.returncode, len(lines)))
    return True


def mount_unless_refused(path, tmp, res, lib, refused):
    """The library refused the file: hpcmount and hpcdump must refuse it
    too (None).  Else mount it: the Mount, or None (a failed check)."""
    if refused:
        one_line_refusal([HPCMOUNT] + MOUNT_OPTS + [path, os.path.join(tmp, "mnt")], res, "hpcmount")
        one_line_refusal([HPCDUMP] + MOUNT_OPTS + ["info", path], res, "hpcdump info")
        return None
    m = Mount(path, tmp)
    r = m.mount()
    if r.returncode != 0:
        res.check(False, "%s reads it, hpcmount refused: %s" % (lib, r.stderr.decode(errors="replace").strip()[:300]))
        return None
    return m


def extract(src, tmp, res, may_fail=False):
    """hpcdump extract src into tmp/x; the directory or None.  may_fail:
    the library itself fails on some object, so may hpcdump (the files
    extracted are still compared)."""
    out = os.path.join(tmp, "x")
    r = subprocess.run([HPCDUMP] + MOUNT_OPTS + ["extract", src, out], capture_output=True, timeout=FILE_TIMEOUT)
    if r.returncode != 0 and may_fail:
        return out
    if r.returncode != 0:
        res.check(False, "hpcdump extract: exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace").strip()[:300]))
        return None
    return out


def read_file(path):
    with open(path, "rb") as fh:
        return fh.read()


def compare_array(res, mnt, xdir, rel, exp, shape, dtype):
    """The bytes of rel in the mount and in hpcdump's extract, its
    user.shape and user.dtype (parsed by numpy)."""
    import numpy as np
    full = os.path.join(mnt, rel)
    try:
        got = read_file(full)
    except OSError as e:
        res.check(False, "%s: read: %s" % (rel, e))
        return
    res.check(got == exp, "%s: %d bytes through the mount differ from the library's %d (sha %s vs %s)"
              % (rel, len(got), len(exp), sha(got)[:12], sha(exp)[:12]))
    if xdir is not None:
        xp = os.path.join(xdir, rel)
        xb = read_file(xp) if os.path.isfile(xp) else None
        res.check(xb == exp, "%s: hpcdump extract %s" % (rel, "differs" if xb is not None else "lacks it"))
    try:
        xs = os.getxattr(full, "user.shape").decode()
        xd = os.getxattr(full, "user.dtype").decode()
    except OSError as e:
        res.check(False, "%s: xattr: %s" % (rel, e))
        return
    res.check(xs == ",".join(str(n) for n in shape), "%s: user.shape %r, want %r" % (rel, xs, shape))
    try:
        same = np.dtype(xd) == np.dtype(dtype)
    except TypeError:
        same = False
    res.check(same, "%s: user.dtype %r, want %r" % (rel, xd, np.dtype(dtype).str))


def tree_files(mnt, sub=""):
    """Relative paths of the regular files and of the symlinks below mnt/sub."""
    files, links = set(), {}
    for d, dirs, names in os.walk(os.path.join(mnt, sub)):
        for n in dirs + names:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, mnt)
            if os.path.islink(p):
                links[rel] = os.readlink(p)
            elif os.path.isfile(p):
                files.add(rel)
    return files, links


# ---------------------------------------------------------------- HDF5


EXTRACT_MAX = 1 << 30


def tree_bytes(mnt):
    """The bytes of all files of a mount (an HDF5 file's datasets); one
    whose stat fails counts 0 (the checks say what is wrong with it)."""
    total = 0
    for d, _, names in os.walk(mnt):
        for n in names:
            try:
                st = os.lstat(os.path.join(d, n))
            except OSError:
                continue
            total += st.st_size if stat.S_ISREG(st.st_mode) else 0
    return total


def run_hdf5(path, tmp, res):
    import h5py
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    sys.dont_write_bytecode = True              # no __pycache__ in the source tree
    import hdf5_verify
    if SANITIZED:
        # ASan multiplies the cost of every byte: datasets over 64 MiB (the
        # corpus's 1 GiB dataspaces of fill value) are compared by sampled
        # rows there; the plain build compares every byte of them
        hdf5_verify.HUGE = 64 << 20
    os.chdir(os.path.dirname(path))
    try:
        f = h5py.File(path, "r")
    except Exception:                           # noqa: BLE001 - h5py refuses the file
        f = None
    if f is not None:
        try:
            list(f.keys())
            root_ok = True
        except Exception:                       # noqa: BLE001 - h5py cannot list the root
            root_ok = False
        f.close()
        if not root_ok and hpcmount_refuses(path, tmp, res):
            return                              # nothing h5py can list: a refusal is right too
    m = mount_unless_refused(path, tmp, res, "h5py", f is None)
    if m is None:
        return
    try:
        # hpcdump extract writes every dataset to disk: not files of GiBs
        # (then one hpcdump cat per dataset up to 256 MiB)
        xdir = extract(path, tmp, res, may_fail=True) if tree_bytes(m.mnt) <= EXTRACT_MAX else None
        # attributes: those of references and sequences (hdf5_verify.attr_var_served)
        lines = hdf5_verify.verify(path, m.mnt, HPCDUMP, 3, res.notserved, extracted=xdir,
                                   attrs="var")
    finally:
        m.umount()
    for ln in lines:
        res.check(ln.startswith("ok: "), ln[len("FAIL: "):])


# ---------------------------------------------------------------- GSD


def gsd_rel(frame, name):
    return os.path.join("frames", "%06d" % frame, name)


def gsd_pathable(name):
    parts = name.split("/")
    return all(p not in ("", ".", "..") and len(p.encode()) <= 255 for p in parts)


def hoomd_value(snap, name):
    """gsd.hoomd's value for chunk name in snap, or raise KeyError."""
    group, _, field = name.partition("/")
    if group == "log":
        return snap.log[field]
    obj = getattr(snap, group, None)
    if obj is None or "/" in field or not hasattr(obj, field):
        raise KeyError(name)
    return getattr(obj, field)


def same_as_chunk(val, chunk, name):
    """Does gsd.hoomd's value equal frame 0's chunk?"""
    import numpy as np
    if name.endswith("/types") or name.endswith("/type_shapes"):
        if chunk.ndim != 2:
            return False
        rows = [bytes(r).rstrip(b"\0").decode(errors="replace") for r in chunk.view(np.uint8)]
        if name.endswith("/type_shapes"):
            return [json.loads(r) for r in rows] == list(val)
        return rows == list(val)
    v = np.asarray(val)
    return v.size == chunk.size and np.array_equal(v.ravel(), np.asarray(chunk).ravel())


def run_gsd(path, tmp, res):
    import gsd.fl
    try:
        f = gsd.fl.open(name=path, mode="rb")
    except Exception:                           # noqa: BLE001 - gsd refuses the file
        f = None
    m = mount_unless_refused(path, tmp, res, "gsd.fl", f is None)
    if m is None:
        return
    try:
        xdir = extract(path, tmp, res)
        with f:
            gsd_compare(f, path, m.mnt, xdir, res)
    finally:
        m.umount()


def gsd_compare(f, path, mnt, xdir, res):
    import numpy as np
    names = sorted(f.find_matching_chunk_names(""))
    # a name that is also a directory (a and a/b): the directory is shown
    dirs = {n for n in names if gsd_pathable(n) and any(m.startswith(n + "/") for m in names if gsd_pathable(m))}
    frames = sorted(os.listdir(os.path.join(mnt, "frames")))
    res.check(frames == ["%06d" % i for i in range(f.nframes)],
              "frames: %d directories, gsd.fl has %d frames" % (len(frames), f.nframes))
    hoomd = gsd_hoomd_open(path, f)
    frame0 = {}
    for i in range(f.nframes):
        files, links = tree_files(mnt, os.path.join("frames", "%06d" % i))
        want = set()
        for name in names:
            if not f.chunk_exists(frame=i, name=name):
                continue
            if not gsd_pathable(name):
                res.notserved.append((name, "GSD chunk name that is no path"))
                continue
            if name in dirs:
                res.notserved.append((name, "GSD chunk name that is also a directory"))
                continue
            a = f.read_chunk(frame=i, name=name)
            if i == 0:
                frame0[name] = a
            rel = gsd_rel(i, name)
            want.add(rel)
            compare_array(res, mnt, xdir, rel, np.ascontiguousarray(a).tobytes(), a.shape, a.dtype)
        res.check(files == want, "frame %d: files %s, gsd.fl %s" %
                  (i, sorted(files ^ want)[:5], "differ" if files != want else ""))
        want_links = gsd_lent(f, hoomd, i, frame0) if hoomd is not None and i > 0 else {}
        res.check(links == want_links, "frame %d: links %r, gsd.hoomd lends %r" %
                  (i, sorted(set(links.items()) ^ set(want_links.items()))[:4], len(want_links)))


def gsd_hoomd_open(path, f):
    """A gsd.hoomd trajectory when the file is a HOOMD one gsd.hoomd opens."""
    if f.schema != "hoomd":
        return None
    import gsd.hoomd
    try:
        return gsd.hoomd.open(path, "rb")
    except Exception:                           # noqa: BLE001 - not a schema gsd.hoomd reads
        return None


def gsd_lent(f, traj, i, frame0):
    """{link path: target} for the chunks frame 0 lends frame i: a chunk
    frame i lacks whose gsd.hoomd value equals frame 0's chunk."""
    want = {}
    try:
        snap = traj[i]
    except Exception:                           # noqa: BLE001 - gsd.hoomd cannot read the frame
        return want
    for name, a in frame0.items():
        if f.chunk_exists(frame=i, name=name):
            continue
        try:
            val = hoomd_value(snap, name)
        except (KeyError, AttributeError):
            continue
        if val is not None and same_as_chunk(val, a, name):
            depth = name.count("/") + 1
            want[gsd_rel(i, name)] = "../" * depth + os.path.join("000000", name)
    return want


# ---------------------------------------------------------------- HDF4

H4_DTYPES = {3: "|u1", 4: "|S1", 5: "<f4", 6: "<f8", 20: "|i1", 21: "|u1",
             22: "<i2", 23: "<u2", 24: "<i4", 25: "<u4"}


# the oracle's statuses the mount must answer with EIO: SDreaddata fails,
# or its bytes are undefined (tests/gen/hdf4_oracle.c)
H4_UNREADABLE = ("fail", "undefined")


def hdf4_oracle(path):
    """(refused, [sds dicts]) from tests/gen/hdf4_oracle."""
    r = subprocess.run([ORACLE4, path], capture_output=True, timeout=FILE_TIMEOUT)
    if r.returncode == 1:
        return True, []
    if r.returncode != 0:
        raise RuntimeError("hdf4_oracle: exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace")))
    lines = r.stdout.decode().split("\n")
    out = []
    for k in range(0, len(lines) - 1, 2):
        kind, idx, hname, shape, nt, nbytes, status = lines[k].split(" ")
        raw = b"" if hname == "-" else bytes.fromhex(hname)
        out.append(dict(index=int(idx), raw=raw, coord=kind == "coord",
                        selected=shape != "-",
                        shape=[int(x) for x in shape.split(",")] if shape not in ("-", "") else [],
                        nt=int(nt), nbytes=int(nbytes), status=status,
                        data=bytes.fromhex(lines[k + 1]) if status in ("ok", "filled") else None))
    return False, out


def run_hdf4(path, tmp, res):
    refused, sdss = hdf4_oracle(path)
    m = mount_unless_refused(path, tmp, res, "libhdf4", refused)
    if m is None:
        return
    try:
        xdir = extract(path, tmp, res, any(s["status"] in H4_UNREADABLE for s in sdss))
        hdf4_compare(sdss, m.mnt, xdir, res)
    finally:
        m.umount()


def hdf4_compare(sdss, mnt, xdir, res):
    """Every SDS libhdf4 lists under the name docs/dhdf.md gives it (its
    own, else an alias with its own name in user.h4name: h4names.py),
    compared by its index."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import h4names
    files = {n for n in os.listdir(mnt) if os.path.isfile(os.path.join(mnt, n)) and n != ".info"}
    names = h4names.served_names([(s["index"], s["raw"]) for s in sdss if s["selected"]])
    want = set()
    for s in sdss:
        if not s["selected"]:
            res.notserved.append((str(s["index"]), "HDF4 SDS libhdf4 cannot select"))
            continue
        name = names[s["index"]]
        want.add(name)
        nt = s["nt"] & ~0x5000          # DFNT_LITEND, DFNT_NATIVE: same bytes on this host
        if nt not in H4_DTYPES:
            res.check(False, "%s: HDF4 number type %d unknown to the test" % (name, s["nt"]))
            continue
        hdf4_h4name(res, mnt, name, s["raw"])
        if s["status"] in H4_UNREADABLE:
            hdf4_unreadable(res, mnt, name, s["status"])
            continue
        compare_array(res, mnt, xdir, name, s["data"], s["shape"], H4_DTYPES[nt])
    res.check(files == want, "SDS files: extra %s, missing %s" % (sorted(files - want)[:5], sorted(want - files)[:5]))


def hdf4_h4name(res, mnt, name, raw):
    """An SDS served under another name than its own has its own name's
    bytes in user.h4name; one served under its own has no user.h4name."""
    try:
        got = os.getxattr(os.path.join(mnt, name), "user.h4name")
    except OSError as e:
        got = None if e.errno == errno.ENODATA else "error %s" % e
    want = None if os.fsencode(name) == raw else raw
    res.check(got == want, "%s: user.h4name %r, libhdf4's name %r" % (name, got, raw))


def hdf4_unreadable(res, mnt, name, status):
    """SDreaddata fails on it (or leaves bytes unwritten): the mount must
    give EIO, never bytes the library did not give."""
    try:
        read_file(os.path.join(mnt, name))
        res.check(False, "%s: SDreaddata %s, the mount served data" % (name, status))
    except OSError as e:
        res.check(e.errno == errno.EIO, "%s: SDreaddata %s, mount gives %s (want EIO)" % (name, status, e))


# ---------------------------------------------------------------- SION


def sion_expected(log):
    """[(task, global rank, bytes, blocks)] of a recorded `siondump -a -l` output."""
    import re
    out = []
    pat = re.compile(r"^Task\s+(\d+):\s+size=\s*(\d+)\s+B\s+glblrnk=\s*(\d+)\s+#blks=\s*(\d+)")
    with open(log) as fh:
        for ln in fh:
            mt = pat.match(ln)
            if mt:
                out.append((int(mt.group(1)), int(mt.group(3)), int(mt.group(2)), int(mt.group(4))))
    return out


def run_sion(path, tmp, res):
    log = path[:-len(".sion")] + "_stdout.log" if path.endswith(".sion") else path + "_stdout.log"
    if not os.path.isfile(log):
        res.check(False, "no recorded siondump output %s" % os.path.basename(log))
        return
    tasks = sion_expected(log)
    res.check(len(tasks) > 0, "%s: no Task lines" % os.path.basename(log))
    m = mount_unless_refused(path, tmp, res, "SIONlib", False)
    if m is None:
        return
    try:
        xdir = extract(path, tmp, res)
        want = {"rank-%06d" % rank: size for _, rank, size, _ in tasks}
        got = {n for n in os.listdir(m.mnt) if n != ".info"}
        res.check(got == set(want), "ranks: mount has %s, siondump %s" % (sorted(got)[:6], sorted(want)[:6]))
        for n, size in sorted(want.items()):
            full = os.path.join(m.mnt, n)
            if not os.path.isfile(full):
                continue
            data = read_file(full)
            res.check(len(data) == size == os.stat(full).st_size,
                      "%s: %d bytes, siondump says %d" % (n, len(data), size))
            if xdir is not None:
                xp = os.path.join(xdir, n)
                res.check(os.path.isfile(xp) and read_file(xp) == data, "%s: hpcdump extract differs" % n)
        info = read_file(os.path.join(m.mnt, ".info")).decode(errors="replace")
        lines = info.splitlines()
        res.check("ntasks: %d" % len(tasks) in lines, ".info: ntasks: %d" % len(tasks))
        rows = {ln.split("\t")[0]: ln.split("\t") for ln in lines if ln[:1].isdigit() and "\t" in ln}
        for task, rank, size, blocks in tasks:
            row = rows.get(str(task))
            res.check(row is not None and row[4:7] == [str(rank), str(size), str(blocks)],
                      ".info: task %d: global rank %d, %d bytes, %d blocks (got %s)" % (task, rank, size, blocks, row))
    finally:
        m.umount()


# ---------------------------------------------------------------- netCDF-3


def netcdf3_extract(path, tmp, res):
    """hpcdump extract, where the only failures allowed are attributes
    larger than the extract's file system holds as xattrs."""
    out = os.path.join(tmp, "x")
    r = subprocess.run([HPCDUMP] + MOUNT_OPTS + ["extract", path, out], capture_output=True, timeout=FILE_TIMEOUT)
    lines = r.stderr.decode(errors="replace").splitlines()
    full = all("cannot set user.attr." in ln and "No space left on device" in ln for ln in lines)
    res.check(r.returncode == 0 or (lines and full),
              "hpcdump extract: exit %d: %s" % (r.returncode, "; ".join(lines)[:300]))
    return out


def run_netcdf3(path, tmp, res):
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(BUILD, "python"))
    import netcdf3_verify
    ds = netcdf3_verify.library(path)
    m = mount_unless_refused(path, tmp, res, "netCDF4-python", ds is None)
    if m is None:
        return
    try:
        xdir = netcdf3_extract(path, tmp, res)
        netcdf3_verify.verify(res, ds, path, m.mnt, xdir)
    finally:
        ds.close()
        m.umount()


# ---------------------------------------------------------------- driver

RUNNERS = {"hdf5": run_hdf5, "gsd": run_gsd, "hdf4": run_hdf4, "sion": run_sion, "netcdf3": run_netcdf3}


def cpu_seconds():
    """CPU seconds of this process and of its children waited for."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def reap():
    """Wait for the orphans that have exited: a worker is their subreaper
    (worker()), so the daemons' CPU counts in cpu_seconds()."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def child(fmt, path):
    """Check one file; print one JSON object."""
    res = Result()
    cpu = cpu_seconds()
    tmp = tempfile.mkdtemp(prefix="hpcconf.")
    # sanitizer builds: the reports of the daemons land in tmp (the last
    # log_path given wins); ASan reserves terabytes of address space, so
    # there the memory cap is ASan's own instead of RLIMIT_AS
    asan = os.environ.get("ASAN_OPTIONS", "").rstrip(":")
    cap = ":hard_rss_limit_mb=%d" % (MEM_LIMIT >> 20) if SANITIZED else ""
    os.environ["ASAN_OPTIONS"] = "%s:log_path=%s/sanitizer%s" % (asan, tmp, cap)
    os.environ["UBSAN_OPTIONS"] = "%s:log_path=%s/sanitizer:print_stacktrace=1" % (
        os.environ.get("UBSAN_OPTIONS", "").rstrip(":"), tmp)
    try:
        # the real path: external raw data, virtual dataset sources and a
        # SION file's recorded output lie beside the real file
        RUNNERS[fmt](os.path.realpath(path), tmp, res)
    except Exception as e:                      # noqa: BLE001 - any error fails the file
        res.check(False, "%s: %s" % (type(e).__name__, e))
    finally:
        reports = [n for n in os.listdir(tmp) if n.startswith("sanitizer")]
        for n in reports:
            res.check(False, "sanitizer report: " + read_file(os.path.join(tmp, n)).decode(errors="replace")[:400])
        if os.path.ismount(os.path.join(tmp, "mnt")):
            subprocess.run(["fusermount3", "-u", os.path.join(tmp, "mnt")])
        shutil.rmtree(tmp, ignore_errors=True)
        reap()
    return json.dumps(dict(fails=res.fails, notserved=res.notserved, checks=res.checks,
                           cpu=cpu_seconds() - cpu))


def worker():
    """--worker: check the files named on stdin (one JSON [fmt, path] per
    line) one after another in this interpreter, a "result JSON" line each.
    Every file starts from the environment and folder the worker started
    with.  The worker is the subreaper of the daemons it mounts
    (PR_SET_CHILD_SUBREAPER), so that it waits for them and a file's CPU
    includes theirs; a daemon it has not waited for when it exits goes to
    the next subreaper, tests/lib/timed.py."""
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # the ASan runtime preloaded for this interpreter only (worker_env)
    os.environ.pop("LD_PRELOAD", None)
    if "HPC_WORKER_ASAN_OPTIONS" in os.environ:
        os.environ["ASAN_OPTIONS"] = os.environ.pop("HPC_WORKER_ASAN_OPTIONS")
    env = {k: os.environ.get(k) for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS")}
    cwd = os.getcwd()
    for line in sys.stdin:
        fmt, path = json.loads(line)
        for k, v in env.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        os.chdir(cwd)
        sys.stdout.write("result %s\n" % child(fmt, path))
        sys.stdout.flush()


def worker_env():
    """A worker's environment.  In a sanitizer build the Python package's
    libhpcmount (the netCDF-3 checks read through it) needs the ASan
    runtime loaded before the interpreter's own libraries: the worker gets
    it preloaded, and leak reports off for the interpreter; it restores
    both for the programs it starts (worker()), whose leaks still count."""
    env = dict(os.environ)
    if not SANITIZED:
        return env
    lib = subprocess.run([os.environ.get("CC", "gcc"), "-print-file-name=libasan.so"],
                         capture_output=True, text=True).stdout.strip()
    env["LD_PRELOAD"] = lib
    env["HPC_WORKER_ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = "detect_leaks=0:" + env.get("ASAN_OPTIONS", "")
    return env


def limit_memory():
    if SANITIZED:
        return
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


class Worker:
    """A checker process under the memory cap (conformance.py --worker)
    that takes one file after another: the imports of h5py, numpy and gsd,
    which cost more than most files' checks, are paid once per worker.  A
    file that fails, kills or hangs its worker ends it; the next file gets
    a fresh one, and so does every RECYCLE-th file."""
    RECYCLE = 100

    def __init__(self):
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                  preexec_fn=limit_memory, env=worker_env())
        self.buf, self.done = b"", 0
        with LOCK:
            ALL_WORKERS.append(self)

    def close(self):
        if not self.p.stdin.closed:
            try:
                self.p.stdin.close()
            except BrokenPipeError:
                pass
            self.p.wait()
            self.err.close()

    def result(self, fmt, path):
        """The file's JSON result, or (exit status, stderr) when the worker
        died or hung on it."""
        start = os.fstat(self.err.fileno()).st_size
        self.done += 1
        try:
            self.p.stdin.write((json.dumps([fmt, path]) + "\n").encode())
            self.p.stdin.flush()
        except BrokenPipeError:
            pass                                # died before: read its end below
        deadline = time.monotonic() + FILE_TIMEOUT
        while True:
            line, nl, rest = self.buf.partition(b"\n")
            if nl:
                self.buf = rest
                if line.startswith(b"result "):
                    return json.loads(line[7:]), None
                continue
            fd = self.p.stdout.fileno()
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.p.kill()
                self.p.wait()
                return None, "no result within %d s" % FILE_TIMEOUT
            piece = os.read(fd, 65536)
            if not piece:
                self.p.wait()
                self.err.seek(start)
                return None, "checker exit %d: %s" % (
                    self.p.returncode, self.err.read().decode(errors="replace").strip()[-300:])
            self.buf += piece


WORKERS = threading.local()      # each thread's worker
ALL_WORKERS, LOCK = [], threading.Lock()


def run_one(fmt, path):
    """(status, text) of one file, checked by this thread's worker."""
    w = getattr(WORKERS, "w", None)
    if w is None or w.p.poll() is not None:
        w = Worker()
    out, why = w.result(fmt, path)
    WORKERS.w = w if out is not None and not out["fails"] and w.done < Worker.RECYCLE else None
    if WORKERS.w is None:
        w.close()
    if out is None:
        return "FAIL", why, []
    cpu = " (%.1f CPU s)" % out["cpu"]
    if out["fails"]:
        return "FAIL", "%d of %d checks: %s%s" % (len(out["fails"]), out["checks"], out["fails"][0], cpu), \
            out["fails"]
    if out["notserved"]:
        cats = sorted({c for _, c in out["notserved"]})
        return "NOT-SERVED", "; ".join(cats) + cpu, []
    if out["checks"] == 0:
        return "FAIL", "nothing checked" + cpu, []
    return "ok", cpu, []


def main(argv):
    if len(argv) >= 4 and argv[1] == "--child":
        print(child(argv[2], argv[3]))
        return 0
    if len(argv) == 2 and argv[1] == "--worker":
        worker()
        return 0
    jobs, verbose, args, skip = 2, False, [], set()
    i = 1
    while i < len(argv):
        if argv[i] == "-j":
            jobs = int(argv[i + 1])
            i += 1
        elif argv[i] == "--skip":
            skip |= set(argv[i + 1].replace(",", " ").split())
            i += 1
        elif argv[i] == "-v":
            verbose = True
        else:
            args.append(argv[i])
        i += 1
    top = args[0] if args else os.environ.get("HPC_CORPUS", "")
    if not top or not os.path.isdir(top):
        print("SKIP: no corpus (argument or HPC_CORPUS)")
        return 77
    files = [(fmt, p) for fmt, p in corpus_files(top) if fmt not in skip]
    if skip:
        print("not checked here (--skip): %s" % " ".join(sorted(skip)))
    if not files:
        print("SKIP: no HDF5, HDF4, GSD, SION or netCDF-3 file below %s" % top)
        return 77
    counts = {}
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for (fmt, path), (status, text, fails) in zip(files, ex.map(lambda a: run_one(*a), files)):
            rel = os.path.relpath(path, top)
            print("%s %s: %s" % (status, rel, text) if status != "ok" else "ok %s%s" % (rel, text), flush=True)
            if verbose:
                for ln in fails[1:]:
                    print("    " + ln)
            c = counts.setdefault(fmt, {"ok": 0, "FAIL": 0, "NOT-SERVED": 0})
            c[status] += 1
    for w in ALL_WORKERS:
        w.close()
    for fmt in FORMATS:
        if fmt in counts:
            c = counts[fmt]
            print("%s: %d passed, %d failed, %d not served" % (fmt, c["ok"], c["FAIL"], c["NOT-SERVED"]))
    tot = {k: sum(c[k] for c in counts.values()) for k in ("ok", "FAIL", "NOT-SERVED")}
    print("%d passed, %d failed, %d not served" % (tot["ok"], tot["FAIL"], tot["NOT-SERVED"]))
    return 1 if tot["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
