#!/bin/bash
# bench/hdf5_scale.sh [--figures] [BUILDDIR] - HDF5 at scale, one run side
# by side:
#
#   (a) NDSETS (100000) small datasets in NGROUPS (100) groups (h5py, half of
#       them chunked, one attribute each): time of hpcmount (returns once
#       mounted; helper and -o inproc),
#       `find` over the fresh mount vs `h5ls -r` of the file, the daemon's
#       RSS after the find and after reading NREAD (10000) datasets;
#   (b) a GZ_MB (1024) MiB float64 dataset, chunks of 64 x 1024, shuffle +
#       gzip 1, read sequentially (dd bs=1M) through a fresh mount vs one
#       H5Dread of the whole dataset into memory (bench/hdf5_h5dread.c);
#   (c) 4 datasets of GZ4_MB (256) MiB each like (b), read by 4 concurrent
#       dd through one fresh mount vs 4 concurrent h5py processes reading
#       one dataset each (ds[()]);
#   (d) NBIG (10^6) datasets in 1000 groups (written with the C API,
#       bench/hdf5_many.c): mount time, daemon RSS after the mount and
#       after listing one group of 1000 with `ls -l`;
#   (e) a netCDF-4 file (netCDF4-python) of NCVARS (2000) variables over
#       three dimensions with coordinate variables, so every variable has
#       a DIMENSION_LIST of references and each scale a REFERENCE_LIST:
#       every xattr read (getfattr -R -d) through a fresh mount, wall and
#       CPU of daemon + helper, vs `ncdump -h` of the file.
# Files are written once into WORK (/var/tmp/hpcbench-h5scale) and are warm
# in the page cache; best of RUNS (3) for each figure, sides alternating.
# PARTS (abcd) picks the parts.  USERBLOCK=N writes the file of (b) and
# (c) after a user block of N bytes (a power of two from 512; JLD2 files
# have one), where chunk addresses no longer count from the file's start.  (a) and (b) also run with -o inproc (the
# library in the daemon instead of the helper process) side by side, with
# the CPU seconds of the daemon and its helper (from /proc) next to the
# wall times: the cost of the isolation.  LOAD=N keeps N busy loops running
# (normal priority, started by this script) during every part: the wall
# time under load, where each round trip to the helper waits for a CPU.
# --figures prints one "name value unit" line per figure of the parts run
# instead of the table (what bench/compare.sh reads).
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
figures=0
[ "${1:-}" != --figures ] || { figures=1; shift; }
build=${1:-$top}
HPCMOUNT=$build/fuse/hpcmount
NDSETS=${NDSETS:-100000}; NGROUPS=${NGROUPS:-100}; NREAD=${NREAD:-10000}
GZ_MB=${GZ_MB:-1024}; GZ4_MB=${GZ4_MB:-256}; RUNS=${RUNS:-3}; PARTS=${PARTS:-abcde}
NCVARS=${NCVARS:-2000}
USERBLOCK=${USERBLOCK:-0}
WORK=${WORK:-/var/tmp/hpcbench-h5scale}
PY=/usr/bin/python3
M=$WORK/mnt
mkdir -p "$M"
LOAD=${LOAD:-0}
busy=""
cleanup() {
    fusermount3 -u "$M" 2>/dev/null || true
    [ -z "$busy" ] || kill $busy 2>/dev/null || true
}
trap cleanup EXIT

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc -l; }
best() { sort -g | head -1; }
daemon_pid() { pgrep -n -f "hpcmount.* $1 $M\$"; }
rss_mib() { awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$1/status"; }
part() { case $PARTS in *$1*) return 0;; esac; return 1; }
# CPU seconds (user + system) of the daemon of file $1 and of its helper
cpu_of() {
    local t=0 p
    for p in $(daemon_pid "$1") $(pgrep -f "hpcmount-helper .* $1( |\$)"); do
        t=$(awk -v hz="$(getconf CLK_TCK)" -v t="$t" '{ sub(/.*\) /, ""); print t + ($12 + $13) / hz }' "/proc/$p/stat")
    done
    echo "$t"
}
# unmount FILE: the unmount, until the daemon of FILE and its helper have
# exited: one still exiting would count in the next mount's CPU (cpu_of)
# and share the CPU with the next figure
unmount() {
    fusermount3 -u "$M"
    while [ -n "$(daemon_pid "$1")$(pgrep -f "hpcmount-helper .* $1( |\$)")" ]; do sleep 0.01; done
}
# timed FILE OUT CPUOUT COMMAND...: wall and CPU seconds of COMMAND
timed() {
    local f=$1 out=$2 cout=$3 t0 t1 c0 c1; shift 3
    c0=$(cpu_of "$f"); t0=$(now); "$@"; t1=$(now); c1=$(cpu_of "$f")
    secs "$t0" "$t1" >> "$WORK/$out"; secs "$c0" "$c1" >> "$WORK/$cout"
}

