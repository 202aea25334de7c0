#!/bin/bash
# bench/compare.sh REV_A REV_B [BENCH...] - the same benches against two
# revisions, side by side: every figure of A and of B (median of the
# rounds), the ratio B/A of the medians and its spread (the smallest and
# largest ratio of one round's B to the same round's A).
#
# Each revision is built once, out of tree, in $COMPARE_DIR/<sha> (default
# /tmp/hpc-compare: src/ from `git archive`, build/ configured with the
# defaults, -O2) and reused by later runs; so only committed revisions can
# be compared.  The benches are this tree's (the one compare.sh is in), run
# against each build in turn, A B A B ..., ROUNDS times (3, at least 3),
# each run with RUNS=1 so that the rounds are the repetitions; a figure
# that only one side printed is shown with "-" on the other.
#
# BENCH is one of (default: h5walk)
#   h5walk   bench/hdf5_scale.sh part (a): mount, find and ls -lR of 10^4 of
#            10^5 datasets, helper and -o inproc, CPU seconds, h5ls -r as
#            the reference in the same run (walk.find/h5ls-r: goal <= 0.5)
#   h5gz     part (b): 1 GiB gzip+shuffle through the mount vs one H5Dread
#   h5gz4    part (c): 4 readers of 256 MiB vs 4 h5py processes
#   h5many   part (d): mount of 10^6 datasets, RSS
#   h5ncattrs part (e): every xattr of 2000 netCDF-4 variables (their
#            DIMENSION_LIST references) through a fresh mount vs ncdump -h
#   sion     bench/sion_bench.sh (a) and (b): one rank (TASKS, TASK_MB) read
#            sequentially with the mounted file's cache dropped, fully cold
#            (drop_caches: root) and re-read, through the mount, with -o
#            ra_max_kb=0, by squashfuse_ll and as a plain file (the
#            references' seconds over hpcmount's: sion.*.plain/hpc)
#   sionrand (c): fio random 4 KiB reads, QD1, O_DIRECT (FIO_SECS each)
#   sionmany (d): mount, RSS and ls of 10^6 SION tasks
#   carray   bench/python_bench.sh part sion: c.array() of a SIZE_MB (1024)
#            SION rank, cold (root) and warm, vs np.fromfile of the same
#            bytes (carray.sion.*.fromfile/array: goal >= 0.95 cold)
#   carrayh5 part hdf5: the same for a contiguous HDF5 dataset
#   carraygz part gzip: a GZ_MB (256) gzip+shuffle dataset vs h5py
#   carraygsd part gsd: a GSD series (NFRAMES, NPARTICLES) vs np.load
#            and a gsd.hoomd loop
#   gsdseries bench/gsd_series_bench.sh: series/particles/position of
#            NFRAMES (10^4) x NPARTICLES (1000) read through a fresh mount
#            vs np.load of a .npy, a gsd.hoomd and a gsd.fl loop; the
#            series pass over SCAN_FRAMES (10^6, 0: none) frames, RSS
#   refsdask bench/refs_bench.sh: Dask over `hpcdump refs` references: the
#            sum of two 64 MiB gzip datasets vs Dask over h5py (and over
#            the mount), the mean of a GSD series of NFRAMES (2000) x
#            NPARTICLES (10^4) vs a gsd.hoomd loop (refsdask.gsd.hoomd/refs)
# or the path of any script that takes BUILDDIR as its last argument and
# prints "name value unit" lines (other lines are kept in the log only).
#
# Environment: ROUNDS (3), COMPARE_DIR, JOBS (make -j, 2), CONFIGURE_FLAGS
# (passed to configure), and whatever the benches read (WORK, NDSETS, ...;
# the sizes named above, so that a quick run is possible: NFRAMES and
# NPARTICLES size the GSD files of carraygsd, gsdseries and refsdask alike).
# Output: the table (markdown) on stdout; each run's raw output in
# $COMPARE_DIR/runs/<time>/.  Nothing here belongs in a test: timings of a
# shared machine are not pass or fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
[ $# -ge 2 ] || { sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
rev_a=$1; rev_b=$2; shift 2
[ $# -gt 0 ] || set -- h5walk
ROUNDS=${ROUNDS:-3}; JOBS=${JOBS:-2}
[ "$ROUNDS" -ge 3 ] || { echo "compare.sh: ROUNDS must be 3 or more" >&2; exit 2; }
CDIR=${COMPARE_DIR:-/tmp/hpc-compare}
mkdir -p "$CDIR"

# build REV: the build directory of REV (built now unless done before)
build() {
    local sha d
    sha=$(git -C "$top" rev-parse --verify "$1^{commit}") || exit 2
    d=$CDIR/$sha
    (
        flock 9                    # two compare.sh building the same revision
        if [ ! -f "$d/build/.compare-built" ]; then
            echo "# building $(git -C "$top" log -1 --format='%h %s' "$sha") in $d" >&2
            rm -rf "$d/src" "$d/build"; mkdir -p "$d/src" "$d/build"
            git -C "$top" archive "$sha" | tar -x -C "$d/src"
            { (cd "$d/src" && autoreconf -fi) && (cd "$d/build" && ../src/configure ${CONFIGURE_FLAGS:-}) &&
              make -C "$d/build" -j"$JOBS"; } > "$d/build.log" 2>&1 ||
                { echo "compare.sh: building $sha failed, see $d/build.log" >&2; exit 1; }
            touch "$d/build/.compare-built"
        fi
    ) 9> "$d.lock" >&2 || exit 1
    echo "$d/build"
}

# bench_of NAME: set script and parts of a named bench (script: a path
# for a path), or fail
bench_of() {
    parts=""
    case $1 in
    h5walk) script=hdf5_scale.sh parts=a;; h5gz) script=hdf5_scale.sh parts=b;;
    h5gz4) script=hdf5_scale.sh parts=c;; h5many) script=hdf5_scale.sh parts=d;;
    h5ncattrs) script=hdf5_scale.sh parts=e;;
    sion) script=sion_bench.sh parts=ab;; sionrand) script=sion_bench.sh parts=c;;
    sionmany) script=sion_bench.sh parts=d;;
    carray) script=python_bench.sh parts=sion;; carrayh5) script=python_bench.sh parts=hdf5;;
    carraygz) script=python_bench.sh parts=gzip;; carraygsd) script=python_bench.sh parts=gsd;;
    gsdseries) script=gsd_series_bench.sh;; refsdask) script=refs_bench.sh;;
    */*) script=$1; [ -f "$1" ];;
    *) false;;
    esac
}

# run_bench NAME BUILDDIR: the bench's "name value unit" lines
run_bench() {
    local script parts
    bench_of "$1"
    case $1 in */*) RUNS=1 bash "$1" "$2"; return;; esac
    RUNS=1 PARTS=$parts bash "$here/$script" --figures "$2"
}

