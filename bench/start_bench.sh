#!/bin/bash
# bench/start_bench.sh BUILD_A BUILD_B [ROUNDS] - what a start of the
# programs, and the reads libhdf5 cannot filter, cost in two build trees,
# side by side: the CPU milliseconds (task-clock of the whole process
# tree, `perf stat`) and the wall milliseconds of
#   version.PROG  PROG --version, for hpcmount and hpcdump; the helper
#                 started by hand (it prints one line and exits 2)
#   refs          hpcdump refs of a small HDF5 file (hpcdump and its helper)
#   mount         a mount of the same file, ls -lR, the unmount, until the
#                 daemon has exited (the daemon and its helper counted)
#   nofilter      a mount of a file of 16 chunks whose filter no plugin
#                 provides, each chunk read (EIO), the unmount
# each op REPS (20) times in a row per measurement, A B A B ... ROUNDS
# (5) times; printed: the median per op of each build and B/A.  Meant
# for the same source built two ways (configure's --disable-static-hdf5
# or --enable-sanitizers), or two revisions; OPS="op ..." picks ops.  The
# files are written once by h5py into WORK.
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
A=$(cd "$1" && pwd); B=$(cd "$2" && pwd); ROUNDS=${3:-5}
REPS=${REPS:-20}; WORK=${WORK:-/var/tmp/hpcbench-start}
PY=/usr/bin/python3
mkdir -p "$WORK/mnt"
trap 'fusermount3 -u "$WORK/mnt" 2>/dev/null || true' EXIT
H5=$WORK/small.h5
[ -f "$H5" ] || $PY -c '
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f["d"] = np.arange(1000, dtype="i4"); f.create_group("g")["e"] = np.ones((10, 10))
' "$H5"
NOF=$WORK/nofilter.h5
[ -f "$NOF" ] || $PY -c '
import sys, h5py, numpy as np
from h5py import h5d, h5p, h5s, h5t, h5z
with h5py.File(sys.argv[1], "w") as f:
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_chunk((256,))
    # filter 32008 (bitshuffle), which no Debian plugin provides: optional,
    # so that the dataset can be made; the chunks then say it was applied
    dcpl.set_filter(32008, h5z.FLAG_OPTIONAL, (0, 2))
    d = h5d.create(f.id, b"d", h5t.NATIVE_INT32, h5s.create_simple((4096,)), dcpl=dcpl)
    for i in range(16):
        d.write_direct_chunk((i * 256,), np.arange(256, dtype="i4").tobytes(), filter_mask=0)
' "$NOF"

# one measurement: REPS times OP with build $1; prints CPU and wall ms per op
measure() {
    local b=$1 op=$2 dump=$1/dump/hpcdump lib="" t0
    # hpcdump itself, not libtool's wrapper script (tests/lib/lib.sh)
    [ "$(head -c 2 "$dump")" != "#!" ] || dump=$b/dump/.libs/hpcdump lib=$b/src/.libs
    t0=$(date +%s%N)
    env LD_LIBRARY_PATH="$lib" HPCMOUNT_HELPER="$b/helper/hpcmount-helper" B="$b" OP="$op" \
        DUMP="$dump" H5="$H5" NOF="$NOF" M="$WORK/mnt" REPS="$REPS" \
        perf stat -x, -e task-clock -o "$WORK/t" bash -c '
        # the unmount, until the daemon has exited
        unmount() { fusermount3 -u "$M" && while pgrep -f "hpcmount.* $M\$"; do sleep 0.02; done; }
        for i in $(seq "$REPS"); do
            case $OP in
            version.hpcmount) "$B/fuse/hpcmount" --version ;;
            version.helper) "$B/helper/hpcmount-helper" || true ;;
            version.hpcdump) "$DUMP" --version ;;
            refs) "$DUMP" refs "$H5" ;;
            mount) "$B/fuse/hpcmount" "$H5" "$M" && ls -lR "$M" && unmount ;;
            nofilter) "$B/fuse/hpcmount" "$NOF" "$M" &&
                   for c in $(seq 0 15); do dd if="$M/d" bs=1024 skip=$c count=1 || true; done &&
                   unmount ;;
            esac
        done' >/dev/null 2>&1 || { echo "$op failed in $b" >&2; exit 1; }
    awk -F, -v n="$REPS" -v ns=$(($(date +%s%N) - t0)) \
        '$3 == "task-clock" { printf "%.1f %.1f\n", $1 / n, ns / 1e6 / n }' "$WORK/t"
}

ops=${OPS:-"version.hpcmount version.helper version.hpcdump refs mount nofilter"}
for r in $(seq "$ROUNDS"); do
    for op in $ops; do
        echo "$op A $(measure "$A" "$op")"
        echo "$op B $(measure "$B" "$op")"
    done
done > "$WORK/all"
echo "A: $A"
echo "B: $B"
# median OP SIDE COL: the median of OP's rounds on SIDE (A or B), of
# the CPU (COL 3) or wall (COL 4) milliseconds
median() {
    awk -v o="$1" -v s="$2" -v c="$3" '$1 == o && $2 == s { print $c }' "$WORK/all" | sort -n |
        awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
printf '%-18s %10s %10s %6s %10s %10s %6s\n' op "A CPU ms" "B CPU ms" B/A "A wall ms" "B wall ms" B/A
for op in $ops; do
    awk -v o="$op" -v a="$(median "$op" A 3)" -v b="$(median "$op" B 3)" \
        -v wa="$(median "$op" A 4)" -v wb="$(median "$op" B 4)" \
        'BEGIN { printf "%-18s %10.1f %10.1f %6.2f %10.1f %10.1f %6.2f\n", o, a, b, b / a, wa, wb, wb / wa }'
done
