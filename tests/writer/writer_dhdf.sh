#!/bin/sh
# tests/writer/writer_dhdf.sh - the parallel distributed-HDF writer through
# hpcwrite --format dhdf: sets written on 1 to 8 ranks (one associated file
# per rank or per group of ranks, ranks without a piece, several element
# types) mount, and the whole arrays and every piece have the sha256 numpy
# computes from the documented pattern; bad parameters fail on every rank.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/writer_lib.sh"
need_fuse
cd "$TMP" || exit 1

# set NAME NP DTYPE BYTES COLS [ARGS...]
set_check() {
    local name=$1 np=$2 dt=$3 bytes=$4 cols=$5; shift 5
    mkdir -p "$name"
    if ! mpi "$np" --format dhdf -q --dtype "$dt" --bytes-per-rank "$bytes" --cols "$cols" "$@" \
        "$name/run.hdf"; then
        fail "$name: hpcwrite failed"; return 1
    fi
    if ! mount_container "$name/run.hdf" "$TMP/m_$name"; then
        fail "$name: mount failed"; return 1
    fi
    $PY "$META" dhdf "$dt" "$bytes" "$cols" "$np" > "$name.expect"
    while read -r path size sum; do
        expect_eq "$name: /$path size and sha256" "$size $sum" \
            "$(stat -c %s "$TMP/m_$name/$path") $(sha "$TMP/m_$name/$path")"
    done < "$name.expect"
    expect_eq "$name: nothing else in rows.pieces" "$(grep -c '^rows.pieces/' "$name.expect")" \
        "$(ls "$TMP/m_$name/rows.pieces" | wc -l)"
}
set_check t3 3 f8 4096,0,8192 64 &&
    expect_eq "t3: user.shape of rows" "24,64" \
        "$(getfattr --only-values -n user.shape "$TMP/m_t3/rows" 2>/dev/null)" &&
    expect_eq "t3: one associated file per rank" 3 "$(ls t3 | grep -c '^run_[0-9]*\.hdf$')"
set_check g8 8 i2 2000 100 --ranks-per-file 3 &&
    expect_eq "g8: three associated files for groups of 3" 3 "$(ls g8 | grep -c '^run_[0-9]*\.hdf$')"
set_check one1 1 u1 35 7
set_check f4 4 f4 1024,2048,0,512 128 --ranks-per-file 4
set_check i4 5 i4 0,4000,4000,0,400 100
check "i4: hpcdump reads rows alike" sh -c \
    '[ "$("$0" cat i4/run.hdf rows | sha256sum | cut -c1-64)" = "$(sed -n "s/^rows [0-9]* //p" i4.expect)" ]' \
    "$HPCDUMP"

# errors on every rank, no hang
mkdir -p e
fails group_too_big 4 "5 ranks per file, but only 4 ranks" --format dhdf --bytes-per-rank 2048 \
    --ranks-per-file 5 e/a.hdf
fails not_whole_rows 3 "whole rows" --format dhdf --bytes-per-rank 2048,2048,100 e/b.hdf
fails all_empty 2 "dimension 0 has size 0" --format dhdf --bytes-per-rank 0 e/c.hdf
fails no_directory 2 "cannot create" --format dhdf --bytes-per-rank 2048 nodir/d.hdf
timeout 120 mpirun --oversubscribe -np 2 "$HPCWRITE" --format dhdf --bytes-per-rank 2048 \
    --ranks-per-file 1 e/e.hdf : -np 2 "$HPCWRITE" --format dhdf --bytes-per-rank 2048 \
    --ranks-per-file 2 e/e.hdf > e.out 2>&1
rc=$?
check "ranks per file differ: non-zero exit, no hang (rc $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
expect_eq "ranks per file differ: an error on each of the 4 ranks" 4 \
    "$(grep -c '^hpcwrite: rank [0-9]*: .*differ between ranks' e.out)"

finish
