#!/bin/bash
# bench/hdf5_bench.sh [BUILDDIR] - HDF5 read performance of hpcmount.
#
#   (a) a BENCH_MB (1024) MiB shuffle+gzip chunked float64 dataset read
#       sequentially through the mount (dd, 1 MiB reads) vs one H5Dread of
#       the whole dataset into memory in one process (bench/hdf5_h5dread.c);
#   (b) a contiguous little-endian dataset of the same size through the
#       mount (pread/splice path) vs the same bytes as a plain file;
#   (c) open time and memory: `hpcdump ls -R` of a file of 20000 small
#       datasets (half chunked, one attribute each) in 100 groups.
# The .h5 file is warm in the page cache for every run; each mount run uses a
# fresh mount (empty chunk cache, no page cache of the mounted file); the
# plain file is read from the page cache.  Runs alternate between the two
# sides (a shared machine's load hits both alike); best of RUNS (3) for wall
# time and, separately, CPU time (the daemon's from /proc/PID/stat, the
# reference's from /usr/bin/time), which depends less on the load.
# Environment: BENCH_MB, RUNS, WORK (a temp dir, kept for reruns).
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
build=${1:-$top}
HPCMOUNT=$build/fuse/hpcmount; HPCDUMP=$build/dump/hpcdump
BENCH_MB=${BENCH_MB:-1024}; RUNS=${RUNS:-3}
WORK=${WORK:-/var/tmp/hpcbench-hdf5}
PY=/usr/bin/python3
mkdir -p "$WORK/mnt"
M=$WORK/mnt
cleanup() { fusermount3 -u "$M" 2>/dev/null || true; }
trap cleanup EXIT

f=$WORK/bench.h5
if [ ! -s "$f" ] || [ "$(cat "$WORK/mb" 2>/dev/null)" != "$BENCH_MB" ]; then
    echo "# generating $f: 2 x $BENCH_MB MiB (gz: chunks 64 x 1024 float64, shuffle+gzip 1)"
    $PY - "$f" "$BENCH_MB" <<'PY'
import sys, h5py, numpy as np
path, mb = sys.argv[1], int(sys.argv[2])
cols = 1024; rows = mb * 1024 * 1024 // 8 // cols; slab = 8192
with h5py.File(path, "w") as f:
    gz = f.create_dataset("gz", (rows, cols), "<f8", chunks=(64, cols), compression="gzip",
                          compression_opts=1, shuffle=True)
    co = f.create_dataset("contig", (rows, cols), "<f8")
    rng = np.random.default_rng(1)
    x = np.arange(cols) / cols
    for r in range(0, rows, slab):
        n = min(slab, rows - r)
        t = (np.arange(r, r + n) / rows)[:, None]
        # a smooth field plus noise on a 1/1024 grid: compressible like real data
        v = np.round((np.sin(6.3 * x + 3 * t) * 40 + rng.normal(0, 0.5, (n, cols))) * 1024) / 1024
        gz[r:r + n] = v
        co[r:r + n] = v
PY
    echo "$BENCH_MB" > "$WORK/mb"
fi
cc -O2 $(pkg-config --cflags hdf5) "$here/hdf5_h5dread.c" -o "$WORK/h5dread" $(pkg-config --libs hdf5)
"$HPCDUMP" cat "$f" contig > "$WORK/plain"
bytes=$(stat -c %s "$WORK/plain")
cat "$f" "$WORK/plain" > /dev/null      # warm

