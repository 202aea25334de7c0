"""The Python package against plain-file reads, the mount and the formats'
own Python libraries, side by side in one run (bench/python_bench.sh sets
the environment and says what is measured).

    python_bench.py WORKDIR HPCMOUNT SION_GEN [--figures]

--figures prints one "name value unit" line per figure instead of the
tables (what bench/compare.sh reads): PART.cold|warm.SIDE in wall and CPU
seconds, and PART.cold|warm.REF/SIDE, the reference's wall time over the
side's.
"""
import mmap
import os
import subprocess
import sys
import time

import numpy as np

import hpcmount

WORK, HPCMOUNT, SION_GEN = sys.argv[1:4]
FIGURES = sys.argv[4:5] == ["--figures"]
MB = int(os.environ.get("SIZE_MB", "1024"))
GZ_MB = int(os.environ.get("GZ_MB", "256"))
NF = int(os.environ.get("NFRAMES", "10000"))
NP = int(os.environ.get("NPARTICLES", "1000"))
RUNS = int(os.environ.get("RUNS", "3"))
ROOT = os.geteuid() == 0
MOUNTS = []


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as fh:
        fh.write("3\n")


def warm(path):
    with open(path, "rb") as fh:
        while fh.read(64 << 20):
            pass


def touch(a):
    """One pass over every byte (a memory map is read by this pass)."""
    flat = a.reshape(-1).view(np.uint8)
    n = flat.size // 8 * 8
    return int(np.bitwise_xor.reduce(flat[:n].view(np.uint64))) if n else 0


def timed(fn, cold, files):
    """(wall s, cpu s of this process, result) of fn(), after dropping the
    page cache (cold) or reading files into it (warm)."""
    if cold:
        drop_caches()
    else:
        for f in files:
            warm(f)
    t, c = time.perf_counter(), time.process_time()
    r = fn()
    return time.perf_counter() - t, time.process_time() - c, r


def rounds(sides, cold, files, check):
    """Each side of sides [(key, label, fn)] RUNS times, the sides alternated
    within every round (so a change of the machine's load hits every side
    alike) and their order rotated from round to round (so no side always
    follows the same one); check(label, result) compares each result.
    {key: (best wall s, cpu s of that run)}."""
    best = {}
    for i in range(RUNS):
        k = i % len(sides)
        for key, label, fn in sides[k:] + sides[:k]:
            w, cpu, r = timed(fn, cold, files)
            check(label, r)
            del r
            if key not in best or w < best[key][0]:
                best[key] = (w, cpu)
    return best


def figure(name, value, unit):
    print("%s %.6g %s" % (name, value, unit), flush=True)


def report(part, tag, sides, best, nbytes):
    """The rows of one table (cold or warm) of sides [(key, label, fn)],
    the first the reference, or their figures part.tag.key."""
    ref_key, ref = sides[0][0], best[sides[0][0]][0]
    for key, label, _ in sides:
        wall, cpu = best[key]
        if FIGURES:
            figure("%s.%s.%s" % (part, tag, key), wall, "s")
            figure("%s.%s.%s.cpu" % (part, tag, key), cpu, "s")
            if key != ref_key:
                figure("%s.%s.%s/%s" % (part, tag, ref_key, key), ref / wall, "x")
            continue
        ratio = "" if key == ref_key else "%6.2fx" % (ref / wall)
        print("  %-52s %8.3f s %8.3f s %8.0f MB/s %s" % ("%s %s" % (tag, label), wall, cpu,
                                                         nbytes / wall / 1e6, ratio), flush=True)


def say(text):
    """A line of the tables (in the figures' output: a comment)."""
    print("# " + text.strip() if FIGURES else text, flush=True)


def header(title):
    if not FIGURES:
        print("\n== %s" % title)
        print("  %-52s %10s %10s %13s %s" % ("", "wall", "cpu(py)", "rate", "vs ref"), flush=True)


def mount(src):
    mnt = os.path.join(WORK, "m%d" % len(MOUNTS))
    os.makedirs(mnt, exist_ok=True)
    subprocess.run([HPCMOUNT, src, mnt], check=True)
    MOUNTS.append(mnt)
    return mnt


