#!/bin/sh
# dhdf_names.sh - HDF4 SDSs whose names clash or are no file name
# (tests/gen/hdf4_cases: names.hdf, coordvars.hdf; SDcreate names an SDS
# of an empty name "DataSet", so that case is left to files libhdf4 did
# not write): each is served under
# the name docs/dhdf.md gives it (an alias NAME~INDEX; the first SDS of a
# name keeps it), with its own name's bytes in user.h4name and a note in
# .info.  Every SDS, by its index, through a real mount, `hpcdump cat`
# and the Python package against libhdf4's SDreaddata
# (tests/gen/hdf4_oracle); the names against the rule written apart
# (tests/mount/h4names.py) and against the documented list; the same
# names on a second mount.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
GEN="$top_builddir/tests/gen/hdf4_cases"
O="$top_builddir/tests/gen/hdf4_oracle"
[ -x "$GEN" ] && [ -x "$O" ] || { echo "SKIP: tests/gen/hdf4_cases not built"; exit 77; }
$PY -c 'import numpy' 2>/dev/null || { echo "SKIP: python3-numpy missing"; exit 77; }
. "$top_srcdir/tests/lib/python_env.sh"
C="$TMP/c"
mkdir -p "$C"
check "hdf4_cases writes its files" "$GEN" "$C"
F="$C/names.hdf"
"$O" "$F" >"$TMP/o" || fail "hdf4_oracle names.hdf"
M="$TMP/m"
xa() { $PY -c "import os,sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode())" "$@"; }
rep() { i=0; while [ "$i" -lt "$2" ]; do printf %s "$1"; i=$((i + 1)); done; }

# the names of docs/dhdf.md's example, in index order
u=$(printf '\303\274')
want_ls=$(printf '%s\n' dup 'dup~1_2' 'a_b~2' '.~3' '..~4' '.info~5' x.pieces 'sp ace' \
    "${u}n$(printf '\303\257')" 'dup~9' 'dup~1' DataSet "$(rep n 255)" "$(rep n 252)~13" \
    "x$(rep "$u" 127)" "x$(rep "$u" 125)~15" grid 'dup~17' longdim "$(rep D 255)" | LC_ALL=C sort)

if mount_container "$F" "$M"; then
    expect_eq "the mount's files are the documented names" "$want_ls" \
        "$(ls -A "$M" | grep -vx '.info' | LC_ALL=C sort)"
    expect_eq "hpcdump ls gives the same names" "$want_ls" \
        "$("$HPCDUMP" ls "$F" | grep -vx '.info' | LC_ALL=C sort)"
    check ".info: no warning" sh -c "! grep -q '^warning' '$M/.info'"
    check ".info: a repeated name, with the SDS that has it" grep -qx \
        "note: SDS 1 'dup' served as 'dup~1_2': SDS 0 has its name" "$M/.info"
    check ".info: a name holding '/'" grep -qx \
        "note: SDS 2 'a/b' served as 'a_b~2': its name holds '/'" "$M/.info"
    check ".info: a repeated name of 255 bytes, its alias cut" grep -q \
        "^note: SDS 13 'n\{255\}' served as 'n\{252\}~13': SDS 12 has its name$" "$M/.info"
    check ".info: a coordinate variable named like an SDS" grep -qx \
        "note: coordinate variable 17 'dup' served as 'dup~17': SDS 0 has its name (it is the scale of a dimension of that name)" \
        "$M/.info"
    check ".info: a note for each of the 9" test "$(grep -c '^note: ' "$M/.info")" -eq 9
    expect_eq "a_b~2: user.h4name" "a/b" "$(xa "$M/a_b~2" user.h4name)"
    ls -A "$M" | LC_ALL=C sort >"$TMP/ls1"
    unmount_container "$M"
else
    fail "mount names.hdf"
fi
if mount_container "$F" "$M"; then
    expect_eq "a second mount gives the same names" "$(cat "$TMP/ls1")" "$(ls -A "$M" | LC_ALL=C sort)"
    check "every SDS by its index: the mount, hpcdump cat, the Python package and user.h4name as libhdf4 has them" \
        pypkg - "$F" "$TMP/o" "$M" "$HPCDUMP" "$top_srcdir/tests/mount" <<'EOF'
import os, subprocess, sys
import numpy as np
path, oracle, mnt, hpcdump, here = sys.argv[1:]
sys.path.insert(0, here)
import h4names
import hpcmount
lines = open(oracle).read().split("\n")
sdss = []
for k in range(0, len(lines) - 1, 2):
    kind, idx, h, shape, nt, nbytes, status = lines[k].split(" ")
    raw = b"" if h == "-" else bytes.fromhex(h)
    sdss.append((int(idx), raw, bytes.fromhex(lines[k + 1]), [int(x) for x in shape.split(",")]))
names = h4names.served_names([(i, raw) for i, raw, _, _ in sdss])
bad = []
with hpcmount.open(path) as c:
    for idx, raw, data, shape in sdss:
        name = names[idx]
        p = os.path.join(mnt, name)
        got = {"mount": open(p, "rb").read(),
               "hpcdump cat": subprocess.run([hpcdump, "cat", path, name], capture_output=True).stdout,
               "c.read": c.read("/" + name),
               "c.array": c.array("/" + name).tobytes()}
        for how, b in got.items():
            if b != data:
                bad.append("%d %r: %s gives %d bytes other than SDreaddata's %d" % (idx, name, how, len(b), len(data)))
        a = c.array("/" + name)
        if list(a.shape) != shape or a.dtype != np.dtype("<i4"):
            bad.append("%d %r: c.array() %s %s" % (idx, name, a.shape, a.dtype))
        renamed = os.fsencode(name) != raw
        for how, get in (("xattr", lambda: os.getxattr(p, "user.h4name")),
                         ("c.getxattr", lambda: c.getxattr("/" + name, "user.h4name"))):
            try:
                h4 = get()
            except OSError:
                h4 = None
            if h4 != (raw if renamed else None):
                bad.append("%d %r: %s user.h4name %r, libhdf4's name %r" % (idx, name, how, h4, raw))
print("\n".join(bad) or "%d SDSs, %d under another name" % (len(sdss), sum(os.fsencode(names[i]) != r for i, r, _, _ in sdss)))
sys.exit(1 if bad else 0)
EOF
    unmount_container "$M"
else
    fail "mount names.hdf again"
fi

# a scale named like an SDS written before it (coordvars.hdf: 't')
F="$C/coordvars.hdf"
"$O" "$F" >"$TMP/o2"
if mount_container "$F" "$M"; then
    expect_eq "t~6: the scale's bytes (SDreaddata of SDS 6)" \
        "$(awk '$1 == "coord" && $2 == 6 { getline; print }' "$TMP/o2")" \
        "$(od -An -v -tx1 "$M/t~6" | tr -d ' \n')"
    expect_eq "t~6: user.h4name is its own name" "t" "$(xa "$M/t~6" user.h4name)"
    expect_eq "t~6: its dimension is t" "t" "$(xa "$M/t~6" user.dims)"
    expect_eq "t: the SDS keeps its name and attribute" "own" "$(xa "$M/t" user.attr.units)"
    check "t: no user.h4name" sh -c '! $0 -c "import os,sys; os.getxattr(sys.argv[1], \"user.h4name\")" "$1" 2>/dev/null' \
        "$PY" "$M/t"
    unmount_container "$M"
else
    fail "mount coordvars.hdf"
fi
finish
