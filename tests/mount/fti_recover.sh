#!/bin/sh
# fti_recover.sh - lost Rank files: served from the L2 partner copy, rebuilt
# from the L3 Reed-Solomon group; every variable byte-exact against the
# manifest through the mount and hpcdump.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse

FIX="$DATA/fti/master-i64"
MAN="$DATA/fti/MANIFEST.txt"
M="$TMP/m"
EXEC=3efcb4be-6fd4-474b-9930-b4ae00c4502d

# check_ckpt ROOT CKPT: every VAR line of CKPT under ROOT matches
check_ckpt() {
    bad=0; n=0
    while read -r _ _ c r i s h; do
        p=$(printf '%s/ckpt-%s/rank-%06d/var-%s' "$1" "${c#ckpt=}" "${r#rank=}" "${i#id=}")
        n=$((n + 1))
        if [ ! -f "$p" ] || [ "$(stat -c %s "$p")" != "${s#size=}" ] || [ "$(sha "$p")" != "${h#sha256=}" ]; then
            echo "  mismatch: $p"; bad=$((bad + 1))
        fi
    done <<EOF
$(grep "^VAR master-i64 ckpt=$2 " "$MAN")
EOF
    [ "$bad" -eq 0 ] && [ "$n" -gt 0 ]
}

# copy DIR NAME: a writable copy of a fixture checkpoint in $TMP, with the
# run's config.fti beside its Local/Global/Meta directories
copy() {
    rm -rf "$TMP/$2"; cp -r "$FIX/$1" "$TMP/$2"; cp "$FIX/config.fti" "$TMP/$2/"
    chmod -R u+w "$TMP/$2"
}

# origin INFO CKPT RANK: the origin column of that rank's .info line
origin() { awk -F'\t' -v c="$2" -v r="$3" '$1 == c && $2 == r { print $3 }' "$1"; }

# ---- L2: rank 1's file deleted; rank 2 holds its partner copy
copy ckpt3-L2 l2
rm "$TMP/l2/Local/node1/$EXEC/l2/Ckpt3-Rank1.fti"
mount_container "$TMP/l2" "$M" || fail "mount L2 copy without Rank1"
check "L2: every variable of ckpt 3 byte-exact with Rank1 deleted" check_ckpt "$M" 3
expect_eq "L2: .info says rank 1 comes from the partner copy" partner-copy "$(origin "$M/.info" 3 1)"
check "L2: .info names the holder" grep -q "Pcof2.fti" "$M/.info"
unmount_container "$M"
"$HPCDUMP" extract "$TMP/l2" "$TMP/l2x" || fail "hpcdump extract L2"
check "L2: hpcdump extract byte-exact" check_ckpt "$TMP/l2x" 3

# the holder's own file gone too (node 2 lost entirely would be Rank2+Pcof2):
# rank 1 recovered, rank 2 from Pcof3
rm "$TMP/l2/Local/node2/$EXEC/l2/Ckpt3-Rank2.fti"
mount_container "$TMP/l2" "$M" || fail "mount L2 copy without Rank1, Rank2"
check "L2: two lost ranks, both from partner copies" check_ckpt "$M" 3
unmount_container "$M"

# a lost node (Rank1 and the copy it holds, Pcof1 = rank 0's copy): rank 1 still served
copy ckpt3-L2 l2b
rm "$TMP/l2b/Local/node1/$EXEC/l2/Ckpt3-Rank1.fti" "$TMP/l2b/Local/node1/$EXEC/l2/Ckpt3-Pcof1.fti"
mount_container "$TMP/l2b" "$M" || fail "mount L2 copy without node1"
check "L2: node 1 lost: checkpoint 3 byte-exact" check_ckpt "$M" 3
unmount_container "$M"

# ---- L3: rank 2's file deleted; rebuilt from the RS group
copy ckpt4-L3 l3
rm "$TMP/l3/Local/node2/$EXEC/l3/Ckpt4-Rank2.fti"
mount_container "$TMP/l3" "$M" || fail "mount L3 copy without Rank2"
check "L3: every variable of ckpt 4 byte-exact with Rank2 deleted" check_ckpt "$M" 4
expect_eq "L3: .info says rank 2 was rebuilt" rs-rebuild "$(origin "$M/.info" 4 2)"
check "L3: groups from config.fti and the 4 nodes of Topology.fti" \
    grep -q "group size 4 (config.fti: node_size 1, group_size 4, head 0; 4 nodes listed by Topology.fti)" "$M/.info"
