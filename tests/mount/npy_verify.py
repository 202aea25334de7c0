#!/usr/bin/python3
"""npy_verify.py KIND SOURCE NPYMOUNT RAWMOUNT - check the -o npy view.

KIND hdf5: every dataset h5py reads as an array is NPYMOUNT/PATH.npy and
np.load (plain and mmap_mode='r') returns h5py's ds[()] (values, shape,
field names; bytes as little-endian C order); datasets not shown as .npy
must be ones with no fixed-size numpy form (variable-length, references,
null dataspace).
KIND gsd: every chunk of every frame is frames/FRAME/NAME.npy and np.load
returns gsd.fl's read_chunk (values, dtype, shape).
KIND raw: every file of RAWMOUNT with user.dtype is NAME.npy in NPYMOUNT,
np.load gives exactly the raw bytes with the shape of user.shape.
Every KIND: no raw name of an array is visible in NPYMOUNT.
One line per check: "ok: ..." or "FAIL: ...".
"""
import os
import sys

import numpy as np

fails = 0


def report(ok, what):
    global fails
    print(("ok: " if ok else "FAIL: ") + what)
    fails += 0 if ok else 1


def loads(path):
    """np.load plain and memory-mapped: both must agree."""
    a = np.load(path)
    m = np.load(path, mmap_mode="r")
    same = a.shape == m.shape and a.dtype == m.dtype and a.tobytes() == np.asarray(m).tobytes()
    return a, same


def check_array(path, want, exact_bytes=None):
    if not os.path.exists(path):
        report(False, "%s missing" % path)
        return
    a, same = loads(path)
    report(same, "%s: np.load and mmap agree" % path)
    ok = a.shape == want.shape and a.dtype.names == want.dtype.names
    if exact_bytes is not None:
        ok = ok and a.tobytes() == exact_bytes
    elif want.dtype.names is None:
        ok = ok and a.dtype == want.dtype.newbyteorder("<") and np.array_equal(a, want)
    report(ok, "%s: equals the library's array %s %s" % (path, want.dtype, want.shape))


def hdf5(source, npy, raw):
    import h5py
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import hdf5_verify as hv
    os.chdir(os.path.dirname(os.path.abspath(source)))
    with h5py.File(os.path.basename(source), "r") as f:
        for p, obj, kind, _ in hv.walk(f):
            if kind != "dataset":
                continue
            shown = os.path.exists(npy + p + ".npy")
            if hv.le_dtype(obj) == "O":
                report(not shown, "%s: no fixed-size form, not shown as .npy" % p)
                continue
            if obj.shape is None:             # null dataspace: h5py.Empty
                a = np.load(npy + p + ".npy") if shown else None
                report(a is None or (a.size == 0 and a.dtype == hv.le_dtype(obj)),
                       "%s: null dataspace is no .npy or an empty one" % p)
                continue
            if obj.id.get_type().get_class() == h5py.h5t.OPAQUE:
                continue
            check_array(npy + p + ".npy", np.asarray(obj[()]), hv.expected_bytes(obj))


def gsd(source, npy, raw):
    import gsd.fl
    with gsd.fl.open(source, "rb") as f:
        for frame in range(f.nframes):
            for name in f.find_matching_chunk_names(""):
                if not f.chunk_exists(frame, name):
                    continue
                path = "%s/frames/%06d/%s.npy" % (npy, frame, name)
                try:
                    want = f.read_chunk(frame, name)
                except ValueError:        # character chunks: gsd.fl has no array form
                    rawp = "%s/frames/%06d/%s" % (raw, frame, name)
                    with open(rawp, "rb") as fh:
                        body = fh.read()
                    shape = [int(x) for x in os.getxattr(rawp, "user.shape").decode().split(",")]
                    check_array(path, np.frombuffer(body, "S1").reshape(shape), body)
                    continue
                check_array(path, want)


def raw_files(source, npy, raw):
    for dirpath, _, files in os.walk(raw):
        for name in files:
            p = os.path.join(dirpath, name)
            try:
                shape = os.getxattr(p, "user.shape").decode()
                os.getxattr(p, "user.dtype")
            except OSError:
                continue
            want_shape = tuple(int(x) for x in shape.split(",")) if shape else ()
            rel = os.path.relpath(p, raw)
            a, same = loads(os.path.join(npy, rel + ".npy"))
            with open(p, "rb") as fh:
                body = fh.read()
            report(same and a.shape == want_shape and a.tobytes() == body,
                   "%s.npy: raw bytes with shape %s" % (rel, shape))


def no_raw_names(npy, raw):
    """Arrays are listed as NAME.npy only; the raw name still resolves to
    the same .npy bytes (symlinks written to raw names keep working)."""
    for dirpath, _, files in os.walk(raw):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), raw)
            p = os.path.join(npy, rel)
            if os.path.exists(p + ".npy"):
                listed = name in os.listdir(os.path.dirname(p))
                with open(p, "rb") as a, open(p + ".npy", "rb") as b:
                    same = a.read() == b.read()
                report(not listed and same, "%s listed only as .npy, raw name an alias" % rel)


def links(npy, raw):
    """Every symlink that resolves without the view resolves with it (GSD
    frames lending frame 0's chunks, HDF5 soft links)."""
    for dirpath, dirs, files in os.walk(npy):
        for name in files + dirs:
            p = os.path.join(dirpath, name)
            if os.path.islink(p) and os.path.exists(os.path.join(raw, os.path.relpath(p, npy))):
                ok = os.path.exists(p)
                if ok and os.path.isfile(p):
                    np.load(p)
                report(ok, "%s: link resolves" % os.path.relpath(p, npy))


def main():
    kind, source, npy, raw = sys.argv[1:5]
    npy, raw = os.path.abspath(npy), os.path.abspath(raw)
    {"hdf5": hdf5, "gsd": gsd, "raw": raw_files}[kind](source, npy, raw)
    no_raw_names(npy, raw)
    links(npy, raw)
    return 1 if fails else 0


sys.exit(main())
