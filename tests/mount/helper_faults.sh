#!/bin/sh
# helper_faults.sh - a helper process that crashes, loops, grows or stops
# answering in the middle of a read costs that read, not the mount
# (src/container/hpc_remote.h).  The helper is told to fail on reads of one dataset
# (HPCMOUNT_HELPER_FAULT=KIND:SIZE: the node of that size) of a real h5py
# file; for each kind: the read gets EIO, the log names the object and
# why, .info lists it, a second read of it fails again without a second
# helper fault (remembered as damaged; not for the wall-clock limit), and
# the other datasets of the same mount and of a second container of the
# same run directory keep reading right.  Then the same through hpcdump,
# a run directory's fork server (a child of the daemon, forking the
# helpers after the first, ending with the daemon), and a helper that ends
# with hpcdump killed in the middle of a request.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
"$HPCDUMP" --version | grep -q '^formats:.* hdf5' || { echo "SKIP: HDF5 reader not built"; exit 77; }
mkdir -p "$TMP/expected"
export ASAN_OPTIONS="log_path=$TMP/expected/asan:${ASAN_OPTIONS#log_path=*:}"
export UBSAN_OPTIONS="log_path=$TMP/expected/ubsan:print_stacktrace=1"

RUN="$TMP/run"
mkdir -p "$RUN"
BOOM=622216           # bytes of /boom: 77777 float64
for name in a b; do
    $PY - "$RUN/$name.h5" <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("ok", data=np.arange(300000, dtype="<i4"), chunks=(10000,), compression="gzip")
    f.create_dataset("boom", data=np.arange(77777, dtype="<f8"), chunks=(7777,), compression="gzip")
    f["plain"] = np.arange(5000, dtype="<i8")
EOF
done
OK=$($PY -c "import hashlib, numpy as np; print(hashlib.sha256(np.arange(300000, dtype='<i4').tobytes()).hexdigest())")
PLAIN=$($PY -c "import hashlib, numpy as np; print(hashlib.sha256(np.arange(5000, dtype='<i8').tobytes()).hexdigest())")

reads_right() {   # DIR: the datasets the helper has no trouble with
    [ "$(sha "$1/ok")" = "$OK" ] && [ "$(sha "$1/plain")" = "$PLAIN" ]
}

# one_kind KIND PATTERN REMEMBERED [hpcmount options]
one_kind() {
    local kind=$1 pat=$2 remembered=$3; shift 3
    local mnt="$TMP/m-$kind" log="$TMP/log-$kind"
    HPCMOUNT_HELPER_FAULT="$kind:$BOOM" mount_container "$RUN" "$mnt" -o log="$log" "$@"
    check "$kind: a/ok reads right first" reads_right "$mnt/a.h5"
    check "$kind: reading a/boom fails" sh -c "! timeout 120 cat '$mnt/a.h5/boom' >/dev/null 2>'$TMP/cat.err'"
    check "$kind: with EIO" grep -q "Input/output error" "$TMP/cat.err"
    check "$kind: the log names the object and why ($(head -c 200 "$log"))" \
        grep -qE "a\.h5: /boom: libhdf5 $pat" "$log"
    check "$kind: .info names it" grep -qE "^(damaged|unanswered): /boom: libhdf5 $pat" "$mnt/a.h5/.info"
    check "$kind: a/ok and a/plain still read right" reads_right "$mnt/a.h5"
    check "$kind: the other container reads right" reads_right "$mnt/b.h5"
    check "$kind: a/boom fails again" sh -c "! timeout 120 cat '$mnt/a.h5/boom' >/dev/null 2>&1"
    local n
    n=$(grep -c "/boom: libhdf5" "$log")
    if [ "$remembered" = 1 ]; then
        expect_eq "$kind: remembered as damaged: no second helper fault" 1 "$n"
    else
        # (the kernel may retry a failed read: at least one more)
        check "$kind: not judged damaged: asked again ($n faults)" test "$n" -ge 2
    fi
    check "$kind: the daemon still serves" reads_right "$mnt/a.h5"
    unmount_container "$mnt"
}

one_kind crash "crashed \(signal 11" 1
one_kind spin "used more than 1 s of CPU" 1 -o helper_cpu=1
one_kind grow "grew past 256 MiB of memory" 1 -o helper_mem=256M
one_kind sleep "did not answer in 2 s" 0 -o helper_wait=2

