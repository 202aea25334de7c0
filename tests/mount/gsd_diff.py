#!/usr/bin/python3
"""gsd_diff.py - differential test of the GSD reader's fast reads against
gsd.fl (Debian's python3-gsd), used by tests/mount/gsd_diff.sh.

  write FILE NFRAMES SEED   a layer 2.0 trajectory with every chunk type
                            gsd.fl writes (u/int 8-64, float32/64), M = 1
                            and M > 1, empty (N = 0) chunks, shapes fixed
                            over all frames (series) and changing, chunks
                            in some frames only, and a large chunk
  writehoomd FILE NFRAMES SEED  a hoomd-schema trajectory through
                            gsd.hoomd: every per-particle and topology
                            field, changed at random against frame 0
  check ROOT FILE [noxattr] every chunk of every frame of ROOT/frames and
                            every ROOT/series/<name> (a mount or an
                            extracted tree) against gsd.fl's read_chunk;
                            with xattrs also user.shape / user.dtype; on a
                            mount also reads at odd offsets and of odd
                            sizes that cross chunk and frame boundaries
  writehoomdlate FILE NFRAMES SEED  a hoomd-schema trajectory (gsd.hoomd) whose
                            log quantities start after frame 0 and whose
                            particles/N changes, with one frame (gsd.fl)
                            whose configuration/step is empty: gsd.hoomd
                            cannot read the frames that lack a log/ name
                            frame 0 lacks, nor the empty step's frame
  writedup FILE NFRAMES SEED  a layer 2.0 trajectory (gsd.fl) whose frames
                            hold some names two or three times: gsd.fl
                            finds one of those entries, by a binary search
                            over the whole index
  writev1 FILE NFRAMES SEED  a layer 1.0 file (python3-gsd writes only 2.0;
                            written here by the documented layout, read by
                            gsd.fl): names written twice in a frame (gsd.fl
                            finds the last), names over 63 characters (cut
                            to 63), entries of a frame not in id order
  writegap FILE NFRAMES SEED  NFRAMES frames of two chunks, with frames
                            without chunks at the start, in the middle, in
                            a run of 4100 and at the end (which gsd.fl does
                            not count), and a last frame after the run
  hpcdump HPCDUMP FILE N SEED  N chunks and series picked at random, whole,
                            through `hpcdump cat`
  batch LIST                the commands listed in LIST (one a line:
                            OUTFILE, then the command and its arguments,
                            separated by tabs) in this one interpreter,
                            each one's output into its OUTFILE, ended by
                            "status: N" (its exit status): the start and
                            imports of an interpreter cost more CPU than
                            most files' checks
"""
import os
import random
import struct
import sys

import gsd.fl
import numpy

# tests/lib's dump_cat
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import dump_cat  # noqa: E402

TYPES = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
         "float32", "float64"]


