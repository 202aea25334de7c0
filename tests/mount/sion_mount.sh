#!/bin/bash
# sion_mount.sh - SION files through a real FUSE mount and through hpcdump:
# every fixture byte-exact against its manifest (written by SIONlib 1.7.6),
# layouts the fixtures lack generated from the spec (tests/gen/sion_gen.py),
# names, .info, xattrs, read-only behaviour, -o rankname, mount -t, EIO.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse

# manifest_expect FILE.manifest.txt: lines "PATH LENGTH SHA256"
manifest_expect() {
    awk '/^task /{ for (i = 1; i <= NF; i++) { if ($i == "globalrank") g = $(i+1);
                   if ($i == "length") l = $(i+1); if ($i == "sha256") s = $(i+1) }
                   dir = sprintf("rank-%06d", g);
                   if (l != "") print dir, l, s; l = ""; s = "" }
         /^  key /{ print dir "/key-" $2, $4, $6 }' "$1"
}

# verify ROOT EXPECT-FILE LABEL: sizes and sha256 through the mount, and the
# same bytes through hpcdump
verify() {
    local mnt=$1 exp=$2 label=$3 src=$4 bad=0 n=0
    while read -r path len sum; do
        n=$((n + 1))
        [ "$(stat -c %s "$mnt/$path" 2>/dev/null)" = "$len" ] || { bad=1; echo "  size of $path"; }
        [ "$(sha "$mnt/$path" 2>/dev/null)" = "$sum" ] || { bad=1; echo "  sha256 of $path"; }
        [ "$("$HPCDUMP" ${DUMPOPT:-} cat "$src" "/$path" | sha256sum | cut -d' ' -f1)" = "$sum" ] ||
            { bad=1; echo "  hpcdump bytes of $path"; }
    done < "$exp"
    if [ "$bad" = 0 ] && [ "$n" -gt 0 ]; then pass "$label: $n files byte-exact"; else fail "$label"; fi
}

