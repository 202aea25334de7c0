#!/bin/sh
# valgrind_dhdf.sh - the distributed HDF / HDF4 reader under valgrind's
# memcheck: the daemon runs in the foreground under valgrind
# (--error-exitcode), serves sets written now by tests/gen/dhdf_gen and the
# fixture set, and every array and piece read through the mount must equal
# the generator's copy (for SDSs never written: what libhdf4's SDreaddata
# returns), at odd offsets and block sizes too; then no memcheck error
# (uninitialised bytes reaching a reply, invalid reads) may be reported,
# by the daemon (-o inproc: the reader and libhdf4 run in it, under
# valgrind, not in the helper process).
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
command -v valgrind >/dev/null || { echo "SKIP: valgrind missing"; exit 77; }
# memcheck cannot run programs built with AddressSanitizer (the sanitizer
# build checks the same reads with its own means)
if ldd "$HPCMOUNT" 2>/dev/null | grep -q 'libasan'; then
    echo "SKIP: sanitizer build"; exit 77
fi

GEN="$top_builddir/tests/gen/dhdf_gen"
VG="valgrind --tool=memcheck --error-exitcode=99 --leak-check=no --track-origins=no"
VG="$VG --log-file=$TMP/vg.%p"

# vg_mount SOURCE MOUNTPOINT [options]: hpcmount -f under valgrind, in the
# background; waits (at most 40 s) until the mount is there
VGPIDS=""
vg_mount() {
    local src=$1 mnt=$2 i=0; shift 2
    mkdir -p "$mnt"
    $VG "$HPCMOUNT" -f -o inproc "$@" "$src" "$mnt" 2>>"$TMP/vg.stderr" &
    VGPIDS="$VGPIDS $!"
    MOUNTS="$MOUNTS $mnt"
    while ! is_mounted "$mnt" && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done
    is_mounted "$mnt"
}

# same_bytes DIR MOUNTPOINT: every DIR/**/*.expect against the mount
same_bytes() {
    local dir=$1 mnt=$2 n=0 bad=0 e rel
    for e in "$dir"/*.expect "$dir"/*.pieces/*.expect; do
        [ -f "$e" ] || continue
        rel=${e#"$dir"/}; rel=${rel%.expect}
        n=$((n + 1))
        cmp -s "$e" "$mnt/$rel" || { bad=$((bad + 1)); echo "  differs: $rel"; }
    done
    [ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
}

check "dhdf_gen tile2d" "$GEN" "$TMP/tile2d" tile2d
check "dhdf_gen unwritten" "$GEN" "$TMP/unw" unwritten
FIX="$TMP/fixture"
mkdir -p "$FIX"
cp "$DATA/dhdf/mhf.hdf" "$DATA/dhdf/ahf1.hdf" "$DATA/dhdf/ahf2.hdf" "$FIX/"

M1="$TMP/m1"
check "mount tile2d under valgrind" vg_mount "$TMP/tile2d/main.hdf" "$M1"
check "tile2d: every array and piece byte-exact" same_bytes "$TMP/tile2d" "$M1"
check "tile2d: reads at odd offsets and lengths" $PY - "$M1/temp" "$TMP/tile2d/temp.expect" <<'EOF'
import os, random, sys
want = open(sys.argv[2], 'rb').read()
fd = os.open(sys.argv[1], os.O_RDONLY)
rnd = random.Random(3)
for _ in range(60):
    off = rnd.randrange(len(want)); n = rnd.randrange(1, 700)
    assert os.pread(fd, n, off) == want[off:off + n], (off, n)
EOF
check "tile2d: .info names the set" grep -q '^role: main file$' "$M1/.info"
expect_eq "tile2d: user.attr.units of the array" meters \
    "$($PY -c "import os; print(os.getxattr('$M1/temp','user.attr.units').decode())")"

# SDSs never written: the mount gives what SDreaddata gives (fill values)
M2="$TMP/m2"
check "mount the file of unwritten SDSs under valgrind, 1001-byte blocks" \
    vg_mount "$TMP/unw/main.hdf" "$M2" -o blocksize=1001
check "unwritten SDSs: each equals libhdf4's SDreaddata" same_bytes "$TMP/unw" "$M2"
values() { $PY -c "import numpy as n, sys; a = n.fromfile(sys.argv[1], sys.argv[2]); print(a.size, *sorted(set(a.tolist())))" "$@"; }
expect_eq "unwritten float32 with _FillValue -7.5: 20 times -7.5" "20 -7.5" "$(values "$M2/fill" '<f4')"
expect_eq "unwritten int32 without _FillValue: HDF4's default fill" "20 -2147483647" \
    "$(values "$M2/nofill" '<i4')"
expect_eq "partly written int16: fill 99 around the two values" "20 5 6 99" "$(values "$M2/part" '<i2')"

# the fixture set, with a block size that cuts elements
M3="$TMP/m3"
check "mount the fixture under valgrind, 999-byte blocks" vg_mount "$FIX/mhf.hdf" "$M3" -o blocksize=999
check "fixture: sds1 equals its manifest sha256" test "$(sha "$M3/sds1")" = \
    "$($PY -c "import json; print(json.load(open('$DATA/dhdf/MANIFEST.json'))['sds']['sds1']['sha256_full_C_order_LE'])")"
check "fixture: pieces equal the assembled array's rows" sh -c \
    "cat '$M3/sds1.pieces/sds1_chunk0' '$M3/sds1.pieces/sds1_chunk1' | cmp -s - '$M3/sds1'"

# unmount and collect valgrind's verdicts
for m in $M1 $M2 $M3; do unmount_container "$m"; done
status=0
for p in $VGPIDS; do wait "$p" || status=$?; done
expect_eq "valgrind: every daemon exited 0 (no memcheck error)" 0 "$status"
errs=$(cat "$TMP"/vg.* 2>/dev/null | grep -E "uninitialised|Invalid (read|write)|Conditional jump|Syscall param" | head -5)
expect_eq "valgrind: no uninitialised or invalid memory reported" "" "$errs"
check "valgrind logs were written (the three daemons)" test "$(ls "$TMP"/vg.* | wc -l)" -ge 3
[ "$failures" -eq 0 ] || grep -h -A12 "==[0-9]*== [A-Z]" "$TMP"/vg.[0-9]* | head -60

finish
