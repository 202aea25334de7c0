#!/bin/bash
# bench/sion_bench.sh [--figures] [BUILDDIR] - SION read performance of
# hpcmount, side by side with hpcmount without its read-ahead of the sources
# (-o ra_max_kb=0), a plain file and squashfuse_ll serving the same bytes
# from an uncompressed squashfs image, in one run.  Needs root (drop_caches,
# read_ahead_kb), fio, squashfuse, squashfs-tools.
#
#   (a) sequential read of one rank file, the mounted file's page cache
#       dropped before each run (sources warm), and fully cold (drop_caches)
#   (b) re-read with the kernel page cache kept
#   (c) fio random 4 KiB reads, QD1, O_DIRECT (every read reaches the daemon);
#       (c') the same with -o spin_us=50
#   (d) mount time and RSS of a file with 10^6 tasks; ls of its root
#
# Environment: TASKS (8), TASK_MB (128), RUNS (3), PARTS (abcd: the parts
# run; (a) and (b) share their runs), FIO_SECS (10, per reader in (c)),
# WORK (/var/tmp/hpcbench-sion: files named by their size, kept between
# runs).  --figures prints one "name value unit" line per figure instead of
# the table (what bench/compare.sh reads): the seconds of each reader and
# each reference's time over hpcmount's ("x", above 1: hpcmount faster).
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
figures=0
[ "${1:-}" != --figures ] || { figures=1; shift; }
build=${1:-$top}
HPCMOUNT=$build/fuse/hpcmount; HPCDUMP=$build/dump/hpcdump
TASKS=${TASKS:-8}; TASK_MB=${TASK_MB:-128}; RUNS=${RUNS:-3}; PARTS=${PARTS:-abcd}
FIO_SECS=${FIO_SECS:-10}; WORK=${WORK:-/var/tmp/hpcbench-sion}
PY=/usr/bin/python3
for t in fio squashfuse_ll mksquashfs; do
    command -v $t >/dev/null || { echo "missing $t (apt-get install fio squashfuse squashfs-tools)"; exit 1; }
done
M1=$WORK/hpc; M2=$WORK/sqfs; M3=$WORK/big; M4=$WORK/hpc-nora
mkdir -p "$M1" "$M2" "$M3" "$M4"
cleanup() { for m in "$M1" "$M2" "$M3" "$M4"; do fusermount3 -u "$m" 2>/dev/null || true; done; }
trap cleanup EXIT
part() { case $PARTS in *$1*) return 0;; esac; return 1; }