# --- every fixture ------------------------------------------------------
for m in "$DATA"/*.sion.manifest.txt; do
    f=${m%.manifest.txt}; b=$(basename "$f")
    mnt="$TMP/m-$b"
    mount_container "$f" "$mnt" || { fail "$b: mount"; continue; }
    manifest_expect "$m" > "$TMP/$b.exp"
    verify "$mnt" "$TMP/$b.exp" "$b" "$f"
    want=$(cut -d' ' -f1 "$TMP/$b.exp" | cut -d/ -f1 | sort -u | tr '\n' ' ')
    got=$(ls "$mnt" | tr '\n' ' ')
    expect_eq "$b: ls names" "$want" "$got"
    check "$b: .info is hidden and says sion" grep -q '^format: sion$' "$mnt/.info"
    ntasks=$(awk '/^ntasks_total/{print $2}' "$m")
    expect_eq "$b: .info ntasks" "ntasks: $ntasks" "$(grep '^ntasks:' "$mnt/.info")"
    expect_eq "$b: hpcdump ls = ls" "$got" "$("$HPCDUMP" ls "$f" | grep -v '^\.info$' | tr '\n' ' ')"
    unmount_container "$mnt"
done
check "big-endian fixture is reported big" grep -q "^byteorder: big" <("$HPCDUMP" info "$DATA/f_bigendian.sion")

# --- read-only ----------------------------------------------------------
# a copy in $TMP: the modes carried over from the file and the folders
# above it are 0444 wherever the clone is
cp -p "$DATA/a_4tasks.sion" "$TMP/ro.sion"; chmod 0644 "$TMP/ro.sion"
mnt="$TMP/ro"; mount_container "$TMP/ro.sion" "$mnt"
err=$( (echo x > "$mnt/rank-000000") 2>&1 ); check "write: EROFS" grep -q "Read-only" <<< "$err"
err=$(touch "$mnt/new" 2>&1); check "create: EROFS" grep -q "Read-only" <<< "$err"
err=$(mkdir "$mnt/d" 2>&1); check "mkdir: EROFS" grep -q "Read-only" <<< "$err"
err=$(rm -f "$mnt/rank-000001" 2>&1); check "unlink: EROFS" grep -q "Read-only" <<< "$err"
err=$(setfattr -n user.x -v 1 "$mnt/rank-000001" 2>&1); check "setxattr: EROFS" grep -q "Read-only" <<< "$err"
expect_eq "modes drop write bits" "444 555" "$(stat -c %a "$mnt/rank-000000") $(stat -c %a "$mnt")"
expect_eq "mtime from the container" "$(stat -c %Y "$DATA/a_4tasks.sion")" "$(stat -c %Y "$mnt/rank-000002")"
expect_eq "missing name" "ENOENT" "$(test -e "$mnt/rank-000004" && echo exists || echo ENOENT)"
# an odd read: 100 bytes at 1000 of rank 3 equal the source bytes at 16384+1000
expect_eq "odd offset read" "$(dd if="$DATA/a_4tasks.sion" bs=1 skip=17384 count=100 2>/dev/null | sha256sum)" \
    "$(dd if="$mnt/rank-000003" bs=1 skip=1000 count=100 2>/dev/null | sha256sum)"
unmount_container "$mnt"
check "nothing left mounted" bash -c "! grep -q ' $mnt ' /proc/mounts"
# a file held open across a lazy unmount: the kernel drops its RELEASE
# with the connection, the daemon still exits and closes it (the
# sanitizer build reports a leak otherwise)
mnt="$TMP/lazy"; mount_container "$DATA/a_4tasks.sion" "$mnt"
pid=$(pgrep -f "hpcmount.* $mnt\$")
exec 3<"$mnt/rank-000001"
head -c 16 <&3 >/dev/null
umount -l "$mnt"; MOUNTS=$(echo " $MOUNTS " | sed "s# $mnt # #")
exec 3<&-
check "lazy unmount with an open file: the daemon exits" wait_until bash -c "! kill -0 $pid 2>/dev/null"

# --- -o rankname ----------------------------------------------------------
mnt="$TMP/rn"; mount_container "$DATA/a_4tasks.sion" "$mnt" -o rankname=restart.%04d
expect_eq "rankname: names" "restart.0000 restart.0001 restart.0002 restart.0003" "$(ls "$mnt" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "rankname: bytes" "$(awk '/^task 3 /{for(i=1;i<=NF;i++) if($i=="sha256") print $(i+1)}' "$DATA/a_4tasks.sion.manifest.txt")" "$(sha "$mnt/restart.0003")"
unmount_container "$mnt"
err=$("$HPCMOUNT" -o rankname=%s "$DATA/a_4tasks.sion" "$TMP/rn" 2>&1); rc=$?
check "rankname: invalid format refused" test "$rc" -ne 0
check "rankname: message names the option" grep -q "rankname" <<< "$err"

# --- layouts generated from the spec -------------------------------------
gen() {  # gen NAME sion_gen-args...: write, mount, verify, unmount
    local name=$1; shift
    "$PY" "$top_srcdir/tests/gen/sion_gen.py" "$TMP/$name.sion" "$@" > "$TMP/$name.exp" || { fail "$name: generate"; return; }
    local mnt="$TMP/g-$name"
    mount_container "$TMP/$name.sion" "$mnt" || { fail "$name: mount"; return; }
    verify "$mnt" "$TMP/$name.exp" "$name" "$TMP/$name.sion"
    GEN_MNT=$mnt
}
gen fmt2 --format 2 --fsblksize 512 --chunksize 700 --lengths 1500,10,0,2100
unmount_container "$GEN_MNT"
# format 2 with fsblksize 1: the header's own end (1068 + 16n) and SIONlib's
# start of data (1088 + 16n) differ; META2's position tells which was used
gen fmt2own --format 2 --fsblksize 1 --chunksize 700 --lengths 1500,10,0,2100
unmount_container "$GEN_MNT"
gen fmt2lib --format 2 --v2-start library --fsblksize 1 --chunksize 700 --lengths 1500,10,0,2100
unmount_container "$GEN_MNT"
gen fmt3 --format 3 --fsblksize 512 --chunksize 700 --lengths 1500,10,0,2100
unmount_container "$GEN_MNT"
gen fmt4 --format 4 --fsblksize 4096 --chunksize 5000 --lengths 20000,1,9999
unmount_container "$GEN_MNT"
gen blk1 --fsblksize 1 --chunksize 333 --lengths 1000,333,0,5
unmount_container "$GEN_MNT"
gen collective --collective 2 --fsblksize 1024 --chunksizes 1000,500,700,100,300 --lengths 3000,1500,700,250,0
unmount_container "$GEN_MNT"
gen bigmulti --big --nfiles 3 --fsblksize 512 --chunksize 1000 --lengths 3000,0,10,2000,999,1,4000
unmount_container "$GEN_MNT"
gen chunk0 --chunksizes 1024,0,1024 --lengths 2000,0,5
unmount_container "$GEN_MNT"
gen serial --serial --fsblksize 512 --lengths 100,200
unmount_container "$GEN_MNT"
gen repeated --ranks 5,5,3 --lengths 100,200,300
expect_eq "repeated ranks: task-<index> names" "task-000000 task-000001 task-000002" "$(ls "$GEN_MNT" | tr '\n' ' ' | sed 's/ $//')"
check "repeated ranks: .info says so" grep -q "^naming: task-<index>" "$GEN_MNT/.info"
unmount_container "$GEN_MNT"
gen kvgen --kv "1:100,7:5000,1:1,2:0/3:70" --fsblksize 256 --chunksize 512
expect_eq "key-value: keys as files" "key-1 key-2 key-7" "$(ls "$GEN_MNT/rank-000000" | tr '\n' ' ' | sed 's/ $//')"
unmount_container "$GEN_MNT"

# --- large reads (spliced extents) and concurrent readers -------------------
gen large --fsblksize 65536 --chunksize 1048576 --lengths 20000000,7340033,1,12345678
for i in 1 2 3 4 5 6 7 8; do
    r=$(( (i - 1) % 4 )); p=$(printf "rank-%06d" $r)
    ( [ "$(dd if="$GEN_MNT/$p" bs=1M 2>/dev/null | sha256sum | cut -d' ' -f1)" = "$(awk -v p=$p '$1==p{print $3}' "$TMP/large.exp")" ] && echo ok > "$TMP/par.$i" ) &
done
wait
expect_eq "8 concurrent readers byte-exact" "8" "$(cat "$TMP"/par.* 2>/dev/null | grep -c ok)"
unmount_container "$GEN_MNT"

# --- mount -t fuse.hpcmount (fstab) ------------------------------------------
# mount(8) runs "mount.fuse3 SOURCE MNT -t fuse.hpcmount -o ..." with a clean
# PATH; call that helper the same way, with hpcmount found on our PATH.
if command -v mount.fuse3 >/dev/null; then
    mnt="$TMP/mt"; mkdir -p "$mnt"
    if PATH="$top_builddir/fuse:$PATH" mount.fuse3 "$DATA/a_4tasks.sion" "$mnt" -t fuse.hpcmount -o ro,cache_size=16M,rankname=r%d; then
        MOUNTS="$MOUNTS $mnt"
        expect_eq "mount.fuse3 -t fuse.hpcmount (fstab)" "r0 r1 r2 r3" "$(ls "$mnt" | tr '\n' ' ' | sed 's/ $//')"
        unmount_container "$mnt"
    else
        fail "mount.fuse3 -t fuse.hpcmount"
    fi
fi

# --- read-time damage: EIO, a log line, and the daemon stays up ---------------
cp "$DATA/b_multichunk.sion" "$TMP/shrink.sion"
mnt="$TMP/eio"; mount_container "$TMP/shrink.sion" "$mnt" -o log="$TMP/daemon.log"
truncate -s 5000 "$TMP/shrink.sion"
err=$(cat "$mnt/rank-000002" 2>&1 >/dev/null); check "truncated source: EIO" grep -q "Input/output error" <<< "$err"
check "change logged, once" test "$(grep -c "shrink.sion changed since mount" "$TMP/daemon.log")" = 1
# a changed source serves nothing until remount, not even its intact part
err=$(cat "$mnt/rank-000001" 2>&1 >/dev/null); check "intact task of a changed source: EIO" grep -q "Input/output error" <<< "$err"
check "daemon still up: .info says changed" grep -q "^changed: .*shrink.sion changed since mount" "$mnt/.info"
unmount_container "$mnt"

finish
