#!/bin/sh
# perm_mount.sh - a root daemon mounted with -o allow_other shows
# no byte to a user who could not read, with that user's own rights, every
# file the byte comes from; files that a container names (HDF5 external raw
# data and virtual dataset sources, a distributed HDF set's associated
# files, the parts NAME.000001... of a SION set, FTI's config.fti and
# Topology.fti above SOURCE) are read with the rights of the container
# file's owner only.
#
# A run directory owned by nobody holds 0600 containers of nobody's (every
# format), containers whose named files only root can read (their data made
# random first), a root-only plain file, a symlink to a root-only container
# and a 0700 directory.  It is mounted whole and container by container, as
# root, with -o allow_other; then nobody (the owner) and daemon (a third
# user) read through the mounts, and through hpcdump and the Python package
# (which run with the user's own rights):
#  - no byte of a root-only file reaches them: what they are given, and
#    everything they can read through the mounts, is scanned for 32-byte
#    windows of those files' data;
#  - every refusal is EACCES or EIO (an EIO named by the daemon's log or the
#    container's .info), or, in the run directory, a container that failed
#    to open, its .info naming the file; a virtual dataset may instead give
#    what h5py run as that user gives (the fill value); the root-only
#    Topology.fti changes nothing, or the tree is refused naming it;
#  - daemon is refused nobody's 0600 containers, whose nodes carry no
#    group/other read bits and nobody's owner; nobody reads them byte-exact
#    (as root reads them with hpcdump);
#  - the run directory's own directories and plain files keep their modes
#    and owners, and every daemon is still up at the end.
# Needs root, the users nobody and daemon and setpriv (else exit 77).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (files of three owners)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv (util-linux) missing"; exit 77; }
for u in nobody daemon; do
    getent passwd $u >/dev/null || { echo "SKIP: no user $u"; exit 77; }
done
for g in nogroup daemon; do
    getent group $g >/dev/null || { echo "SKIP: no group $g"; exit 77; }
done
HAVE5=0
grep -q "HAVE_HDF5 1" "$top_builddir/config.h" && "$PY" -c 'import h5py' 2>/dev/null && HAVE5=1
HAVE4=0
grep -q "HAVE_HDF4 1" "$top_builddir/config.h" && HAVE4=1
[ $HAVE5 = 1 ] || echo "note: no HDF5 (or h5py): the HDF5 cases are left out"
[ $HAVE4 = 1 ] || echo "note: no HDF4: the distributed HDF cases are left out"

# as_user USER CMD...: CMD with USER's uid and group only, from /
as_user() {
    local u=$1; shift
    case $u in
        nobody) (cd / && exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$@") ;;
        daemon) (cd / && exec setpriv --reuid=daemon --regid=daemon --clear-groups "$@") ;;
    esac
}
. "$top_srcdir/tests/lib/python_env.sh"
chmod 0755 "$TMP"
TOOLS=1
for u in nobody daemon; do
    if ! as_user $u "$HPCDUMP" --version >/dev/null 2>&1 ||
       ! as_user $u env PYTHONPATH="$PYTHONPATH" "$PY" -c 'import hpcmount' >/dev/null 2>&1; then
        TOOLS=0
    fi
done
[ $TOOLS = 1 ] || echo "note: nobody or daemon cannot run the build tree's hpcdump and package" \
    "(a directory above $top_builddir is not traversable): their checks are left out"

S="$TMP/secrets"      # the data of every root-only file, for the leak scan (root only)
X="$TMP/rootonly"     # root-only files outside the run directory
R="$TMP/run"          # the run directory, nobody's
mkdir -p "$S" "$X" "$R/own" "$R/dset" "$R/set" "$R/private" "$R/topo"
chmod 0700 "$S"; chmod 0755 "$X"

# randomize_sion FILE RANKS...: the streams of RANKS (any part of FILE's
# set) overwritten in place by random bytes; prints the parts' paths
randomize_sion() {
    pypkg - "$@" <<'EOF'
import os, sys, hpcmount
src, ranks = sys.argv[1], sys.argv[2:]
with hpcmount.open(src) as c:
    ext = [e for r in ranks for e in c.extents('/rank-%06d' % int(r))]
for path, off, n in ext:
    with open(path, 'r+b') as f:
        f.seek(off)
        f.write(os.urandom(n))
EOF
}

