#!/bin/sh
# hdf5_bad.sh - damaged HDF5 files: refused at mount with one line naming the
# file (and the object), or EIO on reads of damaged data (logged by the
# daemon), never a crash; damaged objects of a file libhdf5 opens are
# served like h5py does (listed, EIO on their reads, named in .info).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse
"$PY" -c 'import h5py' 2>/dev/null || { echo "SKIP: python3-h5py missing"; exit 77; }

G="$TMP/h5"
check "h5py generator" "$PY" "$top_srcdir/tests/gen/hdf5_gen.py" "$G"

# refused FILE PATTERN DESC: hpcmount and hpcdump fail with one line matching
refused() {
    mnt="$TMP/refused"; mkdir -p "$mnt"
    "$HPCMOUNT" "$1" "$mnt" > "$TMP/out" 2>&1; rc=$?
    check "$3: hpcmount fails cleanly (rc $rc)" test "$rc" -ge 1 -a "$rc" -lt 128
    check "$3: nothing mounted" sh -c "! grep -q ' $mnt fuse' /proc/self/mounts"
    check "$3: one line" test "$(wc -l < "$TMP/out")" -eq 1
    check "$3: message names the file and '$2'" grep -q "$1.*$2" "$TMP/out"
    "$HPCDUMP" ls "$1" > /dev/null 2> "$TMP/out"; rc=$?
    check "$3: hpcdump fails cleanly (rc $rc)" test "$rc" -ge 1 -a "$rc" -lt 128
    check "$3: hpcdump message" grep -q "$1.*$2" "$TMP/out"
}

# truncated: the end-of-file address lies beyond the end
head -c 300000 "$G/big.h5" > "$TMP/truncated.h5"
refused "$TMP/truncated.h5" "superblock.*truncated" "truncated file"

# the signature and then garbage
{ printf '\211HDF\r\n\032\n'; head -c 5000 /dev/urandom; } > "$TMP/garbage.h5"
refused "$TMP/garbage.h5" "superblock" "garbage after the signature"

# an empty file and a text file are no HDF5 at all
: > "$TMP/empty.h5"
"$HPCDUMP" ls "$TMP/empty.h5" > /dev/null 2>&1; rc=$?
check "empty file refused (rc $rc)" test "$rc" -ge 1 -a "$rc" -lt 128
"$HPCDUMP" -o format=hdf5 ls "$TMP/empty.h5" > /dev/null 2> "$TMP/out"; rc=$?
check "empty file with -o format=hdf5 refused (rc $rc)" test "$rc" -ge 1 -a "$rc" -lt 128
check "empty file: message names the file" grep -q "$TMP/empty.h5" "$TMP/out"

# damaged objects in a file h5py opens: the file mounts without options,
# every readable object is served, a damaged one is listed but its stat and
# reads fail with EIO and a log line, and .info names it with the reason.
# v1 object headers (h5py's default): 16-byte prefix, then messages of
# type(2) size(2) flags(1) reserved(3) data; 1 dataspace, 3 datatype, 12
# attribute.
cp "$G/basic.h5" "$TMP/header.h5"
"$PY" - "$TMP/header.h5" <<'PY'
import struct, sys, h5py
def damage(path, obj, mtype):
    with h5py.File(path, "r") as f:
        addr = h5py.h5o.get_info(f[obj].id).addr
    with open(path, "r+b") as fh:
        if mtype is None:                     # the whole header prefix
            fh.seek(addr); fh.write(b"\xff" * 16); return
        fh.seek(addr)
        ver, _, nmsg, _, size = struct.unpack("<BBHII", fh.read(12))
        at = addr + 16
        for _ in range(nmsg):
            fh.seek(at)
            t, n = struct.unpack("<HH", fh.read(4))
            if t == mtype:
                fh.seek(at + 8); fh.write(b"\xff" * min(n, 8)); return
            at += 8 + n
        raise SystemExit("message %d not found in %s" % (mtype, obj))
p = sys.argv[1]
damage(p, "types/le_i4", None)          # object header
damage(p, "types/le_u2", 3)             # datatype message
damage(p, "types/le_i2", 1)             # dataspace message
damage(p, "layout/gzip_shuffle", 12)    # an attribute
PY
M="$TMP/mnt-damaged"; log="$TMP/damaged.log"
check "damaged objects: the file mounts without options" mount_container "$TMP/header.h5" "$M" -o log="$log"
for d in le_i4 le_u2 le_i2; do
    check "damaged $d: listed" sh -c "ls '$M/types' | grep -qx $d"
    cat "$M/types/$d" > /dev/null 2> "$TMP/err"; rc=$?
    check "damaged $d: read fails" test "$rc" -ne 0
    check "damaged $d: with EIO" grep -q "Input/output error" "$TMP/err"
    check "damaged $d: .info names it and why" grep -q "^damaged: /types/$d (object at [0-9]*): cannot .*: ." "$M/.info"
    check "damaged $d: the daemon logged it" grep -q "/types/$d" "$log"
    "$HPCDUMP" cat "$TMP/header.h5" "types/$d" > /dev/null 2>&1; rc=$?
    check "damaged $d: hpcdump cat fails cleanly (rc $rc)" test "$rc" -ge 1 -a "$rc" -lt 128
