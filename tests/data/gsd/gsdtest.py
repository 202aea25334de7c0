#!/usr/bin/python3
"""gsdtest.py - helpers of the GSD shell tests (Debian's python3-gsd, numpy).

  manifest FILE.gsd          rows "PATH SHA256 SHAPE DTYPE NBYTES" of FILE's
                             section in MANIFEST.txt (written by the real
                             GSD libraries), one per chunk
  verify ROOT FILE.gsd [STEP [noxattr]] compare every STEP-th frame of ROOT/frames (a
                             mount or an extracted tree) with what gsd.fl
                             reads: chunk set per frame, bytes, shape, dtype
  write FILE NFRAMES [SEED]  a layer 2.0 trajectory with varied chunks
  append FILE NFRAMES [PAUSE] append frames (a running simulation)
  frames FILE                number of frames gsd.fl sees
"""
import hashlib
import os
import sys
import time

import gsd.fl
import numpy

CHAR_DTYPE = "|S1"


def dtype_of(name):
    if name.startswith("character"):
        return CHAR_DTYPE
    return numpy.dtype(name.split("(")[0]).str


def manifest(path):
    want = os.path.basename(path)
    text = open(os.path.join(os.path.dirname(path), "MANIFEST.txt")).read()
    on = False
    for line in text.splitlines():
        if line.startswith("## "):
            on = line.split()[1] == want
            continue
        w = line.split("\t")
        if not on or len(w) != 10 or not w[0].isdigit():
            continue
        _, frame, name, _, typ, n, m, _, nbytes, sha = w
        print("frames/%06d/%s %s %s,%s %s %s" % (int(frame), name, sha, n, m, dtype_of(typ), nbytes))


def verify(root, path, step=1, xattrs=True):
    bad = 0
    checked = 0
    f = gsd.fl.open(path, "rb")
    names = f.find_matching_chunk_names("")
    for frame in range(0, f.nframes, step):
        fdir = os.path.join(root, "frames", "%06d" % frame)
        have = set()
        for dirpath, _, files in os.walk(fdir):
            for fn in files:
                have.add(os.path.relpath(os.path.join(dirpath, fn), fdir))
        expect = {n for n in names if f.chunk_exists(frame, n)}
        if have != expect:
            print("frame %d: files %s, gsd.fl has %s" % (frame, sorted(have), sorted(expect)))
            bad += 1
            continue
        for n in sorted(expect):
            data = f.read_chunk(frame, n)
            p = os.path.join(fdir, n)
            got = open(p, "rb").read()
            rows = data.shape[0]
            cols = data.shape[1] if data.ndim > 1 else 1
            if xattrs:
                shape = os.getxattr(p, "user.shape").decode()
                dtype = os.getxattr(p, "user.dtype").decode()
            else:   # an extracted tree has no xattrs
                shape, dtype = "%d,%d" % (rows, cols), data.dtype.str
            ok = got == data.tobytes() and dtype == data.dtype.str
            ok = ok and shape == "%d,%d" % (rows, cols)
            arr = numpy.fromfile(p, dtype=dtype).reshape([int(x) for x in shape.split(",")])
            ok = ok and numpy.array_equal(arr.reshape(data.shape), data)
            if not ok:
                print("frame %d chunk %s differs (shape %s dtype %s)" % (frame, n, shape, dtype))
                bad += 1
            checked += 1
    f.close()
    print("verified %d chunks, %d bad" % (checked, bad))
    return 1 if bad or checked == 0 else 0


def frame_data(frame, rng):
    n = int(rng.integers(0, 6))
    out = {
        "configuration/step": numpy.array([frame * 100], dtype=numpy.uint64),
        "particles/position": rng.random((n, 3), dtype=numpy.float32),
    }
    if frame % 3 == 0:
        out["log/value"] = numpy.array([frame * 0.5])
    if frame % 5 == 1:
        out["particles/typeid"] = rng.integers(0, 4, size=n).astype(numpy.int32)
    if frame >= 7:
        out["deep/a/b/c/d"] = numpy.arange(frame % 4, dtype=numpy.int16)
    return out


def write(path, nframes, seed=1, mode="wb"):
    rng = numpy.random.default_rng(seed)
    with gsd.fl.open(path, mode, application="hpcmount-test", schema="test",
                     schema_version=[1, 0]) as f:
        start = f.nframes
        for frame in range(start, start + nframes):
            for name, data in frame_data(frame, rng).items():
                f.write_chunk(name, data)
            f.end_frame()


def append(path, nframes, pause=0.0):
    rng = numpy.random.default_rng(7)
    with gsd.fl.open(path, "ab") as f:
        start = f.nframes
        for frame in range(start, start + nframes):
            for name, data in frame_data(frame, rng).items():
                f.write_chunk(name, data)
            # names appear later in a simulation: the name list grows and moves
            f.write_chunk("late/name_%03d_%s" % (frame, "x" * 40), numpy.array([frame], dtype=numpy.int64))
            f.end_frame()
            if pause:
                time.sleep(pause)


def main():
    cmd = sys.argv[1]
    if cmd == "manifest":
        manifest(sys.argv[2])
    elif cmd == "verify":
        sys.exit(verify(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1,
                        len(sys.argv) <= 5 or sys.argv[5] != "noxattr"))
    elif cmd == "write":
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    elif cmd == "append":
        append(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else 0.0)
    elif cmd == "frames":
        with gsd.fl.open(sys.argv[2], "rb") as f:
            print(f.nframes)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
