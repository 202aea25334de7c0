#!/bin/bash
# gsd_series_bench.sh - a trajectory's chunk as one array over all frames.
#
#   bench/gsd_series_bench.sh [--figures] [BUILDDIR] [NFRAMES] [NPARTICLES] [SCAN_FRAMES]
#
# (the sizes also from the environment; the arguments win)
# 1. NFRAMES (default 10^4) frames of NPARTICLES (default 1000) particles
#    written with gsd.fl as HOOMD writes them (step, position, velocity,
#    image each frame; N, types, typeid, box in frame 0): all positions
#    (float32 x 3) loaded as one numpy array, one run each, side by side:
#      a. np.fromfile of series/particles/position through a fresh mount
#         (reshape from user.shape; the mount's start is timed apart)
#      b. np.load of the same array from a local .npy file
#      c. a gsd.hoomd loop over the frames (np.stack of the positions)
#      d. a gsd.fl read_chunk loop (reference)
#    The arrays are compared; the page cache holds the files in all four.
# 2. SCAN_FRAMES (default 10^6; 0: skipped) frames x 10 chunks (bench/gsd_gen.c): the first listing of
#    /series (one pass over the 10^7-entry index), daemon RSS before and
#    after, and configuration/step over all frames via np.fromfile.
# Needs fuse3, python3-gsd, numpy.  Output in $OUT.  --figures prints one
# "name value unit" line per figure instead (what bench/compare.sh reads):
# gsdseries.* as above, and the references' seconds over the series' read
# (gsdseries.hoomd/series: the series against a gsd.hoomd loop).
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
figures=0
[ "${1:-}" != --figures ] || { figures=1; shift; }
B=${1:-$top}; NF=${2:-${NFRAMES:-10000}}; NP=${3:-${NPARTICLES:-1000}}; SF=${4:-${SCAN_FRAMES:-1000000}}
OUT=${OUT:-${TMPDIR:-/tmp}/gsd-series-bench}
PY=/usr/bin/python3
HPCMOUNT="$B/fuse/hpcmount"
mkdir -p "$OUT"
MOUNTS=""
cleanup() { for m in $MOUNTS; do fusermount3 -u "$m" 2>/dev/null || true; done; }
trap cleanup EXIT
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc -l | xargs printf '%.3f'; }
daemon_pid() { ps -eo pid,args | awk -v m="$1" '$0 ~ m && /hpcmount/ && !/awk/ {print $1; exit}'; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
mnt() { mkdir -p "$2"; "$HPCMOUNT" "${@:3}" "$1" "$2"; MOUNTS="$MOUNTS $2"; }
umnt() { fusermount3 -u "$1"; MOUNTS=$(echo " $MOUNTS " | sed "s# $1 # #"); }
say() { if [ $figures = 1 ]; then echo "# $*"; else echo "$*"; fi; }
declare -A T
# out NAME VALUE UNIT LINE: the figure gsdseries.NAME (kept in T), or LINE
out() {
    T[$1]=$2
    if [ $figures = 1 ]; then printf "gsdseries.%s %.6g %s\n" "$1" "$2" "$3"; else echo "$4"; fi
}
# rows FILE: the Python parts' output, "NAME<tab>VALUE<tab>UNIT<tab>LINE"
# lines through out, other lines through say
rows() {
    local name value unit line
    while IFS=$'\t' read -r name value unit line; do
        if [ -n "$line" ]; then out "$name" "$value" "$unit" "$line"; else say "$name"; fi
    done < "$1"
}

gcc -O2 $(pkg-config --cflags glib-2.0) "$here/gsd_gen.c" -o "$OUT/gsd_gen" $(pkg-config --libs glib-2.0)
say "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# --- 1. positions of NF frames as one array -----------------------------------------
traj="$OUT/hoomd-$NF-$NP.gsd"
[ -f "$traj" ] || $PY "$here/gsd_traj.py" "$traj" "$NF" "$NP"
cat "$traj" > /dev/null
say "== $NF frames x $NP particles ($(du -h --apparent-size "$traj" | cut -f1) file); positions: $((NF * NP * 12 / 1048576)) MiB"
m="$OUT/m-traj"
t0=$(now); mnt "$traj" "$m"; t=$(since "$t0"); out mount "$t" s "mount: $t s"
# timed(key, ...) prints "key<tab>seconds<tab>s<tab>the table's line" (rows)
$PY - "$m" "$traj" "$OUT/positions.npy" > "$OUT/read.out" <<'PYEOF'
import os, sys, time
import numpy, gsd.fl, gsd.hoomd
mnt, path, npy = sys.argv[1:]
p = os.path.join(mnt, "series", "particles", "position")

def timed(key, label, fn):
    t = time.perf_counter()
    a = fn()
    dt = time.perf_counter() - t
    print("%s\t%r\ts\t%-44s %7.3f s  %7.0f MB/s" % (key, dt, label, dt, a.nbytes / dt / 1e6))
    return a, dt

def series():
    shape = [int(x) for x in os.getxattr(p, "user.shape").decode().split(",")]
    return numpy.fromfile(p, dtype=os.getxattr(p, "user.dtype").decode()).reshape(shape)

def fl_loop():
    with gsd.fl.open(path, "rb") as f:
        return numpy.stack([f.read_chunk(i, "particles/position") for i in range(f.nframes)])

def hoomd_loop():
    with gsd.hoomd.open(path, "rb") as t:
        return numpy.stack([s.particles.position for s in t])

a, t_series = timed("series", "a. np.fromfile(series/particles/position)", series)
ref = fl_loop()
numpy.save(npy, ref)
open(npy, "rb").read()          # page cache, as the GSD file's
b, t_npy = timed("npy", "b. np.load(local .npy)", lambda: numpy.load(npy))
c, t_hoomd = timed("hoomd", "c. gsd.hoomd loop over frames", hoomd_loop)
d, t_fl = timed("fl", "d. gsd.fl read_chunk loop", fl_loop)
assert a.shape == b.shape == c.shape == d.shape, (a.shape, c.shape)
assert numpy.array_equal(a, b) and numpy.array_equal(a, c) and numpy.array_equal(a, d)
print("arrays equal, shape %s %s" % (a.shape, a.dtype))
PYEOF
rows "$OUT/read.out"
over() { echo "${T[$1]} / ${T[series]}" | bc -l; }
if [ $figures = 1 ]; then
    for r in npy hoomd fl; do printf "gsdseries.%s/series %.6g x\n" $r "$(over $r)"; done
else
    printf "series vs local .npy: %.2fx; vs gsd.hoomd loop: %.1fx; vs gsd.fl loop: %.1fx\n" \
        "$(over npy)" "$(over hoomd)" "$(over fl)"
fi
umnt "$m"
rm -f "$OUT/positions.npy"
# the same read with hpcmount's zero-copy replies off (copy path)
mnt "$traj" "$m" -o zerocopy_min_kb=0
$PY - "$m/series/particles/position" > "$OUT/read.out" <<'PYEOF'
import os, sys, time, numpy
p = sys.argv[1]
t = time.perf_counter()
shape = [int(x) for x in os.getxattr(p, "user.shape").decode().split(",")]
a = numpy.fromfile(p, dtype=os.getxattr(p, "user.dtype").decode()).reshape(shape)
dt = time.perf_counter() - t
print("series.copy\t%r\ts\t%-44s %7.3f s  %7.0f MB/s"
      % (dt, "a'. the same, -o zerocopy_min_kb=0", dt, a.nbytes / dt / 1e6))
PYEOF
rows "$OUT/read.out"
umnt "$m"
[ "$SF" -gt 0 ] || exit 0

# --- 2. the series pass over a 10^7-entry index -----------------------------------------
big="$OUT/big-$SF.gsd"
[ -f "$big" ] || "$OUT/gsd_gen" "$big" "$SF" >/dev/null
cat "$big" > /dev/null
say "== $SF frames x 10 chunks ($(du -h --apparent-size "$big" | cut -f1) file)"
m="$OUT/m-big"
t0=$(now); mnt "$big" "$m"; t=$(since "$t0"); out scan.mount "$t" s "mount: $t s"
pid=$(daemon_pid "$m")
r=$(rss_mb "$pid"); out scan.rss.mount "$r" MB "RSS after mount: $r MB"
t0=$(now); n=$(ls "$m/series" "$m/series/particles" | wc -l); t=$(since "$t0")
out scan.ls "$t" s "first ls of /series (the index pass): $t s ($n lines)"
r=$(rss_mb "$pid"); out scan.rss.ls "$r" MB "RSS after the pass: $r MB"
say "$(grep '^series:' "$m/.info")"
t0=$(now); ls -R "$m/series" >/dev/null; t=$(since "$t0"); out scan.lsR "$t" s "ls -R series again: $t s"
# a wrong array fails the bench, with its line
$PY - "$m/series/configuration/step" "$SF" > "$OUT/read.out" <<'PYEOF' || { cut -f4 "$OUT/read.out" >&2; exit 1; }
import sys, time, numpy
t = time.perf_counter()
a = numpy.fromfile(sys.argv[1], dtype="<u8")
dt = time.perf_counter() - t
ok = a.size == int(sys.argv[2]) and numpy.array_equal(a[:1000] % 1000, numpy.zeros(1000))
print("scan.step\t%r\ts\tnp.fromfile(series/configuration/step): %d values in %.3f s (%s)"
      % (dt, a.size, dt, "checked" if ok else "WRONG"))
sys.exit(0 if ok else 1)
PYEOF
rows "$OUT/read.out"
r=$(rss_mb "$pid"); out scan.rss.read "$r" MB "RSS after reading a series: $r MB"
