#!/bin/sh
# tests/writer/writer_salvage.sh - files of jobs killed before the collective close
# (META1 with maxchunks 0 and start_of_varheader 0, no META2): refused by
# default with a message naming -o salvage; with -o salvage every task's
# blocks are served as far as data was written, and .info says so.
# Jobs are killed with MPI_Abort (hpcwrite --abort-at) at several points;
# files of the real SIONlib are cut as a killed job leaves them.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/writer_lib.sh"
need_fuse
cd "$TMP" || exit 1

# killed NAME NP AT LENS EXPECT ARGS...: hpcwrite aborted at AT; then the
# refusal, and with -o salvage each rank holds the first EXPECT bytes
killed() {
    local name=$1 np=$2 at=$3 lens=$4 expect=$5; shift 5
    mpi "$np" --format sion -q --bytes-per-rank "$lens" --abort-at "$at" "$@" "$name.sion" \
        > "$name.out" 2>&1
    check "$name: the job was aborted" grep -q "aborting" "$name.out"
    refused "$name" "$name.sion"
    if ! mount_container "$name.sion" "$TMP/m_$name" -o salvage; then
        fail "$name: salvage mount failed"; return 1
    fi
    check "$name: .info says salvaged" grep -q "^salvaged: yes" "$TMP/m_$name/.info"
    check_ranks "$TMP/m_$name" "$np" "$expect"
}

# refused NAME FILE: hpcmount and hpcdump refuse it, naming -o salvage
refused() {
    mkdir -p "$TMP/r_$1"
    if "$HPCMOUNT" "$2" "$TMP/r_$1" 2> "$1.err"; then
        MOUNTS="$MOUNTS $TMP/r_$1"
        fail "$1: mounted without -o salvage"
    else
        check "$1: refusal names -o salvage" grep -q -- "-o salvage" "$1.err"
    fi
    check "$1: hpcdump refuses too" sh -c '! "$0" ls "$1" 2>/dev/null' "$HPCDUMP" "$2"
}

# at open: nothing written
killed at_open 3 open 5000 0 --chunk 4096 --fsblksize 4096 &&
    expect_eq "at_open: inferred empty" empty "$(info_col "$TMP/m_at_open" 1 9)"
# in the middle: blocks partly written, one rank with nothing, one at EOF
killed mid 4 5000 10000,3000,0,9000 5000,3000,0,5000 --chunk 4096 --fsblksize 4096 &&
    expect_eq "mid: rank 2 inferred empty" empty "$(info_col "$TMP/m_mid" 2 9)" &&
    expect_eq "mid: rank 0 has 2 blocks" 2 "$(info_col "$TMP/m_mid" 0 7)"
# small chunks sharing file system blocks (fsblksize 512 < 4096)
killed small 5 1500 4000 1500 --chunk 1024 --fsblksize 512
# just before the close, several physical files: the mapping is inferred
killed at_close 6 close 100,2000,0,4096,5000,300 100,2000,0,4096,5000,300 \
    --chunk 2048 --fsblksize 1024 --nfiles 2 &&
    check "at_close: mapping inferred" grep -q "mapping inferred" "$TMP/m_at_close/.info"
# with --records: gaps at block ends
killed records 3 6000 9000 6000 --chunk 2500 --write-size 1000 --records --fsblksize 512

# files of the real SIONlib, cut as a job killed before the close leaves
# them: every task's bytes are those the real library read back (manifest)
for name in a_4tasks b_multichunk c1_multifile d_emptytask; do
    $PY "$META" kill "$WDATA/$name.sion" "k_$name.sion"
    refused "k_$name" "k_$name.sion"
    if ! mount_container "k_$name.sion" "$TMP/m_k_$name" -o salvage; then
        fail "k_$name: salvage mount failed"; continue
    fi
    n=$(grep '^ntasks_total' "$WDATA/$name.sion.manifest.txt" | cut -d' ' -f2)
    t=0
    while [ "$t" -lt "$n" ]; do
        f=$(printf '%s/rank-%06d' "$TMP/m_k_$name" "$t")
        expect_eq "k_$name task $t: length and sha256 as read by SIONlib" \
            "$($PY "$META" sha "$WDATA/$name.sion.manifest.txt" "$t")" \
            "$(stat -c %s "$f") $(sha "$f")"
        t=$((t + 1))
    done
done
# key-value file: the records are parsed from the salvaged streams
$PY "$META" kill "$WDATA/e_keyval.sion" k_e_keyval.sion
if mount_container k_e_keyval.sion "$TMP/m_k_e" -o salvage; then
    for t in 0 1; do
        for k in 1 2 3; do
            f=$(printf '%s/rank-%06d/key-%d' "$TMP/m_k_e" "$t" "$k")
            expect_eq "k_e_keyval task $t key $k: as read by SIONlib" \
                "$($PY "$META" sha "$WDATA/e_keyval.sion.manifest.txt" "$t" "$k")" \
                "$(stat -c %s "$f") $(sha "$f")"
        done
    done
else
    fail "k_e_keyval: salvage mount failed"
fi
# a killed key-value job whose last record is cut: whole records survive
mpi 2 --format sion -q --bytes-per-rank 0 --chunk 1024 --kv-keys 3 --kv-records 7 \
    --fsblksize 512 kv.sion > /dev/null 2>&1
$PY "$META" kill kv.sion k_kv.sion
truncate -s 5000 k_kv.sion   # task 1's second block: 392 of 656 bytes remain
if mount_container k_kv.sion "$TMP/m_k_kv" -o salvage; then
    expect_eq "k_kv: task 0 key 1 intact" \
        "$($PY "$META" sha "$WDATA/e_keyval.sion.manifest.txt" 0 1)" \
        "$(stat -c %s "$TMP/m_k_kv/rank-000000/key-1") $(sha "$TMP/m_k_kv/rank-000000/key-1")"
    # records of task 1 (key,len): (1,113) (2,150) (3,187) (1,224) (2,261)
    # (3,298) whole, (1,335) cut: key 1 keeps 113 + 224 bytes
    expect_eq "k_kv: task 1 key 1 without the cut record" \
        "337 $($PY "$META" pattern 17 337)" \
        "$(stat -c %s "$TMP/m_k_kv/rank-000001/key-1") $(sha "$TMP/m_k_kv/rank-000001/key-1")"
    expect_eq "k_kv: task 1 key 3 intact" \
        "$($PY "$META" sha "$WDATA/e_keyval.sion.manifest.txt" 1 3)" \
        "$(stat -c %s "$TMP/m_k_kv/rank-000001/key-3") $(sha "$TMP/m_k_kv/rank-000001/key-3")"
else
    fail "k_kv: salvage mount failed"
fi

finish
