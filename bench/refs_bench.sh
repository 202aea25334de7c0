#!/bin/bash
# refs_bench.sh - Dask over hpcmount references, side by side in one run
# (bench/refs_bench.py):
#   HDF5: a 64 MiB float64 gzip dataset, and one with shuffle too
#         (tests/gen/refs_h5gen.py big), each
#         its sum with Dask over the references vs da.from_array(h5py
#         dataset) vs da.from_array(numpy.memmap of the mounted file);
#   GSD:  NFRAMES (default 2000) frames of NPARTICLES (default 10000)
#         positions written with gsd.fl as HOOMD does, the mean over frames
#         with Dask over the series' references (fsspec's reference
#         filesystem, and hpcmount.refs_store()) vs a gsd.hoomd loop; then
#         what one frame costs at each layer (bench/refs_floor.py).
#
#   bench/refs_bench.sh [--figures] [BUILDDIR] [NFRAMES] [NPARTICLES]
# (the sizes also from the environment; the arguments win).  --figures:
# "name value unit" lines instead of the table (bench/refs_bench.py).
# Needs fuse3, python3-h5py, -gsd, -dask, -zarr, -fsspec.  Files in $OUT.
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
figures=""
[ "${1:-}" != --figures ] || { figures=--figures; shift; }
B=${1:-$top}; NF=${2:-${NFRAMES:-2000}}; NP=${3:-${NPARTICLES:-10000}}
OUT=${OUT:-${TMPDIR:-/tmp}/refs-bench}
traj=$OUT/traj-$NF-$NP.gsd
PY=/usr/bin/python3
export PYTHONPATH="$B/python"     # the build's package (refs_store)
mkdir -p "$OUT/mnt"
trap 'fusermount3 -u "$OUT/mnt" 2>/dev/null || true' EXIT
[ -f "$OUT/big.h5" ] || { $PY "$top/tests/gen/refs_h5gen.py" "$OUT/big.h5.tmp" big && mv "$OUT/big.h5.tmp" "$OUT/big.h5"; }
if [ ! -f "$traj" ]; then
    $PY - "$traj.tmp" "$NF" "$NP" <<'PYEOF'
import sys, numpy, gsd.fl
path, nf, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = numpy.random.default_rng(1)
with gsd.fl.open(path, "wb", application="refs_bench", schema="hoomd", schema_version=[1, 4]) as f:
    for i in range(nf):
        f.write_chunk("configuration/step", numpy.array([i * 100], dtype="<u8"))
        if i == 0:
            f.write_chunk("particles/N", numpy.array([n], dtype="<u4"))
        f.write_chunk("particles/position", rng.random((n, 3), dtype="f4"))
        f.end_frame()
PYEOF
    mv "$traj.tmp" "$traj"
fi
"$B/dump/hpcdump" refs "$OUT/big.h5" >"$OUT/big.json"
"$B/dump/hpcdump" refs "$traj" >"$OUT/gsd.json"
"$B/fuse/hpcmount" "$OUT/big.h5" "$OUT/mnt"
cat "$OUT/big.h5" "$traj" >/dev/null     # page cache holds both files
$PY "$here/refs_bench.py" "$OUT/big.h5" "$OUT/big.json" "$OUT/mnt" "$traj" \
    "$OUT/gsd.json" $figures
$PY "$here/refs_floor.py" "$traj" "$OUT/gsd.json" $figures