# ---- root-only files outside R ---------------------------------------------
head -c 4096 /dev/urandom > "$X/secret.bin"
cp "$X/secret.bin" "$S/secret.bin"
cp "$DATA/a_4tasks.sion" "$X/linked.sion"
randomize_sion "$X/linked.sion" 0 1 2 3 || fail "setup: randomize linked.sion"
for r in 0 1 2 3; do "$HPCDUMP" cat "$X/linked.sion" rank-00000$r; done > "$S/linked.sion"
if [ $HAVE5 = 1 ]; then
    "$PY" - "$X" "$R" "$S" <<'EOF' || fail "setup: h5py files"
import os, sys, h5py, numpy as np
X, R, S = sys.argv[1:4]
n = 4096
src = os.urandom(n)
open(os.path.join(S, 'vds_src'), 'wb').write(src)
with h5py.File(os.path.join(X, 'vds_src.h5'), 'w') as f:
    f['d'] = np.frombuffer(src, 'u1')
with h5py.File(os.path.join(R, 'ext.h5'), 'w') as f:
    f.create_dataset('x', shape=(n,), dtype='u1', external=[(os.path.join(X, 'secret.bin'), 0, n)])
    f['ok'] = np.arange(100, dtype='<i4')
with h5py.File(os.path.join(R, 'vds.h5'), 'w', libver='latest') as f:
    lay = h5py.VirtualLayout(shape=(n,), dtype='u1')
    lay[:] = h5py.VirtualSource(os.path.join(X, 'vds_src.h5'), 'd', shape=(n,))
    f.create_virtual_dataset('v', lay, fillvalue=0)
with h5py.File(os.path.join(R, 'own', 'own.h5'), 'w') as f:
    f['d'] = np.arange(5000, dtype='<f8') * 1.25 + 3
EOF
fi