def unmount_all():
    for m in MOUNTS:
        subprocess.run(["fusermount3", "-u", m])


def same(a, b, what):
    if not np.array_equal(np.asarray(a).reshape(-1).view(np.uint8),
                          np.asarray(b).reshape(-1).view(np.uint8)):
        raise SystemExit("MISMATCH: %s" % what)


def fresh_array(src, node, threads=None, populate=None, **options):
    """c.array() of a container opened for it: no bytes cached by an
    earlier side."""
    with hpcmount.open(src, **options) as c:
        return c.array(node, threads=threads, populate=populate)


def bare_map(src, off, count, dtype):
    """The map c.array() makes, without a container: what the kernel alone
    gives."""
    a = np.memmap(src, dtype=dtype, mode="r", offset=off, shape=(count,))
    a._mmap.madvise(mmap.MADV_HUGEPAGE)
    return a


def bulk(part, title, src, node, raw_off, dtype):
    """array() of one verbatim node vs np.fromfile of the same bytes of the
    plain file, vs the same map without a container and vs np.fromfile
    through the mount, cold and warm; each side loads and makes one pass
    over the bytes.  "c.array()" opens the container inside the timing
    (for HDF5: the helper's spawn and libhdf5 reading the metadata)."""
    c = hpcmount.open(src)
    n = c.stat(node).st_size
    count = n // np.dtype(dtype).itemsize
    mnt = mount(src)
    sides = [
        ("fromfile", "np.fromfile of the plain file (reference)",
         lambda: np.fromfile(src, dtype=dtype, count=count, offset=raw_off)),
        ("array", "c.array()", lambda: fresh_array(src, node)),
        ("array.open", "c.array() of an open container", lambda: c.array(node)),
        ("array.lazy", "c.array(populate=False) (a lazy map)",
         lambda: fresh_array(src, node, populate=False)),
        ("memmap", "np.memmap + MADV_HUGEPAGE, no container",
         lambda: bare_map(src, raw_off, count, dtype)),
        ("mount", "np.fromfile through the mount",
         lambda: np.fromfile(os.path.join(mnt, node), dtype=dtype)),
    ]
    header("%s: %d MiB, load + one pass, best of %d" % (title, n >> 20, RUNS))
    first = {}

    def check(label, r):
        a, _ = r
        if "ref" in first:
            same(a, first["ref"], label)
        else:
            first["ref"] = a
    for cold in ([True] if ROOT else []) + [False]:
        tag = "cold" if cold else "warm"
        best = rounds([(key, label, lambda fn=fn: (lambda x: (x, touch(x)))(fn()))
                       for key, label, fn in sides], cold, [src], check)
        report(part, tag, sides, best, n)
    first.clear()
    say("  c.array() is a view of the file: %s" % (not c.array(node).flags.owndata))
    c.close()


def sion():
    src = os.path.join(WORK, "bench-%d.sion" % MB)
    if not os.path.exists(src):
        subprocess.run([sys.executable, SION_GEN, src + ".tmp", "--ntasks", "1",
                        "--length", str(MB << 20), "--chunksize", str(MB << 20),
                        "--fsblksize", "4096"], check=True, stdout=subprocess.DEVNULL)
        os.rename(src + ".tmp", src)
    with hpcmount.open(src) as c:
        (path, off, _), = c.extents("rank-000000")
    bulk("carray.sion", "SION rank", src, "rank-000000", off, np.uint8)


def hdf5_contiguous():
    import h5py
    src = os.path.join(WORK, "contig-%d.h5" % MB)
    if not os.path.exists(src):
        with h5py.File(src + ".tmp", "w") as f:
            d = f.create_dataset("data", shape=(MB << 17,), dtype="<f8")
            step = 1 << 24
            for i in range(0, d.shape[0], step):
                d[i:i + step] = np.arange(i, min(i + step, d.shape[0]), dtype="<f8")
        os.rename(src + ".tmp", src)
    with h5py.File(src, "r") as f:
        off = f["data"].id.get_offset()
    bulk("carray.h5", "HDF5 contiguous dataset", src, "data", off, "<f8")


