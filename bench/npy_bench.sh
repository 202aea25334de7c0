#!/bin/bash
# bench/npy_bench.sh [BUILDDIR] - np.load through the -o npy view vs h5py.
#
# A BENCH_MB (1024) MiB float64 array stored twice in one HDF5 file
# (contiguous, and chunked with shuffle+gzip 1), loaded in one Python
# process as a whole: np.load of DATASET.npy through a fresh hpcmount -o npy
# mount, np.load(mmap_mode='r') followed by a full pass over the array, and
# h5py's ds[()] of the same dataset.  The .h5 file is warm in the page cache
# on every side; best of RUNS (3) wall seconds, sides alternated.
# Environment: BENCH_MB, RUNS, WORK (a temp dir, kept for reruns).
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
build=${1:-$top}
HPCMOUNT=$build/fuse/hpcmount
BENCH_MB=${BENCH_MB:-1024}; RUNS=${RUNS:-3}
WORK=${WORK:-/var/tmp/hpcbench-npy}
PY=/usr/bin/python3
M=$WORK/mnt
mkdir -p "$M"
trap 'fusermount3 -u "$M" 2>/dev/null || true' EXIT

f=$WORK/npy.h5
if [ ! -s "$f" ] || [ "$(cat "$WORK/mb" 2>/dev/null)" != "$BENCH_MB" ]; then
    echo "# generating $f: 2 x $BENCH_MB MiB float64"
    $PY - "$f" "$BENCH_MB" <<'PY'
import sys, h5py, numpy as np
path, mb = sys.argv[1], int(sys.argv[2])
cols = 1024; rows = mb * 1024 * 1024 // 8 // cols; slab = 8192
with h5py.File(path, "w") as f:
    co = f.create_dataset("contig", (rows, cols), "<f8")
    gz = f.create_dataset("gz", (rows, cols), "<f8", chunks=(64, cols), compression="gzip",
                          compression_opts=1, shuffle=True)
    rng = np.random.default_rng(1)
    for r in range(0, rows, slab):
        n = min(slab, rows - r)
        v = np.round(rng.normal(0, 40, (n, cols)) * 1024) / 1024
        co[r:r + n] = v
        gz[r:r + n] = v
PY
    echo "$BENCH_MB" > "$WORK/mb"
fi
cat "$f" > /dev/null

# one load: "SECONDS" for KIND (npy|mmap|h5py) of DATASET
load() {
    $PY - "$@" <<'PY'
import sys, time, numpy as np
kind, path, ds = sys.argv[1:4]
t0 = time.perf_counter()
if kind == "h5py":
    import h5py
    with h5py.File(path, "r") as f:
        a = f[ds][()]
elif kind == "mmap":
    a = np.load(path, mmap_mode="r")
    a.sum()
else:
    a = np.load(path)
print("%.3f" % (time.perf_counter() - t0))
PY
}
best() { sort -g | head -1; }

echo "# np.load of a $BENCH_MB MiB float64 dataset, best of $RUNS wall seconds ($(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg))"
printf "%-8s %10s %10s %10s %12s %12s\n" dataset "npy" "npy-mmap" "h5py" "h5py/npy" "h5py/mmap"
for ds in contig gz; do
    : > "$WORK/t.npy"; : > "$WORK/t.mmap"; : > "$WORK/t.h5py"
    for _ in $(seq "$RUNS"); do
        for kind in npy mmap; do
            "$HPCMOUNT" -o npy "$f" "$M"
            load "$kind" "$M/$ds.npy" "" >> "$WORK/t.$kind"
            fusermount3 -u "$M"
        done
        load h5py "$f" "$ds" >> "$WORK/t.h5py"
    done
    n=$(best < "$WORK/t.npy"); m=$(best < "$WORK/t.mmap"); h=$(best < "$WORK/t.h5py")
    printf "%-8s %10s %10s %10s %11.2fx %11.2fx\n" "$ds" "$n" "$m" "$h" \
        "$(echo "$h / $n" | bc -l)" "$(echo "$h / $m" | bc -l)"
done
