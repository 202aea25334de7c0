#!/bin/sh
# fti_mount.sh - every VAR line of the FTI fixture manifest byte-exact through
# a real mount and through hpcdump, for every checkpoint and from every level
# of the FTI tree; a single .fti file; rank names; .info.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse

FIX="$DATA/fti/master-i64"
MAN="$DATA/fti/MANIFEST.txt"
M="$TMP/m"

# check_vars ROOT CKPT... : every VAR line of those checkpoints under ROOT
# (a mount point) matches the manifest's size and sha256
check_vars() {
    root=$1; shift
    bad=0; n=0
    for ck in "$@"; do
        while read -r _ _ c r i s h; do
            p=$(printf '%s/ckpt-%s/rank-%06d/var-%s' "$root" "${c#ckpt=}" "${r#rank=}" "${i#id=}")
            n=$((n + 1))
            if [ ! -f "$p" ] || [ "$(stat -c %s "$p")" != "${s#size=}" ] || [ "$(sha "$p")" != "${h#sha256=}" ]; then
                echo "  mismatch: $p"; bad=$((bad + 1))
            fi
        done <<EOF
$(grep "^VAR master-i64 ckpt=$ck " "$MAN")
EOF
    done
    [ "$bad" -eq 0 ] && [ "$n" -gt 0 ]
}

# the whole fixture: 5 checkpoints
mount_container "$FIX" "$M" || fail "mount $FIX"
check "all 92 variables of ckpt 1-5 byte-exact through the mount" check_vars "$M" 1 2 3 4 5
expect_eq "number of var files equals the manifest's VAR lines" \
    "$(grep -c '^VAR ' "$MAN")" "$(find "$M" -name 'var-*' -type f | wc -l)"
expect_eq "checkpoint directories" "ckpt-1 ckpt-2 ckpt-3 ckpt-4 ckpt-5" "$(ls "$M" | xargs)"
check ".info names format and levels" grep -q "checkpoint 4: level L3" "$M/.info"
check ".info: the l4 directory makes level L4" grep -q "checkpoint 5: level L4" "$M/.info"
check ".info: ckpt 3 accepted although FTI's own verifier refuses it" \
    sh -c "grep -P '^3\t0\tfile\t' '$M/.info' | grep -q 'ok (all records)'"
check "xattr user.dtype" sh -c "getfattr --only-values -n user.dtype '$M/ckpt-1/rank-000000/var-2' 2>/dev/null | grep -qx '|u1'"
check "files are read-only" sh -c "! touch '$M/ckpt-1/rank-000000/var-2' 2>/dev/null"
unmount_container "$M"

# FTI's l4_archive (keep_l4_ckpt): older L4 checkpoints, level L4 too
rm -rf "$TMP/arch"; cp -r "$FIX/ckpt5-L4" "$TMP/arch"; chmod -R u+w "$TMP/arch"
mv "$TMP/arch/Global"/*/l4 "$(echo "$TMP/arch/Global"/*)/l4_archive"
check "l4_archive: level L4" sh -c "'$HPCDUMP' info '$TMP/arch' | grep -q 'checkpoint 5: level L4'"
rm -rf "$TMP/archx"; "$HPCDUMP" extract "$TMP/arch" "$TMP/archx" || fail "l4_archive: hpcdump extract"
check "l4_archive: bytes of ckpt 5" check_vars "$TMP/archx" 5

# hpcdump: same bytes, extracted
"$HPCDUMP" extract "$FIX" "$TMP/x" || fail "hpcdump extract"
check "all variables byte-exact through hpcdump extract" check_vars "$TMP/x" 1 2 3 4 5
expect_eq "hpcdump cat of one variable" \
    "$(grep '^VAR master-i64 ckpt=2 rank=3 id=1 ' "$MAN" | sed 's/.*sha256=//')" \
    "$("$HPCDUMP" cat "$FIX" ckpt-2/rank-000003/var-1 | sha256sum | cut -d' ' -f1)"

# SOURCE at other levels of the tree
for sub in ckpt4-L3 ckpt4-L3/Local ckpt4-L3/Local/node2/3efcb4be-6fd4-474b-9930-b4ae00c4502d/l3; do
    mount_container "$FIX/$sub" "$M" || fail "mount $sub"
    if [ "$sub" = ckpt4-L3 ] || [ "$sub" = ckpt4-L3/Local ]; then
        check "SOURCE=$sub: checkpoint 4 byte-exact" check_vars "$M" 4
    else
        # one l3 dir holds rank 2's own file (and RSed 2)
        p="$M/ckpt-4/rank-000002/var-1"
        expect_eq "SOURCE=$sub: rank 2 var 1" \
            "$(grep '^VAR master-i64 ckpt=4 rank=2 id=1 ' "$MAN" | sed 's/.*sha256=//')" "$(sha "$p")"
    fi
    unmount_container "$M"
done

# a single .fti file: /var-<id>
one="$FIX/ckpt5-L4/Global/3efcb4be-6fd4-474b-9930-b4ae00c4502d/l4/Ckpt5-Rank1.fti"
mount_container "$one" "$M" || fail "mount single file"
expect_eq "single file: its variables" "var-0 var-1 var-1000 var-2 var-7" "$(ls "$M" | sort | xargs)"
ok=1
while read -r _ _ _ _ i s h; do
    [ "$(sha "$M/var-${i#id=}")" = "${h#sha256=}" ] || ok=0
done <<EOF
$(grep '^VAR master-i64 ckpt=5 rank=1 ' "$MAN")
EOF
check "single file: every variable byte-exact" test "$ok" = 1
unmount_container "$M"

# -o rankname
mount_container "$FIX/ckpt1-L1" "$M" -o rankname=restart.%04d || fail "mount rankname"
expect_eq "-o rankname renames rank directories" \
    "$(grep '^VAR master-i64 ckpt=1 rank=2 id=0 ' "$MAN" | sed 's/.*sha256=//')" \
    "$(sha "$M/ckpt-1/restart.0002/var-0")"
unmount_container "$M"

finish
