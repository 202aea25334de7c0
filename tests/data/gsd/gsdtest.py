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
  hoomd ROOT FILE.gsd        frames as gsd.hoomd reads them: a chunk a frame
                             lacks is a link to frame 0's exactly when
                             gsd.hoomd hands out frame 0's object for it
                             (none in a frame gsd.hoomd cannot read)
  series ROOT FILE.gsd [noxattr]  ROOT/series/<name> equals numpy.stack of
                             the frames' chunks (gsd.fl), .frames the frames;
                             names whose shape changes have no series
  writehoomd FILE            a hoomd-schema file through gsd.hoomd and gsd.fl
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
        shape = n if m == "1" else "%s,%s" % (n, m)     # as gsd.fl shapes the chunk
        print("frames/%06d/%s %s %s %s %s" % (int(frame), name, sha, shape, dtype_of(typ), nbytes))


def manifest_shapes(path):
    """(frame, name) -> shape (gsd.fl's: (N,) when M is 1) of FILE's chunks in MANIFEST.txt."""
    want = os.path.basename(path)
    out = {}
    on = False
    for line in open(os.path.join(os.path.dirname(path), "MANIFEST.txt")).read().splitlines():
        if line.startswith("## "):
            on = line.split()[1] == want
            continue
        w = line.split("\t")
        if on and len(w) == 10 and w[0].isdigit():
            n, m = int(w[5]), int(w[6])
            out[(int(w[1]), w[2])] = (n,) if m == 1 else (n, m)   # as gsd.fl shapes it
    return out


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
                if os.path.islink(os.path.join(dirpath, fn)):
                    continue      # chunks frame 0 lends (hoomd files): see hoomd()
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
            if xattrs:
                shape = os.getxattr(p, "user.shape").decode()
                dtype = os.getxattr(p, "user.dtype").decode()
            else:   # an extracted tree has no xattrs
                shape, dtype = ",".join(str(x) for x in data.shape), data.dtype.str
            ok = got == data.tobytes() and dtype == data.dtype.str
            ok = ok and shape == ",".join(str(x) for x in data.shape)   # gsd.fl's shape
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


HOOMD_GROUPS = ("particles", "bonds", "angles", "dihedrals", "impropers", "constraints", "pairs")
MISSING = object()


def hoomd_value(snap, name):
    """What gsd.hoomd's frame holds for chunk `name`, MISSING if it has no
    field for it."""
    group, _, rest = name.partition("/")
    if group == "log":
        return snap.log.get(rest, MISSING)
    if group == "configuration" and rest in ("step", "dimensions", "box"):
        return getattr(snap.configuration, rest)
    if group in HOOMD_GROUPS:
        container = getattr(snap, group)
        if rest in container._default_value:
            return getattr(container, rest)
    return MISSING


def hoomd(root, path):
    import gsd.hoomd
    bad = links = files = 0
    f = gsd.fl.open(path, "rb")
    traj = gsd.hoomd.open(path, "rb")
    names = f.find_matching_chunk_names("")
    frame0 = traj[0]
    for i in range(f.nframes):
        try:
            snap = traj[i]
        except Exception as e:  # gsd.hoomd fails on this frame: no oracle
            print("frame %d: gsd.hoomd raises %r" % (i, e))
            snap = None
        for n in names:
            p = os.path.join(root, "frames", "%06d" % i, n)
            held = f.chunk_exists(i, n)
            v = MISSING if snap is None else hoomd_value(snap, n)
            lent = (not held and i > 0 and f.chunk_exists(0, n) and v is not MISSING
                    and v is hoomd_value(frame0, n))
            ok = True
            if held:
                ok = os.path.isfile(p) and not os.path.islink(p) and \
                    open(p, "rb").read() == f.read_chunk(i, n).tobytes()
                files += 1
            elif lent:
                want = "../" * (n.count("/") + 1) + "000000/" + n
                ok = os.path.islink(p) and os.readlink(p) == want and \
                    open(p, "rb").read() == f.read_chunk(0, n).tobytes()
                links += 1
            elif snap is not None or i == 0:
                ok = not os.path.lexists(p)
            else:       # gsd.hoomd cannot read the frame: it lends it nothing
                ok = not os.path.islink(p)
            if not ok:
                print("frame %d %s: held %s lent %s; mount: link %s file %s" % (
                    i, n, held, lent, os.path.islink(p), os.path.isfile(p)))
                bad += 1
    print("checked %d files and %d links, %d bad" % (files, links, bad))
    return 1 if bad or files == 0 else 0