many=$WORK/many-$NDSETS.h5
if [ ! -s "$many" ]; then
    echo "# generating $many"
    $PY - "$many" "$NDSETS" "$NGROUPS" <<'PY'
import sys, h5py, numpy as np
path, n, ng = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = np.arange(10, dtype="<f4")
with h5py.File(path + ".tmp", "w") as f:
    for g in range(ng):
        grp = f.create_group("g%03d" % g)
        for i in range(n // ng):
            d = grp.create_dataset("d%06d" % i, data=data, chunks=(5,) if i % 2 else None)
            d.attrs["k"] = i
import os; os.rename(path + ".tmp", path)
PY
fi
gz=$WORK/gz-$GZ_MB-$GZ4_MB.h5
[ "$USERBLOCK" = 0 ] || gz=$WORK/gz-$GZ_MB-$GZ4_MB-ub$USERBLOCK.h5
if { part b || part c; } && [ ! -s "$gz" ]; then
    echo "# generating $gz"
    $PY - "$gz" "$GZ_MB" "$GZ4_MB" "$USERBLOCK" <<'PY'
import sys, h5py, numpy as np
path, mb, mb4, ub = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
cols, slab = 1024, 8192
rng = np.random.default_rng(1)
x = np.arange(cols) / cols
def fill(ds, rows):
    for r in range(0, rows, slab):
        n = min(slab, rows - r)
        t = (np.arange(r, r + n) / rows)[:, None]
        # a smooth field plus noise on a 1/1024 grid: compressible like real data
        ds[r:r + n] = np.round((np.sin(6.3 * x + 3 * t) * 40 + rng.normal(0, 0.5, (n, cols))) * 1024) / 1024
with h5py.File(path + ".tmp", "w", userblock_size=ub) as f:
    for name, size in [("gz", mb)] + [("r%d" % i, mb4) for i in range(4)]:
        rows = size * 1024 * 1024 // 8 // cols
        fill(f.create_dataset(name, (rows, cols), "<f8", chunks=(64, cols), compression="gzip",
                              compression_opts=1, shuffle=True), rows)
import os; os.rename(path + ".tmp", path)
PY
fi
cc -O2 $(pkg-config --cflags hdf5) "$here/hdf5_h5dread.c" -o "$WORK/h5dread" $(pkg-config --libs hdf5)
NBIG=${NBIG:-1000000}
big=$WORK/many-c-$NBIG.h5
if part d && [ ! -s "$big" ]; then
    echo "# generating $big"
    cc -O2 $(pkg-config --cflags hdf5) "$here/hdf5_many.c" -o "$WORK/hdf5_many" $(pkg-config --libs hdf5)
    "$WORK/hdf5_many" "$big.tmp" 1000 $((NBIG / 1000)) && mv "$big.tmp" "$big"
fi
nc=$WORK/nc-$NCVARS.nc
if part e && [ ! -s "$nc" ]; then
    echo "# generating $nc"
    $PY - "$nc" "$NCVARS" <<'PY'
import sys, os, netCDF4, numpy as np
path, n = sys.argv[1], int(sys.argv[2])
with netCDF4.Dataset(path + ".tmp", "w") as f:
    for d, size in (("time", 4), ("lat", 5), ("lon", 6)):
        f.createDimension(d, size)
        v = f.createVariable(d, "f8", (d,))
        v[:] = np.arange(size)
        v.units = "1"
    for i in range(n):
        v = f.createVariable("v%05d" % i, "f4", ("time", "lat", "lon"))
        v[:] = i
        v.long_name = "variable %d" % i
os.rename(path + ".tmp", path)
PY
fi
cat "$many" > /dev/null
if part b || part c; then cat "$gz" > /dev/null; fi
if part e; then cat "$nc" > /dev/null; fi
# builds from before the helper process have no -o inproc (later ones list
# it in --help-all, those before 3566b28 in --help): their library
# runs in the daemon anyway (bench/compare.sh runs this against old builds)
inproc="-o inproc"
{ "$HPCMOUNT" --help-all; "$HPCMOUNT" --help; } 2>&1 | grep -q inproc || inproc=""
for k in $(seq "$LOAD"); do sh -c 'while :; do :; done' & busy="$busy $!"; done

# ---- (a) the tree ----------------------------------------------------------
: > "$WORK/a.mount"; : > "$WORK/a.mount0"; : > "$WORK/a.find"; : > "$WORK/a.h5ls"; : > "$WORK/a.h5lsc"
: > "$WORK/a.rss"; : > "$WORK/a.rss2"; : > "$WORK/a.findc"; : > "$WORK/a.find0"; : > "$WORK/a.find0c"
: > "$WORK/a.ls"; : > "$WORK/a.lsc"; : > "$WORK/a.ls0"; : > "$WORK/a.ls0c"
lsl() { ls -lR "$M"/g00[0-9] > /dev/null; }   # stat and xattrs of 10^4 datasets
for i in $(seq "$RUNS"); do
    part a || break
    t0=$(now); "$HPCMOUNT" "$many" "$M"; t1=$(now); secs "$t0" "$t1" >> "$WORK/a.mount"
    pid=$(daemon_pid "$many")
    timed "$many" a.find a.findc find "$M" -fprint /dev/null
    timed "$many" a.ls a.lsc lsl
    rss_mib "$pid" >> "$WORK/a.rss"
    find "$M" -type f | head -n "$NREAD" | xargs cat > /dev/null
    rss_mib "$pid" >> "$WORK/a.rss2"
    unmount "$many"
    t0=$(now); "$HPCMOUNT" $inproc "$many" "$M"; t1=$(now); secs "$t0" "$t1" >> "$WORK/a.mount0"
    timed "$many" a.find0 a.find0c find "$M" -fprint /dev/null
    timed "$many" a.ls0 a.ls0c lsl
    unmount "$many"
    t0=$(now); /usr/bin/time -f "%U + %S" -o "$WORK/a.time" h5ls -r "$many" > /dev/null; t1=$(now)
    secs "$t0" "$t1" >> "$WORK/a.h5ls"; bc -l < "$WORK/a.time" >> "$WORK/a.h5lsc"
done

# ---- (b) one reader ----------------------------------------------------------
: > "$WORK/b.mount"; : > "$WORK/b.ref"; : > "$WORK/b.mountc"; : > "$WORK/b.mount0"; : > "$WORK/b.mount0c"
for i in $(seq "$RUNS"); do
    part b || break
    "$HPCMOUNT" "$gz" "$M"
    timed "$gz" b.mount b.mountc dd if="$M/gz" of=/dev/null bs=1M status=none
    unmount "$gz"
    "$HPCMOUNT" $inproc "$gz" "$M"
    timed "$gz" b.mount0 b.mount0c dd if="$M/gz" of=/dev/null bs=1M status=none
    unmount "$gz"
    t0=$(now); "$WORK/h5dread" "$gz" /gz > /dev/null; t1=$(now); secs "$t0" "$t1" >> "$WORK/b.ref"
done

# ---- (c) four readers ------------------------------------------------------------
: > "$WORK/c.mount"; : > "$WORK/c.ref"
for i in $(seq "$RUNS"); do
    part c || break
    "$HPCMOUNT" "$gz" "$M"
    t0=$(now)
    for k in 0 1 2 3; do dd if="$M/r$k" of=/dev/null bs=1M 2>/dev/null & done
    wait; t1=$(now); secs "$t0" "$t1" >> "$WORK/c.mount"
    unmount "$gz"
    t0=$(now)
    for k in 0 1 2 3; do $PY -c "import sys, h5py; h5py.File(sys.argv[1])[sys.argv[2]][()]" "$gz" "r$k" & done
    wait; t1=$(now); secs "$t0" "$t1" >> "$WORK/c.ref"
done

# ---- (d) 10^6 datasets -----------------------------------------------------------
: > "$WORK/d.mount"; : > "$WORK/d.mount0"; : > "$WORK/d.rss"; : > "$WORK/d.rss2"
part d && cat "$big" > /dev/null
for i in $(seq "$RUNS"); do
    part d || break
    t0=$(now); "$HPCMOUNT" "$big" "$M"; t1=$(now); secs "$t0" "$t1" >> "$WORK/d.mount"
    unmount "$big"
    t0=$(now); "$HPCMOUNT" $inproc "$big" "$M"; t1=$(now); secs "$t0" "$t1" >> "$WORK/d.mount0"
    pid=$(daemon_pid "$big")
    rss_mib "$pid" >> "$WORK/d.rss"
    ls -l "$M/g0500" > /dev/null
    rss_mib "$pid" >> "$WORK/d.rss2"
    unmount "$big"
done

# ---- (e) attributes of references -------------------------------------------
: > "$WORK/e.mount"; : > "$WORK/e.mountc"; : > "$WORK/e.ref"
for i in $(seq "$RUNS"); do
    part e || break
    "$HPCMOUNT" "$nc" "$M"
    timed "$nc" e.mount e.mountc sh -c 'getfattr -R -d -m - "$0" > /dev/null 2>&1' "$M"
    unmount "$nc"
    t0=$(now); ncdump -h "$nc" > /dev/null; t1=$(now); secs "$t0" "$t1" >> "$WORK/e.ref"
done

v() { best < "$WORK/$1" | grep . || echo 0; }
ratio() { echo "$1 / $2" | bc -l; }
largest() { sort -g "$WORK/$1" | tail -1; }
if [ "$figures" = 1 ]; then
    # fig NAME UNIT VALUE: one figure (best of RUNS, or as given)
    fig() { printf "%s %.4f %s\n" "$1" "$3" "$2"; }
    if part a; then
        fig walk.mount s "$(v a.mount)"; fig walk.mount.inproc s "$(v a.mount0)"
        fig walk.find s "$(v a.find)"; fig walk.find.cpu s "$(v a.findc)"
        fig walk.find.inproc s "$(v a.find0)"; fig walk.find.inproc.cpu s "$(v a.find0c)"
        fig walk.lslR s "$(v a.ls)"; fig walk.lslR.cpu s "$(v a.lsc)"
        fig walk.lslR.inproc s "$(v a.ls0)"; fig walk.lslR.inproc.cpu s "$(v a.ls0c)"
        fig walk.h5ls-r s "$(v a.h5ls)"; fig walk.h5ls-r.cpu s "$(v a.h5lsc)"
        fig walk.find/h5ls-r x "$(ratio "$(v a.find)" "$(v a.h5ls)")"
        fig walk.find.cpu/h5ls-r.cpu x "$(ratio "$(v a.findc)" "$(v a.h5lsc)")"
        fig walk.rss.find MiB "$(largest a.rss)"; fig walk.rss.read MiB "$(largest a.rss2)"
    fi
    if part b; then
        fig gz.read s "$(v b.mount)"; fig gz.read.cpu s "$(v b.mountc)"
        fig gz.read.inproc s "$(v b.mount0)"; fig gz.read.inproc.cpu s "$(v b.mount0c)"
        fig gz.h5dread s "$(v b.ref)"
        fig gz.h5dread/read x "$(ratio "$(v b.ref)" "$(v b.mount)")"
    fi
    if part c; then
        fig gz4.read s "$(v c.mount)"; fig gz4.h5py s "$(v c.ref)"
        fig gz4.h5py/read x "$(ratio "$(v c.ref)" "$(v c.mount)")"
    fi
    if part e; then
        fig ncattrs.getfattr s "$(v e.mount)"; fig ncattrs.getfattr.cpu s "$(v e.mountc)"
        fig ncattrs.ncdump-h s "$(v e.ref)"
    fi
    if part d; then
        fig many.mount s "$(v d.mount)"; fig many.mount.inproc s "$(v d.mount0)"
        fig many.rss.mount MiB "$(largest d.rss)"; fig many.rss.ls MiB "$(largest d.rss2)"
    fi
    exit 0
fi
printf "%-66s %10s\n" "HDF5 at scale, best of $RUNS" "result"
printf "%-66s %10.2f\n" "(a) hpcmount of $NDSETS datasets in $NGROUPS groups, s (helper)" "$(v a.mount)"
printf "%-66s %10.2f\n" "(a) hpcmount, -o inproc (library in the daemon), s" "$(v a.mount0)"
printf "%-66s %10.2f\n" "(a) find over the fresh mount, s (helper)" "$(v a.find)"
printf "%-66s %10.2f\n" "(a) the same, CPU s of daemon + helper" "$(v a.findc)"
printf "%-66s %10.2f\n" "(a) find over the fresh mount, s (-o inproc)" "$(v a.find0)"
printf "%-66s %10.2f\n" "(a) the same, CPU s of the daemon" "$(v a.find0c)"
printf "%-66s %10.2f\n" "(a) then ls -lR of 10 groups (10^4 datasets), s (helper)" "$(v a.ls)"
printf "%-66s %10.2f\n" "(a) the same, CPU s of daemon + helper" "$(v a.lsc)"
printf "%-66s %10.2f\n" "(a) then ls -lR of 10 groups, s (-o inproc)" "$(v a.ls0)"
printf "%-66s %10.2f\n" "(a) the same, CPU s of the daemon" "$(v a.ls0c)"
printf "%-66s %10.2f\n" "(a) h5ls -r of the file, s" "$(v a.h5ls)"
printf "%-66s %10.2f\n" "(a) the same, CPU s" "$(v a.h5lsc)"
printf "%-66s %10.2f\n" "(a) ratio find / h5ls -r (goal <= 0.5)" "$(ratio "$(v a.find)" "$(v a.h5ls)")"
printf "%-66s %10.2f\n" "(a) the same in CPU s (helper)" "$(ratio "$(v a.findc)" "$(v a.h5lsc)")"
printf "%-66s %10s\n" "(a) daemon RSS after the find, MiB (largest of runs)" "$(largest a.rss)"
printf "%-66s %10s\n" "(a) daemon RSS after reading $NREAD datasets, MiB (largest)" "$(largest a.rss2)"
printf "%-66s %10.2f\n" "(b) $GZ_MB MiB gzip+shuffle: hpcmount, dd bs=1M, s (helper)" "$(v b.mount)"
printf "%-66s %10.2f\n" "(b) the same, CPU s of daemon + helper" "$(v b.mountc)"
printf "%-66s %10.2f\n" "(b) the same with -o inproc, s" "$(v b.mount0)"
printf "%-66s %10.2f\n" "(b) the same with -o inproc, CPU s of the daemon" "$(v b.mount0c)"
printf "%-66s %10.2f\n" "(b) one H5Dread of the whole dataset, s" "$(v b.ref)"
printf "%-66s %10.2f\n" "(b) ratio H5Dread / hpcmount (goal >= 1.8)" "$(ratio "$(v b.ref)" "$(v b.mount)")"
printf "%-66s %10.2f\n" "(c) 4 x $GZ4_MB MiB: 4 dd through one mount, s" "$(v c.mount)"
printf "%-66s %10.2f\n" "(c) 4 h5py processes, ds[()] each, s" "$(v c.ref)"
printf "%-66s %10.2f\n" "(c) ratio h5py / hpcmount (goal >= 1.3)" "$(ratio "$(v c.ref)" "$(v c.mount)")"
printf "%-66s %10.2f\n" "(d) hpcmount of $NBIG datasets in 1000 groups, s (default)" "$(v d.mount)"
printf "%-66s %10.2f\n" "(d) hpcmount, -o inproc, s" "$(v d.mount0)"
printf "%-66s %10s\n" "(d) daemon RSS after the mount, MiB (largest)" "$(largest d.rss)"
printf "%-66s %10s\n" "(d) daemon RSS after ls -l of a group of 1000, MiB (largest)" "$(largest d.rss2)"
printf "%-66s %10.2f\n" "(e) getfattr -R -d of $NCVARS netCDF-4 variables, s (helper)" "$(v e.mount)"
printf "%-66s %10.2f\n" "(e) the same, CPU s of daemon + helper" "$(v e.mountc)"
printf "%-66s %10.2f\n" "(e) ncdump -h of the file, s" "$(v e.ref)"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (LOAD=$LOAD busy loops of this script)"
