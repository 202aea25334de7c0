#!/bin/bash
# gsd_hoomd.sh - hoomd-schema GSD files show a chunk a frame lacks as a link
# to frame 0's exactly where gsd.hoomd (python3-gsd) takes frame 0's value:
# the fixtures and files written now (gsd.hoomd, gsd.fl), each frame and
# name compared with what gsd.hoomd hands out; other schemas get no links;
# links through hpcdump ls and extract.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
G="$DATA/gsd"
T="$G/gsdtest.py"

# --- fixtures of the hoomd schema, and one written now ----------------------------
for f in "$G/hoomd_traj.gsd" "$G/v1_format.gsd"; do
    b=$(basename "$f" .gsd)
    mount_container "$f" "$TMP/m-$b" || { fail "$b: mount"; continue; }
    check "$b: files and links as gsd.hoomd reads the frames" $PY "$T" hoomd "$TMP/m-$b" "$f"
done
m="$TMP/m-hoomd_traj"
expect_eq "hoomd_traj: typeid of frame 12 links to frame 0's" "../../000000/particles/typeid" \
    "$(readlink "$m/frames/000012/particles/typeid")"
expect_eq "hoomd_traj: a log name frame 0 holds is lent" "../../../000000/log/custom/every5" \
    "$(readlink "$m/frames/000001/log/custom/every5")"
check "hoomd_traj: a frame's own chunk stays a file" [ -f "$m/frames/000012/particles/position" ] &&
    [ ! -L "$m/frames/000012/particles/position" ]
check "hoomd_traj: configuration/step is not in frame 0: no link in frame 0 or 1" \
    [ ! -e "$m/frames/000000/configuration/step" ]
check "hoomd_traj: frame 0 has no links" [ -z "$(find "$m/frames/000000" -type l)" ]
check "hoomd_traj: xattrs through a link are frame 0's chunk's" \
    [ "$(getfattr --only-values -n user.shape "$m/frames/000012/particles/typeid")" = 4 ]
check "hoomd_traj: .info says what frame 0 lends" grep -q '^hoomd: frame 0 lends 8 chunks' "$m/.info"
expect_eq "hoomd_traj: hpcdump ls -l shows the link" \
    "lrwxrwxrwx typeid -> ../../000000/particles/typeid" \
    "$("$HPCDUMP" ls -l "$G/hoomd_traj.gsd" /frames/000012/particles | awk '$NF ~ /typeid$/ && /->/ {print $1, $(NF-2), $(NF-1), $NF}')"
"$HPCDUMP" extract "$G/hoomd_traj.gsd" "$TMP/x-hoomd" >/dev/null
check "hoomd_traj: hpcdump extract as gsd.hoomd reads the frames" $PY "$T" hoomd "$TMP/x-hoomd" "$G/hoomd_traj.gsd"

$PY "$T" writehoomd "$TMP/w.gsd"
mount_container "$TMP/w.gsd" "$TMP/m-w" || fail "written: mount"
check "written: files and links as gsd.hoomd reads the frames" $PY "$T" hoomd "$TMP/m-w" "$TMP/w.gsd"
m="$TMP/m-w"
check "written: N changed at frame 4: typeid not lent (gsd.hoomd makes defaults)" \
    [ -f "$m/frames/000004/particles/typeid" ] && [ ! -L "$m/frames/000004/particles/typeid" ]
check "written: N changed: types still lent" [ -L "$m/frames/000005/particles/types" ]
check "written: explicit N equal to frame 0's: per-particle chunks lent" [ -L "$m/frames/000006/particles/velocity" ]
check "written: bonds/group lent" [ -L "$m/frames/000008/bonds/group" ]

# a log name frame 0 lacks: nothing to lend, and gsd.hoomd cannot read the
# frames that lack it too (no links there); schema version 2: gsd.hoomd
# refuses it
$PY - "$TMP/log.gsd" "$TMP/v2.gsd" <<'PYEOF'
import sys, numpy, gsd.fl
for path, version in ((sys.argv[1], [1, 4]), (sys.argv[2], [2, 0])):
    with gsd.fl.open(path, "wb", application="t", schema="hoomd", schema_version=version) as f:
        for i in range(4):
            f.write_chunk("configuration/step", numpy.array([i], dtype=numpy.uint64))
            if i == 0:
                f.write_chunk("particles/N", numpy.array([2], dtype=numpy.uint32))
                f.write_chunk("log/a", numpy.array([1.0]))
                f.write_chunk("particles/custom", numpy.ones((2, 1), dtype=numpy.float32))
                f.write_chunk("state/hpmc/sphere/radius", numpy.array([0.5], dtype=numpy.float32))
            if i == 1:
                f.write_chunk("log/late", numpy.array([2.0]))
            f.end_frame()
PYEOF
mount_container "$TMP/log.gsd" "$TMP/m-log" || fail "log: mount"
check "log: a log name frame 0 holds is lent" [ -L "$TMP/m-log/frames/000001/log/a" ]
check "log: a log name frame 0 lacks is not" [ ! -e "$TMP/m-log/frames/000003/log/late" ]
check "log: a frame gsd.hoomd cannot read (it lacks log/late too) has no links" \
    [ -z "$(find "$TMP/m-log/frames/000002" "$TMP/m-log/frames/000003" -type l)" ]
check "log: .info names the log name frame 0 lacks" grep -q "^hoomd: frame 0 lacks 1 log/ names (log/late)" "$TMP/m-log/.info"
check "log: names gsd.hoomd does not know are not lent" [ ! -e "$TMP/m-log/frames/000003/particles/custom" ]
check "log: state/ chunks are not lent" [ ! -e "$TMP/m-log/frames/000003/state" ]
check "log: files and links as gsd.hoomd (which fails where log/late is missing)" \
    $PY "$T" hoomd "$TMP/m-log" "$TMP/log.gsd"
mount_container "$TMP/v2.gsd" "$TMP/m-v2" || fail "v2: mount"
check "schema hoomd 2.0 (gsd.hoomd refuses it): no links" [ -z "$(find "$TMP/m-v2/frames" -type l)" ]

# --- other schemas: frames as stored -------------------------------------------------
mount_container "$G/sparse_chunks.gsd" "$TMP/m-sparse" || fail "sparse: mount"
check "schema none: no links" [ -z "$(find "$TMP/m-sparse/frames" -type l)" ]
check "schema none: frame 1 lacks frame 0's types" [ ! -e "$TMP/m-sparse/frames/000001/types" ]

finish
