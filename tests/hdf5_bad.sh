#!/bin/sh
# hdf5_bad.sh - damaged HDF5 files: refused at mount with one line naming the
# file (and the object), or EIO on reads of damaged data (logged by the
# daemon), never a crash; -o salvage skips damaged objects.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_fuse
"$PY" -c 'import h5py' 2>/dev/null || { echo "SKIP: python3-h5py missing"; exit 77; }

G="$TMP/h5"
check "h5py generator" "$PY" "$top_srcdir/tests/hdf5_gen.py" "$G"

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

# a damaged object header: refused naming the object, served with -o salvage
cp "$G/basic.h5" "$TMP/header.h5"
"$PY" - "$TMP/header.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    addr = h5py.h5o.get_info(f["types/le_i4"].id).addr
with open(sys.argv[1], "r+b") as fh:
    fh.seek(addr)
    fh.write(b"\xff" * 16)
PY
refused "$TMP/header.h5" "/types/le_i4" "damaged object header"
M="$TMP/mnt-salvage"
check "damaged object header: -o salvage mounts" mount_container "$TMP/header.h5" "$M" -o salvage
check "salvage: .info says what was skipped" grep -q "^salvaged: 1 damaged" "$M/.info"
check "salvage: the damaged dataset is left out" test ! -e "$M/types/le_i4"
expect_eq "salvage: the others are served" \
    "$("$PY" "$top_srcdir/tests/hdf5_verify.py" --expect "$G/basic.h5" types/le_f8)" "$(sha "$M/types/le_f8")"
unmount_container "$M"

# damaged chunk data: EIO on read, logged; the rest of the file is served.
# The LZF case needs the filter missing: an empty plugin directory (Debian's
# hdf5-plugin-lzf may be installed).
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
for t in "chunk.h5 gz deflate" "fletcher.h5 layout/fletcher fletcher32" "lzf.h5 lzf unavailable-filter"; do
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
"$HPCDUMP" info "$G/lzf.h5" > "$TMP/lzf.info"
check "lzf: .info warns about the filter" grep -q "filter 32000 (lzf) is not available" "$TMP/lzf.info"
unmount_container "$M"

finish
