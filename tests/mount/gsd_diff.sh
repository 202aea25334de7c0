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

for spec in "write types 240 1" "write few 3 2" "write one 1 3" "writedup dup 150 4" \
            "writedup dup2 37 5" "writev1 v1 60 6" "writegap gap 2100 7"; do
    set -- $spec
    gen=$1; shift
    f="$TMP/$1.gsd"
    $PY "$D" "$gen" "$f" "$2" "$3" || { fail "$1: $gen"; continue; }
    mount_container "$f" "$TMP/m-$1" || { fail "$1: mount"; continue; }
    check "$1 ($2 frames): every chunk and series as gsd.fl reads it, odd reads" \
        $PY "$D" check "$TMP/m-$1" "$f"
    check "$1: .info reports no damage" grep -q "^damage: none" "$TMP/m-$1/.info"
    unmount_container "$TMP/m-$1"
    "$HPCDUMP" extract "$f" "$TMP/x-$1" >/dev/null || fail "$1: hpcdump extract"
    check "$1: hpcdump extract as gsd.fl reads it" $PY "$D" check "$TMP/x-$1" "$f" noxattr
    check "$1: hpcdump cat as gsd.fl reads it" $PY "$D" hpcdump "$HPCDUMP" "$f" 40 "$3"
done

# hoomd schema: what frame 0 lends, as gsd.hoomd hands it out (nothing to
# a frame gsd.hoomd cannot read: log/ names frame 0 lacks, an empty step)
for spec in "writehoomd hoomd 40 4" "writehoomdlate hoomdlate 40 8"; do
    set -- $spec
    gen=$1; shift
    f="$TMP/$1.gsd"
    $PY "$D" "$gen" "$f" "$2" "$3" || { fail "$1: $gen"; continue; }
    mount_container "$f" "$TMP/m-$1" || { fail "$1: mount"; continue; }
    check "$1: files and links as gsd.hoomd reads every frame" $PY "$T" hoomd "$TMP/m-$1" "$f"
    check "$1: every chunk and series as gsd.fl reads it" $PY "$D" check "$TMP/m-$1" "$f"
    unmount_container "$TMP/m-$1"
    "$HPCDUMP" extract "$f" "$TMP/x-$1" >/dev/null || fail "$1: hpcdump extract"
    check "$1: hpcdump extract, links included, as gsd.hoomd reads it" $PY "$T" hoomd "$TMP/x-$1" "$f"
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