read_secs() { local t0 t1; t0=$(date +%s.%N); dd if="$1" of=/dev/null bs=1M 2>/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
ticks=$(getconf CLK_TCK)
# mount_read DATASET: "wall-seconds daemon-cpu-seconds" of one read of a fresh mount
mount_read() {
    local pid w cpu
    "$HPCMOUNT" -f "$f" "$M" 2>/dev/null & pid=$!
    for _ in $(seq 100); do grep -q " $M fuse" /proc/self/mounts && break; sleep 0.05; done
    w=$(read_secs "$M/$1")
    cpu=$(awk -v t="$ticks" '{ print ($14 + $15) / t }' "/proc/$pid/stat")
    fusermount3 -u "$M"; wait "$pid"
    echo "$w $cpu"
}
# ref_read DATASET: "wall-seconds cpu-seconds" of hdf5_h5dread
ref_read() { /usr/bin/time -f "%e %U %S" "$WORK/h5dread" "$f" "$1" 2>&1 >/dev/null | awk '{ print $1, $2 + $3 }'; }
best() { sort -g | head -1; }
mbs() { echo "scale=0; $bytes / $1 / 1048576" | bc -l; }

# interleaved, so that the load of a shared machine hits both sides alike
: > "$WORK/gz.m"; : > "$WORK/gz.r"; : > "$WORK/co.m"; : > "$WORK/co.p"; : > "$WORK/co.r"
for i in $(seq "$RUNS"); do
    mount_read gz >> "$WORK/gz.m"; ref_read /gz >> "$WORK/gz.r"
    mount_read contig >> "$WORK/co.m"; read_secs "$WORK/plain" >> "$WORK/co.p"; ref_read /contig >> "$WORK/co.r"
done
col() { cut -d' ' -f"$2" "$WORK/$1" | best; }
gz_mount=$(col gz.m 1); gz_mcpu=$(col gz.m 2); gz_ref=$(col gz.r 1); gz_rcpu=$(col gz.r 2)
co_mount=$(col co.m 1); co_mcpu=$(col co.m 2); co_plain=$(col co.p 1); co_ref=$(col co.r 1)
"$HPCMOUNT" "$f" "$M"; grep -E "^/(gz|contig)	" "$M/.info" | cut -f1,4,5,6,8,9 | sed 's/^/# .info: /'; fusermount3 -u "$M"

printf "%-58s %8s %8s %8s\n" "HDF5, $BENCH_MB MiB, best of $RUNS" "seconds" "MiB/s" "CPU s"
printf "%-58s %8.2f %8s %8.2f\n" "(a) gzip+shuffle chunked: hpcmount, dd bs=1M (daemon CPU)" "$gz_mount" "$(mbs "$gz_mount")" "$gz_mcpu"
printf "%-58s %8.2f %8s %8.2f\n" "(a) gzip+shuffle chunked: H5Dread of all into memory" "$gz_ref" "$(mbs "$gz_ref")" "$gz_rcpu"
printf "%-58s %8.2f\n" "(a) ratio hpcmount / H5Dread, wall time (goal >= 0.8)" "$(echo "$gz_ref / $gz_mount" | bc -l)"
printf "%-58s %8.2f %8s %8.2f\n" "(b) contiguous: hpcmount, dd bs=1M (daemon CPU)" "$co_mount" "$(mbs "$co_mount")" "$co_mcpu"
printf "%-58s %8.2f %8s\n" "(b) contiguous: the same bytes as a plain file, dd bs=1M" "$co_plain" "$(mbs "$co_plain")"
printf "%-58s %8.2f %8s\n" "(b) contiguous: H5Dread of all into memory" "$co_ref" "$(mbs "$co_ref")"
printf "%-58s %8.2f\n" "(b) ratio hpcmount / plain file" "$(echo "$co_plain / $co_mount" | bc -l)"
printf "%-58s %8.2f\n" "(b) ratio hpcmount / H5Dread" "$(echo "$co_ref / $co_mount" | bc -l)"

many=$WORK/many.h5
[ -s "$many" ] || $PY - "$many" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w", libver="latest") as f:
    for g in range(100):
        grp = f.create_group("g%03d" % g)
        for i in range(200):
            d = grp.create_dataset("d%03d" % i, data=np.arange(10, dtype="<f4"), chunks=(5,) if i % 2 else None)
            d.attrs["k"] = i
PY
ls_many=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e %M" "$HPCDUMP" ls -R "$many" 2>&1 >/dev/null; done | sort -g | head -1)
printf "%-58s %8.2f s, max RSS %d MiB\n" "(c) hpcdump ls -R, 20000 datasets in 100 groups" "${ls_many% *}" "$(( ${ls_many#* } / 1024 ))"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