# ---- the run directory -------------------------------------------------------
# 1. a 0600 container of nobody's in every format
cp "$DATA/a_4tasks.sion" "$R/own/own.sion"
cp "$DATA/gsd/hoomd_traj.gsd" "$R/own/own.gsd"
cp -r "$DATA/fti/master-i64/ckpt1-L1" "$R/own/own_fti"
[ $HAVE4 = 1 ] && mkdir "$R/own/own_dhdf" && cp "$DATA"/dhdf/*.hdf "$R/own/own_dhdf/"
# 3. a distributed HDF set whose associated file ahf2.hdf is root's: its
# pieces' data random (the stored big-endian elements overwritten in place)
if [ $HAVE4 = 1 ]; then
    cp "$DATA"/dhdf/*.hdf "$R/dset/"
    "$PY" - "$R/dset" "$HPCDUMP" "$S" <<'EOF' || fail "setup: randomize ahf2.hdf"
import os, subprocess, sys, numpy as np
d, dump, S = sys.argv[1:4]
rng = np.random.default_rng()
raw = bytearray(open(os.path.join(d, 'ahf2.hdf'), 'rb').read())
for p, dt in (('sds1.pieces/sds1_chunk1', 'i4'), ('sds2.pieces/sds2_chunk0', 'f4')):
    le = subprocess.run([dump, 'cat', os.path.join(d, 'mhf.hdf'), p], capture_output=True, check=True).stdout
    be = np.frombuffer(le, '<' + dt).astype('>' + dt).tobytes()
    off = raw.find(be)
    assert off > 0 and raw.count(be) == 1, p
    n = len(le) // 4
    new = (rng.integers(-2**31, 2**31, n) if dt == 'i4' else rng.uniform(-1e6, 1e6, n)).astype('>' + dt)
    raw[off:off + len(be)] = new.tobytes()
    open(os.path.join(S, 'ahf2-%s.be' % dt), 'wb').write(new.tobytes())
    open(os.path.join(S, 'ahf2-%s.le' % dt), 'wb').write(new.astype('<' + dt).tobytes())
open(os.path.join(d, 'ahf2.hdf'), 'wb').write(raw)
EOF
    "$HPCDUMP" cat "$R/dset/mhf.hdf" sds1.pieces/sds1_chunk1 > "$TMP/c1"
    check "setup: root reads the new piece data of ahf2.hdf" cmp -s "$S/ahf2-i4.le" "$TMP/c1"
fi
# 4. a SION multi-file set whose part .000001 is root's (its tasks random)
cp "$DATA/c1_multifile.sion" "$DATA/c1_multifile.sion.000001" "$R/set/"
randomize_sion "$R/set/c1_multifile.sion" 2 3 4 || fail "setup: randomize the SION part"
for r in 2 3 4; do "$HPCDUMP" cat "$R/set/c1_multifile.sion" rank-00000$r; done > "$S/c1part"
# 5. an FTI tree (topo/ckpt) whose Topology.fti above it is root's; it
# names 8 nodes where the directories show 4: read, it adds ranks 4-7
F="$DATA/fti/master-i64"
EXEC=$(ls "$F/ckpt3-L2/Meta")
mkdir -p "$R/topo/ckpt" "$R/topo/Meta/$EXEC"
cp "$F/config.fti" "$R/topo/"
cp -r "$F/ckpt3-L2/Local" "$R/topo/ckpt/"
cp "$DATA/gsd/v1_format.gsd" "$R/topo/note.gsd"     # topo itself: a directory around them
# 6. a symlink to a root-only container; 7. plain files, a 0700 directory
ln -s "$X/linked.sion" "$R/link"
head -c 4096 /dev/urandom > "$R/rootonly.bin"
cp "$R/rootonly.bin" "$S/rootonly.bin"
echo "nobody's notes: $(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$R/plain.txt"
cp "$DATA/b_multichunk.sion" "$R/private/pub.sion"
# the fixed FTI topology as on disk without Topology.fti (what nobody may see)
cp -r "$R/topo" "$TMP/topo-none"
printf '[topology]\n' > "$TMP/topo8"
for k in 0 1 2 3 4 5 6 7; do printf '%d = node%d\n' $k $k >> "$TMP/topo8"; done
cp "$TMP/topo8" "$R/topo/Meta/$EXEC/Topology.fti"
cp "$TMP/topo8" "$TMP/topo-none/Meta/$EXEC/Topology.fti.away"
expect_eq "setup: root reading Topology.fti sees ranks 0-7" 8 "$("$HPCDUMP" ls "$R/topo/ckpt" ckpt-3 | wc -l)"
TOPO_WANT=$("$HPCDUMP" ls "$TMP/topo-none/ckpt" ckpt-3 | tr '\n' ' ')
expect_eq "setup: without Topology.fti ranks 0-3" "rank-000000 rank-000001 rank-000002 rank-000003 " "$TOPO_WANT"

[ $HAVE5 = 1 ] && check "setup: root's ext.h5 serves secret.bin to root" \
    sh -c "'$HPCDUMP' cat '$R/ext.h5' x | cmp -s - '$S/secret.bin'"
chown -R nobody:nogroup "$R"
chown -h nobody:nogroup "$R/link"
chmod 0755 "$R" "$R/own" "$R/dset" "$R/set" "$R/topo"
chmod 0600 "$R/own/own.sion" "$R/own/own.gsd"
chmod -R go-rwx "$R/own/own_fti"
[ $HAVE5 = 1 ] && chmod 0600 "$R/own/own.h5" && chmod 0644 "$R/ext.h5" "$R/vds.h5"
[ $HAVE4 = 1 ] && chmod 0700 "$R/own/own_dhdf" && chmod 0600 "$R"/own/own_dhdf/*.hdf
chmod 0640 "$R/plain.txt"
chmod 0700 "$R/private"; chmod 0644 "$R/private/pub.sion"
# root's, 0600: the associated file, the set's part, Topology.fti, the plain file
for f in "$R/set/c1_multifile.sion.000001" "$R/topo/Meta/$EXEC/Topology.fti" "$R/rootonly.bin" \
         "$X/secret.bin" "$X/linked.sion"; do
    chown root:root "$f"; chmod 0600 "$f"
done
[ $HAVE4 = 1 ] && chown root:root "$R/dset/ahf2.hdf" && chmod 0600 "$R/dset/ahf2.hdf"
[ $HAVE5 = 1 ] && chmod 0600 "$X/vds_src.h5"
cannot_read() { ! as_user "$1" cat "$2" >/dev/null 2>&1; }
check "setup: nobody cannot read secret.bin itself" cannot_read nobody "$X/secret.bin"
check "setup: daemon cannot read nobody's own.sion itself" cannot_read daemon "$R/own/own.sion"

# ---- what root reads (the expected bytes) -------------------------------------
# own cases: REL INNER (INNER - for a plain file); E/<n> root's bytes
OWN="own/own.sion rank-000001
own/own.gsd frames/000000/particles/position
own/own_fti ckpt-1/rank-000001/var-0
plain.txt -
private/pub.sion rank-000000"
[ $HAVE5 = 1 ] && OWN="$OWN
own/own.h5 d"
[ $HAVE4 = 1 ] && OWN="$OWN
own/own_dhdf/mhf.hdf sds1"
# leak cases: REL INNER FILE (the root-only file the data need)
LEAK="set/c1_multifile.sion rank-000003 c1_multifile.sion.000001
set/c1_multifile.sion rank-000004 c1_multifile.sion.000001
set/c1_multifile.sion.000001 - c1_multifile.sion.000001
rootonly.bin - rootonly.bin
link - linked.sion
link rank-000002 linked.sion"      # (the kernel and the run directory keep the link a link)
[ $HAVE5 = 1 ] && LEAK="$LEAK
ext.h5 x secret.bin
vds.h5 v vds_src.h5"
[ $HAVE4 = 1 ] && LEAK="$LEAK
dset/mhf.hdf sds1 ahf2.hdf
dset/mhf.hdf sds1.pieces/sds1_chunk1 ahf2.hdf
dset/mhf.hdf sds2 ahf2.hdf
dset/ahf2.hdf sds1_chunk1 ahf2.hdf"
mkdir -p "$TMP/E"
n=0
echo "$OWN" | while read -r rel inner; do
    n=$((n + 1))
    if [ "$inner" = - ]; then cat "$R/$rel"; else "$HPCDUMP" cat "$R/$rel" "$inner"; fi > "$TMP/E/$n" ||
        echo "FAIL: setup: root reads $rel $inner"
    [ -s "$TMP/E/$n" ] || echo "FAIL: setup: root read nothing of $rel $inner"
done | grep FAIL && fail "setup: root reads the own cases"

# ---- mounts, as root, -o allow_other ---------------------------------------------
MR="$TMP/mr"
check "mount the run directory -o allow_other" mount_container "$R" "$MR" -o allow_other,log="$TMP/log.run"
# mount_direct REL [FILE]: mount R/REL alone at $(dpath REL) (once); a
# refusal at mount time must be one line saying Permission denied (and
# naming FILE, the root-only file, when given)
dpath() { echo "$TMP/d-$(echo "$1" | tr / _)"; }
mount_direct() {
    local d; d=$(dpath "$1")
    [ -d "$d" ] && { is_mounted "$d"; return; }
    mkdir -p "$d"
    if "$HPCMOUNT" -o allow_other,log="$d.log" "$R/$1" "$d" 2> "$d.err"; then
        MOUNTS="$MOUNTS $d"; return 0
    fi
    if [ "$(wc -l < "$d.err")" = 1 ] && grep -q "Permission denied" "$d.err" &&
       { [ -z "${2:-}" ] || grep -qF "${2:-}" "$d.err"; }; then
        pass "mount of $1 refused: $(cat "$d.err")"
    else
        fail "mount of $1: $(head -3 "$d.err")"
    fi
    return 1
}

# ---- judging what a user got ---------------------------------------------------------
# noleak FILE...: no 32-byte window of a root-only file's data occurs in FILEs
noleak() {
    "$PY" - "$S" "$@" <<'EOF'
import os, sys
sdir, files = sys.argv[1], sys.argv[2:]
wins = {}
for n in sorted(os.listdir(sdir)):
    b = open(os.path.join(sdir, n), 'rb').read()
    for i in range(0, len(b) - 31, 32):
        if len(set(b[i:i + 32])) >= 12:
            wins.setdefault(b[i:i + 32], n)
bad = 0
for f in files:
    d = open(f, 'rb').read()
    for i in range(len(d) - 31):
        n = wins.get(d[i:i + 32])
        if n:
            print('  %s: bytes of %s at offset %d' % (f, n, i))
            bad = 1
            break
sys.exit(bad)
EOF
}
empty_or_noleak() { [ ! -s "$1" ] || noleak "$1"; }

# run WHO CMD...: CMD as WHO; stdout in $TMP/out, stderr in $TMP/err, status in RC
run() { local who=$1; shift; as_user "$who" "$@" > "$TMP/out" 2> "$TMP/err"; RC=$?; }

# refusal WHO DESC KIND FILE FAILINFO LOGS...: the last run was a refusal:
#  - it failed, and printed no byte of a root-only file;
#  - KIND mount: with EACCES or EIO, or, inside a container of the run
#    directory that failed to open, ENOENT where the container's .info
#    (FAILINFO, read by root) names FILE in its error; an EIO is named
#    (FILE) by the daemon's log or .info (LOGS);
#  - KIND tool (hpcdump, the package, run with the user's own rights): with
#    an error message
refusal() {
    local who=$1 d=$2 kind=$3 file=$4 failinfo=$5 why="" how
    shift 5
    how=$(head -1 "$TMP/err" | cut -c1-160)
    if [ "$RC" -eq 0 ]; then
        why="not refused: $(wc -c < "$TMP/out") bytes served"
    elif [ "$kind" = tool ]; then
        [ -s "$TMP/err" ] || why="failed without a message"
        how=$(tr '\n' ' ' < "$TMP/err" | cut -c1-200)
    elif grep -q -e "Permission denied" -e "Input/output error" "$TMP/err"; then
        if [ "$file" != - ] && [ $# -gt 0 ] && grep -q "Input/output error" "$TMP/err" && ! grep -qsF "$file" "$@"; then
            why="EIO, but neither the daemon's log nor .info names $file"
        fi
    elif grep -q "No such file" "$TMP/err" && [ "$failinfo" != - ] && grep -qs "^error: .*$file" "$failinfo"; then
        how="the container failed: $(grep "^error: " "$failinfo" | cut -c1-160)"
    else
        why="refused, but not with EACCES or EIO: $how"
    fi
    if { [ -s "$TMP/out" ] || [ "$RC" -eq 0 ]; } && ! noleak "$TMP/out" "$TMP/err"; then
        why="${why:+$why; }ROOT-ONLY BYTES REACHED $who"
    fi
    if [ -z "$why" ]; then pass "$who: $d: refused ($how)"; else fail "$who: $d: $why"; fi
}
# served WHO DESC WANT: the last run gave WANT's bytes
served() {
    if [ "$RC" -eq 0 ] && cmp -s "$TMP/out" "$3"; then pass "$1: $2: byte-exact"
    else fail "$1: $2: exit $RC, $(wc -c < "$TMP/out") bytes, not root's $(wc -c < "$3") ($(head -c 200 "$TMP/err" | tr '\n' ' '))"; fi
}
# own_refused WHO DESC KIND: the last run was a refusal that printed nothing
own_refused() {
    refusal "$1" "$2" "$3" - -
    check "$1: $2: not one byte" test ! -s "$TMP/out"
}
# vds_or_refusal WHO DESC KIND FILE FAILINFO LOGS...: the virtual dataset
# may instead give exactly what h5py, run as WHO, reads (the fill value)
vds_or_refusal() {
    if [ "$RC" -eq 0 ] && [ -f "$TMP/vds.$1" ] && cmp -s "$TMP/out" "$TMP/vds.$1"; then
        pass "$1: $2: what h5py gives $1 (not one byte of the source)"
    else
        refusal "$@"
    fi
}
# topo WHO DESC KIND FAILINFO: the last run listed ckpt-3 as without the
# root-only Topology.fti, or the tree was refused naming Topology.fti
# (the mount: its .info's error, FAILINFO; a tool: its one line)
topo() {
    if [ "$RC" -eq 0 ] && [ "$(tr '\n' ' ' < "$TMP/out")" = "$TOPO_WANT" ]; then
        pass "$1: $2: FTI ranks 0-3, as without the root-only Topology.fti"
    elif [ "$RC" -ne 0 ] && [ "$3" = tool ] && grep -q "Topology.fti" "$TMP/err"; then
        pass "$1: $2: refused naming Topology.fti ($(head -1 "$TMP/err" | cut -c1-160))"
    elif [ "$RC" -ne 0 ] && [ "$3" = mount ] && grep -qs "^error: .*Topology.fti" "$4"; then
        pass "$1: $2: the tree failed, its .info names Topology.fti"
    else
        fail "$1: $2: exit $RC, ranks '$(tr '\n' ' ' < "$TMP/out")' (without Topology.fti: '$TOPO_WANT') $(head -c 200 "$TMP/err")"
    fi
}
# no_topology_info WHO INFO: WHO reads INFO (if at all), which does not say it used Topology.fti
no_topology_info() {
    as_user "$1" cat "$2" > "$TMP/ti" 2>/dev/null || return 0
    ! grep 'listed by Topology.fti' "$TMP/ti"
}

# ---- nobody's 0600 containers: modes and owners of their nodes -----------------
nobits() {  # nobits PATH: stat (as root) shows no group/other read bits
    local m; m=$(stat -c %a "$1" 2>/dev/null) || { echo "  $1: no stat"; return 1; }
    [ $((0$m & 044)) -eq 0 ] || { echo "  $1: mode $m"; return 1; }
}
echo "$OWN" > "$TMP/own.list"
echo "$LEAK" > "$TMP/leak.list"
while read -r rel inner; do
    [ "$inner" = - ] && continue
    if [ "$rel" != private/pub.sion ]; then     # (its own bits may stay: private/ is 0700)
        check "run dir: $rel: no group/other read bits" nobits "$MR/$rel"
        check "run dir: $rel/$inner: no group/other read bits" nobits "$MR/$rel/$inner"
    fi
    if mount_direct "$rel"; then
        D=$(dpath "$rel")
        check "mount of $rel: no group/other read bits on its root" nobits "$D"
        check "mount of $rel: no group/other read bits on $inner" nobits "$D/$inner"
        expect_eq "mount of $rel: owner of its root" "nobody:nogroup" "$(stat -c %U:%G "$D")"
        expect_eq "mount of $rel: owner of $inner" "nobody:nogroup" "$(stat -c %U:%G "$D/$inner")"
    fi
done < "$TMP/own.list"
# the run directory's own directories and plain files: modes and owners as on disk
for p in private plain.txt own set rootonly.bin; do
    expect_eq "run dir: $p: read/search bits as on disk" \
        "$(printf %o $((0$(stat -c %a "$R/$p") & 0555)))" "$(printf %o $((0$(stat -c %a "$MR/$p") & 0555)))"
    expect_eq "run dir: $p: owner as on disk" "$(stat -c %U:%G "$R/$p")" "$(stat -c %U:%G "$MR/$p")"
done
# the root-only set member, associated file, symlink target: root's, 0600
for p in set/c1_multifile.sion.000001 dset/ahf2.hdf link; do
    [ -e "$R/$p" ] || continue
    mount_direct "$p" || continue
    D=$(dpath "$p")
    check "mount of $p (root's 0600): no group/other read bits on its root" nobits "$D"
done

# ---- through the mounts -------------------------------------------------------------
for who in nobody daemon; do
    # nobody's own data: nobody byte-exact, daemon refused
    n=0
    while read -r rel inner; do
        n=$((n + 1))
        if [ "$inner" = - ]; then p="$rel"; else p="$rel/$inner"; fi
        run $who cat "$MR/$p"
        if [ $who = nobody ]; then served $who "mount of run dir: cat $p" "$TMP/E/$n"
        else own_refused $who "mount of run dir: cat $p" mount; fi
        [ "$inner" = - ] && continue
        run $who ls "$MR/$rel"
        if [ $who = nobody ]; then check "$who: mount of run dir: ls $rel" test $RC -eq 0
        else own_refused $who "mount of run dir: ls $rel" mount; fi
        mount_direct "$rel" || continue
        D=$(dpath "$rel")
        run $who cat "$D/$inner"
        if [ $who = nobody ]; then served $who "mount of $rel: cat $inner" "$TMP/E/$n"
        else own_refused $who "mount of $rel: cat $inner" mount; fi
        run $who ls "$D"
        if [ $who = nobody ]; then check "$who: mount of $rel: ls" test $RC -eq 0
        else own_refused $who "mount of $rel: ls" mount; fi
    done < "$TMP/own.list"

    # data of root-only files: refused, not one byte
    if [ $HAVE5 = 1 ]; then   # what libhdf5 itself gives this user for the virtual dataset
        as_user $who "$PY" -c "import h5py, sys; sys.stdout.buffer.write(h5py.File(sys.argv[1], 'r')['v'][()].tobytes())" \
            "$R/vds.h5" > "$TMP/vds.$who" 2>/dev/null || rm -f "$TMP/vds.$who"
        check "$who: h5py itself gives no byte of the virtual dataset's root-only source" \
            empty_or_noleak "$TMP/vds.$who"
    fi
    while read -r rel inner file; do
        if [ "$inner" = - ]; then p="$rel"; else p="$rel/$inner"; fi
        if [ "$rel" != link ] || [ "$inner" = - ]; then   # (the kernel follows the link off the mount)
            run $who cat "$MR/$p"
            vds_or_refusal $who "mount of run dir: cat $p" mount "$file" "$MR/$rel/.info" "$TMP/log.run" "$MR/$rel/.info"
        fi
        [ "$inner" = - ] && continue
        mount_direct "$rel" "$file" || continue
        D=$(dpath "$rel")
        run $who cat "$D/$inner"
        vds_or_refusal $who "mount of $rel: cat $inner" mount "$file" - "$D.log" "$D/.info"
    done < "$TMP/leak.list"

    # the root-only Topology.fti is not used
    run $who ls "$MR/topo/ckpt/ckpt-3"
    topo $who "mount of run dir: ls topo/ckpt/ckpt-3" mount "$MR/topo/ckpt/.info"
    check "$who: mount of run dir: topo/ckpt/.info does not say it used Topology.fti" \
        no_topology_info $who "$MR/topo/ckpt/.info"
    if mount_direct topo/ckpt Topology.fti; then
        D=$(dpath topo/ckpt)
        run $who ls "$D/ckpt-3"
        topo $who "mount of topo/ckpt: ls ckpt-3" mount -
        check "$who: mount of topo/ckpt: .info does not say it used Topology.fti" no_topology_info $who "$D/.info"
    fi

    # everything the user can read through every mount: no root-only byte
    : > "$TMP/walk.$who"
    for m in $MOUNTS; do
        as_user $who sh -c 'find "$1" -type f -exec cat {} + ; getfattr -R -d --absolute-names "$1"' sh "$m" \
            >> "$TMP/walk.$who" 2>/dev/null
    done
    check "$who: all that $who can read through the $(echo $MOUNTS | wc -w) mounts ($(wc -c < "$TMP/walk.$who") bytes) holds no root-only byte" \
        noleak "$TMP/walk.$who"
done
for l in "$TMP"/log.run "$TMP"/d-*.log; do
    [ -s "$l" ] && { echo "--- $l"; head -5 "$l"; }
done

# ---- hpcdump and the Python package: the user's own rights -----------------------
if [ $TOOLS = 1 ]; then
    # py_case KIND FORM SOURCE PATH FILE WANT: a case of the package (as nobody)
    : > "$TMP/py.list"
    py_case() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$TMP/py.list"; }
    for who in nobody daemon; do
        n=0
        while read -r rel inner; do
            n=$((n + 1))
            [ "$inner" = - ] && continue
            for src in "$R" "$R/$rel"; do
                if [ "$src" = "$R" ]; then path="$rel/$inner"; else path=$inner; fi
                run $who "$HPCDUMP" cat "$src" "$path"
                if [ $who = nobody ]; then served $who "hpcdump cat $src $path" "$TMP/E/$n"
                    py_case own read "$src" "$path" - "$TMP/E/$n"
                else own_refused $who "hpcdump cat $src $path" tool; fi
            done
        done < "$TMP/own.list"
        while read -r rel inner file; do
            for src in "$R" "$R/$rel"; do
                if [ "$src" = "$R" ]; then
                    [ "$rel" = link ] && [ "$inner" != - ] && continue
                    path=$rel; [ "$inner" = - ] || path="$rel/$inner"
                else
                    [ "$inner" = - ] && continue
                    path=$inner
                fi
                run $who "$HPCDUMP" cat "$src" "$path"
                vds_or_refusal $who "hpcdump cat $src $path" tool "$file" -
                if [ $who = nobody ]; then
                    py_case leak read "$src" "$path" "$file" -
                    case $rel in *.h5|*.hdf) py_case leak array "$src" "$path" "$file" - ;; esac
                fi
            done
        done < "$TMP/leak.list"
        run $who "$HPCDUMP" ls "$R/topo/ckpt" ckpt-3
        topo $who "hpcdump ls topo/ckpt ckpt-3" tool
        run $who "$HPCDUMP" ls "$R" topo/ckpt/ckpt-3
        topo $who "hpcdump ls RUNDIR topo/ckpt/ckpt-3" tool
    done

    # the package, as nobody: hpcmount.open(SOURCE), read() and array()
    mkdir -p "$TMP/py"; chown nobody "$TMP/py"; chmod 0644 "$TMP/py.list"
    as_user nobody env PYTHONPATH="$PYTHONPATH" HPCMOUNT_HELPER="$HPCMOUNT_HELPER" \
        ${PY_PRELOAD:+LD_PRELOAD="$PY_PRELOAD" ASAN_OPTIONS="detect_leaks=0:$ASAN_OPTIONS"} \
        "$PY" - "$TMP/py.list" "$TMP/py" > "$TMP/py.res" 2> "$TMP/py.stderr" <<'EOF'
import os, sys, hpcmount
lst, out = sys.argv[1:3]
for i, line in enumerate(open(lst)):
    kind, form, src, path = line.rstrip('\n').split('\t')[:4]
    b, err = b'', ''
    try:
        with hpcmount.open(src) as c:
            b = c.array('/' + path).tobytes() if form == 'array' else c.read('/' + path)
    except Exception as e:
        err = '%s: %s (errno %s)\n' % (type(e).__name__, str(e).replace('\n', ' '), getattr(e, 'errno', None))
    open(os.path.join(out, '%d.out' % i), 'wb').write(b)
    open(os.path.join(out, '%d.err' % i), 'w').write(err)
    print(i, 'err' if err else 'ok')
EOF
    check "the package ran as nobody $(tail -1 "$TMP/py.stderr")" \
        test "$(wc -l < "$TMP/py.res")" -eq "$(wc -l < "$TMP/py.list")"
    i=0
    while IFS="$(printf '\t')" read -r kind form src path file want; do
        RC=0; grep -q "^$i err$" "$TMP/py.res" && RC=1
        cp "$TMP/py/$i.out" "$TMP/out"; cp "$TMP/py/$i.err" "$TMP/err"
        d="package: hpcmount.open($src).$form('/$path')"
        if [ "$kind" = own ]; then served nobody "$d" "$want"
        else vds_or_refusal nobody "$d" tool "$file" -; fi
        i=$((i + 1))
    done < "$TMP/py.list"
fi

# ---- the daemons are still up ---------------------------------------------------------
up() { is_mounted "$1" && ls "$1" >/dev/null; }
for m in $MOUNTS; do
    check "still mounted and listed by root: $m" up "$m"
done
finish
