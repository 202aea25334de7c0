#!/bin/bash
# fault_inject.sh - sources damaged under live mounts, with verified readers.
#
# For each format (SION, FTI, HDF5, distributed HDF, GSD) a private copy of
# a container is mounted, its files are copied out as the reference, and two
# reader threads (tests/mount/fault_reader.py) read random ranges with the page
# cache dropped while one source file is truncated, overwritten in place,
# replaced in place (cp new old), replaced by rename (mv new old) or
# deleted.  No read may return a byte different from the reference, and no
# read may be silently short.  Formats that do not grow (all but GSD) must
# then fail reads with EIO, log "changed since mount" once and say so in
# .info.  Reads of 4 KiB and more take the zero-copy (splice) path.  Each
# step waits for its event (reads seen, the change logged), never for a time.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
FR="$top_srcdir/tests/mount/fault_reader.py"

# damage FAULT FILE: apply one fault to FILE
damage() {
    local fault=$1 f=$2 size
    size=$(stat -c %s "$f")
    case $fault in
    # coreutils' truncate opens with O_NONBLOCK: while the daemon holds a
    # read lease (zero-copy replies) the first open fails with EAGAIN and
    # starts the lease's break; the next one goes through
    truncate) local i=0
              until truncate -s $((size / 2)) "$f" 2>/dev/null || [ $i -ge 600 ]; do
                  sleep 0.1; i=$((i + 1))
              done ;;
    overwrite) head -c $((size / 2 + 1)) /dev/urandom |
               dd of="$f" bs=4096 seek=$((size / 4)) oflag=seek_bytes conv=notrunc status=none ;;
    cp|rename)
        cp "$f" "$f.new"
        head -c $((size / 2 + 1)) /dev/urandom |
            dd of="$f.new" bs=4096 seek=$((size / 4)) oflag=seek_bytes conv=notrunc status=none
        if [ "$fault" = cp ]; then cp "$f.new" "$f"; rm -f "$f.new"; else mv "$f.new" "$f"; fi ;;
    delete) rm -f "$f" ;;
    esac
}

# wait_for PID FILE [PATTERN]: until FILE exists (and holds PATTERN), PID
# (the reader) ended, or a limit long enough for any machine (10 min)
wait_for() {
    local pid=$1 f=$2 pat=${3:-} i=0
    while [ $i -lt 6000 ] && kill -0 "$pid" 2>/dev/null; do
        if [ -e "$f" ] && { [ -z "$pat" ] || grep -q "$pat" "$f"; }; then return 0; fi
        sleep 0.1; i=$((i + 1))
    done
}

# one_case LABEL LIVE SRCDIR MOUNTARG TARGET FAULT: SRCDIR is copied to a
# private directory; MOUNTARG and TARGET are relative to it
one_case() {
    local label=$1 live=$2 srcdir=$3 arg=$4 target=$5 fault=$6
    local d="$TMP/$label-$fault" out
    mkdir -p "$d"
    cp -r "$srcdir" "$d/src"
    mount_container "$d/src/$arg" "$d/m" -o log="$d/log",zerocopy_min_kb=4 2> "$d/mount.err" ||
        { echo "FAIL: $label $fault: mount: $(head -c 300 "$d/mount.err")" > "$d/result"; return; }
    mkdir -p "$d/ref"
    cp -r "$d/m/." "$d/ref/"; rm -f "$d/ref/.info"
    "$PY" "$FR" "$d/m" "$d/ref" "$d/stop" 2 "$d/ready" "$d/damaged" "$d/after" > "$d/reader" &
    local rpid=$!
    wait_for "$rpid" "$d/ready"
    damage "$fault" "$d/src/$target"
    touch "$d/damaged"
    # reads of the damaged source, and (sources that do not grow) until the
    # core saw the change: events, not a time
    wait_for "$rpid" "$d/after"
    [ "$live" = 1 ] || wait_for "$rpid" "$d/log" 'changed since mount'
    touch "$d/stop"
    wait "$rpid"
    out=$(head -1 "$d/reader")
    {
        echo "$label $fault: $out"
        case $out in *" short=0 wrong=0") ;; *) echo "FAIL: $label $fault: bad reads"; tail -n +2 "$d/reader" ;; esac
        case $out in ok=0*) echo "FAIL: $label $fault: no good read before the fault" ;; esac
        if [ "$live" = 0 ]; then
            local any; any=$(find "$d/ref" -type f -size +0 | head -1)
            if "$PY" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)   # not the kernel cache: the daemon