unmount_container "$M"
"$HPCDUMP" extract "$TMP/l3" "$TMP/l3x" || fail "hpcdump extract L3"
check "L3: hpcdump extract byte-exact" check_ckpt "$TMP/l3x" 4

# lost nodes 0 and 2 (Rank and RSed files): 2 data + 2 parity pieces = G
rm "$TMP/l3/Local/node2/$EXEC/l3/Ckpt4-RSed2.fti" \
   "$TMP/l3/Local/node0/$EXEC/l3/Ckpt4-Rank0.fti" "$TMP/l3/Local/node0/$EXEC/l3/Ckpt4-RSed0.fti"
mount_container "$TMP/l3" "$M" || fail "mount L3 copy without nodes 0 and 2"
check "L3: nodes 0 and 2 lost: checkpoint 4 byte-exact" check_ckpt "$M" 4
unmount_container "$M"

# three nodes lost: fewer than G pieces; rank 3 is served, the lost ranks'
# directories fail with EIO
rm "$TMP/l3/Local/node1/$EXEC/l3/Ckpt4-Rank1.fti"
mount_container "$TMP/l3" "$M" || fail "mount L3 copy with 3 pieces"
check "L3: too few pieces: .info says not recoverable" grep -q "rank 0: Rank file missing and not recoverable" "$M/.info"
expect_eq "L3: too few pieces: every rank is listed" "rank-000000 rank-000001 rank-000002 rank-000003" "$(ls "$M/ckpt-4" | xargs)"
expect_eq "L3: too few pieces: rank 3 var 1 byte-exact" \
    "$(grep '^VAR master-i64 ckpt=4 rank=3 id=1 ' "$MAN" | sed 's/.*sha256=//')" "$(sha "$M/ckpt-4/rank-000003/var-1")"
check "L3: too few pieces: a lost rank's directory fails with EIO" \
    sh -c "ls '$M/ckpt-4/rank-000000' 2>&1 | grep -q 'Input/output error'"
check "L3: too few pieces: reading a lost rank's variable fails with EIO" \
    sh -c "cat '$M/ckpt-4/rank-000001/var-1' 2>&1 >/dev/null | grep -q 'Input/output error'"
unmount_container "$M"

# no config.fti: the groups are not guessed; the lost rank stays lost
copy ckpt3-L2 nocfg
rm "$TMP/nocfg/config.fti" "$TMP/nocfg/Local/node1/$EXEC/l2/Ckpt3-Rank1.fti"
mount_container "$TMP/nocfg" "$M" -o log="$TMP/nocfg.log" || fail "mount L2 copy without config.fti"
check "no config.fti: .info says why rank 1 is not served" \
    grep -q "rank 1: Rank file missing and not recovered: the L2/L3 groups are unknown: no config.fti" "$M/.info"
check "no config.fti: rank 1 read fails with EIO" \
    sh -c "cat '$M/ckpt-3/rank-000001/var-1' 2>&1 >/dev/null | grep -q 'Input/output error'"
check "no config.fti: rank 0 is served" test -s "$M/ckpt-3/rank-000000/var-1"
unmount_container "$M"
check "no config.fti: the daemon logged what is needed" grep -q "fticonfig=PATH" "$TMP/nocfg.log"
cp "$FIX/config.fti" "$TMP/cfg-elsewhere.fti"
mount_container "$TMP/nocfg" "$M" -o fticonfig="$TMP/cfg-elsewhere.fti" || fail "mount with -o fticonfig"
check "-o fticonfig: rank 1 served from its partner copy" check_ckpt "$M" 3
unmount_container "$M"
"$HPCDUMP" -o fticonfig="$TMP/cfg-elsewhere.fti" extract "$TMP/nocfg" "$TMP/nocfgx" || fail "hpcdump -o fticonfig extract"
check "-o fticonfig: hpcdump extract byte-exact" check_ckpt "$TMP/nocfgx" 3

