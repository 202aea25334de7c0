#!/bin/bash
# load_mount.sh - every container mounts and reads with the default options
# on the idle machine, then again with a third of one CPU for each.
#
# The containers: every fixture of tests/data (the SION files, the FTI
# checkpoint directory, the GSD files, the distributed HDF set) and the HDF5
# files tests/gen/hdf5_gen writes, each mounted with no option at all and
# surveyed (every node, the first MiB of every regular file hashed, read
# errors recorded) on the idle machine and again under load: the two
# surveys must be equal, and the idle one must have read bytes.  When
# HPC_LOAD_CORPUS or HPC_CORPUS names a directory, its hdf5/, hdf4/, gsd/
# and sion/ folders are each mounted as a run directory (every file a
# container opened as a mount of it would be) and surveyed the same way
# (the first 4 KiB of each file).  Under load the containers are dealt to
# three lanes that run side by side, each with its own third of the CPU:
# each lane mounts every corpus folder and surveys its share of it.
# Nothing here waits for a time: a mount or read that hangs is bounded by a
# 10-minute timeout, a limit for a dead process, not a speed.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse

# the memory cap of the mounts of single files; none in sanitizer builds,
# whose shadow memory is far larger than any cap
CAP=4194304
grep -q __asan_init "$HPCMOUNT" 2>/dev/null && CAP=unlimited

LOOPS=()
LOAD_CGS=()
LANE_PIDS=()
stop_load() {
    local p cg
    for p in "${LOOPS[@]}" "${LANE_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${LOOPS[@]}" "${LANE_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    LOOPS=() LANE_PIDS=()
    # each group goes, with whatever late daemon still is in it moved up
    # to the parent group first
    for cg in "${LOAD_CGS[@]}"; do
        while read -r p; do echo "$p" > "${cg%/*}/cgroup.procs" 2>/dev/null; done \
            < "$cg/cgroup.procs" 2>/dev/null
        rmdir "$cg" 2>/dev/null
    done
    LOAD_CGS=()
}
trap 'stop_load; cleanup' EXIT

# containers: LABEL<TAB>SOURCE<TAB>MAXBYTES lines; the first MiB of each
# file bounds the run (bigelem.h5 is 72 MiB of one gzip-compressed element)
MAXB=1048576
LIST="$TMP/list"
: > "$LIST"
add() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$LIST"; }

