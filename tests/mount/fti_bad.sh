#!/bin/sh
# fti_bad.sh - damaged FTI-FF files: a flipped data byte makes only that
# variable fail with EIO (served with -o nocheck); truncated or corrupted
# metadata fail the mount with a one-line message naming file and field;
# an unusable Rank file of an L2 checkpoint is served from its partner copy.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse

FIX="$DATA/fti/master-i64"
MAN="$DATA/fti/MANIFEST.txt"
M="$TMP/m"
EXEC=3efcb4be-6fd4-474b-9930-b4ae00c4502d

copy() { rm -rf "$TMP/$2"; cp -r "$FIX/$1" "$TMP/$2"; cp "$FIX/config.fti" "$TMP/$2/"; chmod -R u+w "$TMP/$2"; }
want() { grep "^VAR master-i64 ckpt=$1 rank=$2 id=$3 " "$MAN" | sed 's/.*sha256=//'; }

# rec FILE VARID FIELD: file offset of FIELD (fptr, numvars, dptr) of the
# first chunk record of VARID, from the i64 layout in docs/formats/fti.md;
# emptychunksize: the chunksize field of VARID's first record without content
rec() {
    $PY - "$@" <<'EOF'
import struct, sys
path, vid, field = sys.argv[1], int(sys.argv[2]), sys.argv[3]
b = open(path, 'rb').read()
meta = b[-106:]
data_size, fs = struct.unpack('<q', meta[69:77])[0], struct.unpack('<q', meta[77:85])[0]
p = data_size
while p < fs - 106:
    nv = struct.unpack('<i', b[p:p + 12][:4])[0]
    hdr = p; p += 12
    for k in range(nv):
        r = b[p:p + 58]
        i, = struct.unpack('<i', r[:4])
        if i == vid and field == 'emptychunksize':
            if r[8] == 0:
                print(p + 26)
                sys.exit(0)
        elif i == vid:
            fptr, = struct.unpack('<Q', r[18:26])
            print({'fptr': fptr, 'numvars': hdr, 'dptr': p + 10, 'fptrfield': p + 18}[field])
            sys.exit(0)
        p += 58
sys.exit(1)
EOF
}

# poke FILE OFFSET BYTES(hex): overwrite bytes in place
poke() {
    $PY -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); f.write(bytes.fromhex(sys.argv[3]))' "$@"
}

# ---- a flipped data byte
copy ckpt1-L1 flip
f="$TMP/flip/Local/node0/$EXEC/l1/Ckpt1-Rank0.fti"
off=$(rec "$f" 2 fptr)
check "found var 2's chunk in the record table" test -n "$off"
old=$(od -An -tx1 -j $((off + 5)) -N1 "$f" | tr -d ' ')
poke "$f" $((off + 5)) "$(printf '%02x' $((0x$old ^ 0xff)))"
mount_container "$TMP/flip" "$M" || fail "mount the flipped copy"
check "flipped byte: var 2 read fails" sh -c "! cat '$M/ckpt-1/rank-000000/var-2' >/dev/null 2>&1"
check "flipped byte: the error is EIO" sh -c "cat '$M/ckpt-1/rank-000000/var-2' 2>&1 >/dev/null | grep -q 'Input/output error'"
expect_eq "flipped byte: var 0 of the same rank intact" "$(want 1 0 0)" "$(sha "$M/ckpt-1/rank-000000/var-0")"
expect_eq "flipped byte: var 1000 of the same rank intact" "$(want 1 0 1000)" "$(sha "$M/ckpt-1/rank-000000/var-1000")"
expect_eq "flipped byte: var 2 of rank 1 intact" "$(want 1 1 2)" "$(sha "$M/ckpt-1/rank-000001/var-2")"
check "flipped byte: .info reports the variable" grep -q "rank 0 var-2: chunk MD5 mismatch" "$M/.info"
check "flipped byte: .info bad variables: 1" grep -qx "bad variables: 1" "$M/.info"
unmount_container "$M"
check "flipped byte: hpcdump cat fails" sh -c "! '$HPCDUMP' cat '$TMP/flip' ckpt-1/rank-000000/var-2 >/dev/null 2>&1"
mount_container "$TMP/flip" "$M" -o nocheck || fail "mount -o nocheck"
got=$(sha "$M/ckpt-1/rank-000000/var-2")
check "-o nocheck: var 2 is served" test -n "$got"
check "-o nocheck: ... with the flipped byte" test "$got" != "$(want 1 0 2)"
expect_eq "-o nocheck: size unchanged" 100 "$(stat -c %s "$M/ckpt-1/rank-000000/var-2")"
unmount_container "$M"
expect_eq "-o nocheck: hpcdump serves the same bytes" "$got" \
    "$("$HPCDUMP" -o nocheck cat "$TMP/flip" ckpt-1/rank-000000/var-2 | sha256sum | cut -d' ' -f1)"

# expect_mount_error DESCRIPTION SOURCE PATTERN: the mount fails, says PATTERN, mounts nothing
# (options after PATTERN go to hpcmount)
expect_mount_error() {
    mkdir -p "$M"
    d=$1 src=$2 pat=$3; shift 3
    msg=$("$HPCMOUNT" "$@" "$src" "$M" 2>&1) && { fail "$d: mount succeeded"; unmount_container "$M"; return; }
    if echo "$msg" | grep -q -- "$pat" && ! is_mounted "$M" && [ "$(echo "$msg" | wc -l)" -eq 1 ]; then
        pass "$d"
    else
        fail "$d: got '$msg'"
    fi
}

