#!/bin/sh
# hdf5_cve.sh [DIR] - the HDF Group's CVE and fuzzer reproducers (DIR, or
# $HPC_CVE_DIR; skipped when absent): every file is walked and read through
# a run-directory mount and through hpcdump.  Each is refused with one line
# or served (an object libhdf5 cannot serve: an I/O error for it and a
# log line); the daemon never dies and nothing hangs; a healthy container
# of the same mount reads right after every file.  Loops end by the
# helper's CPU limit (-o helper_cpu=2), not by a clock; the $WATCH s
# timeout around each step is only a watchdog for a hang (a deadlock
# uses no CPU), so far above any file's time on a busy machine that no
# load reaches it.  libhdf5 runs in the
# supervised helper process (src/container/hpc_remote.h).
. "$(dirname "$0")/../lib/lib.sh"
CVE=${1:-${HPC_CVE_DIR:-}}
if [ -z "$CVE" ] || [ ! -d "$CVE" ]; then
    echo "SKIP: no folder of CVE reproducers (argument or HPC_CVE_DIR)"; exit 77
fi
need_fuse
"$HPCDUMP" --version | grep -q '^formats:.* hdf5' || { echo "SKIP: HDF5 reader not built"; exit 77; }
# some of these files make libhdf5 allocate without bound: in plain builds
# the address space of everything here is bounded (sanitizer builds need
# terabytes of it; there the helper's RSS is watched, -o helper_mem)
ldd "$HPCMOUNT" | grep -q libasan || ulimit -v 4194304
# crashes inside the helper are expected: its sanitizer reports go aside
mkdir -p "$TMP/expected"
export ASAN_OPTIONS="log_path=$TMP/expected/asan:${ASAN_OPTIONS#log_path=*:}"
export UBSAN_OPTIONS="log_path=$TMP/expected/ubsan:print_stacktrace=1"
OPTS="-o helper_cpu=2 -o helper_mem=1G"
WATCH=600

RUN="$TMP/run"
mkdir -p "$RUN"
$PY - "$RUN/healthy.h5" <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f["x"] = np.arange(100000, dtype="<i4")
    f.create_dataset("z", data=np.arange(200000, dtype="<f8"), chunks=(1000,), compression="gzip")
EOF
X=$($PY -c "import hashlib, numpy as np; print(hashlib.sha256(np.arange(100000, dtype='<i4').tobytes()).hexdigest())")
Z=$($PY -c "import hashlib, numpy as np; print(hashlib.sha256(np.arange(200000, dtype='<f8').tobytes()).hexdigest())")

MNT="$TMP/m"
mkdir -p "$MNT"
# shellcheck disable=SC2086
"$HPCMOUNT" -f -o log="$TMP/log" $OPTS "$RUN" "$MNT" 2>"$TMP/daemon.err" &
PID=$!
MOUNTS="$MNT"
i=0
while ! is_mounted "$MNT" && [ $i -lt 300 ] && kill -0 $PID 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
check "the run directory is mounted" is_mounted "$MNT"

healthy() {
    [ "$(timeout $WATCH sha256sum "$MNT/healthy.h5/x" | cut -d' ' -f1)" = "$X" ] &&
    [ "$(timeout $WATCH sha256sum "$MNT/healthy.h5/z" | cut -d' ' -f1)" = "$Z" ]
}

# hpcdump's stderr when it exits non-zero: one line (refused at open), or
# read-time errors: an "I/O error" line per object libhdf5 could not serve,
# besides the log lines that name the file.
refused_right() {
    [ "$(wc -l <"$1")" -eq 1 ] && return 0
    grep -q "^hpcdump: .*: I/O error$" "$1" &&
        ! grep -v -F -e "hpcmount: $2: " "$1" | grep -q -v "^hpcdump: .*: I/O error$"
}

n=0 hangs=0 deaths=0 bad=0
for f in $(find "$CVE" -type f -name '*.h5' | sort); do
    n=$((n + 1))
    b=$(basename "$f")
    cp "$f" "$RUN/$b"
    # the mount: list, stat, read every file, the attributes and .info
    timeout $WATCH sh -c 'ls -lR "$1"; find "$1" -type f -exec cat {} +; cat "$1/.info"; getfattr -R -d "$1"' \
        sh "$MNT/$b" >/dev/null 2>&1
    rc=$?
    [ $rc -ge 124 ] && { hangs=$((hangs + 1)); fail "$b through the mount: not finished in $WATCH s (rc $rc)"; }
    kill -0 $PID 2>/dev/null || { deaths=$((deaths + 1)); fail "$b: the daemon died"; break; }
    healthy || fail "$b: the healthy container read wrong while $b was served"
    # hpcdump: refused with one line, or listed (objects libhdf5 cannot
    # serve with their errors); then every file extracted
    # shellcheck disable=SC2086
    timeout $WATCH "$HPCDUMP" $OPTS ls -l -R "$f" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -ge 124 ]; then
        hangs=$((hangs + 1)); fail "hpcdump ls $b: hung or died (rc $rc)"
    elif [ $rc -ne 0 ] && ! refused_right "$TMP/err" "$f"; then
        bad=$((bad + 1)); fail "hpcdump ls $b: refused with $(wc -l <"$TMP/err") lines"
    elif [ $rc -eq 0 ]; then
        rm -rf "$TMP/x"
        # shellcheck disable=SC2086
        timeout $WATCH "$HPCDUMP" $OPTS extract "$f" "$TMP/x" >/dev/null 2>&1
        rc=$?
        [ $rc -ge 124 ] && { hangs=$((hangs + 1)); fail "hpcdump extract $b: hung or died (rc $rc)"; }
    fi
done
rm -rf "$TMP/x"
check "the folder holds reproducers ($n)" test $n -gt 0
expect_eq "daemon deaths" 0 $deaths
expect_eq "hangs (files not finished in $WATCH s)" 0 $hangs
expect_eq "refusals of more than one line" 0 $bad
check "the healthy container still reads" healthy
check "the log names the objects the helper could not serve" grep -q "serving it" "$TMP/log"
kill -0 $PID 2>/dev/null && fusermount3 -u "$MNT"
MOUNTS=""
finish
