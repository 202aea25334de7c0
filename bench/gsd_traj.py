"""gsd_traj.py PATH NFRAMES NPARTICLES - a trajectory written with gsd.fl
as HOOMD writes one: N, types, typeid and box in frame 0; step, position,
velocity and image in every frame (positions and velocities random,
seeded).  Used by bench/gsd_series_bench.sh and bench/python_bench.py."""
import sys

import gsd.fl
import numpy


def write(path, nf, n):
    rng = numpy.random.default_rng(1)
    with gsd.fl.open(path, "wb", application="bench", schema="hoomd", schema_version=[1, 4]) as f:
        for i in range(nf):
            f.write_chunk("configuration/step", numpy.array([i * 1000], dtype=numpy.uint64))
            if i == 0:
                f.write_chunk("configuration/box", numpy.array([10, 10, 10, 0, 0, 0], dtype=numpy.float32))
                f.write_chunk("particles/N", numpy.array([n], dtype=numpy.uint32))
                f.write_chunk("particles/types", numpy.array([[65, 0]], dtype=numpy.int8))
                f.write_chunk("particles/typeid", numpy.zeros(n, dtype=numpy.uint32))
            f.write_chunk("particles/position", rng.random((n, 3), dtype=numpy.float32))
            f.write_chunk("particles/velocity", rng.random((n, 3), dtype=numpy.float32))
            f.write_chunk("particles/image", numpy.zeros((n, 3), dtype=numpy.int32))
            f.end_frame()


if __name__ == "__main__":
    write(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
