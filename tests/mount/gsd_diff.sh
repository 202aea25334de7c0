#!/bin/bash
# gsd_diff.sh - differential test of the GSD fast reads: files
# written now by Debian's python3-gsd (gsd.fl: every chunk type it writes,
# M = 1 and M > 1, empty chunks, many frames; gsd.hoomd: every field,
# changed at random against frame 0), every chunk of every frame and every
# /series/<name> compared with gsd.fl's read_chunk through a real mount
# (with reads at odd offsets and of odd sizes crossing chunks and frames),
# hpcdump extract and hpcdump cat; frame-0 lending compared with gsd.hoomd.
# Names written twice in a frame (layer 2.0 through gsd.fl; layer 1.0
# written by the documented layout): the entry gsd.fl finds is served.
# Frames without chunks, 4100 of them in a row: the frames gsd.fl counts.
# Last, tests/mount/conformance.py (the corpus test) over all these files.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
D="$top_srcdir/tests/mount/gsd_diff.py"
T="$DATA/gsd/gsdtest.py"

# every file written first, then mounted, extracted and checked; the
# writes and the checks each in one interpreter (gsd_diff.py batch: an
# interpreter's start and imports cost more CPU than most files' checks),
# each command's output in its own file, ended by its exit status
SPECS="types:write:240:1 few:write:3:2 one:write:1:3 dup:writedup:150:4 dup2:writedup:37:5
v1:writev1:60:6 gap:writegap:2100:7"
HSPECS="hoomd:writehoomd:40:4 hoomdlate:writehoomdlate:40:8"
# spec NAME:WRITER:FRAMES:SEED: sets n, gen, frames, seed
spec() { local IFS=:; set -- $1; n=$1 gen=$2 frames=$3 seed=$4; }
# ok OUT: that batch command ended with status 0; said OUT: its output
ok() { [ "$(tail -1 "$1" 2>/dev/null)" = "status: 0" ]; }
said() { sed '$d' "$1" 2>/dev/null; }
: >"$TMP/write.batch"
for s in $SPECS $HSPECS; do
    spec "$s"
    printf '%s\t%s\t%s\t%s\t%s\n' "$TMP/$n.write" "$gen" "$TMP/$n.gsd" "$frames" "$seed" >>"$TMP/write.batch"
done
$PY "$D" batch "$TMP/write.batch" || fail "gsd_diff.py batch of the writers"
: >"$TMP/check.batch"
DONE=""
for s in $SPECS; do
    spec "$s"
    f="$TMP/$n.gsd"
    ok "$TMP/$n.write" || { fail "$n: $gen: $(said "$TMP/$n.write" | tail -3)"; continue; }
    mount_container "$f" "$TMP/m-$n" || { fail "$n: mount"; continue; }
    "$HPCDUMP" extract "$f" "$TMP/x-$n" >/dev/null || fail "$n: hpcdump extract"
    printf '%s\tcheck\t%s\t%s\n' "$TMP/$n.cm" "$TMP/m-$n" "$f" >>"$TMP/check.batch"
    printf '%s\tcheck\t%s\t%s\tnoxattr\n' "$TMP/$n.cx" "$TMP/x-$n" "$f" >>"$TMP/check.batch"
    printf '%s\thpcdump\t%s\t%s\t40\t%s\n' "$TMP/$n.cd" "$HPCDUMP" "$f" "$seed" >>"$TMP/check.batch"
    DONE="$DONE $n:$frames"
done
$PY "$D" batch "$TMP/check.batch" || fail "gsd_diff.py batch of the checks"
for nf in $DONE; do
    n=${nf%%:*}
    said "$TMP/$n.cm"; said "$TMP/$n.cx"; said "$TMP/$n.cd"
    check "$n (${nf#*:} frames): every chunk and series as gsd.fl reads it, odd reads" ok "$TMP/$n.cm"
    check "$n: .info reports no damage" grep -q "^damage: none" "$TMP/m-$n/.info"
    unmount_container "$TMP/m-$n"
    check "$n: hpcdump extract as gsd.fl reads it" ok "$TMP/$n.cx"
    check "$n: hpcdump cat as gsd.fl reads it" ok "$TMP/$n.cd"
done

# hoomd schema: what frame 0 lends, as gsd.hoomd hands it out (nothing to
# a frame gsd.hoomd cannot read: log/ names frame 0 lacks, an empty step)
for s in $HSPECS; do
    spec "$s"
    f="$TMP/$n.gsd"
    ok "$TMP/$n.write" || { fail "$n: $gen: $(said "$TMP/$n.write" | tail -3)"; continue; }
    mount_container "$f" "$TMP/m-$n" || { fail "$n: mount"; continue; }
    check "$n: files and links as gsd.hoomd reads every frame" $PY "$T" hoomd "$TMP/m-$n" "$f"
    check "$n: every chunk and series as gsd.fl reads it" $PY "$D" check "$TMP/m-$n" "$f"
    unmount_container "$TMP/m-$n"
    "$HPCDUMP" extract "$f" "$TMP/x-$n" >/dev/null || fail "$n: hpcdump extract"
    check "$n: hpcdump extract, links included, as gsd.hoomd reads it" $PY "$T" hoomd "$TMP/x-$n" "$f"
done
check "hoomdlate: .info says which frames gsd.hoomd cannot read" \
    grep -q "^hoomd: frame 0 lacks 2 log/ names" <("$HPCDUMP" info "$TMP/hoomdlate.gsd")

# the conformance test's oracle (docs/conformance.md) over every file written
# here, and one whose name a is also a directory (a/b): NOT-SERVED, not FAIL
$PY -c "import sys, numpy, gsd.fl
with gsd.fl.open(sys.argv[1], 'wb', application='t', schema='t', schema_version=[1, 0]) as f:
    f.write_chunk('a', numpy.arange(2)); f.write_chunk('a/b', numpy.arange(3)); f.end_frame()
    f.write_chunk('a', numpy.arange(4)); f.end_frame()" "$TMP/prefix.gsd"
mkdir -p "$TMP/corpus"
cp "$TMP"/*.gsd "$TMP/corpus/"
export top_srcdir top_builddir
$PY "$top_srcdir/tests/mount/conformance.py" -j 1 "$TMP/corpus" >"$TMP/conformance.out" 2>&1
check "conformance.py over the files written here: none fails" \
    grep -q "^gsd: [0-9]* passed, 0 failed, 1 not served" "$TMP/conformance.out"
check "conformance.py: a name that is also a directory is NOT-SERVED" \
    grep -q "^NOT-SERVED prefix.gsd: GSD chunk name that is also a directory" "$TMP/conformance.out"
grep -v "^ok " "$TMP/conformance.out"

finish