os.pread(fd, 1 << 20, 0)' "$d/m/${any#"$d/ref/"}" 2>/dev/null; then
                echo "FAIL: $label $fault: a read after the change succeeded"
            fi
            [ "$(grep -c 'changed since mount' "$d/log")" = 1 ] ||
                echo "FAIL: $label $fault: not logged exactly once: $(grep -c 'changed since mount' "$d/log")"
            grep -q '^changed: ' "$d/m/.info" || echo "FAIL: $label $fault: .info does not say changed"
        fi
    } > "$d/result"
    fusermount3 -u "$d/m"          # a background subshell: lib.sh's list misses it
}

# start LABEL LIVE SRCDIR MOUNTARG TARGET FAULT...: the faults in parallel
CASES=""
start() {
    local label=$1 live=$2 srcdir=$3 arg=$4 target=$5; shift 5
    local f
    for f in "$@"; do
        one_case "$label" "$live" "$srcdir" "$arg" "$target" "$f" &
        CASES="$CASES $label-$f"
    done
}

# collect: wait for the cases started and check their results
collect() {
    wait
    local c r
    for c in $CASES; do
        r="$TMP/$c/result"
        if [ ! -s "$r" ]; then fail "$c: no result"; continue; fi
        if grep -q '^FAIL' "$r"; then fail "$(tr '\n' ' ' < "$r")"; else pass "$(head -1 "$r")"; fi
    done
    CASES=""
}

ALL="truncate overwrite cp rename delete"
t0=$(date +%s)

# SION: a multi-file set; the fault hits the second physical file
mkdir -p "$TMP/sion"; cp "$DATA"/c1_multifile.sion* "$TMP/sion/"
start sion 0 "$TMP/sion" c1_multifile.sion c1_multifile.sion.000001 $ALL
mkdir -p "$TMP/sion1"; cp "$DATA"/b_multichunk.sion "$TMP/sion1/"
start sion1 0 "$TMP/sion1" b_multichunk.sion b_multichunk.sion truncate

# GSD is live: a truncated or deleted file may lose frames, never give wrong bytes
start gsd 1 "$DATA/gsd" hoomd_traj.gsd hoomd_traj.gsd truncate delete

# FTI: one rank file of an L1 checkpoint
start fti 0 "$DATA/fti/master-i64" . \
    ckpt2-L1/Local/node1/3efcb4be-6fd4-474b-9930-b4ae00c4502d/l1/Ckpt2-Rank1.fti $ALL

# HDF5: the C API generator's file (libhdf5 reads with its own descriptor)
if [ -x "$top_builddir/tests/gen/hdf5_gen" ]; then
    mkdir -p "$TMP/h5"
    if "$top_builddir/tests/gen/hdf5_gen" "$TMP/h5" > /dev/null 2>&1 && [ -f "$TMP/h5/capi.h5" ]; then
        start hdf5 0 "$TMP/h5" capi.h5 capi.h5 $ALL
    else
        fail "hdf5: the generator wrote no capi.h5"
    fi
fi

# HDF5 chunks the daemon reads and decodes itself (gzip+shuffle, shuffle
# only, unfiltered): the helper only says where they are
mkdir -p "$TMP/h5z"
if "$PY" - "$TMP/h5z/chunks.h5" <<'PYEOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("gz", data=np.arange(400000, dtype="<f8").reshape(400, 1000),
                     chunks=(50, 100), compression="gzip", shuffle=True)
    f.create_dataset("shuf", data=np.arange(300000, dtype="<i4"), chunks=(5000,), shuffle=True)
    f.create_dataset("raw", data=np.arange(300000, dtype="<i2"), chunks=(7000,))
PYEOF
then
    start hdf5chunks 0 "$TMP/h5z" chunks.h5 chunks.h5 $ALL
else
    fail "hdf5chunks: h5py wrote no file"
fi

# distributed HDF: the master file (the core's source)
if [ -f "$DATA/dhdf/mhf.hdf" ]; then
    start dhdf 0 "$DATA/dhdf" mhf.hdf mhf.hdf $ALL
fi
collect

echo "fault injection took $(( $(date +%s) - t0 )) s"
finish
