#!/usr/bin/python3
"""refs_verify.py - open `hpcdump refs` output with Debian's fsspec + zarr
and xarray, and compare every array with an oracle.

  refs_verify.py REFS TREE [--gsd FILE] [--h5 FILE] [--hdf4 ORACLE_OUT...]
                 [--min-arrays N] [--no-xarray] [--nc FILE]

TREE is the container's tree as the mount shows it (a mount point, or
`hpcdump extract` of it): every array is compared with the bytes of the
node at its .zattrs "hpcmount_path" (block arrays with their rows; one
reached through an HDF5 external link, which the tree of a file alone
shows as a symlink out of it, with the library's values only).  The
library oracles compare the same arrays with what the format's library
reads: gsd.fl (frames and series), h5py (every dataset), SDreaddata
(tests/gen/hdf4_oracle output, by SDS name); xarray's values equal zarr's.
With --nc, each of the first 32 groups xarray's netcdf4 engine
(libnetcdf) opens of FILE is also compared with
hpcmount.refs_dataset(REFS, group), as
tests/mount/refs_xarray.py compares them, in a child process (Worker: a
library that crashes costs that file only): one line "xarray: CLASS DETAIL",
CLASS identical, covered (equal but for what the references list as not
covered), differ, or skipped (xarray cannot open the file itself).
With --gsd every file of TREE's frames/ and series/ must be an array or a
note (an empty chunk, N = 0, too).
zarr's values are read once per array; an array larger than MAX_COMPARED
is compared on a fixed sample of its chunks (sample(), printed as
"sampled").  Prints "arrays: N, compared with the library: L, not
covered: M" and every note; exit 0 when all compared equal, 1 otherwise.

  refs_verify.py --stores REFS...

reads every key of each REFS through hpcmount.refs_store() (the package's
pread store), and through a pickled copy of it (as a Dask worker gets
it): the bytes must be fsspec's reference filesystem's.

  refs_verify.py --batch LIST

runs the calls listed in LIST in one interpreter (see batch()).

  refs_verify.py --corpus LIST

checks the files listed in LIST (tests/mount/refs_corpus.sh: `hpcdump
refs`, its refusal, `hpcdump extract`, the libraries) in one
interpreter (see corpus()).
"""
import argparse
import contextlib
import json
import os
import resource
import signal
import sys

import fsspec
import numpy
import zarr


MAX_COMPARED = 256 << 20    # larger arrays: a sample of chunks (sample())
SAMPLED = 8
# CPU seconds of the file being checked by phase (phase()), for corpus()'s
# line of each file
PHASES = {}


@contextlib.contextmanager
def phase(name):
    """Adds the CPU seconds of the block (this process's and those of
    the children it waited for) to PHASES[name]."""
    cpu = own_cpu() + children_cpu()
    try:
        yield
    finally:
        PHASES[name] = PHASES.get(name, 0.0) + own_cpu() + children_cpu() - cpu


def native(a):
    a = numpy.asarray(a)
    if a.dtype.byteorder not in ("=", "|"):
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def padding(dt):
    """A field numpy made of unnamed padding: zarr's ["", "|Vn"] (named fN)."""
    return dt.kind == "V" and dt.names is None and dt.subdtype is None


def same(got, want):
    """Equal values: bytes of simple types in native order (NaN payloads
    included), structured types field by field (want's fields, nested and
    in subarrays; padding bytes are no value and differ between h5py, the
    file and the mount)."""
    got, want = numpy.asarray(got), numpy.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.names is not None:
        return got.dtype.names is not None and all(
            n in got.dtype.names and same(got[n], want[n])
            for n in want.dtype.names if not padding(want.dtype.fields[n][0]))
    got, want = native(got), native(want)
    return numpy.ascontiguousarray(got).tobytes() == numpy.ascontiguousarray(want).tobytes()


def open_refs(path):
    fs = fsspec.filesystem("reference", fo=path, remote_protocol="file")
    return zarr.open(fs.get_mapper(""), mode="r")


def arrays_of(root):
    out = []
    if isinstance(root, zarr.Array):
        return [("", root)]
    root.visititems(lambda name, obj: out.append((name, obj))
                    if isinstance(obj, zarr.Array) else None)
    return out


def notes_of(root):
    notes = []
    groups = [("", root)] if isinstance(root, zarr.Group) else []
    if groups:
        root.visititems(lambda name, g: groups.append((name, g))
                        if isinstance(g, zarr.Group) else None)
    for name, g in groups:
        for k, why in g.attrs.get("hpcmount_not_covered", {}).items():
            notes.append((name + "/" + k if name else k, why))
    return notes


