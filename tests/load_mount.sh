#!/bin/bash
# load_mount.sh - every container mounts and reads with the default options
# while other processes keep every core busy (4 busy loops per core).
#
# The containers: every fixture of tests/data (the SION files, the FTI
# checkpoint directory, the GSD files, the distributed HDF set), the HDF5
# files tests/hdf5_gen writes, and, when HPC_CORPUS names a directory, each
# file of its hdf5/, hdf4/, gsd/ and sion/ that the formats' reader opens on
# the idle machine first (hpcdump ls, without the trial open's time limit;
# HDF5 files also must open in h5py).  Each is mounted with no option at
# all, the first MiB of every regular file of the mount is read and the
# byte count must equal what the sizes stat shows.
# Nothing here waits for a time: a mount or read that hangs is bounded by a
# 10-minute timeout, a limit for a dead process, not a speed.
. "$(dirname "$0")/lib.sh"
need_fuse

# the memory cap for corpus files; none in sanitizer builds, whose shadow
# memory is far larger than any cap
CAP=4194304
grep -q __asan_init "$HPCMOUNT" 2>/dev/null && CAP=unlimited

LOOPS=()
stop_load() {
    local p
    for p in "${LOOPS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${LOOPS[@]}"; do wait "$p" 2>/dev/null; done
    LOOPS=()
}
trap 'stop_load; cleanup' EXIT

# containers: LABEL<TAB>SOURCE<TAB>MAXBYTES lines (MAXBYTES 0: whole
# files); the first MiB of each file bounds the run (bigelem.h5 is 72 MiB
# of one gzip-compressed element)
MAXB=1048576
LIST="$TMP/list"
: > "$LIST"
add() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$LIST"; }

for f in "$DATA"/*.sion; do add "$(basename "$f")" "$f" $MAXB; done
for f in "$DATA"/gsd/*.gsd; do add "gsd/$(basename "$f")" "$f" $MAXB; done
add fti/master-i64 "$DATA/fti/master-i64" $MAXB
"$HPCDUMP" --version | grep -q '^formats:.* dhdf' && add dhdf/mhf.hdf "$DATA/dhdf/mhf.hdf" $MAXB
if [ -x "$top_builddir/tests/hdf5_gen" ]; then
    mkdir -p "$TMP/h5"
    if "$top_builddir/tests/hdf5_gen" "$TMP/h5" > /dev/null 2>&1; then
        for f in "$TMP"/h5/*.h5; do add "h5/$(basename "$f")" "$f" $MAXB; done
    else
        fail "tests/hdf5_gen wrote no files"
    fi
fi

# the corpus: what the reader opens on the idle machine, one file at a
# time under a memory cap (some files make libhdf5 allocate without bound)
corpus=${HPC_CORPUS:-}
if [ -n "$corpus" ] && [ -d "$corpus" ]; then
    n=0
    for kind in hdf5 hdf4 gsd sion; do
        [ -d "$corpus/$kind" ] || continue
        while IFS= read -r -d '' f; do
            case $f in *.txt|*.log|*.md|*.json|*SOURCES*) continue ;; esac
            ( ulimit -v $CAP; timeout 600 "$HPCDUMP" -o open_timeout=0 ls "$f" ) \
                > /dev/null 2>&1 || continue
            if [ $kind = hdf5 ]; then
                ( ulimit -v 4194304; timeout 600 "$PY" -c 'import h5py, sys; h5py.File(sys.argv[1], "r").close()' "$f" ) \
                    > /dev/null 2>&1 || continue
            fi
            add "corpus/$kind/${f#"$corpus/$kind/"}" "$f" $MAXB
            n=$((n + 1))
        done < <(find "$corpus/$kind" -type f -print0 | sort -z)
    done
    echo "corpus $corpus: $n files the readers open"
fi

# the load: 4 busy loops per core, started only now
ncpu=$(nproc)
for _ in $(seq $((4 * ncpu))); do
    ( while :; do :; done ) &
    LOOPS+=($!)
done
echo "load: ${#LOOPS[@]} busy loops on $ncpu cores"

# read_all MNT MAX: every regular file of MNT (whole, or its first MAX
# bytes); prints "BYTES EXPECTED" or fails
read_all() {
    local mnt=$1 max=$2 got=0 want=0 f size n
    while IFS= read -r -d '' f; do
        size=$(stat -c %s "$f") || return 1
        if [ "$max" -gt 0 ] && [ "$size" -gt "$max" ]; then size=$max; fi
        n=$(head -c "$size" "$f" | wc -c) || return 1
        got=$((got + n)); want=$((want + size))
    done < <(find "$mnt" -type f -print0)
    echo "$got $want"
}

i=0
while IFS=$'\t' read -r label src max; do
    i=$((i + 1))
    m="$TMP/m$i"
    mkdir -p "$m"
    if ! ( ulimit -v $CAP; exec timeout 600 "$HPCMOUNT" "$src" "$m" ) 2> "$TMP/err$i"; then
        fail "$label: mount under load: $(head -c 300 "$TMP/err$i")"
        continue
    fi
    MOUNTS="$MOUNTS $m"
    r=$(read_all "$m" "$max") || r="failed"
    set -- $r
    if [ "$r" != failed ] && [ "$1" = "$2" ]; then
        pass "$label: mounted and read under load ($1 bytes)"
    else
        fail "$label: reads under load: $r"
    fi
    unmount_container "$m"
done < "$LIST"

stop_load
finish
