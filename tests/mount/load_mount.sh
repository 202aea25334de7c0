#!/bin/bash
# load_mount.sh - every container mounts and reads with the default options
# on the idle machine, then again with a third of one CPU.
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
# (the first 4 KiB of each file).
# Nothing here waits for a time: a mount or read that hangs is bounded by a
# 10-minute timeout, a limit for a dead process, not a speed.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse

# the memory cap of the mounts of single files; none in sanitizer builds,
# whose shadow memory is far larger than any cap
CAP=4194304
grep -q __asan_init "$HPCMOUNT" 2>/dev/null && CAP=unlimited

LOOPS=()
LOAD_CG=""
stop_load() {
    local p
    for p in "${LOOPS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${LOOPS[@]}"; do wait "$p" 2>/dev/null; done
    LOOPS=()
    [ -n "$LOAD_CG" ] || return 0
    # back to the parent group, then the group goes (with whatever late
    # daemon still is in it, moved up first)
    echo $$ > "${LOAD_CG%/*}/cgroup.procs" 2>/dev/null
    while read -r p; do echo "$p" > "${LOAD_CG%/*}/cgroup.procs" 2>/dev/null; done \
        < "$LOAD_CG/cgroup.procs" 2>/dev/null
    rmdir "$LOAD_CG" 2>/dev/null
    LOAD_CG=""
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

# survey MNT OUT [MAX]: every node of MNT with the first MAX bytes (4096)
# of each regular file hashed and counted, one line each, sorted (errors
# become lines too)
survey() {
    "$PY" - "$1" "${3:-4096}" > "$2" <<'PYEOF'
import hashlib, os, sys
top, cap = sys.argv[1], int(sys.argv[2])
out = []
for d, dirs, files in os.walk(top, onerror=lambda e: out.append(
        "error %s %s" % (os.path.relpath(e.filename, top), e.strerror))):
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

# mount_survey LABEL SOURCE MNT OUT MAX CAP: mount SOURCE at MNT (address
# space CAP KiB), survey it into OUT (first MAX bytes of each file), unmount
mount_survey() {
    mkdir -p "$3"
    if ! ( ulimit -v "$6"; exec timeout 600 "$HPCMOUNT" "$2" "$3" ) 2> "$4.err"; then
        fail "$1: mount: $(head -c 300 "$4.err")"
        return
    fi
    MOUNTS="$MOUNTS $3"
    survey "$3" "$4" "$5" || fail "$1: survey failed"
    unmount_container "$3"
}

# survey_corpus TAG: every corpus folder as a run directory (no memory cap)
survey_corpus() {
    local kind
    for kind in $KINDS; do
        mount_survey "corpus $kind ($1)" "$corpus/$kind" "$TMP/c-$1-$kind" \
            "$TMP/survey-$1-$kind" 4096 unlimited
    done
}
# survey_list TAG: every container of LIST, under the memory cap
survey_list() {
    local i=0 label src max
    while IFS=$'\t' read -r label src max; do
        i=$((i + 1))
        mount_survey "$label ($1)" "$src" "$TMP/m-$1-$i" "$TMP/list-$1-$i" "$max" "$CAP"
    done < "$LIST"
}
survey_list idle
survey_corpus idle

# throttle: this shell and all it starts from here on into a cgroup of its
# own whose CPU quota is a third of one CPU (QUOTA_US in every 100 ms);
# cgroup v1's cpu controller or v2's cpu.max.  Fails (1) where neither can
# be written.
QUOTA_US=33333
throttle() {
    local v1=/sys/fs/cgroup/cpu v2=/sys/fs/cgroup cg
    if [ -w "$v1/cpu.cfs_quota_us" ]; then
        cg="$v1/hpcload.$$"
        mkdir "$cg" 2>/dev/null || return 1
        LOAD_CG=$cg
        echo 100000 > "$cg/cpu.cfs_period_us" && echo $QUOTA_US > "$cg/cpu.cfs_quota_us" &&
            echo $$ > "$cg/cgroup.procs"
        return
    fi
    grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null || return 1
    echo +cpu > "$v2/cgroup.subtree_control" 2>/dev/null
    cg="$v2/hpcload.$$"
    mkdir "$cg" 2>/dev/null || return 1
    LOAD_CG=$cg
    echo "$QUOTA_US 100000" > "$cg/cpu.max" && echo $$ > "$cg/cgroup.procs"
}

# the load, started only now: this shell and all it starts from here on
# (the mounts, their helper processes, the readers) on one CPU, of which
# they get a third.  The mounts see what a busy machine gives them: a CPU
# they have for a third of the time and wait for the rest.  As root the
# kernel's CPU quota (throttle) does it, and the other two thirds go to
# the tests make check runs beside this one; else LOAD_LOOPS busy loops
# (2) take them, at the cost of a CPU burnt for the whole load phase
# (docs/PERFORMANCE.md, "load_mount.sh").  Either way the other CPUs stay
# free for the rest of the suite.
cpu=$(($(nproc) - 1))
taskset -p -c "$cpu" $$ > /dev/null || fail "taskset: cannot pin the load to CPU $cpu"
if [ -z "${LOAD_LOOPS:-}" ] && throttle; then
    echo "load: a third of CPU $cpu for the mounts (cgroup $LOAD_CG)"
else
    [ -z "$LOAD_CG" ] || stop_load
    for _ in $(seq "${LOAD_LOOPS:-2}"); do
        ( while :; do :; done ) &
        LOOPS+=($!)
    done
    echo "load: ${#LOOPS[@]} busy loops sharing CPU $cpu with the mounts"
fi

# every container under load: the same nodes and bytes as on the idle
# machine
survey_list load
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

# the corpus under the same load: the same tree, the same bytes
survey_corpus load
for kind in $KINDS; do
    a="$TMP/survey-idle-$kind" b="$TMP/survey-load-$kind"
    [ -s "$a" ] && [ -s "$b" ] || continue
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
if [ -n "$LOAD_CG" ]; then
    q=$(cat "$LOAD_CG/cpu.cfs_quota_us" 2>/dev/null || cut -d' ' -f1 "$LOAD_CG/cpu.max" 2>/dev/null)
    p=$(awk '$1 == "nr_periods" { print $2 }' "$LOAD_CG/cpu.stat" 2>/dev/null)
    t=$(awk '$1 == "nr_throttled" { print $2 }' "$LOAD_CG/cpu.stat" 2>/dev/null)
    if [ "$q" = "$QUOTA_US" ] && [ "${p:-0}" -gt 0 ]; then
        pass "the mounts ran under their CPU quota for ${p} periods (held back in ${t:-?})"
    else
        fail "the CPU quota was not in force: quota ${q:-none}, ${p:-no} periods"
    fi
fi
stop_load
finish
