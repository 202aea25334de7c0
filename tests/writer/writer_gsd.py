#!/usr/bin/python3
"""tests/writer/writer_gsd.py - what `hpcwrite --format gsd` must have written,
computed independently with numpy, checked through the GSD library
(gsd.fl, gsd.hoomd) and through an hpcmount mount.

RUNS describe the runs that wrote the file, in order: "N0,N1,...xF" is a
run of F frames by ranks holding N0, N1, ... particles; a trailing "a"
marks a run with --append ("10,10x3a").

  writer_gsd.py check FILE RUNS... [--frames K]   gsd.fl and gsd.hoomd
  writer_gsd.py mount MNT RUNS... [--frames K]    chunk files of a mount
  writer_gsd.py verify FILE MNT RUNS... [--frames K]   both
  writer_gsd.py api FILE          the file of writer_gsd_api.c
  writer_gsd.py ref FILE RUNS...                  the same frames written
                                                  by gsd.fl (one process)
K is the number of frames expected in the file (a killed job's file has
fewer than the runs asked for); default: all.
"""
import os
import sys

import numpy as np


def parse_runs(args):
    runs = []
    for a in args:
        append = a.endswith("a")
        counts, frames = a.rstrip("a").split("x")
        runs.append(([int(c) for c in counts.split(",")], int(frames), append))
    return runs


def frame_chunks(total, fr, first, append):
    """The chunks of frame fr: name -> numpy array (2-D: N x M)."""
    i = np.arange(total, dtype=np.uint64)[:, None]
    c = np.arange(3, dtype=np.uint64)[None, :]
    pos = ((3 * i + c + 7 * fr) % (1 << 20)).astype(np.float32)
    out = {
        "configuration/step": np.array([[1000 * fr]], dtype=np.uint64),
        "particles/position": pos,
        "particles/velocity": -pos / np.float32(4),
    }
    if first or append:
        out["particles/N"] = np.array([[total]], dtype=np.uint32)
        out["particles/typeid"] = (np.arange(total) % 4).astype(np.uint32)[:, None]
    if first:
        out["particles/types"] = np.array([[65, 0], [66, 0], [67, 0], [68, 0]], dtype=np.int8)
        out["configuration/box"] = np.array([[100], [100], [100], [0], [0], [0]],
                                            dtype=np.float32)
    return out


def expected(runs):
    """[(frame, total particles, chunks)] of every frame the runs write."""
    frames = []
    for counts, nframes, append in runs:
        total = sum(counts)
        for k in range(nframes):
            fr = len(frames)
            frames.append((fr, total, frame_chunks(total, fr, k == 0, append)))
    return frames


def fail(msg):
    print("writer_gsd.py: " + msg, file=sys.stderr)
    sys.exit(1)


def check_fl(path, frames):
    import gsd.fl
    with gsd.fl.open(path, "rb") as f:
        if f.nframes != len(frames):
            fail("%s: gsd.fl sees %d frames, expected %d" % (path, f.nframes, len(frames)))
        if f.schema != "hoomd" or tuple(f.schema_version) != (1, 4):
            fail("%s: schema %s %s" % (path, f.schema, f.schema_version))
        names = f.find_matching_chunk_names("")
        for fr, _, chunks in frames:
            have = {n for n in names if f.chunk_exists(frame=fr, name=n)}
            if have != set(chunks):
                fail("frame %d: chunks %s, expected %s" % (fr, sorted(have), sorted(chunks)))
            for name, want in chunks.items():
                got = f.read_chunk(frame=fr, name=name)
                if got.dtype != want.dtype or got.shape[0] != want.shape[0] or \
                        not np.array_equal(got.reshape(want.shape), want):
                    fail("frame %d chunk %s: gsd.fl reads %s %s, expected %s %s"
                         % (fr, name, got.dtype, got.shape, want.dtype, want.shape))


def check_hoomd(path, frames):
    import gsd.hoomd
    traj = gsd.hoomd.open(path, "rb")
    if len(traj) != len(frames):
        fail("gsd.hoomd sees %d frames, expected %d" % (len(traj), len(frames)))
    for fr, total, chunks in frames:
        s = traj[fr]
        if s.particles.N != total or s.configuration.step != 1000 * fr:
            fail("hoomd frame %d: N %d step %d" % (fr, s.particles.N, s.configuration.step))
        for key, name in (("position", "particles/position"),
                          ("velocity", "particles/velocity")):
            if not np.array_equal(getattr(s.particles, key), chunks[name]):
                fail("hoomd frame %d: %s differs" % (fr, key))
        if not np.array_equal(s.particles.typeid, np.arange(total) % 4):
            fail("hoomd frame %d: typeid differs" % fr)
        if list(s.particles.types) != ["A", "B", "C", "D"] or \
                list(s.configuration.box) != [100, 100, 100, 0, 0, 0]:
            fail("hoomd frame %d: types %s box %s" % (fr, s.particles.types,
                                                      s.configuration.box))


