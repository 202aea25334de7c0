#!/bin/bash
# hpcdump.sh - hpcdump as a front end beside the mount: `ls -l` as ls shows
# the mount, `xattr` as getfattr shows it, `extract` keeps attributes and
# modification times, `cat` follows symlinks as the kernel does, and the
# command line (--help, --version, exit codes, one line per error).
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
export LC_ALL=C

SION="$DATA/a_4tasks.sion"
GSD="$DATA/gsd/hoomd_traj.gsd"

# attrs DIR: getfattr -R -d of DIR as sorted "PATH NAME=VALUE" lines
attrs() {
    (cd "$1" && getfattr -R -d -m - . 2>/dev/null) |
        awk '/^# file: /{ f = substr($0, 9); next } NF { print f, $0 }' | sort
}

# one_line_exit CODE DESCRIPTION COMMAND...: exits CODE, one line on stderr
one_line_exit() {
    local want=$1 d=$2 rc=0; shift 2
    "$@" > "$TMP/out" 2> "$TMP/err" || rc=$?
    if [ "$rc" = "$want" ] && [ "$(wc -l < "$TMP/err")" = 1 ]; then pass "$d"
    else fail "$d: exit $rc, stderr: $(cat "$TMP/err")"; fi
}

# --- command line -------------------------------------------------------
check "--help: the commands on stdout, exit 0" sh -c "'$HPCDUMP' --help | grep -q 'extract SOURCE DIR'"
check "--version: the formats built in" sh -c "'$HPCDUMP' --version | grep -q '^formats: sion gsd fti'"
one_line_exit 2 "unknown command: exit 2, one line" "$HPCDUMP" frobnicate "$SION"
one_line_exit 2 "unknown -o option: exit 2, one line" "$HPCDUMP" -o nosuch ls "$SION"
one_line_exit 2 "missing PATH of cat: exit 2, one line" "$HPCDUMP" cat "$SION"
one_line_exit 1 "missing SOURCE file: exit 1, one line" "$HPCDUMP" ls "$TMP/none.sion"
one_line_exit 1 "not a container: exit 1, one line" "$HPCDUMP" ls "$DATA/a_4tasks.sion.manifest.txt"
one_line_exit 1 "no such PATH: exit 1, one line" "$HPCDUMP" cat "$SION" /rank-000099
one_line_exit 1 "cat of a directory: exit 1, one line" "$HPCDUMP" cat "$GSD" /frames
# several PATHs: each in turn, as cat(1); one that fails is said and
# skipped, and fails the call
expect_eq "cat of two PATHs: both, in turn" \
    "$( { "$HPCDUMP" cat "$SION" /rank-000001; "$HPCDUMP" cat "$SION" /rank-000000; } | sha256sum)" \
    "$("$HPCDUMP" cat "$SION" /rank-000001 /rank-000000 | sha256sum)"
one_line_exit 1 "cat of PATHs, one missing: exit 1, one line" "$HPCDUMP" cat "$SION" /rank-000000 /rank-000099 /rank-000001
expect_eq "cat of PATHs, one missing: the others' bytes" \
    "$( { "$HPCDUMP" cat "$SION" /rank-000000; "$HPCDUMP" cat "$SION" /rank-000001; } | sha256sum)" \
    "$(sha256sum < "$TMP/out")"

# --- ls -l = ls -lA of the mount ----------------------------------------
M="$TMP/gsd"
mount_container "$GSD" "$M" || fail "mount $GSD"
expect_eq "ls -l of a frame's directory = ls -lA of the mount" \
    "$(ls -lA "$M/frames/000001/particles")" "$("$HPCDUMP" ls -l "$GSD" /frames/000001/particles)"
expect_eq "ls -l of the root = ls -lA of the mount" \
    "$(ls -lA "$M")" "$("$HPCDUMP" ls -l "$GSD")"
expect_eq "ls -l of a file = ls -l of the mount's file" \
    "$(cd "$M" && ls -l frames/000000/particles/position)" \
    "$("$HPCDUMP" ls -l "$GSD" frames/000000/particles/position)"
expect_eq "ls -R = ls -RA of the mount" \
    "$(cd "$M" && ls -RA frames/000002 | sed 's#^frames#/frames#')" \
    "$("$HPCDUMP" ls -R "$GSD" /frames/000002)"