# seconds to read a file sequentially with 1 MiB reads
read_secs() { local t0 t1; t0=$(date +%s.%N); dd if="$1" of=/dev/null bs=1M 2>/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
reread_secs() {  # FILE N: seconds per read of FILE, read N times in one go
    local t0 t1 files=""; for i in $(seq "$2"); do files="$files $1"; done
    t0=$(date +%s.%N); cat $files > /dev/null; t1=$(date +%s.%N); echo "($t1 - $t0) / $2" | bc -l
}
drop_file() { dd if="$1" iflag=nocache count=0 2>/dev/null; }   # fadvise DONTNEED
warm_sources() { cat "$f" "$img" "$WORK/plain" > /dev/null; }
mbs() { echo "scale=0; $bytes / $1 / 1048576" | bc -l; }
row() { printf "%-48s %9s %9s %9s %9s %7s %7s\n" "$@"; }
ratio() { echo "scale=2; $1 / $2" | bc -l | sed 's/^\./0./'; }
declare -A A
# keep the best time of KEY (seconds)
keep() { if [ -z "${A[$1]:-}" ] || [ "$(echo "$2 < ${A[$1]}" | bc -l)" = 1 ]; then A[$1]=$2; fi; }
fio_iops() {
    fio --name=r --filename="$1" --rw=randread --bs=4k --iodepth=1 --ioengine=psync \
        --direct=1 --runtime="$FIO_SECS" --time_based --size="$bytes" --output-format=terse 2>/dev/null |
        awk -F';' '{print int($8)}'
}

# ---- (a) (b) (c): one rank of TASKS, four readers -----------------------------
f=$WORK/run-$TASKS-$TASK_MB.sion; img=$WORK/img-$TASKS-$TASK_MB.sqfs; tree=$WORK/tree-$TASKS-$TASK_MB
rank=$(printf rank-%06d $((TASKS > 3 ? 3 : TASKS - 1)))   # the fourth, or the last
if part a || part b || part c; then
    if [ ! -s "$f" ]; then
        echo "# generating $TASKS tasks x $TASK_MB MiB (32 MiB chunks, fsblksize 64 KiB) in $WORK"
        $PY "$top/tests/gen/sion_gen.py" "$f.tmp" --ntasks "$TASKS" --length $((TASK_MB << 20)) \
            --chunksize $((32 << 20)) --fsblksize 65536 > /dev/null
        mv "$f.tmp" "$f"
    fi
    [ -s "$img" ] || {
        rm -rf "$tree"; "$HPCDUMP" extract "$f" "$tree"
        mksquashfs "$tree" "$img.tmp" -noI -noD -noF -noX -no-progress -quiet >/dev/null
        mv "$img.tmp" "$img"
    }
    cp "$tree/$rank" "$WORK/plain"     # the same bytes as a plain file
    "$HPCMOUNT" "$f" "$M1"
    "$HPCMOUNT" -o ra_max_kb=0 "$f" "$M4"
    squashfuse_ll "$img" "$M2"
    bytes=$(stat -c %s "$WORK/plain")
    warm_sources
fi
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# the runs of the four readers alternate, so that a change of the machine's
# load hits them alike
for i in $(seq "$RUNS"); do
    part a || part b || break
    for name in hpc:$M1/$rank nora:$M4/$rank sqfs:$M2/$rank plain:$WORK/plain; do
        k=${name%%:*}; p=${name#*:}
        drop_file "$p"; keep "$k.a" "$(read_secs "$p")"
        # a page-cache read of 128 MiB takes ~15 ms: time 8 of them at once
        # (every page of the file is cached: (a) just read it)
        keep "$k.b" "$(reread_secs "$p" 8)"
        sync; echo 3 > /proc/sys/vm/drop_caches; keep "$k.cold" "$(read_secs "$p")"
        warm_sources
    done
done
if part c; then
    A[hpc.c]=$(fio_iops "$M1/$rank"); A[nora.c]=$(fio_iops "$M4/$rank")
    A[sqfs.c]=$(fio_iops "$M2/$rank"); A[plain.c]=$(fio_iops "$WORK/plain")
    # (c') the daemon polling for the next request instead of sleeping
    fusermount3 -u "$M4"; "$HPCMOUNT" -o spin_us=50 "$f" "$M4"
    A[spin.c]=$(fio_iops "$M4/$rank")
fi
pingpong=$($PY "$here/pingpong.py")

# ---- (d) 10^6 tasks -----------------------------------------------------------
# the 10^6-task file is metadata only (--nodata): its blocks are holes
if part d; then
    big=$WORK/million.sion
    [ -s "$big" ] || { $PY "$top/tests/gen/sion_gen.py" "$big.tmp" --ntasks 1000000 --length 100 \
        --chunksize 4096 --fsblksize 4096 --nodata > /dev/null && mv "$big.tmp" "$big"; }
    t0=$(date +%s.%N); "$HPCMOUNT" "$big" "$M3"; t1=$(date +%s.%N)
    pid=$(pgrep -n -f "hpcmount $big")
    rss=$(awk '/VmRSS/{print $2}' /proc/"$pid"/status)
    t2=$(date +%s.%N); n=$(ls -f "$M3" | wc -l); t3=$(date +%s.%N)
    rss2=$(awk '/VmRSS/{print $2}' /proc/"$pid"/status)
    t4=$(date +%s.%N); cat "$M3/rank-999999" "$M3/rank-000000" > /dev/null; t5=$(date +%s.%N)
    fusermount3 -u "$M3"
    $PY "$top/tests/gen/sion_gen.py" "$WORK/tiny.sion" --lengths 100 > /dev/null
    "$HPCMOUNT" "$WORK/tiny.sion" "$M3"
    base=$(awk '/VmRSS/{print $2}' /proc/"$(pgrep -n -f "hpcmount $WORK/tiny.sion")"/status)
    fusermount3 -u "$M3"
    A[d.mount]=$(echo "$t1 - $t0" | bc -l); A[d.ls]=$(echo "$t3 - $t2" | bc -l)
    A[d.cat]=$(echo "$t5 - $t4" | bc -l); A[d.task]=$(( (rss - base) * 1024 / 1000000 ))
fi

if [ "$figures" = 1 ]; then
    fig() { printf "%s %.6g %s\n" "$1" "$3" "$2"; }
    ratio() { echo "$1 / $2" | bc -l; }   # every digit: compare.sh divides them
    # figs NAME KEY: the four readers' seconds, the references' over hpcmount's
    figs() {
        local r
        for r in hpc nora sqfs plain; do fig "sion.$1.$r" s "${A[$r.$2]}"; done
        fig "sion.$1.plain/hpc" x "$(ratio "${A[plain.$2]}" "${A[hpc.$2]}")"
        fig "sion.$1.sqfs/hpc" x "$(ratio "${A[sqfs.$2]}" "${A[hpc.$2]}")"
    }
    fig sion.pingpong us "$pingpong"
    if part a; then figs seq a; figs cold cold; fi
    if part b; then figs reread b; fi
    if part c; then
        for r in hpc nora sqfs plain spin; do fig "sion.rand.$r" IOPS "${A[$r.c]}"; done
        fig sion.rand.hpc/plain x "$(ratio "${A[hpc.c]}" "${A[plain.c]}")"
        fig sion.rand.hpc/sqfs x "$(ratio "${A[hpc.c]}" "${A[sqfs.c]}")"
        fig sion.rand.spin/sqfs x "$(ratio "${A[spin.c]}" "${A[sqfs.c]}")"
    fi
    if part d; then
        fig sion.many.mount s "${A[d.mount]}"; fig sion.many.rss.mount KiB "$rss"
        fig sion.many.rss.task B "${A[d.task]}"; fig sion.many.ls s "${A[d.ls]}"
        fig sion.many.rss.ls KiB "$rss2"; fig sion.many.cat s "${A[d.cat]}"
    fi
    exit 0
fi
echo
echo "# pipe ping-pong round trip between two processes: $pingpong us"
echo "# load average before / after: $load0 / $(cut -d' ' -f1-3 /proc/loadavg)"
if part a || part b || part c; then
    echo "# SION read benchmark: $TASKS x $TASK_MB MiB, reading $rank ($((bytes >> 20)) MiB), best of $RUNS, $(nproc) cores, $(uname -r)"
    echo "# hpc ra off: hpcmount -o ra_max_kb=0 (no read-ahead of the sources by the daemon)"
    row "measure" "hpcmount" "hpc ra off" "sqfuse_ll" "plain" "/plain" "/sq"
fi
# rowt LABEL KEY: times in seconds -> MB/s, ratios of hpcmount's speed
rowt() {
    row "$1" "$(mbs "${A[hpc.$2]}")" "$(mbs "${A[nora.$2]}")" "$(mbs "${A[sqfs.$2]}")" "$(mbs "${A[plain.$2]}")" \
        "$(ratio "${A[plain.$2]}" "${A[hpc.$2]}")" "$(ratio "${A[sqfs.$2]}" "${A[hpc.$2]}")"
}
if part a; then
    rowt "(a) seq read, mounted file cache dropped MB/s" a
    rowt "(a') seq read, all caches dropped MB/s" cold
fi
part b && rowt "(b) re-read, page cache kept MB/s" b
if part c; then
    row "(c) random 4 KiB QD1 O_DIRECT IOPS (plain: disk)" "${A[hpc.c]}" "${A[nora.c]}" "${A[sqfs.c]}" "${A[plain.c]}" \
        "$(ratio "${A[hpc.c]}" "${A[plain.c]}")" "$(ratio "${A[hpc.c]}" "${A[sqfs.c]}")"
    row "(c') the same, hpcmount -o spin_us=50 IOPS" "${A[spin.c]}" "" "${A[sqfs.c]}" "" \
        "" "$(ratio "${A[spin.c]}" "${A[sqfs.c]}")"
fi
part d || exit 0
echo
row "(d) 10^6 tasks: mount time s" "$(echo "${A[d.mount]}" | cut -c1-5)" "" "" "" "" ""
row "(d) RSS after mount, KiB" "$rss" "" "" "" "" ""
row "(d) RSS minus a 1-task mount's ($base KiB), B/task" "${A[d.task]}" "" "" "" "" ""
row "(d) ls -f | wc -l ($n entries) s" "$(echo "${A[d.ls]}" | cut -c1-5)" "" "" "" "" ""
row "(d) RSS after ls, KiB" "$rss2" "" "" "" "" ""
row "(d) cat of two rank files, s" "$(echo "${A[d.cat]}" | cut -c1-5)" "" "" "" "" ""
