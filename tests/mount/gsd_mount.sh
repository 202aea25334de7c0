#!/bin/bash
# gsd_mount.sh - GSD files through a real FUSE mount and through hpcdump:
# every fixture chunk byte-exact against MANIFEST.txt (written by the GSD
# 1.10, 2.7 and 3.4 libraries), xattrs, frame directories, .info, names
# that cannot be listed, read-only behaviour; files written at test time
# with python3-gsd compared with what gsd.fl reads, including a large one.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
G="$DATA/gsd"
T="$G/gsdtest.py"

# verify MNT EXPECT SRC LABEL: size, sha256, xattrs through the mount, bytes
# through hpcdump, for every "PATH SHA SHAPE DTYPE NBYTES" line
verify() {
    check "$4: $(wc -l < "$2") chunks byte-exact" \
        $PY "$top_srcdir/tests/lib/chunk_sums.py" "$1" "$3" "$HPCDUMP" "$2" xattrs
}

# --- every fixture ----------------------------------------------------------
for f in "$G"/*.gsd; do
    b=$(basename "$f" .gsd)
    mnt="$TMP/m-$b"
    mount_container "$f" "$mnt" || { fail "$b: mount"; continue; }
    $PY "$T" manifest "$f" > "$TMP/$b.exp"
    verify "$mnt" "$TMP/$b.exp" "$f" "$b"
    # the set of files is exactly the manifest's
    (cd "$mnt" && find frames -type f | sort) > "$TMP/$b.files"
    expect_eq "$b: exactly the manifest's files" "$(cut -d' ' -f1 "$TMP/$b.exp" | sort)" "$(cat "$TMP/$b.files")"
    nframes=$(grep -A1 "^## $b.gsd" "$G/MANIFEST.txt" | sed -n 's/.*nframes=\([0-9]*\).*/\1/p')
    expect_eq "$b: frame count" "$nframes" "$(ls "$mnt/frames" | wc -l)"
    expect_eq "$b: same files through hpcdump" "$(cat "$TMP/$b.files")" \
        "$("$HPCDUMP" ls -R "$f" /frames | awk '/^\/frames/{d=substr($0,2,length($0)-2); next}
            NF{print d "/" $0}' | while read -r p; do [ -f "$mnt/$p" ] && [ ! -L "$mnt/$p" ] && echo "$p"; done | sort)"
    grep -q "^frames: $nframes\$" "$mnt/.info" && grep -q "^damage: none" "$mnt/.info"
    check "$b: .info frames and no damage" [ $? = 0 ]
done

# --- details ------------------------------------------------------------------
m="$TMP/m-sparse_chunks"
check "frame 6 has no chunks but exists" [ -d "$m/frames/000006" ] && [ -z "$(ls "$m/frames/000006")" ]
check "frame 10 does not exist" [ ! -e "$m/frames/000010" ]
check "frame names are canonical" [ ! -e "$m/frames/6" ]
check "chunk of another frame absent" [ ! -e "$m/frames/000001/types/uint8" ]
check "zero-row chunk is an empty file" [ -f "$m/frames/000000/types/zero_rows_float32" ] &&
    [ "$(stat -c %s "$m/frames/000000/types/zero_rows_float32")" = 0 ]
expect_eq "0,3 shape of a zero-row chunk" "0,3" \
    "$(getfattr --absolute-names --only-values -n user.shape "$m/frames/000000/types/zero_rows_float32")"
check "files are read-only" [ ! -w "$m/frames/000000/always/step" ] || [ "$(id -u)" = 0 ]
check "write is refused" sh -c "! echo x 2>/dev/null > '$m/frames/000000/always/step'"
expect_eq "per-frame chunk counts in .info" "000006	0" "$(grep -P '^000006\t' "$m/.info")"
expect_eq "directories in a frame" "always sometimes types z" "$(ls "$m/frames/000000" | tr '\n' ' ' | sed 's/ $//')"
m="$TMP/m-character_chunk"
expect_eq "character chunk dtype" "|S1" "$(getfattr --absolute-names --only-values -n user.dtype "$m/frames/000001/log/char2d")"
expect_eq "character chunk shape" "2,4" "$(getfattr --absolute-names --only-values -n user.shape "$m/frames/000001/log/char2d")"
expect_eq "layer 2.1 in .info" "gsd_version: 2.1" "$(grep '^gsd_version' "$m/.info")"
m="$TMP/m-v1_format"
expect_eq "layer 1.0 in .info" "gsd_version: 1.0" "$(grep '^gsd_version' "$m/.info")"
m="$TMP/m-hoomd_traj"
check "numpy reads a chunk with the xattrs" $PY -c "
import numpy, os, sys
p = '$m/frames/000007/particles/image'
a = numpy.fromfile(p, os.getxattr(p, 'user.dtype').decode()).reshape(
    [int(x) for x in os.getxattr(p, 'user.shape').decode().split(',')])
sys.exit(0 if a.shape == (4, 3) and a.dtype == numpy.int32 else 1)"
check "hpcdump info matches the mount's .info" \
    sh -c "'$HPCDUMP' info '$G/hoomd_traj.gsd' | grep -q '^index_location: 8728'"

# --- files written now with python3-gsd (layer 2.0) ---------------------------
$PY "$T" write "$TMP/small.gsd" 60 3
mount_container "$TMP/small.gsd" "$TMP/m-small" || fail "small: mount"
check "small: every chunk as gsd.fl reads it" $PY "$T" verify "$TMP/m-small" "$TMP/small.gsd"
"$HPCDUMP" extract "$TMP/small.gsd" "$TMP/x-small" >/dev/null
check "small: hpcdump extract as gsd.fl reads it" $PY "$T" verify "$TMP/x-small" "$TMP/small.gsd" 1 noxattr

# a large file: 100000 frames, the index doubled and moved many times
big="$TMP/big.gsd"
$PY - "$big" <<'EOF'
import sys, numpy, gsd.fl
with gsd.fl.open(sys.argv[1], "wb", application="big", schema="test", schema_version=[1, 0]) as f:
    for i in range(100000):
        f.write_chunk("step", numpy.array([i], dtype=numpy.uint64))
        if i % 10 == 0:
            f.write_chunk("particles/position", numpy.full((2, 3), i, dtype=numpy.float32))
        f.end_frame()
EOF
start=$(date +%s%N)
mount_container "$big" "$TMP/m-big" || fail "big: mount"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "big: mounted in ${ms} ms (speed: bench/, not asserted here)"
expect_eq "big: frames listed" 100000 "$(ls "$TMP/m-big/frames" | wc -l)"
expect_eq "big: frames as gsd.fl" "$($PY "$T" frames "$big")" "$(grep '^frames:' "$TMP/m-big/.info" | cut -d' ' -f2)"
check "big: every 997th frame as gsd.fl reads it" $PY "$T" verify "$TMP/m-big" "$big" 997
check "big: last frame" [ -f "$TMP/m-big/frames/099990/particles/position" ]
check "big: no frame 100000" [ ! -e "$TMP/m-big/frames/100000" ]

finish