# --- xattr = getfattr ---------------------------------------------------
expect_eq "xattr -R = getfattr -R -d -m - of the mount" \
    "$(cd "$M" && getfattr -R -d -m - frames/000001 2>/dev/null)" \
    "$("$HPCDUMP" xattr -R "$GSD" /frames/000001)"
check "xattr: a chunk shows user.shape" sh -c \
    "'$HPCDUMP' xattr '$GSD' /frames/000000/particles/position | grep -q '^user.shape=\"4,3\"$'"

# --- extract keeps attributes and times ---------------------------------
"$HPCDUMP" extract "$GSD" "$TMP/x" || fail "extract"
expect_eq "extract: attributes as on the mount" "$(attrs "$M")" "$(attrs "$TMP/x")"
check "  ... $(attrs "$TMP/x" | wc -l) of them" [ "$(attrs "$TMP/x" | wc -l)" -gt 100 ]
# (a directory's size is the host file system's)
tree_of() { (cd "$1" && find . \( -type d -printf '%p d %T@\n' \) -o -printf '%p %y %s %T@ %l\n' | sort); }
expect_eq "extract: names, types, sizes and modification times as on the mount" \
    "$(tree_of "$M")" "$(tree_of "$TMP/x")"
unmount_container "$M"

# --- cat follows symlinks (HDF5 soft links) -------------------------------
# built FORMAT: this build reads FORMAT (not a "not built" stand-in)
built() { "$HPCDUMP" --version | sed -n 's/ (not built.*//; s/^formats://p' | grep -qw "$1"; }
if built hdf5; then
    H="$TMP/links.h5"
    "$PY" - "$H" <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f["data/a"] = np.arange(1000, dtype="<i4")
    f["data/b"] = np.linspace(0, 1, 77)
    f["links/abs"] = h5py.SoftLink("/data/a")
    f["links/rel"] = h5py.SoftLink("../data/b")
    f["links/chain"] = h5py.SoftLink("/links/abs")
    f["links/dangling"] = h5py.SoftLink("/no/such")
    f["links/loop1"] = h5py.SoftLink("/links/loop2")
    f["links/loop2"] = h5py.SoftLink("/links/loop1")
EOF
    M="$TMP/h5"
    mount_container "$H" "$M" || fail "mount $H"
    for l in abs rel chain; do
        expect_eq "cat of symlink links/$l = the mount's bytes" \
            "$(sha "$M/links/$l")" "$("$HPCDUMP" cat "$H" "/links/$l" | sha256sum | cut -d' ' -f1)"
    done
    one_line_exit 1 "cat of a dangling symlink: exit 1, one line" "$HPCDUMP" cat "$H" /links/dangling
    one_line_exit 1 "cat of a symlink loop: exit 1, one line" "$HPCDUMP" cat "$H" /links/loop1
    expect_eq "ls -l shows link targets as ls does" \
        "$(ls -lA "$M/links")" "$("$HPCDUMP" ls -l "$H" /links)"
    "$HPCDUMP" extract "$H" "$TMP/hx" || fail "extract $H"
    expect_eq "extract: symlinks, attributes and times as on the mount" \
        "$(tree_of "$M"; attrs "$M")" "$(tree_of "$TMP/hx"; attrs "$TMP/hx")"
    unmount_container "$M"
else
    # this build has no HDF5 reader: a file with HDF5's signature says so
    printf '\211HDF\r\n\032\n' > "$TMP/sig.h5"; head -c 4000 /dev/zero >> "$TMP/sig.h5"
    one_line_exit 1 "HDF5 file without the HDF5 reader: exit 1, one line" "$HPCDUMP" ls "$TMP/sig.h5"
    check "  ... saying 'HDF5 support not built'" grep -q "HDF5 support not built" "$TMP/err"
fi
if ! built dhdf; then
    printf '\016\003\023\001' > "$TMP/sig.hdf"; head -c 4000 /dev/zero >> "$TMP/sig.hdf"
    one_line_exit 1 "HDF4 file without the HDF4 reader: exit 1, one line" "$HPCDUMP" ls "$TMP/sig.hdf"
    check "  ... saying 'HDF4 (distributed HDF) support not built'" grep -q "HDF4 (distributed HDF) support not built" "$TMP/err"
fi
finish
