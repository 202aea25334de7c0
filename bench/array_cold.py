"""Where the time of a cold c.array() goes: the map alone against
np.fromfile of the same bytes, and c.array() with and without opening the
container inside the timing.  Run as root (the page cache is dropped before
every side) on the files bench/python_bench.sh leaves in WORK:

  PYTHONPATH=BUILD/python HPCMOUNT_HELPER=BUILD/helper/hpcmount-helper \\
      /usr/bin/python3 bench/array_cold.py [WORK]

Each side loads and makes one pass over the bytes; the sides alternate in
every round, best of RUNS (default 5); every result is checked against
np.fromfile's."""
import mmap
import os
import sys
import time

import numpy as np

import hpcmount

WORK = sys.argv[1] if len(sys.argv) > 1 else "/var/tmp/hpc-python-bench"
RUNS = int(os.environ.get("RUNS", "5"))


def drop():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as fh:
        fh.write("3\n")


def touch(a):
    f = a.reshape(-1).view(np.uint8)
    n = f.size // 8 * 8
    return int(np.bitwise_xor.reduce(f[:n].view(np.uint64)))


def sides(src, node):
    c = hpcmount.open(src)
    (path, off, size), = c.extents(node)

    def fresh():
        with hpcmount.open(src) as d:
            return d.array(node)

    def bare_map():
        a = np.memmap(path, dtype="u1", mode="r", offset=off, shape=(size,))
        a._mmap.madvise(mmap.MADV_HUGEPAGE)
        return a
    return c, off, size, [
        ("np.fromfile of the plain file (reference)",
         lambda: np.fromfile(path, dtype="u1", count=size, offset=off)),
        ("c.array() of an open container", lambda: c.array(node)),
        ("hpcmount.open() + c.array()", fresh),
        ("np.memmap + MADV_HUGEPAGE, no container", bare_map),
    ]


def main():
    for src, node in (("bench.sion", "/rank-000000"), ("contig.h5", "/data")):
        c, off, size, todo = sides(os.path.join(WORK, src), node)
        best, want = {}, None
        for _ in range(RUNS):
            for label, fn in todo:
                drop()
                t = time.perf_counter()
                a = fn()
                x = touch(a)
                w = time.perf_counter() - t
                del a
                want = x if want is None else want
                if x != want:
                    raise SystemExit("MISMATCH: %s" % label)
                best[label] = min(best.get(label, w), w)
        c.close()
        ref = best[todo[0][0]]
        print("== %s %s: %d MiB at offset %d, cold, best of %d; load %.2f"
              % (src, node, size >> 20, off, RUNS, os.getloadavg()[0]))
        for label, _ in todo:
            print("  %-44s %7.3f s %6.2fx" % (label, best[label], ref / best[label]), flush=True)


main()
