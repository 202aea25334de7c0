#!/bin/bash
# gsd_bench.sh - GSD reader at scale, side by side with squashfuse_ll.
#
#   bench/gsd_bench.sh [BUILDDIR] [NFRAMES] [SQUASH_FRAMES]
#
# 1. builds bench/gsd_gen.c and checks a 1000-frame output against what
#    python3-gsd reads;
# 2. NFRAMES (default 10^6) x 10 chunks: mount time (3 runs), daemon RSS
#    after mount / ls / a walk, `ls frames | wc -l` time, walk of the first
#    10^4 frames;
# 3. SQUASH_FRAMES (default 10^5) x 10 chunks: hpcdump extract, mksquashfs
#    (uncompressed, as the other formats' benchmarks),
#    then `find` and a stat walk of every entry, cold (fresh mount) and warm
#    (again), through hpcmount and through squashfuse_ll; a cat of every file.
# Needs fuse3, squashfuse, squashfs-tools, python3-gsd.  Output in $OUT.
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
B=${1:-$top}; NF=${2:-1000000}; SF=${3:-100000}
OUT=${OUT:-${TMPDIR:-/tmp}/gsd-bench}
PY=/usr/bin/python3
HPCMOUNT="$B/fuse/hpcmount"; HPCDUMP="$B/dump/hpcdump"
mkdir -p "$OUT"
MOUNTS=""
cleanup() { for m in $MOUNTS; do fusermount3 -u "$m" 2>/dev/null || true; done; }
trap cleanup EXIT

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc -l | xargs printf '%.3f'; }
# pid of the daemon serving mountpoint $1
daemon_pid() { ps -eo pid,args | awk -v m="$1" '$0 ~ m && /hpcmount|squashfuse/ && !/awk/ {print $1; exit}'; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
mnt() { mkdir -p "$2"; "$HPCMOUNT" "$1" "$2"; MOUNTS="$MOUNTS $2"; }
umnt() { fusermount3 -u "$1"; MOUNTS=$(echo " $MOUNTS " | sed "s# $1 # #"); }

gcc -O2 $(pkg-config --cflags glib-2.0) "$here/gsd_gen.c" -o "$OUT/gsd_gen" $(pkg-config --libs glib-2.0)

# --- 1. the generator against python3-gsd -------------------------------------
"$OUT/gsd_gen" "$OUT/check.gsd" 1000 >/dev/null
$PY - "$OUT/check.gsd" <<'EOF'
import sys, numpy, gsd.fl
f = gsd.fl.open(sys.argv[1], "rb")
names = ["configuration/step", "configuration/box", "particles/N", "particles/position",
         "particles/velocity", "particles/typeid", "particles/image", "particles/charge",
         "log/energy", "log/temperature"]
assert f.nframes == 1000 and f.gsd_version == (2, 0)
assert sorted(f.find_matching_chunk_names("")) == sorted(names)
for fr in range(0, 1000, 7):
    for k, n in enumerate(names):
        a = f.read_chunk(fr, n).reshape(-1)
        i = numpy.arange(a.size)
        x = fr * 1000.0 + k * 10.0 + i
        exp = {numpy.dtype("float32"): lambda: x.astype(numpy.float32) * numpy.float32(0.5),
               numpy.dtype("float64"): lambda: x * 0.25,
               numpy.dtype("int32"): lambda: (fr * 1000 + k * 10 + i) % 7 - 3}.get(
                   a.dtype, lambda: fr * 1000 + k * 10 + i)()
        assert numpy.array_equal(a, numpy.asarray(exp).astype(a.dtype)), (fr, n)
print("gsd_gen output checked against python3-gsd %s" % gsd.__version__)
EOF

# --- 2. scale -------------------------------------------------------------------
big="$OUT/big.gsd"
[ -f "$big.done.$NF" ] || { "$OUT/gsd_gen" "$big" "$NF"; touch "$big.done.$NF"; }
cat "$big" > /dev/null     # page cache warm: we measure the reader, not the disk
echo "== $NF frames x 10 chunks ($(du -h --apparent-size "$big" | cut -f1) apparent)"
m="$OUT/m-big"
for run in 1 2 3; do
    t0=$(now); mnt "$big" "$m"; echo "mount time run $run: $(since "$t0") s"
    [ $run = 3 ] || umnt "$m"
done
pid=$(daemon_pid "$m")
echo "RSS after mount: $(rss_mb "$pid") MB"
t0=$(now); n=$(ls "$m/frames" | wc -l); echo "ls frames | wc -l: $n entries in $(since "$t0") s (cold)"
t0=$(now); ls "$m/frames" | wc -l >/dev/null; echo "ls frames | wc -l again: $(since "$t0") s (warm)"
echo "RSS after ls: $(rss_mb "$pid") MB"
W=$((NF < 10000 ? NF : 10000))
t0=$(now); n=$(find $(seq -f "$m/frames/%06.0f" 0 $((W - 1))) | wc -l); t=$(since "$t0")
echo "find of the first $W frames: $n entries in $t s ($(echo "$t * 1000000 / $n" | bc -l | xargs printf '%.1f') us/entry)"
t0=$(now); n=$(find $(seq -f "$m/frames/%06.0f" $((NF - W)) $((NF - 1))) -type f | wc -l); t=$(since "$t0")
echo "find of the last $W frames (end of the index): $n files in $t s"
echo "RSS after walks: $(rss_mb "$pid") MB"
last=$(printf '%06d' $((NF - 1)))
t0=$(now); "$HPCDUMP" ls "$big" "/frames/$last/particles" >/dev/null
echo "hpcdump ls of the last frame (open + lookup, no FUSE): $(since "$t0") s"
t0=$(now); n=$("$HPCDUMP" ls -R "$big" | wc -l); t=$(since "$t0")
echo "hpcdump ls -R of the whole tree (no FUSE): $n lines in $t s"
umnt "$m"

# --- 3. side by side with squashfuse_ll on the same tree --------------------------
small="$OUT/small.gsd"; sq="$OUT/small.sqfs"
if [ ! -f "$sq.done.$SF" ]; then
    "$OUT/gsd_gen" "$small" "$SF" >/dev/null
    rm -rf "$OUT/tree"
    t0=$(now); "$HPCDUMP" extract "$small" "$OUT/tree"; echo "hpcdump extract of $SF frames: $(since "$t0") s"
    rm -f "$sq"
    t0=$(now); mksquashfs "$OUT/tree" "$sq" -noI -noD -noF -noX -no-duplicates -quiet -no-progress -processors 2 >/dev/null
    echo "mksquashfs: $(since "$t0") s"
    rm -rf "$OUT/tree"
    touch "$sq.done.$SF"
fi
cat "$small" "$sq" > /dev/null
echo "== $SF frames x 10 chunks: hpcmount vs squashfuse_ll"
for kind in hpcmount squashfuse_ll; do
    m="$OUT/m-$kind"; mkdir -p "$m"
    t0=$(now)
    if [ $kind = hpcmount ]; then "$HPCMOUNT" "$small" "$m"; else squashfuse_ll "$sq" "$m"; fi
    MOUNTS="$MOUNTS $m"
    while ! grep -q " $m fuse" /proc/self/mounts; do sleep 0.01; done
    echo "$kind: mount $(since "$t0") s, RSS $(rss_mb "$(daemon_pid "$m")") MB"
    for pass in cold warm; do
        t0=$(now); n=$(find "$m" -printf '%s\n' | wc -l); t=$(since "$t0")
        echo "$kind: find+stat walk ($pass): $n entries in $t s = $(echo "$t * 1000000 / $n" | bc -l | xargs printf '%.1f') us/entry"
    done
    t0=$(now); n=$(ls "$m/frames" | wc -l); echo "$kind: ls frames | wc -l ($n): $(since "$t0") s"
    t0=$(now); find "$m/frames" -type f -exec cat {} + | sha256sum | cut -c1-16 > "$OUT/$kind.sum"
    echo "$kind: cat of every file: $(since "$t0") s (sha256 $(cat "$OUT/$kind.sum"))"
    echo "$kind: RSS after walks $(rss_mb "$(daemon_pid "$m")") MB"
    umnt "$m"
done
cmp -s "$OUT/hpcmount.sum" "$OUT/squashfuse_ll.sum" && echo "same bytes through both" || echo "BYTES DIFFER"
