# tests/lib/lib.sh - shared helpers of the shell tests (sourced).
#
# Set by make check: top_srcdir, top_builddir.  Every test that mounts calls
# need_fuse first (exit 77 = skipped where /dev/fuse cannot be used) and
# mount_container, which registers an unmount on exit, so nothing is left
# mounted whatever happens.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
HPCMOUNT="$top_builddir/fuse/hpcmount"
HPCDUMP="$top_builddir/dump/hpcdump"
# hpcdump itself, not libtool's wrapper script of the build tree (a shell,
# an ls and three seds per call: more CPU than most calls' own work), with
# the build tree's libhpcmount first, as the wrapper would give it; where
# hpcdump is linked without libhpcmount (configure's libhdf5.a) it is no
# script, and what .libs/ may hold is an earlier build's.
# Exported: the Python checkers run it too (tests/mount/conformance.py).
[ "$(head -c 2 "$HPCDUMP" 2>/dev/null)" = "#!" ] &&
for p in "$top_builddir/dump/.libs/lt-hpcdump" "$top_builddir/dump/.libs/hpcdump"; do
    if [ -x "$p" ] && [ -f "$top_builddir/src/.libs/libhpcmount.so" ]; then
        HPCDUMP=$p
        LD_LIBRARY_PATH="$top_builddir/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        export LD_LIBRARY_PATH
        break
    fi
done
export HPCDUMP
DATA="$top_srcdir/tests/data"
# Debian's python3 (python3-gsd, python3-h5py, numpy), not a pyenv one
PY=/usr/bin/python3

TMP=$(mktemp -d "${TMPDIR:-/tmp}/hpctest.XXXXXX")
# searchable by all: a mount shows no more read bits than the directories
# above its sources grant (docs/design.md, "Who may read what")
chmod 0755 "$TMP"
MOUNTS=""
# Sanitizer builds: reports of daemons (whose stderr is gone once they
# daemonize) land in $TMP and fail the test in finish.
export ASAN_OPTIONS="log_path=$TMP/sanitizer:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="log_path=$TMP/sanitizer:print_stacktrace=1:${UBSAN_OPTIONS:-}"
failures=0
checks=0

cleanup() {
    for m in $MOUNTS; do
        fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; failures=$((failures + 1)); checks=$((checks + 1)); }
pass() { echo "ok: $*"; checks=$((checks + 1)); }

# check DESCRIPTION COMMAND...: pass when the command succeeds
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }

# expect_eq DESCRIPTION EXPECTED ACTUAL
expect_eq() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

need_fuse() {
    if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
        echo "SKIP: /dev/fuse or fusermount3 missing"; exit 77
    fi
    # a throw-away mount tells whether FUSE really works here; once per
    # boot and build tree, not per test (a daemon each): tests/fuse-ok
    # holds the boot id of the last mount that worked
    local ok="$top_builddir/tests/fuse-ok" boot probe="$TMP/probe"
    boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null) || boot=""
    [ -n "$boot" ] && [ "$(cat "$ok" 2>/dev/null)" = "$boot" ] && return 0
    mkdir -p "$probe"
    if ! "$HPCMOUNT" "$DATA/a_4tasks.sion" "$probe" 2>/dev/null; then
        echo "SKIP: FUSE mounts are not permitted here"; exit 77
    fi
    fusermount3 -u "$probe"
    [ -z "$boot" ] || echo "$boot" >"$ok" 2>/dev/null || true
}

# mount_container SOURCE MOUNTPOINT [hpcmount args...]
mount_container() {
    local src=$1 mnt=$2; shift 2
    mkdir -p "$mnt"
    "$HPCMOUNT" "$@" "$src" "$mnt" || return 1
    MOUNTS="$MOUNTS $mnt"
}

unmount_container() {
    fusermount3 -u "$1"
    MOUNTS=$(echo " $MOUNTS " | sed "s# $1 # #")
}

is_mounted() { grep -q " $1 fuse" /proc/self/mounts; }

# wait_until COMMAND...: poll COMMAND until it succeeds; gives up (status
# 1) after 10 minutes, a limit for something that will not happen, not a
# speed.  Tests wait for events with it, never with a fixed sleep.
wait_until() {
    local i=0
    until "$@"; do
        [ $i -ge 6000 ] && return 1
        sleep 0.1; i=$((i + 1))
    done
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

# finish: unmount, wait for the daemons to exit, fail on sanitizer reports,
# print the closing line automake and CI read, and exit
finish() {
    for m in $MOUNTS; do unmount_container "$m"; done
    local i=0
    while pgrep -f "hpcmount.* $TMP/" >/dev/null && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done
    if ls "$TMP"/sanitizer.* >/dev/null 2>&1; then
        fail "sanitizer reports"; head -50 "$TMP"/sanitizer.*
    fi
    echo "$((checks - failures)) passed, $failures failed"
    [ "$failures" -eq 0 ]
    exit $?
}