# a helper that loops while it builds .info: .info is served with a
# warning (it is built under the core's lock: no deadlock), the rest reads
HPCMOUNT_HELPER_FAULT="spin:info" mount_container "$RUN" "$TMP/m-info" -o helper_cpu=1 -o log="$TMP/log-info"
timeout 120 cat "$TMP/m-info/a.h5/.info" >"$TMP/info" 2>&1
check "info spin: .info is answered" test $? -eq 0
check "info spin: with a warning" grep -q "^warning: the format reader could not describe" "$TMP/info"
check "info spin: the log says why" grep -q "a\.h5: \.info: libhdf5 used more than 1 s of CPU" "$TMP/log-info"
check "info spin: the datasets still read right" reads_right "$TMP/m-info/a.h5"
unmount_container "$TMP/m-info"

# hpcdump: the same path through hpc_container_open
HPCMOUNT_HELPER_FAULT="crash:$BOOM" "$HPCDUMP" cat "$RUN/a.h5" boom >/dev/null 2>"$TMP/dump.err"
check "hpcdump cat of the crashing dataset fails" test $? -ne 0
check "hpcdump says which object" grep -q "/boom: libhdf5 crashed" "$TMP/dump.err"
HPCMOUNT_HELPER_FAULT="crash:$BOOM" "$HPCDUMP" cat "$RUN/a.h5" ok >"$TMP/ok"
check "hpcdump still reads the others" test "$(sha "$TMP/ok")" = "$OK"

# the helper has a session of its own (the scheduler's autogroup of the
# daemon's kind, not the mounting shell's), and so no terminal signal
# reaches it: it ends when the process it serves ends, even while the
# library spins in the open
helper_of() { pgrep -f "hpcmount-helper .* $1( |\$)"; }
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
mount_container "$RUN/a.h5" "$TMP/sess"
h=$(helper_of "$RUN/a.h5")
check "the helper of a mount is found" test -n "$h"
expect_eq "the helper leads a session of its own" "$h" "$(ps -o sid= -p "$h" | tr -d ' ')"
unmount_container "$TMP/sess"

# a run directory's helpers after its first are forks of the fork server
# (hpc_remote.h), a child of the daemon, which ends with it
mount_container "$RUN" "$TMP/fsrv"
both_read() { reads_right "$TMP/fsrv/a.h5" && reads_right "$TMP/fsrv/b.h5"; }
check "run directory: both containers read right" both_read
d=$(pgrep -f "hpcmount.* $TMP/fsrv\$" | head -1)
srv=""
[ -n "$d" ] && srv=$(pgrep -P "$d" -f -- "hpcmount-helper .* --fork-server\$")
forked() { [ -n "$srv" ] && pgrep -P "$srv" >/dev/null; }
check "the daemon started a fork server" test -n "$srv"
check "the fork server forked a helper" forked
unmount_container "$TMP/fsrv"
srv_gone() { [ -z "$srv" ] || ! kill -0 "$srv" 2>/dev/null; }
check "the fork server ends with the daemon" wait_until srv_gone
HPCMOUNT_HELPER_FAULT="spin:open" "$HPCDUMP" -o helper_cpu=3600 ls "$RUN/b.h5" >/dev/null 2>&1 &
dump=$!
started() { helper_of "$RUN/b.h5" >/dev/null || ! kill -0 "$dump" 2>/dev/null; }
wait_until started
h=$(helper_of "$RUN/b.h5")
spinning() { [ "$(cpu_ticks "$h")" -ge "$(($(getconf CLK_TCK) * 2))" ] || ! kill -0 "$h" 2>/dev/null; }
check "hpcdump's helper is there" test -n "$h"
wait_until spinning
check "hpcdump's helper spins in its open (2 s of CPU)" kill -0 "${h:-0}" 2>/dev/null
kill -9 "$dump"
wait "$dump" 2>/dev/null
gone() { ! kill -0 "$h" 2>/dev/null; }
check "the spinning helper ends with the killed hpcdump" wait_until gone

# the readers in the process (-o inproc) serve the same bytes
mount_container "$RUN/a.h5" "$TMP/inproc" -o inproc
check "-o inproc reads right" reads_right "$TMP/inproc"
check "-o inproc: no helper line in .info" sh -c "! grep -q '^helper:' '$TMP/inproc/.info'"
finish