def series(root, path, xattrs=True):
    bad = checked = 0
    f = gsd.fl.open(path, "rb")
    for n in f.find_matching_chunk_names(""):
        frames = [i for i in range(f.nframes) if f.chunk_exists(i, n)]
        try:
            chunks = [f.read_chunk(i, n) for i in frames]
        except ValueError:    # a type this gsd.fl cannot read (character, layer 2.1)
            shapes = manifest_shapes(path)    # the GSD 3.4 library wrote them
            chunks = [numpy.fromfile(os.path.join(root, "frames", "%06d" % i, n), dtype="S1")
                      .reshape(shapes[(i, n)]) for i in frames]
        shapes = {(c.dtype.str, c.shape) for c in chunks}
        p = os.path.join(root, "series", n)
        if len(shapes) != 1:
            if os.path.lexists(p) or os.path.lexists(p + ".frames"):
                print("%s: shape changes but a series is shown" % n)
                bad += 1
            continue
        want = numpy.stack(chunks)
        shape, dtype = ",".join(str(x) for x in want.shape), chunks[0].dtype.str
        fshape, fdtype = str(len(frames)), "<u8"
        if xattrs and os.path.isfile(p):
            shape, dtype = os.getxattr(p, "user.shape").decode(), os.getxattr(p, "user.dtype").decode()
            fshape = os.getxattr(p + ".frames", "user.shape").decode()
            fdtype = os.getxattr(p + ".frames", "user.dtype").decode()
        try:
            got = numpy.fromfile(p, dtype=dtype).reshape([int(x) for x in shape.split(",")])
            fr = numpy.fromfile(p + ".frames", dtype=fdtype).reshape(int(fshape))
            ok = (got.shape == want.shape and got.dtype == want.dtype and
                  numpy.array_equal(got.reshape(want.shape), want, equal_nan=want.dtype.kind == "f")
                  and open(p, "rb").read() == want.tobytes() and list(fr) == frames)
        except (OSError, ValueError) as e:
            print("%s: %r" % (n, e))
            ok = False
        if not ok:
            print("%s: series differs from numpy.stack of %d frames" % (n, len(frames)))
            bad += 1
        checked += 1
    print("checked %d series, %d bad" % (checked, bad))
    return 1 if bad or checked == 0 else 0


def writehoomd(path):
    """Frame 0 sets everything; later frames change some fields (gsd.hoomd
    leaves out what equals frame 0), N changes at frame 4; then frames
    written with gsd.fl: an explicit N equal to frame 0's, names gsd.hoomd
    does not know, state chunks."""
    import gsd.hoomd
    import warnings
    warnings.simplefilter("ignore", FutureWarning)  # gsd.hoomd compares arrays of new N
    with gsd.hoomd.open(path, "wb") as t:
        for i in range(6):
            s = gsd.hoomd.Snapshot()
            s.configuration.step = i * 10
            s.configuration.box = [3, 3, 3, 0, 0, 0]
            n = 4 if i < 4 else 5
            s.particles.N = n
            s.particles.types = ["A", "B"]
            s.particles.typeid = [0, 1, 0, 1, 1][:n]
            s.particles.position = numpy.full((n, 3), i, dtype=numpy.float32)
            s.particles.velocity = numpy.full((n, 3), 0.5, dtype=numpy.float32)
            s.particles.mass = [1.0, 2.0, 1.0, 2.0, 3.0][:n] if i % 2 == 0 else [2.0] * n
            s.bonds.N = 2
            s.bonds.types = ["b"]
            s.bonds.group = [[0, 1], [2, 3]]
            s.log["energy"] = numpy.array([1.5])
            if i == 2:
                s.log["energy"] = numpy.array([2.5])
            t.append(s)
    with gsd.fl.open(path, "ab") as f:
        for i in range(6, 9):
            f.write_chunk("configuration/step", numpy.array([i * 10], dtype=numpy.uint64))
            if i == 6:
                f.write_chunk("particles/N", numpy.array([4], dtype=numpy.uint32))
            f.write_chunk("particles/custom", numpy.ones((4, 1), dtype=numpy.float32))
            f.write_chunk("state/hpmc/sphere/radius", numpy.array([0.5], dtype=numpy.float32))
            f.end_frame()


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
    elif cmd == "hoomd":
        sys.exit(hoomd(sys.argv[2], sys.argv[3]))
    elif cmd == "series":
        sys.exit(series(sys.argv[2], sys.argv[3], len(sys.argv) <= 4 or sys.argv[4] != "noxattr"))
    elif cmd == "writehoomd":
        writehoomd(sys.argv[2])
    elif cmd == "frames":
        with gsd.fl.open(sys.argv[2], "rb") as f:
            print(f.nframes)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
