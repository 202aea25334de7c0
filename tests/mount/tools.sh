#!/bin/bash
# tools.sh - hpcmount, hpcdump and hpcwrite behave alike: --help and
# --version (with the formats built in) exit 0, a bad command line exits 2,
# a container that cannot be read exits 1, each error is one line.
. "$(dirname "$0")/../lib/lib.sh"
HPCWRITE="$top_builddir/mpi/hpcwrite"
SION="$DATA/a_4tasks.sion"
mkdir -p "$TMP/mnt"

# exits CODE DESCRIPTION COMMAND...: exit status CODE, one line on stderr
exits() {
    local want=$1 d=$2 rc=0; shift 2
    "$@" > "$TMP/out" 2> "$TMP/err" || rc=$?
    if [ "$rc" = "$want" ] && [ "$(wc -l < "$TMP/err")" = 1 ]; then pass "$d"
    else fail "$d: exit $rc, stderr: $(cat "$TMP/err")"; fi
}

# --- hpcmount -------------------------------------------------------------
"$HPCMOUNT" --help > "$TMP/help"; rc=$?
expect_eq "hpcmount --help: exit 0" 0 "$rc"
check "hpcmount --help: its own options and the FUSE ones that apply" \
    sh -c "grep -q -- '-o salvage' '$TMP/help' && grep -q -- '-o allow_other' '$TMP/help'"
"$HPCMOUNT" --help-all > "$TMP/help-all"
check "hpcmount --help-all: the tuning knobs too" \
    sh -c "grep -q -- '-o max_threads' '$TMP/help-all' && grep -q -- '-o spin_us' '$TMP/help-all'"
check "hpcmount --help(-all): not libfuse's clone_fd / max_idle_threads (ignored by its loop)" \
    sh -c "! grep -q -e clone_fd -e max_idle_threads '$TMP/help' '$TMP/help-all'"
check "hpcmount --version: the formats built in" sh -c "'$HPCMOUNT' --version | grep -q '^formats: sion gsd fti'"
expect_eq "hpcmount and hpcdump list the same formats" \
    "$("$HPCMOUNT" --version | grep '^formats:')" "$("$HPCDUMP" --version | grep '^formats:')"
exits 2 "hpcmount without MOUNTPOINT: exit 2" "$HPCMOUNT" "$SION"
exits 2 "hpcmount -o unknown option: exit 2" "$HPCMOUNT" -o nosuch "$SION" "$TMP/mnt"
exits 2 "hpcmount -o cache_size=abc: exit 2" "$HPCMOUNT" -o cache_size=abc "$SION" "$TMP/mnt"
exits 2 "hpcmount -o spin_us=20000 (over 10000): exit 2" "$HPCMOUNT" -o spin_us=20000 "$SION" "$TMP/mnt"
exits 1 "hpcmount of a missing SOURCE: exit 1" "$HPCMOUNT" "$TMP/none.sion" "$TMP/mnt"
exits 1 "hpcmount of a damaged container: exit 1" "$HPCMOUNT" "$DATA/a_4tasks.sion.manifest.txt" "$TMP/mnt"

# --- hpcdump: the same kinds of failure give the same codes ---------------
exits 2 "hpcdump -o unknown option: exit 2" "$HPCDUMP" -o nosuch ls "$SION"
exits 1 "hpcdump of a missing SOURCE: exit 1" "$HPCDUMP" ls "$TMP/none.sion"
exits 1 "hpcdump of a damaged container: exit 1" "$HPCDUMP" ls "$DATA/a_4tasks.sion.manifest.txt"

# --- hpcwrite (built with MPI only) --------------------------------------
if [ -x "$HPCWRITE" ]; then
    # OpenMPI leaves its own allocations at exit (as in writer_lib.sh)
    export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
    "$HPCWRITE" --help > "$TMP/whelp" 2>/dev/null; rc=$?
    expect_eq "hpcwrite --help: exit 0" 0 "$rc"
    check "hpcwrite --help: lists --version and the exit status" \
        sh -c "grep -q -- '--version' '$TMP/whelp' && grep -q 'Exit status' '$TMP/whelp'"
    check "hpcwrite --version: the formats it writes" \
        sh -c "'$HPCWRITE' --version 2>/dev/null | grep -q '^formats: sion gsd'"
    exits 2 "hpcwrite unknown option: exit 2" "$HPCWRITE" --nosuch out.sion
else
    echo "(hpcwrite not built: configured without MPI)"
fi
finish
