#!/bin/bash
# info_json.sh - `hpcdump info --json`, /.info.json of a mount and
# `hpcdump ls --json` (docs/info-json.md) for every fixture of tests/data,
# HDF5 files written by h5py (one with a warning, one with a damaged
# object) and a run directory: the JSON parses (Debian's python3), holds
# every fact, warning, damaged object and table cell of .info
# (info_json.py), the mount serves the bytes hpcdump prints, and ls --json
# -R names the mount's tree with its types, modes and sizes.
. "$(dirname "$0")/../lib/lib.sh"
CHECK="$top_srcdir/tests/mount/info_json.py"
mounts=1
need_fuse_or_not() { [ -c /dev/fuse ] && command -v fusermount3 >/dev/null && \
    mkdir -p "$TMP/probe" && "$HPCMOUNT" "$DATA/a_4tasks.sion" "$TMP/probe" 2>/dev/null && \
    fusermount3 -u "$TMP/probe"; }
need_fuse_or_not || { mounts=0; echo "note: no FUSE here: only hpcdump is checked"; }

sources="$DATA/a_4tasks.sion $DATA/b_multichunk.sion $DATA/c1_multifile.sion $DATA/d_emptytask.sion
 $DATA/e_keyval.sion $DATA/f_bigendian.sion $DATA/dhdf/mhf.hdf $DATA/fti/master-i64"
for g in "$DATA"/gsd/*.gsd; do sources="$sources $g"; done
# HDF5 (h5py): a clean file, one with a warning and one with a damaged object
if $PY -c 'import h5py' 2>/dev/null && "$HPCDUMP" --version | grep -q '^formats:.* hdf5'; then
    mkdir -p "$TMP/h5"
    $PY "$top_srcdir/tests/gen/refs_damage.py" "$TMP/h5" > /dev/null || fail "refs_damage.py"
    sources="$sources $TMP/h5/ok.h5 $TMP/h5/contig.h5 $TMP/h5/header.h5"
else
    echo "note: h5py or the HDF5 reader missing: no HDF5 file"
fi
# a run directory: two containers, a plain file, one that fails to open
mkdir -p "$TMP/run/sub"
cp "$DATA/a_4tasks.sion" "$TMP/run/"; cp "$DATA/gsd/hoomd_traj.gsd" "$TMP/run/sub/"
echo plain > "$TMP/run/notes.txt"; head -c 100 "$DATA/f_bigendian.sion" > "$TMP/run/cut.sion"

n=0
for src in $sources "$TMP/run"; do
    n=$((n + 1)); b=$(basename "$src")
    "$HPCDUMP" info "$src" > "$TMP/$n.txt"
    "$HPCDUMP" info --json "$src" > "$TMP/$n.json"; rc=$?
    expect_eq "$b: info --json exits 0" 0 "$rc"
    check "$b: info --json holds .info's facts and tables" $PY "$CHECK" info "$TMP/$n.txt" "$TMP/$n.json"
    "$HPCDUMP" ls --json -R "$src" > "$TMP/$n.ls.json"
    check "$b: ls --json -R parses" $PY -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/$n.ls.json"
    [ $mounts = 1 ] || continue
    mnt="$TMP/mnt$n"
    mount_container "$src" "$mnt" || { fail "$b: mount"; continue; }
    cat "$mnt/.info" > "$TMP/$n.mtxt"; cat "$mnt/.info.json" > "$TMP/$n.mjson"
    check "$b: the mount's /.info.json holds its /.info" $PY "$CHECK" info "$TMP/$n.mtxt" "$TMP/$n.mjson"
    # HDF5's .info counts the chunks read so far, a run directory's the
    # containers open: those change between two opens; the others do not
    case $b in
    *.h5 | run) ;;
    *) expect_eq "$b: /.info.json has the bytes of hpcdump info --json" "$(sha "$TMP/$n.json")" "$(sha "$TMP/$n.mjson")" ;;
    esac
    check "$b: .info.json is not listed" sh -c "! ls -a '$mnt' | grep -qx .info.json"
    check "$b: ls --json -R names the mount's tree" $PY "$CHECK" ls "$TMP/$n.ls.json" "$mnt"
    unmount_container "$mnt"
done
check "every fixture was checked" [ "$n" -ge 15 ]

# the run directory's containers have their own .info.json, a failed one too
if [ $mounts = 1 ]; then
    mount_container "$TMP/run" "$TMP/rmnt"
    for c in a_4tasks.sion sub/hoomd_traj.gsd cut.sion; do
        cat "$TMP/rmnt/$c/.info" > "$TMP/c.txt"; cat "$TMP/rmnt/$c/.info.json" > "$TMP/c.json"
        check "run directory: $c/.info.json holds its .info" $PY "$CHECK" info "$TMP/c.txt" "$TMP/c.json"
    done
    check "run directory: the failed container's .info.json says why" \
        $PY -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j['format']=='unknown' and j['facts']['error']))" "$TMP/c.json"
fi

# damage and warnings reach their own members
if [ -f "$TMP/h5/header.h5" ]; then
    check "header.h5: the damaged object is in .damaged" sh -c \
        "'$HPCDUMP' info --json '$TMP/h5/header.h5' | $PY -c 'import json,sys; d=json.load(sys.stdin)[\"damaged\"]; sys.exit(not (len(d)==1 and d[0].startswith(\"/b \")))'"
    check "contig.h5: the warning is in .warnings" sh -c \
        "'$HPCDUMP' info --json '$TMP/h5/contig.h5' | $PY -c 'import json,sys; w=json.load(sys.stdin)[\"warnings\"]; sys.exit(not (len(w)==1 and w[0].startswith(\"/a:\")))'"
fi
# ls --json of one file; a name that needs escaping
"$HPCDUMP" ls --json "$DATA/a_4tasks.sion" /rank-000001 > "$TMP/one.json"
check "ls --json FILE: its size and type" $PY "$CHECK" lsnode "$TMP/one.json" 1234 file
"$HPCDUMP" -o 'rankname=r"\%d' ls --json "$DATA/a_4tasks.sion" > "$TMP/esc.json"
check "ls --json: quotes and backslashes in names are escaped" \
    $PY -c "import json,sys; n=[e['name'] for e in json.load(open(sys.argv[1]))['node']['entries']]; sys.exit(n[1]!='r\"\\\\0')" "$TMP/esc.json"
finish
