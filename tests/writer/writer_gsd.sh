#!/bin/sh
# tests/writer/writer_gsd.sh - the parallel GSD writer through hpcwrite --format gsd:
#  1. files written on 1 to 4 ranks (uneven and empty ranks, a grown index,
#     appended runs, appending to a file of the GSD library) are read by
#     gsd.fl and gsd.hoomd as the arrays computed by writer_gsd.py, and
#     mounted by hpcmount byte for byte (hpcdump reads the same);
#  2. the API on 3 ranks (writer_gsd_api.c), its errors included.
# Bad arguments of hpcwrite --format gsd are in writer_gsd_kill.sh.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/writer_lib.sh"
need_fuse
cd "$TMP" || exit 1

. "$top_srcdir/tests/lib/writer_gsd_lib.sh"

# ---- 1. write, read, mount ---------------------------------------------------
mpi 1 --format gsd --particles 20 --frames 2 one.gsd > one.out 2>&1 && verify one one.gsd 20x2
check "one: the report counts the bytes of all chunks, the bandwidth and rank 0's memory" \
    grep -q "^hpcwrite: gsd ranks 1 frames 2 particles 20 bytes 1092 .* MiB/s rank0_maxrss [0-9]* KiB" one.out
mpi 2 --format gsd -q --particles 1000 --frames 3 two.gsd && verify two two.gsd 1000,1000x3 &&
    expect_eq "two: hpcdump reads frame 2's position as the mount does" \
        "$(sha "$TMP/m_two/frames/000002/particles/position")" \
        "$("$HPCDUMP" cat two.gsd frames/000002/particles/position | sha256sum | cut -d' ' -f1)"
mpi 3 --format gsd -q --particles 100,0,37 --frames 4 uneven.gsd &&
    verify uneven uneven.gsd 100,0,37x4
# 50 frames: the index (128 entries) fills at frame 41 and moves, doubled
mpi 3 --format gsd -q --particles 5,0,3 --frames 50 grown.gsd && verify grown grown.gsd 5,0,3x50 &&
    expect_eq "grown: index doubled" 256 \
        "$(sed -n 's/^index_allocated_entries: //p' "$TMP/m_grown/.info")" &&
    check "grown: index moved to the end" test "$(sed -n 's/^index_location: //p' "$TMP/m_grown/.info")" -gt 256
# appending: other ranks and particles continue the frames
mpi 2 --format gsd -q --particles 4,6 --frames 2 app.gsd &&
    mpi 3 --format gsd -q --particles 3 --frames 2 --append app.gsd &&
    verify app app.gsd 4,6x2 3,3,3x2a
# appending to a file the GSD library wrote
$PY "$GSDPY" ref ref.gsd 5,6x2 &&
    mpi 4 --format gsd -q --particles 1,2,3,4 --frames 3 --append ref.gsd &&
    verify ref ref.gsd 5,6x2 1,2,3,4x3a

# ---- 2. the API on 3 ranks: all types, empty and local chunks, a grown name list,
# calls that fail alike on every rank, appending (writer_gsd_api.c)
API="$top_builddir/tests/writer/writer_gsd_api"
if [ -x "$API" ]; then
    timeout 120 mpirun --oversubscribe -np 3 "$API" api.gsd "$DATA/gsd/v1_format.gsd" > api.out 2>&1
    rc=$?
    check "api: every call returns the same, expected code on every rank" test $rc -eq 0
    [ $rc -eq 0 ] || cat api.out
    verify_api() {
        $PY "$GSDPY" api api.gsd && mount_container api.gsd "$TMP/m_api" &&
            expect_eq "api: hpcmount serves the int16 chunk" "0 1 2 3 4 5 6 7" \
                "$(od -An -tu2 "$TMP/m_api/frames/000000/type/6" | xargs)"
    }
    check "api: gsd.fl reads what the API wrote" verify_api
else
    fail "api: $API not built (make check builds it)"
fi

finish