done
check "damaged attribute: .info names it" grep -q "^damaged: /layout/gzip_shuffle (object at [0-9]*): cannot read: attribute" "$M/.info"
for d in types/le_f4 types/le_f8 types/be_i4 layout/gzip_shuffle; do
    expect_eq "damaged file: $d served" \
        "$("$PY" "$top_srcdir/tests/mount/hdf5_verify.py" --expect "$G/basic.h5" "$d")" "$(sha "$M/$d")"
done
check "damaged file: still mounted" is_mounted "$M"
unmount_container "$M"
# hpcdump extract goes past the damaged objects: the rest extracted (le_u4
# and u1 come after them), exit 1, no damaged dataset written in part
rc=0; "$HPCDUMP" extract "$TMP/header.h5" "$TMP/x-damaged" 2>"$TMP/x.err" || rc=$?
expect_eq "damaged file: hpcdump extract exits 1" 1 "$rc"
for d in types/be_i4 types/le_u4 types/u1 layout/gzip_shuffle; do
    expect_eq "damaged file: hpcdump extract still extracts $d" \
        "$("$PY" "$top_srcdir/tests/mount/hdf5_verify.py" --expect "$G/basic.h5" "$d")" "$(sha "$TMP/x-damaged/$d")"
done
check "damaged file: no damaged dataset extracted in part" sh -c \
    "for d in le_i4 le_u2 le_i2; do [ ! -s '$TMP/x-damaged/types/'\$d ] || exit 1; done"
M="$TMP/mnt-salvage"
check "damaged objects: -o salvage is accepted" mount_container "$TMP/header.h5" "$M" -o salvage
check "salvage: the same listing" sh -c "ls '$M/types' | grep -qx le_i4"
unmount_container "$M"

# damaged chunk data: EIO on read, logged; the rest of the file is served.
# The unavailable filter: big-endian LZF (the reader decodes little-endian
# LZF only) with an empty plugin directory (Debian's hdf5-plugin-lzf may be
# installed).
mkdir -p "$TMP/no-plugins"
export HDF5_PLUGIN_PATH="$TMP/no-plugins"
cp "$G/big.h5" "$TMP/chunk.h5"
cp "$G/basic.h5" "$TMP/fletcher.h5"
"$PY" - "$TMP/chunk.h5" "$TMP/fletcher.h5" <<'PY'
import sys, h5py
for path, ds, nchunk in [(sys.argv[1], "gz", 63), (sys.argv[2], "layout/fletcher", 2)]:
    with h5py.File(path, "r") as f:
        info = f[ds].id.get_chunk_info(nchunk)
    with open(path, "r+b") as fh:
        fh.seek(info.byte_offset + info.size // 2)
        fh.write(b"\x00\x13\x37" * 40)
PY
for t in "chunk.h5 gz deflate" "fletcher.h5 layout/fletcher fletcher32" "nofilter.h5 lzf_be unavailable-filter"; do
    set -- $t
    src=$TMP/$1; [ -f "$src" ] || src=$G/$1
    M="$TMP/mnt-$3"
    log="$TMP/$3.log"
    if ! mount_container "$src" "$M" -o log="$log"; then fail "$3: mount"; continue; fi
    cat "$M/$2" > /dev/null 2> "$TMP/err"; rc=$?
    check "$3: read fails" test "$rc" -ne 0
    check "$3: with EIO" grep -q "Input/output error" "$TMP/err"
    "$HPCDUMP" cat "$src" "$2" > /dev/null 2> "$TMP/err"; rc=$?
    check "$3: hpcdump cat fails cleanly (rc $rc)" test "$rc" -ge 1 -a "$rc" -lt 128
    check "$3: the daemon logged the dataset" grep -q "/$2" "$log"
    check "$3: still mounted" is_mounted "$M"
    check "$3: other data still served" sh -c "cat '$M/.info' > /dev/null && ls '$M' > /dev/null"
    unmount_container "$M"
done
# the first chunks of the damaged dataset are still good
M="$TMP/mnt-chunk"
mount_container "$TMP/chunk.h5" "$M"
expect_eq "damaged gz: bytes before the damaged chunk" \
    "$("$HPCDUMP" cat "$G/big.h5" gz | head -c 100000 | sha256sum | cut -d' ' -f1)" \
    "$(head -c 100000 "$M/gz" | sha256sum | cut -d' ' -f1)"
"$HPCDUMP" info "$G/nofilter.h5" > "$TMP/lzf.info"
check "big-endian lzf: .info warns about the filter" grep -q "^warning: /lzf_be: filter 32000 (lzf) is not available" "$TMP/lzf.info"
unmount_container "$M"

finish
