#!/usr/bin/python3
"""bench/gsd_write_hoomd.py - the HOOMD pattern of writing a GSD trajectory
from MPI ranks, as the reference for bench/gsd_write_bench.sh: every frame,
rank 0 gathers all ranks' particles (mpi4py Gatherv) and writes them alone
with gsd.fl.  Same chunks, values and timing rules as
`hpcwrite --format gsd` (docs/writer.md):

  mpirun -np R python3 gsd_write_hoomd.py PARTICLES_PER_RANK FRAMES OUT

Prints on rank 0 one line like hpcwrite's report.
"""
import resource
import sys
import time

import gsd.fl
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    n, frames, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    counts = comm.allgather(n)
    before, total = sum(counts[:rank]), sum(counts)
    i = np.arange(before, before + n, dtype=np.uint64)[:, None]
    c = np.arange(3, dtype=np.uint64)[None, :]
    typeid = (np.arange(before, before + n) % 4).astype(np.uint32)
    rows3 = [3 * k for k in counts]
    allpos = allvel = alltype = None
    if rank == 0:       # the whole frame, on rank 0 only
        allpos = np.empty((total, 3), dtype=np.float32)
        allvel = np.empty((total, 3), dtype=np.float32)
        alltype = np.empty(total, dtype=np.uint32)

    comm.Barrier()
    t0 = time.perf_counter()
    f = None
    if rank == 0:
        f = gsd.fl.open(out, "wb", application="hoomd pattern (gsd.fl)", schema="hoomd",
                        schema_version=[1, 4])
    comm.Barrier()
    io = time.perf_counter() - t0
    for fr in range(frames):
        pos = ((3 * i + c + 7 * fr) % (1 << 20)).astype(np.float32)
        vel = -pos / np.float32(4)
        comm.Barrier()
        t0 = time.perf_counter()
        comm.Gatherv(pos, (allpos, rows3, None, MPI.FLOAT), root=0)
        comm.Gatherv(vel, (allvel, rows3, None, MPI.FLOAT), root=0)
        if fr == 0:
            comm.Gatherv(typeid, (alltype, counts, None, MPI.UINT32_T), root=0)
        if rank == 0:
            f.write_chunk("configuration/step", np.array([1000 * fr], dtype=np.uint64))
            if fr == 0:
                f.write_chunk("particles/N", np.array([total], dtype=np.uint32))
                f.write_chunk("particles/types",
                              np.array([[65, 0], [66, 0], [67, 0], [68, 0]], dtype=np.int8))
                f.write_chunk("configuration/box",
                              np.array([100, 100, 100, 0, 0, 0], dtype=np.float32))
                f.write_chunk("particles/typeid", alltype)
            f.write_chunk("particles/position", allpos)
            f.write_chunk("particles/velocity", allvel)
            f.end_frame()
        comm.Barrier()
        io += time.perf_counter() - t0
    t0 = time.perf_counter()
    if rank == 0:
        f.close()
    comm.Barrier()
    io += time.perf_counter() - t0
    nbytes = total * (24 * frames + 4) + 8 * frames + 36 if frames else 0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if rank == 0:
        print("hoomd-pattern: gsd ranks %d frames %d particles %d bytes %d total %.6f s "
              "bandwidth %.2f MiB/s rank0_maxrss %d KiB"
              % (size, frames, total, nbytes, io, nbytes / io / 1048576.0, rss))


if __name__ == "__main__":
    main()