for f in "$DATA"/*.sion; do add "$(basename "$f")" "$f" $MAXB; done
for f in "$DATA"/gsd/*.gsd; do add "gsd/$(basename "$f")" "$f" $MAXB; done
add fti/master-i64 "$DATA/fti/master-i64" $MAXB
"$HPCDUMP" --version | grep -q '^formats:.* dhdf' && add dhdf/mhf.hdf "$DATA/dhdf/mhf.hdf" $MAXB
if [ -x "$top_builddir/tests/gen/hdf5_gen" ]; then
    mkdir -p "$TMP/h5"
    if "$top_builddir/tests/gen/hdf5_gen" "$TMP/h5" > /dev/null 2>&1; then
        for f in "$TMP"/h5/*.h5; do add "h5/$(basename "$f")" "$f" $MAXB; done
    else
        fail "tests/gen/hdf5_gen wrote no files"
    fi
fi

# the corpus: each of its hdf5/, hdf4/, gsd/ and sion/ folders mounted as a
# run directory (every container opened lazily by the same code as a mount
# of the file, libhdf5/libhdf4 in their helper processes), listed and read
# once on the idle machine; under load the same mount must show the same
# tree and bytes
corpus=${HPC_LOAD_CORPUS:-${HPC_CORPUS:-}}   # run-all.sh sets HPC_LOAD_CORPUS in both builds
KINDS=""
if [ -n "$corpus" ] && [ -d "$corpus" ]; then
    for kind in hdf5 hdf4 gsd sion; do
        [ -d "$corpus/$kind" ] && KINDS="$KINDS $kind"
    done
fi

# survey MNT OUT [MAX [SRC LANE LANES]]: every node of MNT with the first
# MAX bytes (4096) of each regular file hashed and counted, one line each,
# sorted (errors become lines too).  With SRC (the folder mounted as a run
# directory), LANE and LANES: only the containers that are the LANE-th
# modulo LANES of SRC's files (sorted), and the folders above them
survey() {
    "$PY" - "$1" "${3:-4096}" "${4:-}" "${5:-0}" "${6:-1}" > "$2" <<'PYEOF'
import hashlib, os, sys
top, cap, src, lane, lanes = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
theirs = set()                      # the other lanes' containers
if src:
    sources = sorted(os.path.relpath(os.path.join(d, n), src)
                     for d, _, names in os.walk(src) for n in names)
    theirs = set(sources) - set(sources[lane::lanes])
out = []
for d, dirs, files in os.walk(top, onerror=lambda e: out.append(
        "error %s %s" % (os.path.relpath(e.filename, top), e.strerror))):
    if theirs:
        dirs[:] = [n for n in dirs if os.path.relpath(os.path.join(d, n), top) not in theirs]
        files = [n for n in files if os.path.relpath(os.path.join(d, n), top) not in theirs]
    for n in dirs:
        out.append("dir " + os.path.relpath(os.path.join(d, n), top))
    for n in files:
        p = os.path.join(d, n)
        r = os.path.relpath(p, top)
        try:
            b = b""
            with open(p, "rb") as fh:
                while len(b) < cap:
                    piece = fh.read(cap - len(b))
                    if not piece:
                        break
                    b += piece
            out.append("file %s %d %s" % (r, len(b), hashlib.sha256(b).hexdigest()))
        except OSError as e:
            out.append("file %s error %s" % (r, e.strerror))
print("\n".join(sorted(out)))
PYEOF
}

# mount_survey LABEL SOURCE MNT OUT MAX CAP [LANE LANES]: mount SOURCE at
# MNT (address space CAP KiB), survey it into OUT (first MAX bytes of each
# file; with LANE and LANES, SOURCE is a run directory and only its
# containers of that lane), unmount
mount_survey() {
    mkdir -p "$3"
    if ! ( ulimit -v "$6"; exec timeout 600 "$HPCMOUNT" "$2" "$3" ) 2> "$4.err"; then
        fail "$1: mount: $(head -c 300 "$4.err")"
        return
    fi
    MOUNTS="$MOUNTS $3"
    survey "$3" "$4" "$5" ${7:+"$2" "$7" "$8"} || fail "$1: survey failed"
    unmount_container "$3"
}

# survey_corpus TAG [LANE LANES]: every corpus folder as a run directory
# (no memory cap), or the lane's containers of each
survey_corpus() {
    local kind
    for kind in $KINDS; do
        mount_survey "corpus $kind ($1${2:+, lane $2})" "$corpus/$kind" "$TMP/c-$1-$kind${2:-}" \
            "$TMP/survey-$1-$kind${2:+.$2}" 4096 unlimited ${2:+"$2" "$3"}
    done
}
# survey_list TAG [LANE LANES]: every container of LIST (or the LANE-th
# modulo LANES), under the memory cap
survey_list() {
    local i=0 label src max
    while IFS=$'\t' read -r label src max; do
        i=$((i + 1))
        [ -z "${2:-}" ] || [ $(((i - 1) % $3)) -eq "$2" ] || continue
        mount_survey "$label ($1)" "$src" "$TMP/m-$1-$i" "$TMP/list-$1-$i" "$max" "$CAP"
    done < "$LIST"
}
survey_list idle
survey_corpus idle

# make_cgroup NAME: a cgroup NAME (into LOAD_CGS) whose CPU quota is a
# third of one CPU (QUOTA_US in every 100 ms): cgroup v1's cpu controller
# or v2's cpu.max.  Fails (1) where neither can be written.
QUOTA_US=33333
make_cgroup() {
    local v1=/sys/fs/cgroup/cpu v2=/sys/fs/cgroup cg
    if [ -w "$v1/cpu.cfs_quota_us" ]; then
        cg="$v1/$1"
        mkdir "$cg" 2>/dev/null || return 1
        LOAD_CGS+=("$cg")
        echo 100000 > "$cg/cpu.cfs_period_us" && echo $QUOTA_US > "$cg/cpu.cfs_quota_us"
        return
    fi
    grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null || return 1
    echo +cpu > "$v2/cgroup.subtree_control" 2>/dev/null
    cg="$v2/$1"
    mkdir "$cg" 2>/dev/null || return 1
    LOAD_CGS+=("$cg")
    echo "$QUOTA_US 100000" > "$cg/cpu.max"
}

# the load, started only now, on one CPU.  The mounts see what a busy
# machine gives them: a CPU they have for a third of the time and wait for
# the rest.  As root the kernel's CPU quota does it: the containers are
# dealt to LANES (3) lanes, each a shell in a cgroup of its own whose quota
# is a third of the CPU (make_cgroup), with all it starts (the mounts,
# their helper processes, the readers).  Each mount gets its third, and
# the three lanes together use the CPU that one lane would leave two
# thirds idle.  Else LOAD_LOOPS busy loops (2) share the CPU with one
# lane, at the cost of a CPU burnt for the whole load phase
# (docs/PERFORMANCE.md, "load_mount.sh").  Either way the other CPUs stay
# free for the rest of the suite.
cpu=$(($(nproc) - 1))
taskset -p -c "$cpu" $$ > /dev/null || fail "taskset: cannot pin the load to CPU $cpu"
LANES=3
for k in $(seq 0 $((LANES - 1))); do
    [ -z "${LOAD_LOOPS:-}" ] && make_cgroup "hpcload.$$.$k" && continue
    stop_load
    break
done
if [ ${#LOAD_CGS[@]} -eq $LANES ]; then
    echo "load: $LANES lanes, each with a third of CPU $cpu (${LOAD_CGS[*]})"
else
    LANES=1
    for _ in $(seq "${LOAD_LOOPS:-2}"); do
        ( while :; do :; done ) &
        LOOPS+=($!)
    done
    echo "load: ${#LOOPS[@]} busy loops sharing CPU $cpu with the mounts"
fi

# lane K: its share of the containers surveyed in its cgroup; its checks
# come back as the FAIL lines of its log
lane() {
    MOUNTS=""
    trap 'for m in $MOUNTS; do fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done' EXIT
    local cg=${LOAD_CGS[$1]:-}
    if [ -n "$cg" ] && ! echo "$BASHPID" > "$cg/cgroup.procs"; then
        fail "lane $1: cannot join $cg"
        return
    fi
    survey_list load "$1" "$LANES"
    survey_corpus load "$1" "$LANES"
}
for k in $(seq 0 $((LANES - 1))); do
    ( lane "$k" ) > "$TMP/lane-$k.log" 2>&1 &
    LANE_PIDS+=($!)
done
for p in "${LANE_PIDS[@]}"; do wait "$p" || fail "a lane of the load phase exited with $?"; done
LANE_PIDS=()
while read -r line; do fail "${line#FAIL: }"; done < <(cat "$TMP"/lane-*.log | grep '^FAIL: ')

# every container under load: the same nodes and bytes as on the idle
# machine
i=0
while IFS=$'\t' read -r label src max; do
    i=$((i + 1))
    a="$TMP/list-idle-$i" b="$TMP/list-load-$i"
    [ -s "$a" ] && [ -s "$b" ] || continue
    bytes=$(awk '$1 == "file" && $(NF-1) ~ /^[0-9]+$/ { n += $(NF-1) } END { print n + 0 }' "$a")
    if [ "$bytes" -eq 0 ]; then
        fail "$label: no bytes read on the idle machine"
    elif cmp -s "$a" "$b"; then
        pass "$label: mounted and read the same under load ($bytes bytes, $(grep -c '^file ' "$a") files)"
    else
        fail "$label: differs under load: $(diff "$a" "$b" | head -c 600)"
    fi
done < "$LIST"

# the corpus under the same load: the same tree, the same bytes (the
# lanes' surveys together; the folders above the containers are in each)
for kind in $KINDS; do
    a="$TMP/survey-idle-$kind" b="$TMP/survey-load-$kind"
    [ -s "$a" ] && cat "$b".* > /dev/null 2>&1 || continue
    LC_ALL=C sort -u "$a" > "$a.u" && mv "$a.u" "$a"
    LC_ALL=C sort -u "$b".* > "$b"
    if cmp -s "$a" "$b"; then
        pass "corpus $kind: $(grep -c '^file ' "$a") files of a run-directory mount the same under load"
    else
        fail "corpus $kind: differs under load: $(diff "$a" "$b" | head -c 600)"
    fi
done

# the quota was in force while the mounts ran (a load never applied would
# pass for the wrong reason): still set, and periods of it enforced on
# them (nr_periods).  How often it held them back (nr_throttled) is
# printed, not required: on a machine busy enough, others took their CPU
# before the quota did.
for cg in "${LOAD_CGS[@]}"; do
    q=$(cat "$cg/cpu.cfs_quota_us" 2>/dev/null || cut -d' ' -f1 "$cg/cpu.max" 2>/dev/null)
    p=$(awk '$1 == "nr_periods" { print $2 }' "$cg/cpu.stat" 2>/dev/null)
    t=$(awk '$1 == "nr_throttled" { print $2 }' "$cg/cpu.stat" 2>/dev/null)
    if [ "$q" = "$QUOTA_US" ] && [ "${p:-0}" -gt 0 ]; then
        pass "${cg##*/}: the mounts ran under their CPU quota for ${p} periods (held back in ${t:-?})"
    else
        fail "${cg##*/}: the CPU quota was not in force: quota ${q:-none}, ${p:-no} periods"
    fi
done
stop_load
finish