one="$FIX/ckpt2-L1/Local/node1/$EXEC/l1/Ckpt2-Rank1.fti"
# ---- truncated files
cp "$one" "$TMP/trunc.fti"; chmod u+w "$TMP/trunc.fti"
truncate -s -1 "$TMP/trunc.fti"
expect_mount_error "truncated by 1 byte: myHash fails" "$TMP/trunc.fti" "trunc.fti: field myHash at offset"
head -c 50 "$one" > "$TMP/short.fti"
expect_mount_error "50 bytes: too short" "$TMP/short.fti" "short.fti: field file meta at offset 0"
# data cut away, meta kept: fs no longer matches
{ head -c 1000 "$one"; tail -c 600 "$one"; } > "$TMP/cut.fti"
expect_mount_error "middle cut out: fs mismatch" "$TMP/cut.fti" "cut.fti: field fs at offset .*truncated"

# ---- corrupted chunk records (not covered by myHash)
cp "$one" "$TMP/nv.fti"; chmod u+w "$TMP/nv.fti"
poke "$TMP/nv.fti" "$(rec "$TMP/nv.fti" 0 numvars)" ffffff0f
expect_mount_error "numvars too large" "$TMP/nv.fti" "nv.fti: field numvars at offset"
cp "$one" "$TMP/fp.fti"; chmod u+w "$TMP/fp.fti"
poke "$TMP/fp.fti" "$(rec "$TMP/fp.fti" 2 fptrfield)" 0000100000000000
expect_mount_error "fptr outside the data area" "$TMP/fp.fti" "fp.fti: field fptr at offset"
cp "$one" "$TMP/dp.fti"; chmod u+w "$TMP/dp.fti"
poke "$TMP/dp.fti" "$(rec "$TMP/dp.fti" 1000 dptr)" 07
expect_mount_error "dptr leaves a hole" "$TMP/dp.fti" "dp.fti: field dptr at offset"

# ---- a container without content that claims bytes: FTI counts them in the
# variable's size but stores them nowhere (ckpt 3: var 1's second container)
cp "$FIX/ckpt3-L2/Local/node0/$EXEC/l2/Ckpt3-Rank0.fti" "$TMP/hc.fti"; chmod u+w "$TMP/hc.fti"
off=$(rec "$TMP/hc.fti" 1 emptychunksize)
check "found var 1's empty container" test -n "$off"
poke "$TMP/hc.fti" "$off" 2003000000000000
expect_mount_error "empty container with a chunk size" "$TMP/hc.fti" \
    "hc.fti: field hascontent at offset $((off - 18)): variable 1: a container without content claims a chunk of 800 bytes"
expect_eq "the same file intact mounts" "$(want 3 0 1)" \
    "$("$HPCDUMP" cat "$FIX/ckpt3-L2/Local/node0/$EXEC/l2/Ckpt3-Rank0.fti" var-1 | sha256sum | cut -d' ' -f1)"

# ---- a checkpoint directory without L2/L3 files: a bad rank fails the mount
copy ckpt2-L1 l1
truncate -s -1 "$TMP/l1/Local/node3/$EXEC/l1/Ckpt2-Rank3.fti"
expect_mount_error "L1 directory with a truncated rank file" "$TMP/l1" "Ckpt2-Rank3.fti: field myHash"
check "hpcdump: same message" sh -c "'$HPCDUMP' ls '$TMP/l1' 2>&1 | grep -q 'Ckpt2-Rank3.fti: field myHash'"
expect_mount_error "not an FTI directory" "$TMP/x-no-such" "x-no-such"
mkdir -p "$TMP/empty"
# (without -o format an empty directory is an empty run directory)
expect_mount_error "a directory without FTI files, -o format=fti" "$TMP/empty" "no Ckpt<N>-Rank<R>.fti" -o format=fti

# ---- FTI's staging directory (<execId>/tmp beside l1): a checkpoint being
# written, or cut off by a crash, is not committed and is not shown
copy ckpt1-L1 staged
st="$TMP/staged/Local/node0/$EXEC/tmp"; mkdir -p "$st"
head -c 300 "$FIX/ckpt2-L1/Local/node0/$EXEC/l1/Ckpt2-Rank0.fti" > "$st/Ckpt2-Rank0.fti"
cp "$FIX/ckpt2-L1/Local/node1/$EXEC/l1/Ckpt2-Rank1.fti" "$st/"
mount_container "$TMP/staged" "$M" || fail "mount with a staging directory"
expect_eq "staging: only the committed checkpoint" "ckpt-1" "$(ls "$M" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "staging: ckpt 1 intact" "$(want 1 0 2)" "$(sha "$M/ckpt-1/rank-000000/var-2")"
check "staging: .info says what was left out" grep -q "warning: 2 checkpoint files in FTI's staging directories" "$M/.info"
unmount_container "$M"
# a directory called tmp that is no staging directory is walked
rm -rf "$TMP/plain"; mkdir -p "$TMP/plain"; cp -r "$FIX/ckpt2-L1" "$TMP/plain/tmp"
expect_eq "a plain tmp directory is read" "$(want 2 1 1000)" \
    "$("$HPCDUMP" cat "$TMP/plain" ckpt-2/rank-000001/var-1000 | sha256sum | cut -d' ' -f1)"

# ---- L2: an unusable Rank file is served from its partner copy
copy ckpt3-L2 l2
truncate -s 100 "$TMP/l2/Local/node2/$EXEC/l2/Ckpt3-Rank2.fti"
mount_container "$TMP/l2" "$M" || fail "mount L2 with a truncated Rank2"
expect_eq "L2: truncated Rank2 served from its partner copy" "$(want 3 2 1)" "$(sha "$M/ckpt-3/rank-000002/var-1")"
check "L2: .info warns about the unusable file" grep -q "rank 2: Rank file unusable; served from" "$M/.info"
unmount_container "$M"

finish