def check_mount(mnt, frames):
    top = os.path.join(mnt, "frames")
    listed = sorted(os.listdir(top))
    if listed != ["%06d" % fr for fr, _, _ in frames]:
        fail("%s: frames %s, expected %d" % (top, listed[:5], len(frames)))
    for fr, _, chunks in frames:
        for name, want in chunks.items():
            p = os.path.join(top, "%06d" % fr, name)
            with open(p, "rb") as fh:
                got = fh.read()
            if got != want.tobytes():
                fail("%s: %d bytes differ from the expected %d" % (p, len(got), want.nbytes))
            shape = os.getxattr(p, "user.shape").decode().rstrip("\0")
            expect = str(want.shape[0]) if want.shape[1:] in ((), (1,)) else "%d,%d" % want.shape
            if shape != expect:                  # gsd.fl's shape: (N,) when M is 1
                fail("%s: user.shape %s, expected %s" % (p, shape, expect))


def write_ref(path, frames):
    import gsd.fl
    with gsd.fl.open(path, "wb", application="writer_gsd.py", schema="hoomd",
                     schema_version=[1, 4]) as f:
        for _, _, chunks in frames:
            for name, data in chunks.items():
                f.write_chunk(name, data)
            f.end_frame()


def check_api(path):
    """What writer_gsd_api.c writes (see there)."""
    import gsd.fl
    types = {1: np.uint8, 2: np.uint16, 3: np.uint32, 4: np.uint64, 5: np.int8, 6: np.int16,
             7: np.int32, 8: np.int64, 9: np.float32, 10: np.float64}
    longs = ["long/name/number/%02d/padded_to_be_long_xxxxxxxxx" % k for k in range(40)]
    with gsd.fl.open(path, "rb") as f:
        want = [{"type/%d" % t for t in types} | {"empty", "local/r0", "local/r1", "local/r2"},
                set(longs), {"after"}, {"appended"}]
        if f.nframes != 4:
            fail("api: %d frames" % f.nframes)
        names = f.find_matching_chunk_names("")
        for fr in range(4):
            have = {n for n in names if f.chunk_exists(frame=fr, name=n)}
            if have != want[fr]:
                fail("api frame %d: %s" % (fr, sorted(have)))
        for t, dt in types.items():
            got = f.read_chunk(frame=0, name="type/%d" % t)
            if got.dtype != dt or not np.array_equal(got, np.arange(8).reshape(4, 2).astype(dt)):
                fail("api type %d: %s %s" % (t, got.dtype, got.tolist()))
        if f.read_chunk(frame=0, name="empty").size != 0:
            fail("api: empty chunk has data")
        for r in range(3):
            got = f.read_chunk(frame=0, name="local/r%d" % r)
            if got.tolist() != [10 * r + k for k in range(r + 1)]:
                fail("api local/r%d: %s" % (r, got.tolist()))
        for k, n in enumerate(longs):
            if f.read_chunk(frame=1, name=n).tolist() != [100 * k + r for r in range(3)]:
                fail("api %s" % n)
        if f.read_chunk(frame=3, name="appended").tolist() != [0, 1, 2]:
            fail("api appended")
    with open(path, "rb") as fh:
        units = int.from_bytes(fh.read(40)[32:40], "little")
    if units * 64 < 40 * 48:
        fail("api: the name list (%d x 64 bytes) did not grow" % units)


def main():
    args = sys.argv[1:]
    if args[:1] == ["api"]:
        check_api(args[1])
        return
    want = None
    if "--frames" in args:
        k = args.index("--frames")
        want = int(args[k + 1])
        del args[k:k + 2]
    if len(args) < 3:
        fail("usage: writer_gsd.py check|mount|ref PATH RUNS... [--frames K]")
    mnt = None
    if args[0] == "verify":
        mnt = args.pop(2)
    cmd, path, runs = args[0], args[1], parse_runs(args[2:])
    frames = expected(runs)
    if want is not None:
        frames = frames[:want]
    if cmd in ("check", "verify"):
        check_fl(path, frames)
        if frames:
            check_hoomd(path, frames)
    if cmd == "verify":
        check_mount(mnt, frames)
    elif cmd == "check":
        pass
    elif cmd == "mount":
        check_mount(path, frames)
    elif cmd == "ref":
        write_ref(path, frames)
    else:
        fail("unknown command " + cmd)


if __name__ == "__main__":
    main()
