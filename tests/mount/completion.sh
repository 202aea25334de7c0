#!/bin/bash
# completion.sh - the bash completion (completion/hpcmount) through bash's
# own completion interface: the script is sourced, COMP_LINE, COMP_POINT,
# COMP_WORDS and COMP_CWORD are set as readline sets them, the function
# bash would call is called, and COMPREPLY is checked: option names against
# the options table, formats against --version, paths inside containers
# against hpcdump ls.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../lib/lib.sh"
PATH="$top_builddir/fuse:$top_builddir/dump:$PATH"
. "$top_srcdir/completion/hpcmount"
SION="$DATA/e_keyval.sion"
GSD="$DATA/gsd/hoomd_traj.gsd"

# comp FUNCTION LINE: COMPREPLY for the cursor at the end of LINE; the
# words split as readline splits them (blanks, and = and : as words)
comp() {
    local fn=$1 line=$2 w
    COMP_LINE=$line; COMP_POINT=${#line}
    COMP_WORDS=()
    for w in $(printf '%s' "$line" | sed -e 's/\([=:]\)/ \1 /g'); do COMP_WORDS+=("$w"); done
    [[ -z $line || $line == *[[:space:]] ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    "$fn"
    printf '%s\n' "${COMPREPLY[@]}" | sort
}
sorted() { printf '%s\n' "$@" | sort; }

bound() { complete -p hpcmount | grep -q _hpcmount && complete -p hpcdump | grep -q _hpcdump; }
check "complete -p: hpcmount and hpcdump are bound to their functions" bound

# -o names: every row of the options table and every daemon option, "=" for
# those that take a value (the table's placeholder column)
# (the core's and the readers' own, hpc_format.options)
awk '/^    (\[[A-Z0-9_]+\] = )?\{ "[a-z_0-9]+",/ { split($0, q, "\""); print q[2] ($0 ~ /\{ "[a-z_0-9]+", NULL/ ? "" : "=") }' \
    "$top_srcdir/src/core/hpc_options.c" $(grep -l hpc_option_def "$top_srcdir"/src/formats/*/*.c) > "$TMP/table"
sed -n 's/^    { "\([a-z_]*\)=%[su]".*/\1=/p' "$top_srcdir/fuse/hm_cmdline.c" >> "$TMP/table"
comp _hpcmount "hpcmount -o " > "$TMP/onames"
check "hpcmount -o: the options table has rows" [ "$(wc -l < "$TMP/table")" -ge 20 ]
while read -r n; do
    grep -qx -- "$n" "$TMP/onames" || fail "hpcmount -o <TAB>: $n missing"
done < "$TMP/table"
check "hpcmount -o <TAB>: FUSE's allow_other too" grep -qx allow_other "$TMP/onames"
comp _hpcdump "hpcdump -o " > "$TMP/dnames"
check "hpcdump -o <TAB>: the container options of the table" \
    sh -c "grep -v -e '^log=' -e '^read_ahead_kb=' -e '^max_read=' -e '^zerocopy_min_kb=' -e '^ra_' -e '^spin_us=' '$TMP/table' | sort | cmp -s - '$TMP/dnames'"
expect_eq "hpcmount -o npy,ca: the list goes on after the comma" "npy,cache_size=" "$(comp _hpcmount "hpcmount -o npy,ca")"
expect_eq "hpcdump -o sal" "salvage" "$(comp _hpcdump "hpcdump -o sal")"
formats=$("$HPCMOUNT" --version | sed -n 's/^formats: \([^(]*\).*/\1/p')
expect_eq "hpcmount -o format=: the formats built in (bash's word is '=')" \
    "$(sorted $(for f in $formats; do echo "=$f"; done))" "$(comp _hpcmount "hpcmount -o format=")"
expect_eq "hpcmount -o npy,format=gs" "gsd" "$(comp _hpcmount "hpcmount -o npy,format=gs")"
expect_eq "hpcmount --he" "$(sorted --help --help-all)" "$(comp _hpcmount "hpcmount --he")"

# hpcmount SOURCE MOUNTPOINT: files, then directories only
mkdir -p "$TMP/d/mnt1"; : > "$TMP/d/mfile"
expect_eq "hpcmount SOURCE: files and directories" "$(sorted "$TMP/d/mfile" "$TMP/d/mnt1")" "$(comp _hpcmount "hpcmount $TMP/d/m")"
expect_eq "hpcmount SOURCE MOUNTPOINT: directories only" "$TMP/d/mnt1" "$(comp _hpcmount "hpcmount -o npy $SION $TMP/d/m")"

# hpcdump: commands, its options from --help-all, paths inside containers
expect_eq "hpcdump <TAB>: the commands" "$(sorted ls cat info xattr extract refs)" "$(comp _hpcdump "hpcdump ")"
comp _hpcdump "hpcdump --" > "$TMP/long"
"$HPCDUMP" --help-all | sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z-]*\).*/\2/p' > "$TMP/long_want"
check "hpcdump --<TAB>: its long options" [ "$(wc -l < "$TMP/long_want")" -ge 8 ]
while read -r o; do grep -q -- "^$o=\{0,1\}\$" "$TMP/long" || fail "hpcdump --<TAB>: $o missing"; done < "$TMP/long_want"
expect_eq "hpcdump --js" "--json" "$(comp _hpcdump "hpcdump --js")"

"$HPCDUMP" ls "$SION" / | sed 's|^|/|' | sort > "$TMP/root"
for c in cat ls xattr refs; do
    expect_eq "hpcdump $c SOURCE <TAB>: the container's root" "$(cat "$TMP/root")" "$(comp _hpcdump "hpcdump $c $SION ")"
done
expect_eq "hpcdump ls SOURCE /rank-000000: a directory gets its /" "/rank-000000/" \
    "$(comp _hpcdump "hpcdump ls $SION /rank-000000")"
expect_eq "hpcdump cat SOURCE /rank-000000/: its entries" \
    "$("$HPCDUMP" ls "$SION" /rank-000000 | sed 's|^|/rank-000000/|' | sort)" \
    "$(comp _hpcdump "hpcdump cat $SION /rank-000000/")"
expect_eq "hpcdump cat SOURCE /rank-000000/key-1: a file gets no /" "/rank-000000/key-1" \
    "$(comp _hpcdump "hpcdump cat $SION /rank-000000/key-1")"
expect_eq "hpcdump -o rankname=r%d cat SOURCE /r: the names the options give" "$(sorted /r0 /r1)" \
    "$(comp _hpcdump "hpcdump -o rankname=r%d cat $SION /r")"
first=$("$HPCDUMP" ls "$GSD" / | grep -v '^\.info$' | head -1)
sub=$("$HPCDUMP" ls "$GSD" "/$first" | head -1)
check "hpcdump xattr GSD /$first/<TAB>: one level down" \
    sh -c "printf '%s\n' \"\$1\" | grep -qx '/$first/$sub'" sh "$(comp _hpcdump "hpcdump xattr $GSD /$first/")"
expect_eq "hpcdump extract SOURCE DIR: directories" "$TMP/d/mnt1" "$(comp _hpcdump "hpcdump extract $SION $TMP/d/m")"
expect_eq "hpcdump info SOURCE ARG: nothing" "" "$(comp _hpcdump "hpcdump info $SION /")"
finish