def rand_array(rng, dtype, shape):
    dt = numpy.dtype(dtype)
    if dt.kind == "f":
        a = rng.standard_normal(shape).astype(dt)
        if a.size:
            a.flat[0] = numpy.nan if dt.itemsize == 8 else -0.0
        return a
    info = numpy.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def frame_chunks(frame, rng):
    out = {}
    for t in TYPES:
        out["fixed/%s/m1" % t] = rand_array(rng, t, (5,))
        out["fixed/%s/m3" % t] = rand_array(rng, t, (7, 3))
        out["fixed/%s/empty" % t] = rand_array(rng, t, (0, 2))
        out["vary/%s/n" % t] = rand_array(rng, t, (int(rng.integers(0, 9)),))
        if frame % 4 == len(t) % 4:
            out["some/%s/m5" % t] = rand_array(rng, t, (3, 5))
    out["single/u8"] = numpy.array([frame & 0xff], dtype=numpy.uint8)
    out["single/odd"] = rand_array(rng, "uint8", (3, 1))       # M = 1 written as N x 1
    if frame % 7 == 0:
        out["vary/empty_then_not"] = rand_array(rng, "int16", ((frame // 7) % 2 * 3, 3))
    if frame in (1, 2):
        # larger than FUSE's reads (128 KiB) and of an odd size, so that
        # reads cross its pieces, and a series of it crosses frames
        out["big/position"] = rand_array(rng, "float32", (20001, 3))
    return out


def write(path, nframes, seed):
    rng = numpy.random.default_rng(seed)
    with gsd.fl.open(path, "wb", application="hpcmount-diff", schema="diff",
                     schema_version=[1, 0]) as f:
        for frame in range(nframes):
            for name, data in frame_chunks(frame, rng).items():
                f.write_chunk(name, data)
            f.end_frame()


def writehoomd(path, nframes, seed):
    import gsd.hoomd
    import warnings
    warnings.simplefilter("ignore", FutureWarning)
    rng = numpy.random.default_rng(seed)
    n = 6
    with gsd.hoomd.open(path, "wb") as t:
        for i in range(nframes):
            s = gsd.hoomd.Snapshot()
            s.configuration.step = i * 100
            s.configuration.box = [4, 4, 4, 0, 0, 0] if i % 3 else [5, 4, 4, 0.1, 0, 0]
            s.particles.N = n
            s.particles.types = ["A", "B"]
            change = rng.random(12) < 0.5 if i else numpy.ones(12, bool)
            s.particles.typeid = [0, 1] * (n // 2) if not change[0] else rng.integers(0, 2, n)
            s.particles.mass = numpy.ones(n) if not change[1] else rng.random(n) + 1
            s.particles.charge = numpy.zeros(n) if not change[2] else rng.random(n)
            s.particles.diameter = numpy.ones(n) if not change[3] else rng.random(n) + 0.5
            s.particles.body = numpy.full(n, -1) if not change[4] else rng.integers(-1, 3, n)
            s.particles.moment_inertia = numpy.zeros((n, 3)) if not change[5] else rng.random((n, 3))
            s.particles.position = rng.random((n, 3)).astype(numpy.float32)
            s.particles.orientation = numpy.tile([1.0, 0, 0, 0], (n, 1)) if not change[6] \
                else rng.random((n, 4))
            s.particles.velocity = numpy.zeros((n, 3)) if not change[7] else rng.random((n, 3))
            s.particles.angmom = numpy.zeros((n, 4)) if not change[8] else rng.random((n, 4))
            s.particles.image = numpy.zeros((n, 3), int) if not change[9] else rng.integers(-2, 3, (n, 3))
            s.bonds.N = 2
            s.bonds.types = ["b"]
            s.bonds.group = [[0, 1], [2, 3]] if not change[10] else [[1, 2], [3, 4]]
            s.angles.N = 1
            s.angles.types = ["a"]
            s.angles.group = [[0, 1, 2]]
            s.dihedrals.N = 1
            s.dihedrals.types = ["d"]
            s.dihedrals.group = [[0, 1, 2, 3]]
            s.constraints.N = 1
            s.constraints.value = [1.5] if not change[11] else [2.5]
            s.constraints.group = [[0, 5]]
            s.pairs.N = 1
            s.pairs.types = ["p"]
            s.pairs.group = [[2, 5]]
            s.log["energy"] = numpy.array([1.0 if i % 2 else 2.0])
            t.append(s)


def writehoomdlate(path, nframes, seed):
    import gsd.hoomd
    import warnings
    warnings.simplefilter("ignore", FutureWarning)
    rng = numpy.random.default_rng(seed)

    def snap(i):
        s = gsd.hoomd.Snapshot()
        s.configuration.step = 0 if i % 4 == 3 else i * 10     # some frames: frame 0's step
        n = 4 if i % 5 else 6
        s.particles.N = n
        s.particles.types = ["A", "B"]
        s.particles.typeid = numpy.zeros(n, numpy.uint32) if i % 3 else rng.integers(0, 2, n)
        s.particles.position = rng.random((n, 3)).astype(numpy.float32) if i % 2 else \
            numpy.zeros((n, 3), numpy.float32)
        s.log["always"] = numpy.array([float(i % 2)])
        if i >= nframes // 3:
            s.log["late/energy"] = numpy.array([i * 0.5])
        if i >= 2 * nframes // 3:
            s.log["later"] = numpy.array([i], dtype=numpy.int32)
        if i % 6 == 1:
            s.state["hpmc/sphere/radius"] = numpy.array([0.5, 0.5], numpy.float32)
        return s

    half = nframes // 2
    with gsd.hoomd.open(path, "wb") as t:
        for i in range(half):
            t.append(snap(i))
    with gsd.fl.open(path, "ab") as f:      # a frame gsd.hoomd cannot read
        f.write_chunk("configuration/step", numpy.zeros(0, dtype=numpy.uint64))
        f.write_chunk("log/always", numpy.array([7.0]))
        f.end_frame()
    with gsd.hoomd.open(path, "rb+") as t:
        for i in range(half + 1, nframes):
            t.append(snap(i))


def writedup(path, nframes, seed):
    rng = numpy.random.default_rng(seed)
    with gsd.fl.open(path, "wb", application="hpcmount-diff", schema="dup",
                     schema_version=[1, 0]) as f:
        for frame in range(nframes):
            for k in range(int(rng.integers(1, 5))):
                name = "dup/%d" % rng.integers(0, 4)
                f.write_chunk(name, rand_array(rng, TYPES[int(rng.integers(0, 10))],
                                               (int(rng.integers(0, 4)), 1 + k % 2)))
            f.write_chunk("once", numpy.array([frame], dtype=numpy.uint32))
            f.end_frame()


def writegap(path, nframes, seed):
    rng = numpy.random.default_rng(seed)
    with gsd.fl.open(path, "wb", application="hpcmount-diff", schema="gap",
                     schema_version=[1, 0]) as f:
        f.end_frame()
        for frame in range(1, nframes):
            if frame % 97 == 0:
                f.end_frame()
                continue
            f.write_chunk("step", numpy.array([frame], dtype=numpy.uint64))
            f.write_chunk("pos", rand_array(rng, "float32", (3, 3)))
            f.end_frame()
        for _ in range(4100):
            f.end_frame()
        f.write_chunk("after/run", rand_array(rng, "int16", (5,)))
        f.end_frame()
        for _ in range(3):
            f.end_frame()


# layer 1.0 by hand: header, index, 64-byte name slots, data (gsd_layout.h)
V1_TYPES = {numpy.dtype(t).str: i + 1 for i, t in enumerate(TYPES)}


def write_v1(path, frames):
    """frames: per frame, (name, array) in the order written."""
    names = []
    for fr in frames:
        for n, _ in fr:
            n63 = n.encode()[:63]
            if n63 not in names:
                names.append(n63)
    nent = sum(len(fr) for fr in frames)
    alloc, nalloc = max(128, nent), max(128, len(names))
    index, namelist = 256, 256 + 32 * alloc
    data = bytearray()
    start = namelist + 64 * nalloc
    ents = []
    for i, fr in enumerate(frames):
        for n, a in fr:
            a = numpy.ascontiguousarray(a)
            m = a.shape[1] if a.ndim > 1 else 1
            ents.append(struct.pack("<QQqIHBB", i, a.shape[0], start + len(data), m,
                                    names.index(n.encode()[:63]), V1_TYPES[a.dtype.str], 0))
            data += a.tobytes()
    head = struct.pack("<QQQQQII", 0x65DF65DF65DF65DF, index, alloc, namelist, nalloc,
                       1 << 16, 1 << 16)
    head += b"hpcmount-diff".ljust(64, b"\0") + b"v1".ljust(64, b"\0") + bytes(80)
    with open(path, "wb") as fh:
        fh.write(head + b"".join(ents).ljust(32 * alloc, b"\0"))
        fh.write(b"".join(n.ljust(64, b"\0") for n in names).ljust(64 * nalloc, b"\0"))
        fh.write(bytes(data))


def writev1(path, nframes, seed):
    rng = numpy.random.default_rng(seed)
    long_name = "long/" + "n" * 70
    frames = []
    for frame in range(nframes):
        fr = [("z/pos", rand_array(rng, "float32", (4, 3))), ("a", rand_array(rng, "int64", (2,)))]
        fr.append((long_name, numpy.array([frame & 0xff], dtype=numpy.uint8)))
        if frame % 3:
            fr.append(("a", rand_array(rng, TYPES[frame % 10], (frame % 4, 2))))
        if frame % 7 == 2:
            fr.append(("z/pos", rand_array(rng, "float32", (1, 3))))
            fr.append(("a", rand_array(rng, "uint16", (3,))))
        frames.append(fr)
    write_v1(path, frames)


def twice_in_a_frame(path):
    """Ids of names some frame holds more than once (from the index)."""
    with open(path, "rb") as fh:
        data = fh.read()
    index, alloc = struct.unpack_from("<QQ", data, 8)
    seen, twice = set(), set()
    for i in range(alloc):
        frame, _, loc, _, nid = struct.unpack_from("<QQqIH", data, index + 32 * i)
        if loc == 0:
            break
        if (frame, nid) in seen:
            twice.add(nid)
        seen.add((frame, nid))
    return twice


def expected(f):
    """{relative path: (bytes, shape str, dtype str)} of every frame chunk
    and every series gsd.fl's chunks make."""
    out = {}
    names = f.find_matching_chunk_names("")
    twice = {names[i] for i in twice_in_a_frame(f.name) if i < len(names)}
    for n in names:
        frames = [i for i in range(f.nframes) if f.chunk_exists(i, n)]
        chunks = [f.read_chunk(i, n) for i in frames]
        for i, c in zip(frames, chunks):
            out["frames/%06d/%s" % (i, n)] = (c.tobytes(), ",".join(map(str, c.shape)), c.dtype.str)
        if len({(c.dtype.str, c.shape) for c in chunks}) == 1 and n not in twice:
            s = numpy.stack(chunks)
            out["series/" + n] = (s.tobytes(), ",".join(map(str, s.shape)), s.dtype.str)
            fr = numpy.array(frames, dtype="<u8")
            out["series/%s.frames" % n] = (fr.tobytes(), str(len(frames)), "<u8")
        else:
            out["series/" + n] = None      # no series of a changing shape or a repeated name
    return out


def odd_reads(path, want, rng, chunk_bytes):
    """Reads at odd offsets and of odd sizes, many crossing the boundaries
    between the chunks a series is made of."""
    size = len(want)
    spots = [(0, size), (1, max(size - 2, 0)), (size - 1, 5), (size, 3)]
    for k in range(1, min(size // max(chunk_bytes, 1), 40)):
        spots.append((k * chunk_bytes - 1, 3))
        spots.append((k * chunk_bytes - 3, chunk_bytes + 5))
    for _ in range(12):
        off = int(rng.integers(0, size + 1)) | 1
        spots.append((off, int(rng.integers(1, 300000)) | 1))
    fd = os.open(path, os.O_RDONLY)
    try:
        for off, n in spots:
            off = max(off, 0)
            got = os.pread(fd, n, off)
            if got != want[off:off + n]:
                return "read of %d bytes at %d differs" % (n, off)
    finally:
        os.close(fd)
    return None


def check(root, path, xattrs=True):
    f = gsd.fl.open(path, "rb")
    exp = expected(f)
    rng = numpy.random.default_rng(5)
    bad = []
    seen = set()
    for d, _, files in os.walk(os.path.join(root, "frames")):
        for fn in files:
            p = os.path.join(d, fn)
            if not os.path.islink(p):
                seen.add(os.path.relpath(p, root))
    want_frames = {k for k in exp if k.startswith("frames/")}
    if seen != want_frames:
        bad.append("frame files: %d extra, %d missing" % (len(seen - want_frames), len(want_frames - seen)))
    checked = reads = 0
    for rel, w in sorted(exp.items()):
        p = os.path.join(root, rel)
        if w is None:
            if os.path.lexists(p):
                bad.append("%s: a series of a changing shape is shown" % rel)
            continue
        data, shape, dtype = w
        try:
            got = open(p, "rb").read()
        except OSError as e:
            bad.append("%s: %s" % (rel, e))
            continue
        if got != data:
            bad.append("%s: %d bytes differ from gsd.fl's %d" % (rel, len(got), len(data)))
        if xattrs and (os.getxattr(p, "user.shape").decode() != shape or
                       os.getxattr(p, "user.dtype").decode() != dtype):
            bad.append("%s: xattrs %s %s, gsd.fl %s %s" % (rel, os.getxattr(p, "user.shape"),
                                                           os.getxattr(p, "user.dtype"), shape, dtype))
        checked += 1
        if xattrs and rel.startswith("series/") and not rel.endswith(".frames") and data:
            nf = int(shape.split(",")[0])
            why = odd_reads(p, data, rng, len(data) // nf if nf else 1)
            reads += 1
            if why:
                bad.append("%s: %s" % (rel, why))
        elif xattrs and len(data) > 100000:
            why = odd_reads(p, data, rng, 131072)
            reads += 1
            if why:
                bad.append("%s: %s" % (rel, why))
    nframes = f.nframes
    f.close()
    for b in bad[:10]:
        print(b)
    print("checked %d files (%d with odd reads) of %d frames, %d bad" % (checked, reads, nframes, len(bad)))
    return 1 if bad or checked < 100 else 0


def via_hpcdump(hpcdump, path, n, seed):
    f = gsd.fl.open(path, "rb")
    exp = {k: v for k, v in expected(f).items() if v is not None}
    keys = sorted(exp)
    random.Random(seed).shuffle(keys)
    pick = [k for k in keys if k.startswith("series/")][:n // 2] + keys[:n - n // 2]
    # one `hpcdump cat` of them all (each in turn): gsd.fl's bytes, one
    # after the other
    got, rc, rest, err = dump_cat.cat_each(hpcdump, path, [("/" + k, len(exp[k][0])) for k in pick])
    bad = 0 if rc == 0 else 1
    if bad:
        print("hpcdump cat: exit %d: %s" % (rc, err[:300]))
    for k, g in zip(pick, got):
        if g != exp[k][0]:
            print("hpcdump cat %s: %d bytes differ from gsd.fl's %d" % (k, len(g), len(exp[k][0])))
            bad += 1
    if rest:
        print("hpcdump cat: %d bytes after gsd.fl's" % rest)
        bad += 1
    print("hpcdump cat: %d files, %d bad" % (len(pick), bad))
    return 1 if bad or not pick else 0


def run(argv):
    """The command argv (the arguments after the script's name): its exit
    status."""
    cmd = argv[0]
    writers = {"write": write, "writehoomdlate": writehoomdlate, "writedup": writedup,
               "writegap": writegap, "writev1": writev1, "writehoomd": writehoomd}
    if cmd in writers:
        writers[cmd](argv[1], int(argv[2]), int(argv[3]))
        return 0
    if cmd == "check":
        return check(argv[1], argv[2], len(argv) <= 3 or argv[3] != "noxattr")
    if cmd == "hpcdump":
        return via_hpcdump(argv[1], argv[2], int(argv[3]), int(argv[4]))
    return "unknown command " + cmd


def batch(listfile):
    """Each command listed in listfile, its output into its own file."""
    import contextlib
    import traceback
    for line in open(listfile):
        out, *argv = line.rstrip("\n").split("\t")
        with open(out, "w") as fh, contextlib.redirect_stdout(fh):
            try:
                rc = run(argv)
            except Exception:       # noqa: BLE001 - that command's failure only
                traceback.print_exc(file=fh)
                rc = 1
            if isinstance(rc, str):
                print(rc)
                rc = 1
            print("status: %d" % rc, flush=True)
    return 0


def main():
    if sys.argv[1] == "batch":
        sys.exit(batch(sys.argv[2]))
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
