#!/bin/sh
# bench/gsd_write_bench.sh - writing a GSD trajectory from MPI ranks, side by
# side in one run: hpcwrite's parallel writer (every rank writes its own
# rows) against the HOOMD pattern (rank 0 gathers every frame with mpi4py
# and writes it with gsd.fl, bench/gsd_write_hoomd.py).  Same chunks and
# values (position and velocity float32 x 3 per particle and frame, typeid
# in frame 0), same timing (barrier to barrier around the I/O of each
# frame, plus open and close).  REPS pairs, the order alternating (ours
# first in odd pairs); the first pair's files are compared (same frames,
# same last frame).  Prints every pair, then a Markdown table of the
# medians: bandwidth, rank 0's peak RSS and the ratios.  Finally the same
# bytes written with plain pwrite by RANKS processes into one file versus
# one process, which shows what the machine gives to parallel writers of
# one file at the time of the run.
#
#   bench/gsd_write_bench.sh [BUILDDIR] [DIR]
#   env: RANKS=4 PARTICLES=1000000 (per rank) FRAMES=20 REPS=3
#
# Needs python3-mpi4py and python3-gsd (tests/deps.sh --bench).  DIR
# (default $TMPDIR or /tmp) holds the files while they are compared.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top}
dir=${2:-${TMPDIR:-/tmp}}/gsd_write_bench.$$
RANKS=${RANKS:-4}; PARTICLES=${PARTICLES:-1000000}; FRAMES=${FRAMES:-20}; REPS=${REPS:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

# field NAME LINE: the value after NAME in a report line
field() { echo "$2" | awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ours() {
    sync
    mpirun --oversubscribe -np "$RANKS" "$build/mpi/hpcwrite" --format gsd \
        --particles "$PARTICLES" --frames "$FRAMES" "$dir/hpcwrite.gsd"
}
ref() {
    sync
    mpirun --oversubscribe -np "$RANKS" /usr/bin/python3 "$top/bench/gsd_write_hoomd.py" \
        "$PARTICLES" "$FRAMES" "$dir/hoomd.gsd"
}

bw_o=""; bw_r=""; rss_o=""; rss_r=""; ratios=""
i=1
while [ "$i" -le "$REPS" ]; do
    if [ $((i % 2)) -eq 1 ]; then o=$(ours); r=$(ref); else r=$(ref); o=$(ours); fi
    echo "pair $i: $o"
    echo "pair $i: $r"
    if [ "$i" -eq 1 ]; then
        /usr/bin/python3 - "$dir/hpcwrite.gsd" "$dir/hoomd.gsd" "$FRAMES" <<'PY'
import sys, numpy as np, gsd.fl
a, b, last = gsd.fl.open(sys.argv[1], "rb"), gsd.fl.open(sys.argv[2], "rb"), int(sys.argv[3]) - 1
assert a.nframes == b.nframes == last + 1, (a.nframes, b.nframes)
for name in ("particles/position", "particles/velocity"):
    assert np.array_equal(a.read_chunk(last, name), b.read_chunk(last, name)), name
assert np.array_equal(a.read_chunk(0, "particles/typeid"), b.read_chunk(0, "particles/typeid"))
print("pair 1: same frames, same last frame and typeid in both files")
PY
    fi
    rm -f "$dir"/*.gsd
    bw_o="$bw_o $(field bandwidth "$o")"; bw_r="$bw_r $(field bandwidth "$r")"
    rss_o="$rss_o $(field rank0_maxrss "$o")"; rss_r="$rss_r $(field rank0_maxrss "$r")"
    ratios="$ratios $(echo "scale=3; $(field bandwidth "$o") / $(field bandwidth "$r")" | bc)"
    i=$((i + 1))
done
mo=$(echo "$bw_o" | median); mr=$(echo "$bw_r" | median)
ro=$(echo "$rss_o" | median); rr=$(echo "$rss_r" | median)
echo
echo "| $RANKS ranks x $PARTICLES particles, $FRAMES frames, median of $REPS | MiB/s | rank 0 peak RSS (MiB) |"
echo "|---|---:|---:|"
echo "| hpcwrite --format gsd (parallel) | $mo | $(echo "$ro / 1024" | bc) |"
echo "| HOOMD pattern (Gatherv + gsd.fl on rank 0) | $mr | $(echo "$rr / 1024" | bc) |"
echo "| ratio of the medians | $(echo "scale=2; $mo / $mr" | bc)x | $(echo "scale=2; $ro / $rr" | bc)x |"
echo "| per-pair bandwidth ratios |$ratios | |"

# the same bytes per frame with plain pwrite, no MPI: RANKS processes into
# disjoint parts of one file, or one process
/usr/bin/python3 - "$dir/plain" "$RANKS" "$((PARTICLES * 24))" "$FRAMES" <<'PY'
import os, sys, time, multiprocessing as mp
path, ranks, size, frames = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
buf = b"x" * size
def worker(r, barrier):
    fd = os.open(path, os.O_WRONLY)
    for f in range(frames):
        barrier.wait()
        os.pwrite(fd, buf, (f * ranks + r) * size)
    os.close(fd)
def parallel():
    open(path, "wb").close()
    b = mp.Barrier(ranks)
    ps = [mp.Process(target=worker, args=(r, b)) for r in range(ranks)]
    t = time.time(); [p.start() for p in ps]; [p.join() for p in ps]
    return time.time() - t
def single():
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    big = buf * ranks
    t = time.time()
    for f in range(frames):
        os.pwrite(fd, big, f * ranks * size)
    os.close(fd)
    return time.time() - t
mib = ranks * size * frames / 1048576.0
p = parallel(); os.unlink(path); s = single(); os.unlink(path)
print("plain pwrite into one file, %d frames of %d x %d bytes: %d processes %.0f MiB/s, "
      "1 process %.0f MiB/s" % (frames, ranks, size, ranks, mib / p, mib / s))
PY