def hdf5_gzip():
    import h5py
    src = os.path.join(WORK, "gzip-%d.h5" % GZ_MB)
    n = GZ_MB << 18
    if not os.path.exists(src):
        rng = np.random.default_rng(1)
        with h5py.File(src + ".tmp", "w") as f:
            d = f.create_dataset("data", shape=(n,), dtype="<f4", chunks=(1 << 18,),
                                 compression="gzip", compression_opts=4, shuffle=True)
            step = 1 << 24
            for i in range(0, n, step):
                m = min(step, n - i)
                d[i:i + m] = (np.sin(np.arange(i, i + m) / 5000.0) * 100).astype("<f4") \
                    + rng.integers(0, 4, m).astype("<f4")
        os.rename(src + ".tmp", src)
    header("HDF5 gzip+shuffle dataset: %d MiB in 1 MiB chunks (%d MiB on disk), %d cores"
           % (GZ_MB, os.path.getsize(src) >> 20, os.cpu_count()))

    def h5py_read():
        with h5py.File(src, "r") as f:
            return f["data"][()]
    sides = [("h5py", "h5py ds[()] (reference)", h5py_read),
             ("array", "c.array() (parallel pieces)", lambda: fresh_array(src, "data")),
             ("array.t1", "c.array(threads=1)", lambda: fresh_array(src, "data", threads=1)),
             # libhdf5 in this process: chunks decoded by the calling threads
             ("array.inproc", "c.array(), inproc=True",
              lambda: fresh_array(src, "data", inproc=True))]
    first = {}

    def check(label, a):
        first.setdefault("ref", a)
        same(a, first["ref"], label)
    for cold in ([True] if ROOT else []) + [False]:
        tag = "cold" if cold else "warm"
        report("carray.gz", tag, sides, rounds(sides, cold, [src], check), n * 4)
    first.clear()


def gsd_series():
    import gsd.hoomd
    src = os.path.join(WORK, "traj-%d-%d.gsd" % (NF, NP))
    npy = os.path.join(WORK, "positions-%d-%d.npy" % (NF, NP))
    if not os.path.exists(src):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import gsd_traj
        gsd_traj.write(src, NF, NP)
    c = hpcmount.open(src)
    if not os.path.exists(npy):
        np.save(npy, c.array("/series/particles/position"))
    nbytes = NF * NP * 12

    def hoomd_loop():
        with gsd.hoomd.open(src, "rb") as t:
            return np.stack([fr.particles.position for fr in t])
    header("GSD series: %d frames x %d particles, positions %d MiB, best of %d"
           % (NF, NP, nbytes >> 20, RUNS))
    sides = [("npy", "np.load of a local .npy (reference)", lambda: np.load(npy)),
             ("array", "c.array('/series/particles/position')",
              lambda: fresh_array(src, "/series/particles/position")),
             ("hoomd", "gsd.hoomd loop + np.stack", hoomd_loop)]
    first = {}

    def check(label, a):
        first.setdefault("ref", a)
        same(a, first["ref"], label)
    for cold in ([True] if ROOT else []) + [False]:
        tag = "cold" if cold else "warm"
        best = rounds(sides, cold, [npy, src], check)
        report("carray.gsd", tag, sides, best, nbytes)
        if FIGURES:
            figure("carray.gsd.%s.hoomd/array" % tag, best["hoomd"][0] / best["array"][0], "x")
        else:
            print("  %s c.array() vs gsd.hoomd loop: %.1fx"
                  % (tag, best["hoomd"][0] / best["array"][0]), flush=True)
    first.clear()
    c.close()


def main():
    os.makedirs(WORK, exist_ok=True)
    load = open("/proc/loadavg").read().split()[:3]
    say("machine: %d cores, load average %s; cold runs: %s" % (
        os.cpu_count(), " ".join(load), "page cache dropped before each side" if ROOT
        else "skipped (not root)"))
    try:
        for part in os.environ.get("PARTS", "sion hdf5 gzip gsd").split():
            {"sion": sion, "hdf5": hdf5_contiguous, "gzip": hdf5_gzip, "gsd": gsd_series}[part]()
    finally:
        unmount_all()
    say("\nload average after: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))


main()