# config.fti and Topology.fti disagree (node_size 2 puts ranks 0 and 1 on
# node 0, but rank 1's files lie in node1's directory, Topology.fti's node
# 1): nothing is guessed, the mount is refused with one line
copy ckpt3-L2 dis
sed -i 's/^node_size .*/node_size = 2/' "$TMP/dis/config.fti"
sed -i 's/^group_size .*/group_size = 2/' "$TMP/dis/config.fti"
rm "$TMP/dis/Local/node1/$EXEC/l2/Ckpt3-Rank1.fti"
mkdir -p "$M"
"$HPCMOUNT" "$TMP/dis" "$M" 2>"$TMP/dis.err"
expect_eq "config vs Topology.fti: the mount is refused" 1 "$?"
is_mounted "$M" && fusermount3 -u "$M"
off=$(grep -b '^1 ' "$TMP/dis/Meta/$EXEC/Topology.fti" | cut -d: -f1)
check "config vs Topology.fti: one line naming file, field and offset" \
    grep -q "Topology.fti: field \[topology\] host name at offset $off: .*Ckpt3-Pcof1.fti lies in the directory of node 1 (node1), but config.fti (node_size 2) puts rank 1 on node 0" "$TMP/dis.err"
expect_eq "config vs Topology.fti: one line" 1 "$(wc -l < "$TMP/dis.err")"

# the same ckpt with config.fti above it (group size from the config)
mkdir -p "$TMP/tree"
cp "$FIX/config.fti" "$TMP/tree/"
copy ckpt4-L3 tree/ckpt4-L3
rm "$TMP/tree/ckpt4-L3/Local/node3/$EXEC/l3/Ckpt4-Rank3.fti"
mount_container "$TMP/tree/ckpt4-L3/Local" "$M" || fail "mount L3 Local dir"
check "L3: SOURCE=Local, config.fti found above" grep -q "group size 4 (config.fti: " "$M/.info"
check "L3: rank 3 rebuilt, checkpoint 4 byte-exact" check_ckpt "$M" 4
unmount_container "$M"

# ---- a larger generated checkpoint (bench/fti_gen, 8 ranks x 2 x 3 MiB):
# a rank rebuilt from its RS group reads the same bytes as its own file,
# through many 128 KiB decoding steps, with big and 4 KiB reads (and with a
# 4 KiB cache block size, which must not matter to rebuilt bytes)
GEN="$top_builddir/bench/fti_gen"
if [ -x "$GEN" ]; then
    "$GEN" "$TMP/gen" 8 2 3 4 || fail "fti_gen"
    mount_container "$TMP/gen" "$M" || fail "mount generated"
    s0=$(sha "$M/ckpt-1/rank-000002/var-0"); s1=$(sha "$M/ckpt-1/rank-000002/var-1")
    expect_eq "generated: variable size" 3145728 "$(stat -c %s "$M/ckpt-1/rank-000002/var-1")"
    unmount_container "$M"
    mv "$(find "$TMP/gen" -name Ckpt1-Rank2.fti)" "$TMP/Rank2.away"
    for bs in "" "-o blocksize=4096"; do
        mount_container "$TMP/gen" "$M" $bs || fail "mount generated without Rank2 $bs"
        expect_eq "generated: rank 2 var 0 rebuilt byte-exact $bs" "$s0" "$(sha "$M/ckpt-1/rank-000002/var-0")"
        expect_eq "generated: rank 2 var 1 rebuilt, 4 KiB reads $bs" "$s1" \
            "$(dd if="$M/ckpt-1/rank-000002/var-1" bs=4096 2>/dev/null | sha256sum | cut -d' ' -f1)"
        unmount_container "$M"
    done
    expect_eq "generated: hpcdump reads the rebuilt rank" "$s1" \
        "$("$HPCDUMP" cat "$TMP/gen" ckpt-1/rank-000002/var-1 | sha256sum | cut -d' ' -f1)"
else
    echo "SKIP: bench/fti_gen not built"
fi

finish
