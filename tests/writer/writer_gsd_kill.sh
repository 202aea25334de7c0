#!/bin/sh
# tests/writer/writer_gsd_kill.sh - GSD files of jobs killed (MPI_Abort) after the
# open, in the middle of a frame, after a frame's data, after its names,
# after its index entries with and without a moved index: the frames ended
# before the kill are read by gsd.fl, gsd.hoomd and hpcmount as written,
# and the file can be appended to.  Also: a file of
# another layer to append to, a missing directory and missing arguments
# fail on every rank without a hang.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/writer_lib.sh"
. "$top_srcdir/tests/lib/writer_gsd_lib.sh"
need_fuse
cd "$TMP" || exit 1

# killed NAME NP RUNS KEEP ARGS...: hpcwrite was aborted; the first KEEP
# frames of RUNS (see writer_gsd.py) survive
killed() {
    local name=$1 np=$2 runs=$3 keep=$4; shift 4
    mpi "$np" --format gsd -q "$@" "$name.gsd" > "$name.out" 2>&1
    check "$name: the job was aborted" grep -q "abort" "$name.out"
    verify "$name" "$name.gsd" "$runs" --frames "$keep"
}
# per rank, frame 0 takes 2800 bytes (100 particles), later frames 2400
killed k_open 2 100,100x5 0 --particles 100 --frames 5 --abort-at open
killed k_mid 2 100,100x5 2 --particles 100 --frames 5 --abort-at 6500
check "k_mid: the cut frame's position stays as unused bytes" \
    test "$(stat -c %s k_mid.gsd)" -ge $((5376 + 2 * (2800 + 2400 + 1200)))
# the library's test hook: rank 0 aborts at a step of a frame's end
export HPC_GSD_TEST_ABORT=data:2
killed k_data 3 10,20,30x5 2 --particles 10,20,30 --frames 5
HPC_GSD_TEST_ABORT=names:0
killed k_names 2 10,10x3 0 --particles 10 --frames 3 &&
    expect_eq "k_names: the names were written, no entry" "names: 7 index_entries: 0" \
        "$(grep -E '^(names|index_entries):' "$TMP/m_k_names/.info" | tr '\n' ' ' | sed 's/ $//')"
# frame 0 has 7 entries, later frames 3: those of frame 40 fill the index
# (128 entries) in place, frame 41's move it: killed before the header
# points to the new copy, the old index still holds frames 0-40
HPC_GSD_TEST_ABORT=index:40
killed k_index 2 3,4x50 41 --particles 3,4 --frames 50
HPC_GSD_TEST_ABORT=index:41
killed k_grow 2 3,4x50 41 --particles 3,4 --frames 50
unset HPC_GSD_TEST_ABORT
check "k_grow: the new index was written at the end" \
    test "$(stat -c %s k_grow.gsd)" -gt "$(stat -c %s k_index.gsd)"
# a killed job's file can be appended to: the new frames follow the old
mpi 2 --format gsd -q --particles 5 --frames 2 --append k_mid.gsd &&
    verify k_mid_app k_mid.gsd 100,100x2 5,5x2a

# errors of hpcwrite --format gsd: on every rank, no hang
fails g_v1 2 "layer 1.0 cannot be appended to" --format gsd --particles 1 --append \
    "$DATA/gsd/v1_format.gsd"
fails g_nodir 3 "cannot create" --format gsd --particles 1 "$TMP/nodir/x.gsd"
fails_once g_no_particles 2 "usage" --format gsd --frames 2 x.gsd

finish
