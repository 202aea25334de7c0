#!/bin/sh
# hdf5_valgrind.sh - the HDF5 reader under valgrind memcheck: a daemon in the
# foreground serves capi.h5 and values.h5 (written by tests/gen/hdf5_gen: padded
# big-endian compounds, arrays, enums, opaque, compact, external raw data,
# variable-length data, n-bit, scale-offset, strings, long doubles); every
# dataset, xattr and .info is read.  Any invalid read or
# write, any use of uninitialised bytes (e.g. served to a reader) and any
# definite leak fails the test; leaks inside libhdf5 itself are suppressed
# (tests/lib/hdf5_valgrind.supp), never ours.  -o inproc runs the reader and
# libhdf5 in the daemon, under valgrind (the helper process would be
# outside it).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse
command -v valgrind > /dev/null || { echo "SKIP: valgrind missing"; exit 77; }
# memcheck cannot run programs built with AddressSanitizer (the sanitizer
# build checks the same reads with its own means)
if ldd "$HPCMOUNT" 2>/dev/null | grep -q 'libasan'; then
    echo "SKIP: sanitizer build"; exit 77
fi

G="$TMP/h5"
mkdir -p "$G"
check "C API generator" "$top_builddir/tests/gen/hdf5_gen" "$G"

# memcheck FILE: serve FILE under valgrind, read everything, unmount
memcheck() {
    name=$(basename "$1" .h5)
    mnt="$TMP/vg-$name"
    log="$TMP/valgrind.$name"
    mkdir -p "$mnt"
    valgrind --tool=memcheck --error-exitcode=99 --track-origins=no --leak-check=full \
        --show-leak-kinds=definite --errors-for-leak-kinds=definite --child-silent-after-fork=yes \
        --suppressions="$top_srcdir/tests/lib/hdf5_valgrind.supp" --log-file="$log" \
        "$HPCMOUNT" -f -o inproc "$1" "$mnt" &
    vpid=$!
    i=0
    while ! is_mounted "$mnt" && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done
    if ! is_mounted "$mnt"; then
        fail "$name: mounted under valgrind"; kill "$vpid" 2>/dev/null; wait "$vpid"; return
    fi
    MOUNTS="$MOUNTS $mnt"
    find "$mnt" -type f -exec cat {} + > /dev/null 2>&1
    find "$mnt" -exec getfattr -d -m - {} + > /dev/null 2>&1
    "$PY" - "$1" "$mnt" <<'PY'
import os, random, sys
rnd = random.Random(3)
for root, dirs, files in os.walk(sys.argv[2]):
    for f in files:
        p = os.path.join(root, f)
        if os.path.islink(p):
            continue
        n = os.stat(p).st_size
        with open(p, "rb", buffering=0) as fh:
            for _ in range(3):
                if n:
                    os.pread(fh.fileno(), rnd.choice([1, 7, 4099]), rnd.randrange(n))
PY
    unmount_container "$mnt"
    wait "$vpid"; rc=$?
    check "$name: valgrind exit $rc (99: errors)" test "$rc" -eq 0
    check "$name: ERROR SUMMARY: 0 errors" grep -q "ERROR SUMMARY: 0 errors" "$log"
    grep -q "ERROR SUMMARY: 0 errors" "$log" || sed -n '/Invalid\|uninitialised\|definitely lost/,+20p' "$log" | head -60
}
memcheck "$G/capi.h5"
memcheck "$G/values.h5"

finish
