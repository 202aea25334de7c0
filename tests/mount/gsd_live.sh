#!/bin/bash
# gsd_live.sh - a GSD file that grows while mounted (a simulation still
# writing, with python3-gsd): new frames and new chunk names appear without
# remount, also when the writer moves the index and the name list to the end
# of the file; a chunk file opened before keeps serving its bytes; .info
# follows.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
G="$DATA/gsd"
T="$G/gsdtest.py"
f="$TMP/live.gsd"
mnt="$TMP/m-live"

$PY "$T" write "$f" 12 9
mount_container "$f" "$mnt" || { fail "mount"; finish; }
expect_eq "12 frames at mount" 12 "$(ls "$mnt/frames" | wc -l)"
index0=$(grep '^index_location:' "$mnt/.info")
names0=$(grep '^namelist_location:' "$mnt/.info")
# a chunk with data, opened before the file grows
p="$mnt/frames/000009/deep/a/b/c/d"
want=$(sha "$p")
exec 3< "$p"

# the writer appends 400 frames in the background while we look
$PY "$T" append "$f" 400 0.004 &
writer=$!
seen_growth=0 errors=0
while kill -0 "$writer" 2>/dev/null; do
    n=$(ls "$mnt/frames" 2>/dev/null | wc -l) || errors=$((errors + 1))
    [ "$n" -gt 12 ] && seen_growth=1
    last=$(printf '%06d' $((n - 1)))
    ls -R "$mnt/frames/$last" >/dev/null 2>&1 || errors=$((errors + 1))
    sleep 0.2
done
wait "$writer"
check "writer finished" [ $? = 0 ]
check "frames appeared while the writer ran" [ "$seen_growth" = 1 ]
expect_eq "no errors while listing a growing file" 0 "$errors"
total=$($PY "$T" frames "$f")
# the kernel's attribute timeout of live mounts and our re-stat interval
# pass: wait for the frames, not for those times
wait_until sh -c "[ \"\$(ls '$mnt/frames' | wc -l)\" = '$total' ]"
expect_eq "all frames visible without remount" "$total" "$(ls "$mnt/frames" | wc -l)"
check "a new frame can be looked up" [ -f "$mnt/frames/000400/late/name_400_$(printf 'x%.0s' $(seq 40))" ]
check "every 7th frame as gsd.fl reads it" $PY "$T" verify "$mnt" "$f" 7
check "the last frame as gsd.fl reads it" $PY - "$mnt" "$f" <<'EOF'
import os, sys, gsd.fl
mnt, path = sys.argv[1:]
f = gsd.fl.open(path, "rb")
last = f.nframes - 1
ok = True
for n in f.find_matching_chunk_names(""):
    if f.chunk_exists(last, n):
        ok = ok and open(os.path.join(mnt, "frames", "%06d" % last, n), "rb").read() == f.read_chunk(last, n).tobytes()
sys.exit(0 if ok else 1)
EOF
expect_eq "the file opened before still serves its bytes" "$want" "$(sha256sum <&3 | cut -d' ' -f1)"
exec 3<&-
check "index moved (.info follows)" [ "$(grep '^index_location:' "$mnt/.info")" != "$index0" ]
check "name list moved (.info follows)" [ "$(grep '^namelist_location:' "$mnt/.info")" != "$names0" ]
expect_eq ".info frame count" "frames: $total" "$(grep '^frames:' "$mnt/.info")"
check "hpcdump sees the same frames" [ "$("$HPCDUMP" ls "$f" /frames | wc -l)" = "$total" ]

finish
