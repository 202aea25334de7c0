#!/bin/bash
# bench/rundir_bench.sh [BUILDDIR] - a run directory of N (10^4) small
# containers of mixed formats (SION, GSD, and HDF5 / HDF4 when built), as
# hard links of the test fixtures in 100 subdirectories: mount time, a
# `find` over everything, a read of one file in every container, and the
# daemon's RSS and open descriptors after each (bounded by max_containers,
# not by N).  Environment: N, WORK.
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
build=${1:-$top}
HPCMOUNT=$build/fuse/hpcmount
N=${N:-10000}; WORK=${WORK:-/var/tmp/hpcbench-rundir}
D=$WORK/run; M=$WORK/mnt
mkdir -p "$M"
trap 'fusermount3 -u "$M" 2>/dev/null || true' EXIT
DATA=$top/tests/data
kinds="$DATA/a_4tasks.sion $DATA/gsd/hoomd_traj.gsd $DATA/b_multichunk.sion $DATA/gsd/sparse_chunks.gsd"
[ -f "$DATA/dhdf/ahf1.hdf" ] && grep -q "HAVE_HDF4 1" "$build/config.h" && kinds="$kinds $DATA/dhdf/ahf1.hdf"
if [ ! -d "$D" ] || [ "$(cat "$WORK/n" 2>/dev/null)" != "$N" ]; then
    rm -rf "$D"; mkdir -p "$D"
    set -- $kinds
    k=$#; i=0
    while [ $i -lt "$N" ]; do
        sub=$D/d$((i % 100)); mkdir -p "$sub"
        eval "src=\${$((i % k + 1))}"
        ln "$src" "$sub/c$i.${src##*.}" 2>/dev/null || cp "$src" "$sub/c$i.${src##*.}"
        i=$((i + 1))
    done
    echo "$N" > "$WORK/n"
fi
now() { date +%s.%N; }
pid_of() { pgrep -f "hpcmount.* $D $M" | head -1; }
mem() { echo "rss $(awk '/VmRSS/ {print $2}' "/proc/$1/status") KiB, fds $(ls "/proc/$1/fd" | wc -l)"; }

echo "# run directory: $N containers ($(echo $kinds | wc -w) kinds) in 100 directories; $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(now); "$HPCMOUNT" "$D" "$M"; t1=$(now)
pid=$(pid_of)
printf "mount                      %8.3f s   %s\n" "$(echo "$t1 - $t0" | bc -l)" "$(mem "$pid")"
t0=$(now); n=$(find "$M" | wc -l); t1=$(now)
printf "find (%8d entries)     %8.3f s   %s\n" "$n" "$(echo "$t1 - $t0" | bc -l)" "$(mem "$pid")"
t0=$(now); find "$M" -mindepth 2 -maxdepth 2 -name 'c*' | while read -r c; do cat "$c/.info" > /dev/null; done; t1=$(now)
printf "read .info of every one    %8.3f s   %s\n" "$(echo "$t1 - $t0" | bc -l)" "$(mem "$pid")"
open=$(sed -n 's/^containers_open: //p' "$M/.info")
echo "containers open at the end: $open (max_containers default 16)"
fusermount3 -u "$M"
