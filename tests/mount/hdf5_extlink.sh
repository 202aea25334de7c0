#!/bin/sh
# hdf5_extlink.sh - external links and names that are not UTF-8
# (docs/hdf5.md) in files written by h5py (tests/mount/hdf5_extlink.py):
# in a mounted run directory each external link is a symlink FILE//OBJECT
# into the other file's tree (a file in a subdirectory, a link back up, a
# link to the file itself, dangling ones) and reading through it gives what
# h5py reads through it; two files mounted alone side by side link the same
# way; a Latin-1 name and its UTF-8 twin are two names with h5py's bytes,
# through the mount, hpcdump, the Python package and the references.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/python_env.sh"
need_fuse

V="$top_srcdir/tests/mount/hdf5_extlink.py"
R="$TMP/run"
h5py_case "$V" "$R" "run directory: every external link leads where h5py's does"
expect_eq "a link in a subgroup climbs out of both groups" "../../../b.h5//grp/z" "$(readlink "$M/a.h5/d1/d2/up")"
expect_eq "cat through a link to a soft link" "$(od -An -tx1 "$M/b.h5/grp/y")" "$(od -An -tx1 "$M/a.h5/to_soft")"
check "a link into a file of a subdirectory and back" cmp "$M/a.h5/to_c" "$M/sub/c.h5/w"
check "find does not follow them" test "$(find "$M/a.h5" -type l | wc -l)" -eq 10
check ".info lists each with its target" grep -q "^/to_grp -> ../b.h5//grp (external link: file//object)" "$M/a.h5/.info"
check ".info counts them" grep -q "^external_links: 10 (symlinks)" "$M/a.h5/.info"
check "mount: a Latin-1 name and its UTF-8 twin, each with h5py's bytes" "$PY" "$V" names "$M/b.h5" "$R/b.h5"
unmount_container "$M"

# alone, side by side: each tree stands where its file lies
A="$TMP/alone"
mount_container "$R/a.h5" "$A/a.h5" || fail "mount a.h5 alone"
mount_container "$R/b.h5" "$A/b.h5" || fail "mount b.h5 alone"
expect_eq "alone: the target names the file and the object" "../b.h5//x" "$(readlink "$A/a.h5/to_x")"
expect_eq "alone: cat through it" "$(od -An -tx1 "$A/b.h5/x")" "$(od -An -tx1 "$A/a.h5/to_x")"
check "alone: a missing file dangles" sh -c "! test -e '$A/a.h5/no_file' && test -L '$A/a.h5/no_file'"
unmount_container "$A/a.h5"
unmount_container "$A/b.h5"

expect_eq "hpcdump ls -l: the symlink and its target" "to_x -> ../b.h5//x" \
    "$("$HPCDUMP" ls -l "$R/a.h5" / | grep -o 'to_x -> .*')"
expect_eq "hpcdump cat through a link in the run directory" "$("$HPCDUMP" cat "$R" b.h5/x | od -An -tx1)" \
    "$("$HPCDUMP" cat "$R" a.h5/to_x | od -An -tx1)"
expect_eq "hpcdump xattr through the run directory's link" "$("$HPCDUMP" xattr "$R" b.h5/grp/z | sed 1d)" \
    "$("$HPCDUMP" xattr "$R" a.h5/d1/d2/up | sed 1d)"
check "hpcdump cat of a file alone: the link leads out of its tree" sh -c "! '$HPCDUMP' cat '$R/a.h5' to_x >/dev/null 2>&1"
"$HPCDUMP" refs "$R/a.h5" > "$TMP/a.json" 2>"$TMP/refs.err" || fail "hpcdump refs a.h5"
check "refs of a file alone: the link is followed into b.h5 (as libnetcdf does), not a.h5's /b.h5/x" "$PY" -c "
import json, sys
j = json.load(open(sys.argv[1]))
c = [v for k, v in j['refs'].items() if k.startswith('to_x/') and isinstance(v, list)]
u = [k for k, v in j['templates'].items() if v == sys.argv[2]]
sys.exit(not c or not u or any(v[0] != '{{%s}}' % u[0] for v in c))" "$TMP/a.json" "$R/b.h5"
X="$TMP/extract"
"$HPCDUMP" extract "$R" "$X" >/dev/null 2>&1 || fail "hpcdump extract"
check "hpcdump extract: the symlinks lead where h5py's links do" "$PY" "$V" tree "$X" "$R"
check "hpcdump extract: the Latin-1 names" "$PY" "$V" names "$X/b.h5" "$R/b.h5"
check "Python: readlink, read, array, listdir; a file alone does not follow" pypkg "$V" pkg "$R"
"$HPCDUMP" refs "$R/b.h5" > "$TMP/b.json" 2>>"$TMP/refs.err" || fail "hpcdump refs b.h5"
check "refs: surrogate escapes, Latin-1 and UTF-8 names apart" "$PY" "$V" refs "$TMP/b.json" "$R/b.h5"
"$HPCDUMP" refs "$R" > "$TMP/run.json" 2>>"$TMP/refs.err" || fail "hpcdump refs of the run directory"
check "refs of the run directory: a.h5/to_x is b.h5/x's array" "$PY" -c "
import json, sys
r = json.load(open(sys.argv[1]))['refs']
sys.exit(r.get('a.h5/to_x/0') != r.get('b.h5/x/0') or 'a.h5/to_x/.zarray' not in r)" "$TMP/run.json"
finish
