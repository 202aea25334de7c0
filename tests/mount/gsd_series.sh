#!/bin/bash
# gsd_series.sh - /series/<name>: a chunk name's bytes of every frame that
# holds it, equal to numpy.stack of what gsd.fl reads, with user.shape
# F,N,M (F,N when M is 1) and <name>.frames; names whose shape changes are not offered and
# .info says why; through mounts, hpcdump cat/extract and numpy.memmap;
# a file growing while mounted extends its series; irregular and large files.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
G="$DATA/gsd"
T="$G/gsdtest.py"

# --- every fixture ------------------------------------------------------------------
for f in "$G"/*.gsd; do
    b=$(basename "$f" .gsd)
    mount_container "$f" "$TMP/m-$b" || { fail "$b: mount"; continue; }
    check "$b: series equal numpy.stack of the frames' chunks" $PY "$T" series "$TMP/m-$b" "$f"
    "$HPCDUMP" extract "$f" "$TMP/x-$b" >/dev/null
    check "$b: the same through hpcdump extract" $PY "$T" series "$TMP/x-$b" "$f" noxattr
done
m="$TMP/m-hoomd_traj"
expect_eq "hoomd_traj: position shape" "20,4,3" "$(getfattr --only-values -n user.shape "$m/series/particles/position" 2>/dev/null)"
expect_eq "hoomd_traj: position dtype" "<f4" "$(getfattr --only-values -n user.dtype "$m/series/particles/position" 2>/dev/null)"
expect_eq "hoomd_traj: .frames shape and dtype" "20 <u8" \
    "$(getfattr --only-values -n user.shape "$m/series/particles/position.frames" 2>/dev/null) $(getfattr --only-values -n user.dtype "$m/series/particles/position.frames" 2>/dev/null)"
expect_eq "hoomd_traj: hpcdump cat of a series" "$(sha "$m/series/particles/position")" \
    "$("$HPCDUMP" cat "$G/hoomd_traj.gsd" /series/particles/position | sha256sum | cut -d' ' -f1)"
check "hoomd_traj: numpy.memmap of a series" $PY - "$m/series/particles/position" "$G/hoomd_traj.gsd" <<'PYEOF'
import sys, numpy, gsd.fl
f = gsd.fl.open(sys.argv[2], "rb")
want = numpy.stack([f.read_chunk(i, "particles/position") for i in range(f.nframes)])
got = numpy.memmap(sys.argv[1], dtype="<f4", mode="r").reshape(want.shape)
sys.exit(0 if numpy.array_equal(got, want) else 1)
PYEOF
check "hoomd_traj: .info counts the series" grep -q '^series: 11 offered' "$m/.info"
check "sparse_chunks: a name in some frames: .frames lists them" \
    [ "$($PY -c "import numpy; print(list(numpy.fromfile('$TMP/m-sparse_chunks/series/sometimes/every3.frames', '<u8')))")" = "[0, 3, 9]" ]
check "no series of a frames-only name under /frames" [ ! -e "$m/frames/series" ]

# --- a file written now: shapes that change, regular and irregular runs ------------
$PY "$T" write "$TMP/small.gsd" 60 3
mount_container "$TMP/small.gsd" "$TMP/m-small" || fail "small: mount"
check "small: series equal numpy.stack" $PY "$T" series "$TMP/m-small" "$TMP/small.gsd"
check "small: position changes N: no series" [ ! -e "$TMP/m-small/series/particles/position" ]
check "small: .info says why" grep -q '^series not offered: particles/position: N or M changes' "$TMP/m-small/.info"
check "small: log/value of every third frame is one" [ -f "$TMP/m-small/series/log/value" ]

$PY - "$TMP/irregular.gsd" <<'PYEOF'
import sys, numpy, gsd.fl
with gsd.fl.open(sys.argv[1], "wb", application="t", schema="test", schema_version=[1, 0]) as f:
    for i in range(13000):
        f.write_chunk("step", numpy.array([i], dtype=numpy.uint64))
        if i % 3 != 2:      # runs of two frames: 8667 occurrences in 4334 runs
            f.write_chunk("random", numpy.array([[i, -i]], dtype=numpy.int32))
        f.end_frame()
PYEOF
mount_container "$TMP/irregular.gsd" "$TMP/m-irr" || fail "irregular: mount"
check "13000 frames: step over all frames" $PY -c "
import numpy, sys
a = numpy.fromfile('$TMP/m-irr/series/step', '<u8')
sys.exit(0 if numpy.array_equal(a, numpy.arange(13000)) else 1)"
check "irregular frames (over 4096 runs): not offered" [ ! -e "$TMP/m-irr/series/random" ]
check "irregular frames: .info says why" grep -q '^series not offered: random: the frames holding it follow no regular pattern' "$TMP/m-irr/.info"

# --- live: appended frames extend the series ----------------------------------------
f="$TMP/live.gsd"
$PY "$T" write "$f" 12 9
mount_container "$f" "$TMP/m-live" || fail "live: mount"
s="$TMP/m-live/series/configuration/step"
expect_eq "live: 12 frames at mount" "12,1" "$(getfattr --only-values -n user.shape "$s" 2>/dev/null)"
exec 3< "$s"
$PY "$T" append "$f" 150 0.02 &    # 3 s at least: longer than the 1 s timeouts
writer=$!
grew=0
while kill -0 "$writer" 2>/dev/null; do
    [ "$(stat -c %s "$s" 2>/dev/null || echo 0)" -gt 96 ] && grew=1
    sleep 0.3
done
wait "$writer"
check "live: writer finished" [ $? = 0 ]
# our re-stat interval and the kernel's attribute timeout pass: wait for the
# shape, not for those times
wait_until sh -c "[ \"\$(getfattr --only-values -n user.shape '$s' 2>/dev/null)\" = '162,1' ]"
check "live: the series grew while the writer ran" [ "$grew" = 1 ]
expect_eq "live: all frames in the series" "162,1" "$(getfattr --only-values -n user.shape "$s" 2>/dev/null)"
check "live: series equal numpy.stack after growth" $PY "$T" series "$TMP/m-live" "$f"
check "live: series of names that appeared late" [ -d "$TMP/m-live/series/late" ]
expect_eq "live: a file opened before growth reads the first chunks" \
    "$(head -c 96 "$s" | sha256sum | cut -d' ' -f1)" "$(head -c 96 <&3 | sha256sum | cut -d' ' -f1)"
exec 3<&-

finish
