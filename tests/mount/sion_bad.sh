#!/bin/bash
# sion_bad.sh - damaged SION files are refused at mount time with one line
# naming the file, the field and the offset, exit status != 0, no crash and
# nothing left mounted; hpcdump refuses them the same way.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse

# patch FILE OFFSET STRUCT-FORMAT VALUE: overwrite a field in place
patch() {
    "$PY" - "$@" <<'PYEOF'
import struct, sys
path, off, fmt, val = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4], 0)
with open(path, "r+b") as f:
    f.seek(off)
    f.write(struct.pack(fmt, val))
PYEOF
}

# refuse NAME FIELD-REGEX: mount must fail, name the file and the field
refuse() {
    local name=$1 want=$2 f="$TMP/$1.sion" mnt="$TMP/mnt-$1"
    mkdir -p "$mnt"
    local err rc
    err=$(timeout 600 "$HPCMOUNT" "$f" "$mnt" 2>&1); rc=$?
    if [ "$rc" -eq 0 ]; then
        MOUNTS="$MOUNTS $mnt"; fail "$name: mounted although damaged"; return
    fi
    [ "$rc" -lt 124 ] || { fail "$name: crashed or hung (status $rc)"; return; }
    [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { fail "$name: message is not one line: $err"; return; }
    grep -q "$f" <<< "$err" && grep -Eq "$want" <<< "$err" ||
        { fail "$name: message '$err' lacks the file or /$want/"; return; }
    is_mounted "$mnt" && { fail "$name: left mounted"; return; }
    err=$(timeout 600 "$HPCDUMP" ls "$f" 2>&1); rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && grep -Eq "$want" <<< "$err" ||
        { fail "$name: hpcdump did not refuse it cleanly (status $rc)"; return; }
    pass "$name: refused: $err"
}

mk() { cp "$DATA/$2" "$TMP/$1.sion"; chmod u+w "$TMP/$1.sion"; }

# a_4tasks: ntasks 4, globalrank @1076, chunksize @1108, maxchunks @1140, sov @1144
mk truncated a_4tasks.sion;   truncate -s 2000 "$TMP/truncated.sion"
refuse truncated "field (chunksize|start_of_varheader|maxchunks) at offset"
mk tiny a_4tasks.sion;        truncate -s 100 "$TMP/tiny.sion"
refuse tiny "field META1 at offset 0"
mk badmagic a_4tasks.sion;    printf 'SION' | dd of="$TMP/badmagic.sion" conv=notrunc 2>/dev/null
refuse badmagic "field magic at offset 0"
mk format6 a_4tasks.sion;     patch "$TMP/format6.sion" 16 "<i" 6
refuse format6 "field fileformat at offset 16.*format 6"
mk format1 a_4tasks.sion;     patch "$TMP/format1.sion" 16 "<i" 1
refuse format1 "field fileformat at offset 16"
mk ntasks a_4tasks.sion;      patch "$TMP/ntasks.sion" 24 "<i" 0x7fffffff
refuse ntasks "field ntasks at offset 24"
mk ntasks0 a_4tasks.sion;     patch "$TMP/ntasks0.sion" 24 "<i" 0
refuse ntasks0 "field ntasks at offset 24"
mk fsblk a_4tasks.sion;       patch "$TMP/fsblk.sion" 20 "<i" -4096
refuse fsblk "field fsblksize at offset 20"
mk maxchunks a_4tasks.sion;   patch "$TMP/maxchunks.sion" 1140 "<i" 1000000
refuse maxchunks "field maxchunks at offset 1140"
mk meta2eof a_4tasks.sion;    patch "$TMP/meta2eof.sion" 1144 "<q" 999999999
refuse meta2eof "field start_of_varheader at offset 1144"
mk negchunk a_4tasks.sion;    patch "$TMP/negchunk.sion" 1116 "<q" -5
refuse negchunk "field chunksize at offset 1116"
mk hugechunk a_4tasks.sion;   patch "$TMP/hugechunk.sion" 1116 "<q" 0x7fffffffffff0000
refuse hugechunk "field chunksize at offset 1116"
# task 0's only block claims 9000 bytes of its 4096-byte chunk
mk overlap a_4tasks.sion;     patch "$TMP/overlap.sion" $((24576 + 32)) "<q" 9000
refuse overlap "field blocksize at offset 24608.*overlap"
mk blockcount a_4tasks.sion;  patch "$TMP/blockcount.sion" 24576 "<q" 7
refuse blockcount "field blockcount at offset 24576"
# META2 not where SIONlib puts it (start_of_data + maxchunks * globalskip):
# data placed by another rule (a SIONlib built with a 4 MiB first block)
"$PY" "$top_srcdir/tests/gen/sion_gen.py" "$TMP/bigfirst.sion" --start-of-data 4194304 \
    --fsblksize 4096 --lengths 100,200 > /dev/null
refuse bigfirst "field start_of_varheader at offset 1112: 4202496 is not start_of_data 4096"
# a used block of negative size (only unused entries may hold -1)
mk negblock a_4tasks.sion;    patch "$TMP/negblock.sion" $((24576 + 32 + 8)) "<q" -1
refuse negblock "field blocksize at offset 24616: block 0 of task 1 holds -1 bytes"
# killed writer: no META2 yet
mk killed a_4tasks.sion;      patch "$TMP/killed.sion" 1140 "<i" 0; patch "$TMP/killed.sion" 1144 "<q" 0
refuse killed "field start_of_varheader.*-o salvage"
# multi-file: a member missing, a member of another set, a bad mapping
mk set c1_multifile.sion
refuse set "set.sion.000001: cannot open"
mk set2 c1_multifile.sion; cp "$DATA/c1_multifile.sion.000001" "$TMP/set2.sion.000001"
patch "$TMP/set2.sion.000001" 32 "<i" 0
refuse set2 "field filenumber at offset 32"
mk mapping c1_multifile.sion; cp "$DATA/c1_multifile.sion.000001" "$TMP/mapping.sion.000001"
patch "$TMP/mapping.sion" $((6144 + 16 + 16 + 4 + 8 * 3)) "<i" 7
refuse mapping "field mapping at offset"
# key-value: a record claims more bytes than the stream holds
mk kvlen e_keyval.sion;       patch "$TMP/kvlen.sion" $((1536 + 8)) "<q" 100000
refuse kvlen "field key-value record at offset 1544: task 0: record length 100000"
# big-endian file with a damaged big-endian field
mk bentasks f_bigendian.sion; patch "$TMP/bentasks.sion" 24 ">i" 0x7fffffff
refuse bentasks "field ntasks at offset 24"

# a format 2 file without META2 whose two possible starts of data differ
"$PY" "$top_srcdir/tests/gen/sion_gen.py" "$TMP/v2killed.sion" --format 2 --fsblksize 1 \
    --lengths 100,200 > /dev/null
patch "$TMP/v2killed.sion" $((1056 + 32)) "<i" 0; patch "$TMP/v2killed.sion" $((1056 + 36)) "<q" 0
err=$("$HPCDUMP" -o salvage ls "$TMP/v2killed.sion" 2>&1); rc=$?
check "format 2 without META2: salvage refused" test "$rc" = 1
check "format 2 without META2: says why" grep -q "field start_of_varheader at offset 1092: format 2 file without a usable META2" <<< "$err"

check "no hpcmount mount left behind" bash -c "! grep -q '$TMP' /proc/mounts"
finish