def sample(arr):
    """The selections compared of arr: the whole array up to MAX_COMPARED
    bytes; above it a fixed sample of whole chunks (the first, the last
    and up to SAMPLED - 2 evenly spaced between, by position in the chunk
    grid), so that a large array's reference is still checked without
    reading gigabytes."""
    if arr.nbytes <= MAX_COMPARED or arr.ndim == 0:
        return [Ellipsis]
    grid = [-(-s // c) for s, c in zip(arr.shape, arr.chunks)]
    n = int(numpy.prod(grid, dtype=numpy.int64))
    picks = sorted({(i * (n - 1)) // (SAMPLED - 1) for i in range(SAMPLED)})
    sels = []
    for lin in picks:
        pos = numpy.unravel_index(lin, grid)
        sels.append(tuple(slice(p * c, min((p + 1) * c, s))
                          for p, c, s in zip(pos, arr.chunks, arr.shape)))
    return sels


def external(tree, path):
    """Whether path of TREE (a file alone) leads through an HDF5 external
    link, a symlink FILE//OBJECT out of the tree (docs/hdf5.md): the
    references follow it into the other file, the tree has no bytes."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        node = os.path.join(tree, *parts[:i])
        if os.path.islink(node) and "//" in os.readlink(node) and not os.path.exists(node):
            return True
    return False


def tree_value(tree, arr, sel):
    """The node's bytes in TREE as arr's dtype and shape (a block: its
    rows), at sel: only the rows sel spans are read; None through an
    external link (then the library's values are the oracle)."""
    path = arr.attrs["hpcmount_path"]
    if external(tree, path):
        return None
    first, block = 0, "hpcmount_block_of" in arr.attrs
    if block:
        path = os.path.join(os.path.dirname(path), arr.attrs["hpcmount_block_of"])
        first = arr.attrs["hpcmount_first_row"]
    # the tree's bytes are little-endian (structured: every member)
    dt = arr.dtype.newbyteorder("<")
    row = int(numpy.prod(arr.shape[1:], dtype=numpy.int64))
    rows = arr.shape[0] if arr.ndim else 1
    lo = 0
    if sel is not Ellipsis:
        lo, rows = sel[0].start, sel[0].stop - sel[0].start
        sel = (slice(0, rows),) + sel[1:]
    node = os.path.join(tree, path.lstrip("/"))
    if not block and sel is Ellipsis and os.path.getsize(node) != arr.nbytes:
        raise ValueError("%s: %d bytes in the tree, %d in the array" %
                         (path, os.path.getsize(node), arr.nbytes))
    with open(node, "rb") as fh:
        fh.seek((first + lo) * row * dt.itemsize)
        raw = numpy.fromfile(fh, dtype=dt, count=rows * row)
    return raw.reshape((rows,) + tuple(arr.shape[1:]) if arr.ndim else ())[sel]


def gsd_value(f, path, shape):
    """gsd.fl's values for /frames/F/NAME (frame 0's when lent) or /series/NAME[.frames]."""
    parts = path.strip("/").split("/")
    if parts[0] == "frames":
        frame, name = int(parts[1]), "/".join(parts[2:])
        if not f.chunk_exists(frame, name):
            frame = 0
        return f.read_chunk(frame, name).reshape(shape)
    if parts[0] == "series":
        name = "/".join(parts[1:])
        frames_only = name.endswith(".frames")
        name = name[:-len(".frames")] if frames_only else name
        frames = [i for i in range(f.nframes) if f.chunk_exists(i, name)]
        if frames_only:
            return numpy.array(frames, dtype="<u8")
        return numpy.stack([f.read_chunk(i, name) for i in frames]).reshape(shape)
    return None


def hdf4_values(paths):
    """{file name: bytes} from tests/gen/hdf4_oracle outputs (None where
    the status is not ok), each SDS under the name the mount gives it
    (tests/mount/h4names.py)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import h4names
    out = {}
    for p in paths:
        lines = open(p).read().split("\n")
        sdss, data = [], {}
        for i, line in enumerate(lines):
            w = line.split(" ")
            if len(w) != 7 or w[0] not in ("sds", "coord") or w[3] == "-":
                continue
            sdss.append((int(w[1]), b"" if w[2] == "-" else bytes.fromhex(w[2])))
            data[int(w[1])] = bytes.fromhex(lines[i + 1]) if w[6] == "ok" else None
        for index, name in h4names.served_names(sdss).items():
            out[name] = data[index]
    return out


def library_value(args, arr, libs, sel):
    """What the format's library reads for arr at sel, or None when it
    has no value to compare (a block, a name the library does not list,
    a type gsd.fl cannot read)."""
    gsdf, h5f, h4 = libs
    path = arr.attrs["hpcmount_path"]
    if "hpcmount_block_of" in arr.attrs:
        return None
    if gsdf is not None:
        try:
            want = gsd_value(gsdf, path, arr.shape)
        except ValueError:      # a type gsd.fl cannot read (character): the tree's bytes only
            return None
        return None if want is None else want[sel]
    if h5f is not None and path.strip("/") in h5f:
        ds = h5f[path.strip("/")]
        if sel is not Ellipsis:
            return ds[sel[:ds.ndim]]    # an array type's trailing axes: one chunk
        want = ds[()]
        if not isinstance(want, numpy.ndarray) and not numpy.isscalar(want):
            want = numpy.empty(arr.shape, arr.dtype)    # h5py.Empty: a null dataspace
        return numpy.asarray(want)
    if h4 is not None:
        if os.path.isdir(os.path.join(args.tree, path.lstrip("/") + ".pieces")):
            return None         # assembled: the MHF's SDS of that name holds no data
        b = h4.get(os.path.basename(path))
        if b is None:
            return None
        return numpy.frombuffer(b, dtype=native(numpy.empty(0, arr.dtype)).dtype).reshape(arr.shape)[sel]
    return None


def xarray_datasets(refs, root):
    """{group: xarray Dataset} for every group holding arrays."""
    import xarray
    groups = [""]
    if isinstance(root, zarr.Group):
        root.visititems(lambda name, g: groups.append(name) if isinstance(g, zarr.Group) else None)
    out = {}
    for g in groups:
        grp = root[g] if g else root
        if not list(grp.array_keys()):
            continue
        # undecoded, xarray cannot hold an array of more than one axis
        # named as one of its axes (netCDF char arrays such as AMBER's
        # cell_angular(cell_angular, label), which decoding makes 1-D
        # strings): those are left to zarr's comparison
        clash = [k for k, a in grp.arrays()
                 if a.ndim > 1 and k in a.attrs.get("_ARRAY_DIMENSIONS", [])]
        for k in clash:
            print("  xarray without decoding cannot hold %s (its own name is one of its axes)" % k)
        out[g] = xarray.open_dataset("reference://", engine="zarr", group=g or None, decode_cf=False,
                                     drop_variables=clash,
                                     backend_kwargs={"consolidated": False,
                                                     "storage_options": {"fo": refs,
                                                                         "remote_protocol": "file"}})
    return out


def xarray_value(dsets, name, arr, sel):
    """xarray's values of the array NAME at sel, or None (not in a
    dataset; a structured dtype with big-endian members, which xarray
    2023.01 cannot decode: it casts non-native arrays to a native dtype of
    the same kind, which fails for structured ones; zarr and Dask read
    them, docs/refs.md)."""
    g, _, v = name.rpartition("/")
    ds = dsets.get(g)
    if ds is None or v not in ds.variables:
        return None
    if arr.dtype.names is not None and not arr.dtype.isnative:
        print("  xarray cannot decode (structured, big-endian members): %s" % name)
        return None
    return ds[v][sel].values


def object_check(args, arr, got, libs):
    """An object array (VLenUTF8/VLenBytes of variable-length strings or
    object references' target paths): the tree serves each element ended
    with a newline, or with NUL where its user.h5eol says so; h5py reads
    the strings as bytes, a reference as the object whose name it is
    (null: falsy).  Returns (failures, compared)."""
    path = arr.attrs["hpcmount_path"]
    vals = [v.encode() if isinstance(v, str) else bytes(v) for v in got.ravel()]
    bad = 0
    if not external(args.tree, path):       # else h5py's, below
        node = os.path.join(args.tree, path.lstrip("/"))
        eol = b"\0" if "user.h5eol" in os.listxattr(node) else b"\n"
        with open(node, "rb") as fh:
            if fh.read() != b"".join(v + eol for v in vals):
                print("FAIL: %s differs from the tree's text" % path)
                bad += 1
    h5f = libs[1]
    if h5f is None or path.strip("/") not in h5f:
        return bad, 0
    ds = h5f[path.strip("/")]
    want = ds[()]
    want = [] if ds.shape is None else numpy.asarray(want, dtype=object).ravel()   # h5py.Empty
    if is_ref(ds.dtype):
        want = [ref_name(h5f, r).encode() if r else b"" for r in want]
    else:
        want = [w.encode() if isinstance(w, str) else bytes(w) for w in want]
    if list(want) != vals:
        print("FAIL: %s differs from the library's values" % path)
        bad += 1
    return bad, 1


def ref_name(h5f, r):
    """A reference's text (docs/hdf5.md): the target's path, or "@" and
    its address where no path names it (h5py's name is None)."""
    import h5py
    return h5f[r].name or "@%d" % h5py.h5o.get_info(h5f[r].id).addr


def is_ref(dtype):
    import h5py
    return h5py.check_dtype(ref=dtype) is not None


def check_array(args, name, arr, libs, dsets):
    """Compare arr (its sample) through zarr with the tree, the library and
    xarray; reads zarr's values once.  Returns (failures, compared with
    the library)."""
    bad = lib = 0
    if arr.dtype == object:
        return object_check(args, arr, arr[...], libs)
    sels = sample(arr)
    if sels[0] is not Ellipsis:
        print("  sampled (%d of its chunks; larger than %d MiB): %s" %
              (len(sels), MAX_COMPARED >> 20, name))
    for sel in sels:
        got = arr[sel]
        tv = tree_value(args.tree, arr, sel)
        want = library_value(args, arr, libs, sel)
        if tv is None and want is None:
            print("FAIL: %s: through an external link, and no library to compare with" % name)
            bad += 1
        if tv is not None and not same(got, tv):
            print("FAIL: %s differs from the tree's bytes" % name)
            bad += 1
        if want is not None:
            lib = 1
            if not same(got, want):
                print("FAIL: %s differs from the library's values" % arr.attrs["hpcmount_path"])
                bad += 1
        with phase("xarray"):
            xv = xarray_value(dsets, name, arr, sel) if dsets is not None else None
        if xv is not None and not same(xv, got):
            print("FAIL: xarray %s differs from zarr's" % name)
            bad += 1
    return bad, lib


def parse(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("refs")
    ap.add_argument("tree")
    ap.add_argument("--gsd")
    ap.add_argument("--h5")
    ap.add_argument("--hdf4", nargs="*")
    ap.add_argument("--min-arrays", type=int, default=1)
    ap.add_argument("--no-xarray", action="store_true")
    ap.add_argument("--nc")
    return ap.parse_args(argv)


def store_differs(path):
    """Keys whose bytes hpcmount.refs_store() gives otherwise than
    fsspec's reference filesystem (the oracle), a pickled store's too."""
    import pickle
    import hpcmount
    want = fsspec.filesystem("reference", fo=path, remote_protocol="file").get_mapper("")
    store = hpcmount.refs_store(path)
    again = pickle.loads(pickle.dumps(store))
    keys = sorted(json.load(open(path))["refs"])
    bad = [k for k in keys if not store[k] == again[k] == want[k]]
    if sorted(store) != keys or sorted(want) != keys:
        bad.append("(the key sets differ)")
    return len(keys), bad


def open_libs(args):
    gsdf = h5f = h4 = None
    if args.gsd:
        import gsd.fl
        gsdf = gsd.fl.open(args.gsd, "rb")
    if args.h5:
        import h5py
        h5f = h5py.File(args.h5, "r")
    if args.hdf4:
        h4 = hdf4_values(args.hdf4)
    return gsdf, h5f, h4


def uncovered_gsd(tree, arrays, notes):
    """Files of a GSD tree (frames/, series/; links followed) that are
    neither an array of the references nor a note: every chunk gsd.fl
    reads is an array, an empty one (N = 0) too."""
    have = {arr.attrs["hpcmount_path"].strip("/") for _, arr in arrays}
    have |= {n for n, _ in notes}
    out = []
    for top in ("frames", "series"):
        for d, _, files in os.walk(os.path.join(tree, top)):
            for fn in files:
                rel = os.path.relpath(os.path.join(d, fn), tree)
                if os.path.isfile(os.path.join(d, fn)) and rel not in have:
                    out.append(rel)
    return sorted(out)


def verify(args):
    json.load(open(args.refs))          # valid JSON, whole
    root = open_refs(args.refs)
    arrays = arrays_of(root)
    libs = open_libs(args)
    with phase("xarray"):
        dsets = None if args.no_xarray else xarray_datasets(args.refs, root)
    bad = compared = 0
    try:
        for name, arr in arrays:
            b, c = check_array(args, name, arr, libs, dsets)
            bad += b
            compared += c
    finally:
        for f in list(libs[:2]) + list((dsets or {}).values()):
            if f is not None:
                f.close()
    notes = notes_of(root)
    print("arrays: %d, compared with the library: %d, not covered: %d" %
          (len(arrays), compared, len(notes)))
    for n, why in notes:
        print("  not covered: %s: %s" % (n, why))
    if args.gsd:
        missing = uncovered_gsd(args.tree, arrays, notes)
        for m in missing[:10]:
            print("FAIL: %s is neither an array nor a note" % m)
        bad += len(missing)
    if args.nc:
        print("xarray: %s" % " ".join(netcdf_class(args.refs, args.nc)))

    if len(arrays) < args.min_arrays:
        print("FAIL: only %d arrays" % len(arrays))
        bad += 1
    return 1 if bad else 0


MAX_GROUPS = 32     # groups compared per file (each opens the file again)
# CPU seconds of one step of the worker (a file's root, its groups, one
# group): libnetcdf loops on files whose groups contain themselves (hard
# or external links) until the limit, so every such file costs it; the
# largest step seen that ends (h5diff_hyper1.h5's root, a 1 GiB dataset
# of fill values) takes about 4, mostly the kernel zeroing pages, so 8
# leaves it twice that (docs/PERFORMANCE.md, "The test suite")
CPU_LIMIT = 8
# CPU seconds of libnetcdf's open of a file's root (the step "oracle"
# before its values are loaded): that is where it loops, so such a file
# costs this, not CPU_LIMIT; the largest open of the corpus takes 0.6
# (bitshuffle_datasets.hdf5), so 3 (2 at least, the limit being whole
# seconds) leaves it over three times that
OPEN_LIMIT = 3


class Worker:
    """xarray on the file (libnetcdf) in child processes: libnetcdf
    crashes on some files and groups, corrupts its heap on others (a
    later call dies) and loops on some (groups that contain themselves),
    which then cost that file or group only.  The worker, forked once per
    batch, imports xarray and netCDF4 once and forks a server, which
    answers requests (a file: its root and its groups) until a file's
    answer is not a clean one (netcdf_results()): that file is asked
    again of a new server, and the next file too, so that what one file
    does to libnetcdf's memory stays with that file.  A child per group,
    each importing netCDF4 again, cost more than most files' comparison;
    a child per file, forked and torn down, still about 0.2 CPU s.  The
    server says which step it is at before each ("step", ...); each step
    may use CPU_LIMIT seconds of CPU, however long that takes (no
    wall-clock limit decides a result)."""

    def __init__(self):
        self.pid = None
        self.fresh = False      # the next request to a new server
        self.cpu = 0.0          # CPU seconds of the servers, as they said ("cpu")

    def start(self):
        self.pid, self.req, self.res = fork(serve)

    def stop(self):
        """Closes the worker's requests and waits for it; its wait status."""
        self.req.close()
        self.res.close()
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return status

    def ask(self, *request, fresh=True):
        """The answers to request (of a new server when fresh), each a
        list; the last is ["crash", "status N"] when the server died (N:
        its wait status)."""
        if self.pid is None:
            self.start()
        out = []
        try:
            self.req.write(json.dumps([fresh or self.fresh, request]) + "\n")
            self.req.flush()
            self.fresh = False
            for line in self.res:
                ev = json.loads(line)
                if ev == ["done"]:
                    return out
                if ev[0] == "cpu":
                    self.cpu += ev[1]
                else:
                    out.append(ev)
        except BrokenPipeError:
            pass
        return out + [["crash", "worker: status %d" % self.stop()]]


WORKER = Worker()


def fork(loop, close=()):
    """(pid, requests, answers) of a child running loop(requests, answers)
    on pipes, without the files close; it exits 0 when loop returns, 1
    when it raises."""
    req_r, req_w = os.pipe()
    res_r, res_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in [req_w, res_r] + [f.fileno() for f in close]:
            os.close(fd)
        rc = 1
        try:
            loop(os.fdopen(req_r), os.fdopen(res_w, "w"))
            rc = 0
        except BaseException:     # noqa: BLE001 - said, and the exit status says it
            import traceback
            traceback.print_exc()
        finally:
            os._exit(rc)
    os.close(req_r)
    os.close(res_w)
    return pid, os.fdopen(req_w, "w"), os.fdopen(res_r)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def serve(req, res):
    """The worker's loop: one request a line, [fresh, request], passed to
    the server (a new one when fresh) and its answers to res, then
    ["crash", "status N"] if the server died (after ["cpu", S], the CPU
    seconds it spent that it did not say), and ["done"]."""
    import xarray
    import hpcmount         # noqa: F401 - imported once, for every server
    import netCDF4          # noqa: F401
    import refs_xarray      # noqa: F401
    import gc
    sys.stdout = open(os.devnull, "w")      # not the parent's output file
    xarray.backends.list_engines()          # cached: read once, not per server
    # objects a server's collections would touch, copying the pages
    # they share with the worker: left alone
    gc.freeze()
    server = None
    for line in req:
        fresh, request = json.loads(line)
        if server is not None and fresh:
            end(server)
            server = None
        if server is None:
            server = fork(answers, (req, res))    # the worker's pipes: its own
            said = 0.0
        try:
            server[1].write(json.dumps(request) + "\n")
            server[1].flush()
            for ans in server[2]:
                ev = json.loads(ans)
                if ev == ["done"]:
                    break
                said += ev[1] if ev[0] == "cpu" else 0
                res.write(ans)
            else:
                raise BrokenPipeError
        except BrokenPipeError:
            before = children_cpu()
            status = end(server)
            res.write(json.dumps(["cpu", max(0.0, children_cpu() - before - said)]) + "\n")
            res.write(json.dumps(["crash", "status %d" % status]) + "\n")
            server = None
        res.write(json.dumps(["done"]) + "\n")
        res.flush()


def end(server):
    """Closes the server's requests and waits for it; its wait status."""
    pid, req, res = server
    for f in (req, res):
        try:
            f.close()
        except BrokenPipeError:
            pass
    return os.waitpid(pid, 0)[1]


def answers(req, res):
    """The server's loop: one request a line, its answers, ["cpu", S]
    (the CPU seconds the answer cost), ["done"]."""
    def emit(*ev):
        res.write(json.dumps(ev) + "\n")
        res.flush()
    for line in req:
        cpu = own_cpu()
        answer(json.loads(line), emit)
        emit("cpu", own_cpu() - cpu)
        emit("done")


def own_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def answer(request, emit):
    """In the worker's child: one request answered."""
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]

    def step(*ev, secs=CPU_LIMIT):
        used = resource.getrusage(resource.RUSAGE_SELF)
        limit = int(used.ru_utime + used.ru_stime) + secs
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
        emit("step", *ev)
    kind, *args = request
    if kind == "opens":
        step("opens")
        emit("opens", opens(*args))
    else:
        compare_file(kind == "file", *args, step=step, emit=emit)


def opens(path, group):
    """Whether xarray on the file opens group itself."""
    import xarray as xr
    try:
        xr.open_dataset(path, engine="netcdf4", group=group).load()
        return True
    except Exception:   # noqa: BLE001
        return False


def compare_file(whole, refs, path, groups=None, first=0, step=None, emit=None):
    """In the worker: whole, the file's root opened by xarray (refs_xarray's
    oracle(), else "skipped") and its groups listed ("groups"); then
    groups[first:MAX_GROUPS] compared one by one ("group", index, None
    when xarray cannot open it itself, else the differences)."""
    import hpcmount
    import refs_xarray as rx
    root = None
    if whole:
        # the open at most OPEN_LIMIT, the loading of its values CPU_LIMIT
        step("oracle", secs=OPEN_LIMIT)
        root, why = rx.oracle(path, lambda: step("oracle"))
        if why:
            return emit("skipped", why)
        step("groups")
        try:
            groups = rx.groups_of(path)
        except Exception as e:      # noqa: BLE001
            return emit("nogroups", repr(e)[:200])
        emit("groups", groups)
    r = None
    for i in range(first, min(len(groups), MAX_GROUPS)):
        step("group", i)
        r = r or json.load(open(refs))
        try:
            res = rx.compare_group(path, groups[i], lambda g: hpcmount.refs_dataset(r, g),
                                   root if groups[i] == "/" else None)
        except Exception:   # noqa: BLE001 - xarray cannot open the group itself
            res = None
        emit("group", i, res)


def netcdf_results(refs, path):
    """The worker's verdict on the file: ("skipped", why), or the groups
    and {index: None (xarray cannot open the group itself) or its
    differences}.  An answer that is not clean() is taken again from a
    new server.  A group the server died on is asked once more of a new
    one: does xarray on the file open it at all?  If not, it is one
    xarray cannot open; else the crash is a difference; a new server
    goes on with the groups after it."""
    groups, res = None, {}
    ev, at = WORKER.ask("file", refs, path, fresh=False), ["step", "oracle"]
    if not clean(ev) and not spent(ev):
        ev = WORKER.ask("file", refs, path)
    WORKER.fresh = not clean(ev)
    while True:
        for e in ev:
            if e[0] == "skipped":
                return "skipped", e[1]
            if e[0] == "nogroups":
                return "skipped", "netCDF4 cannot list its groups: crash " + e[1]
            if e[0] == "groups":
                groups = e[1]
            if e[0] == "group":
                res[e[1]] = e[2]
        if not ev or ev[-1][0] != "crash":
            return groups, res
        at = ([at] + [e for e in ev if e[0] == "step"])[-1]
        if at == ["step", "oracle"]:
            return "skipped", " ".join(ev[-1])
        if at == ["step", "groups"]:
            return "skipped", "netCDF4 cannot list its groups: " + " ".join(ev[-1])
        i = at[2]
        alive = WORKER.ask("opens", path, groups[i]) == [["step", "opens"], ["opens", True]]
        res[i] = ["crash", ev[-1][1]] if alive else None
        if i + 1 >= min(len(groups), MAX_GROUPS):
            return groups, res
        ev, at = WORKER.ask("groups", refs, path, groups, i + 1), ["step", "group", i + 1]


def spent(answers):
    """Whether the server died of its CPU limit (libnetcdf looping on a
    group that contains itself): the file's own doing, which a new
    server would only repeat for another CPU_LIMIT seconds."""
    why = answers[-1][1] if answers and answers[-1][0] == "crash" else ""
    if not why.startswith("status "):
        return False
    status = int(why.split()[1])
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL)


def clean(answers):
    """Whether the server's answers show nothing of libnetcdf going wrong:
    no crash, no file or group xarray could not open, no difference
    (but what the references do not cover)."""
    return all(e[0] not in ("crash", "skipped", "nogroups") and
               (e[0] != "group" or e[2] is not None and
                all(x.startswith("uncovered:") for x in e[2]))
               for e in answers)


def netcdf_class(refs, path):
    """(class, detail) of xarray through the references against xarray
    on the file (refs_xarray.py), in netCDF's first MAX_GROUPS groups; the
    first difference is the detail.  A file xarray cannot open itself
    (libnetcdf itself crashes on some) is skipped, a group it cannot open
    named in the detail (netcdf_results())."""
    groups, res = netcdf_results(refs, path)
    if groups == "skipped":
        return groups, res
    d, skipped = [], []
    for i, g in enumerate(groups[:MAX_GROUPS]):
        r = res.get(i)
        if r is None:
            skipped.append(g)
        else:
            crash = r[:1] == ["crash"] and len(r) == 2
            d += ["%s: %s" % (g, x) for x in (["crash: " + r[1]] if crash else r)]
    real = [x for x in d if ": uncovered:" not in x]
    note = " (groups xarray cannot open itself: %s)" % " ".join(skipped) if skipped else ""
    if len(groups) > MAX_GROUPS:
        note += " (the first %d of %d groups)" % (MAX_GROUPS, len(groups))
    if real:
        return "differ", real[0][:300] + note
    return ("covered", d[0][:300] + note) if d else ("identical", note.strip())


def batch(listfile):
    """One call per line of listfile: OUTFILE, a tab, the arguments of
    one call (shell words), optionally a tab and anything (ignored).  Each
    call's output goes to OUTFILE, ended by "status: N"; one interpreter
    for many files (the imports of zarr, xarray and h5py cost more than
    most files' checks)."""
    import contextlib
    import shlex
    import traceback
    lines = open(listfile).readlines()
    if any("--nc" in line for line in lines):
        WORKER.start()      # before this process holds any file's data
    for line in lines:
        out, argv = line.rstrip("\n").split("\t")[:2]
        with open(out, "w") as fh, contextlib.redirect_stdout(fh):
            try:
                rc = verify(parse(shlex.split(argv)))
            except Exception:          # one file's failure, not the batch's
                traceback.print_exc(file=fh)
                print("FAIL: exception")
                rc = 1
            print("status: %d" % rc, flush=True)
    if WORKER.pid is not None:
        WORKER.stop()
    return 0


def corpus_file(work, path, libargs):
    """One file of refs_corpus.sh, its verdict into WORK/v: `hpcdump refs`
    into WORK/r.json; a refusal must be exit 1, one line on stderr and
    nothing on stdout ("refused: LINE"); else the tree (`hpcdump extract`
    into WORK/x, only for the arrays of the references and a GSD file's
    walk: references without an array, such as tbigdims.h5's 4 GiB of fill
    value, need none) and the libraries (--hdf4-oracle PROG: PROG's output
    of the file, if PROG reads it) against the references (verify()).
    The tree is removed after."""
    import contextlib
    import shlex
    import shutil
    import subprocess
    import traceback
    hpcdump = os.environ["HPCDUMP"]
    refs, tree = os.path.join(work, "r.json"), os.path.join(work, "x")
    os.makedirs(tree, exist_ok=True)
    with open(refs, "wb") as out, phase("refs"):
        r = subprocess.run([hpcdump, "refs", path], stdout=out, stderr=subprocess.PIPE)
    with open(os.path.join(work, "v"), "w") as fh, contextlib.redirect_stdout(fh):
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace").splitlines()
            print("refused: %s" % " ".join(err))
            ok = r.returncode == 1 and len(err) == 1 and os.path.getsize(refs) == 0
            if not ok:
                print("FAIL: refused without exit 1, one line and nothing on stdout (rc %d)" % r.returncode)
            print("status: %d" % (not ok), flush=True)
            return
        argv = shlex.split(libargs)
        if "--hdf4-oracle" in argv:
            i = argv.index("--hdf4-oracle")
            prog, argv = argv[i + 1], argv[:i] + argv[i + 2:]
            o = os.path.join(work, "o")
            with open(o, "wb") as out, phase("extract"):
                if subprocess.run([prog, path], stdout=out, stderr=subprocess.DEVNULL).returncode == 0:
                    argv += ["--hdf4", o]
        try:
            with open(refs, "rb") as jf:
                arrays = b'.zarray": ' in jf.read()
            if "--gsd" in argv or arrays:
                with phase("extract"):
                    subprocess.run([hpcdump, "extract", path, tree],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            rc = verify(parse([refs, tree] + argv + ["--min-arrays", "0"]))
        except Exception:          # one file's failure, not the others'
            traceback.print_exc(file=fh)
            print("FAIL: exception")
            rc = 1
        print("status: %d" % rc, flush=True)
    shutil.rmtree(tree, ignore_errors=True)


def cost_line(total):
    """What the file cost: this process, the programs it ran (hpcdump,
    the HDF4 oracle, their helpers) and xarray on the file, by phase:
    `hpcdump refs`; `hpcdump extract` and the HDF4 oracle; xarray through
    the references (opens and reads); xarray on the file against the
    references (the worker); the rest (zarr's reads, the tree's bytes,
    the libraries)."""
    p = dict(PHASES, worker=WORKER.cpu)
    rest = total - sum(p.values())
    return ("  %.1f CPU s (hpcdump refs %.1f, extract %.1f, zarr and the libraries %.1f, "
            "xarray on the references %.1f, xarray on the file %.1f)"
            % (total, p.get("refs", 0.0), p.get("extract", 0.0), rest, p.get("xarray", 0.0),
               p["worker"]))


def corpus(listfile):
    """The files of refs_corpus.sh, one a line of listfile: WORK (a
    directory), a tab, the file, a tab, the library options (shell words;
    --hdf4-oracle PROG: see corpus_file()), each checked by corpus_file()
    in this one interpreter: its start, the imports of zarr, xarray and
    h5py and the xarray worker's (forked once, with xarray imported) are
    paid once for all files, and no shell starts a process per file.
    After each file a line of the CPU seconds it cost, so that the test's
    log shows where its time goes."""
    lines = open(listfile).readlines()
    if any("--nc" in line for line in lines):
        import xarray           # noqa: F401 - the worker inherits it
        WORKER.start()          # before this process holds any file's data
    for n, line in enumerate(lines, 1):
        work, path, libargs = line.rstrip("\n").split("\t")
        print("[%d] %s" % (n, path), flush=True)
        cpu, WORKER.cpu = own_cpu() + children_cpu(), 0.0
        PHASES.clear()
        corpus_file(work, path, libargs)
        print(cost_line(own_cpu() + children_cpu() - cpu + WORKER.cpu), flush=True)
    if WORKER.pid is not None:
        WORKER.stop()
    return 0


def stores(paths):
    bad = keys = 0
    for p in paths:
        n, differ = store_differs(p)
        keys += n
        bad += len(differ)
        for k in differ[:10]:
            print("FAIL: %s: refs_store()[%r] is not fsspec's bytes" % (p, k))
    print("refs_store: %d files, %d keys, %d differ from fsspec's" % (len(paths), keys, bad))
    return 1 if bad or not keys else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--batch":
        return batch(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "--corpus":
        return corpus(sys.argv[2])
    if len(sys.argv) > 2 and sys.argv[1] == "--stores":
        return stores(sys.argv[2:])
    return verify(parse(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
