#!/bin/sh
# bench/python_bench.sh [--figures] [BUILDDIR] - the Python package (c.array()) side by
# side with plain-file reads, the mount and the formats' Python libraries:
#   - a 1 GiB SION rank and a 1 GiB contiguous HDF5 dataset: c.array() (a
#     memory map of the source, mapped at once when cached; of a container
#     opened inside the timing and of one already open; and with
#     populate=False, a lazy map) vs np.fromfile of the same bytes of the
#     plain file vs the same map without a container vs np.fromfile
#     through the mount, cold and warm; every side loads and then makes
#     one pass over the bytes (a map is read by that pass);
#   - an HDF5 gzip+shuffle dataset: c.array() (pieces read by a thread
#     pool, the library inflating on every core) vs h5py's ds[()];
#   - a GSD series of 10^4 frames: c.array() vs np.load of a local .npy
#     holding it vs a gsd.hoomd loop.
# Cold: the page cache dropped before each side (root only).  Wall time
# and the Python process's CPU time per side.  Sizes: SIZE_MB, GZ_MB,
# NFRAMES, NPARTICLES; PARTS="sion hdf5 gzip gsd" picks parts; files are
# kept in $WORK between runs, named by their size.  --figures prints one
# "name value unit" line per figure instead of the tables (what
# bench/compare.sh reads; python_bench.py names them).  Needs fuse3, numpy,
# h5py, gsd.
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
figures=""
[ "${1:-}" != --figures ] || { figures=--figures; shift; }
B=$(cd "${1:-$top}" && pwd)
WORK=${WORK:-/var/tmp/hpc-python-bench}
export PYTHONPATH="$B/python" HPCMOUNT_HELPER="$B/helper/hpcmount-helper"
exec /usr/bin/python3 "$here/python_bench.py" "$WORK" "$B/fuse/hpcmount" "$top/tests/gen/sion_gen.py" $figures