# an unknown name fails now, not after the builds
for bench in "$@"; do
    bench_of "$bench" || { echo "compare.sh: no bench $bench (see compare.sh's usage)" >&2; exit 2; }
done
dir_a=$(build "$rev_a"); dir_b=$(build "$rev_b")
out=$CDIR/runs/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$out"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$ROUNDS"); do
    for side in a b; do
        d=$dir_a; [ $side = a ] || d=$dir_b
        for bench in "$@"; do
            echo "# round $r, side $side, $bench" >&2
            run_bench "$bench" "$d" > "$out/$side.$r.$(basename "$bench").log" 2>&1 ||
                { echo "compare.sh: $bench failed on side $side, see $out" >&2; exit 1; }
        done
    done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

echo "# compare.sh $rev_a $rev_b $*: $ROUNDS rounds, A B alternating; $(nproc) cores, load $load0 -> $load1"
echo "# A = $(git -C "$top" log -1 --format='%h %s' "$rev_a")"
echo "# B = $(git -C "$top" log -1 --format='%h %s' "$rev_b")"
echo "# raw output: $out"
echo
# every "name value unit" line of every run as "side round name value
# unit", the figures in the order of the benches named and of their lines
for bench in "$@"; do
    for f in "$out"/?.*."$(basename "$bench").log"; do
        b=${f##*/}; side=${b%%.*}; r=${b#*.}; r=${r%%.*}
        awk -v s="$side" -v r="$r" 'NF == 3 && $2 ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ { print s, r, $1, $2, $3 }' "$f"
    done
done | awk -v rounds="$ROUNDS" '
function median(v, n,    i, j, t) {
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function num(x) { return x == "" ? "-" : sprintf(x >= 100 ? "%.0f" : x >= 10 ? "%.1f" : "%.3g", x) }
!(($3) in unit) { names[++n] = $3; unit[$3] = $5 }
{ v[$1, $2, $3] = $4 }
END {
    print "| figure | unit | A | B | B/A | per round |"
    print "| --- | --- | ---: | ---: | ---: | ---: |"
    for (k = 1; k <= n; k++) {
        name = names[k]; na = nb = 0; lo = hi = ""
        split("", va); split("", vb)
        for (i = 1; i <= rounds; i++) {
            if (("a", i, name) in v) va[++na] = v["a", i, name]
            if (("b", i, name) in v) vb[++nb] = v["b", i, name]
            if (("a", i, name) in v && ("b", i, name) in v && v["a", i, name] > 0) {
                q = v["b", i, name] / v["a", i, name]
                if (lo == "" || q < lo) lo = q
                if (hi == "" || q > hi) hi = q
            }
        }
        ma = na ? median(va, na) : ""; mb = nb ? median(vb, nb) : ""
        ratio = (na && nb && ma > 0) ? sprintf("%.2f", mb / ma) : "-"
        spread = lo == "" ? "-" : sprintf("%.2f..%.2f", lo, hi)
        printf "| %s | %s | %s | %s | %s | %s |\n", name, unit[name], num(ma), num(mb), ratio, spread
    }
}'
