#!/bin/sh
# tests/writer/writer_sion.sh - the parallel SION writer through hpcwrite:
#  1. the same parameters and writes as the real SIONlib fixtures give the
#     same metadata (compared with the manifests, parsed independently by
#     writer_meta.py) and byte-identical files;
#  2. files written on 1 to 8 ranks mount, and every rank's bytes have the
#     sha256 of the documented pattern (odd sizes, 0 bytes, exactly one chunk,
#     many blocks, ranks that write nothing, several physical files);
#  3. invalid parameters fail on every rank, without hanging.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/writer_lib.sh"
need_fuse
cd "$TMP" || exit 1

# ---- 1. like SIONlib ---------------------------------------------------------
fixture() {
    local name=$1 np=$2; shift 2
    if ! mpi "$np" --format sion -q "$@" "$name.sion"; then
        fail "$name: hpcwrite failed"; return
    fi
    check "$name: metadata equal the real SIONlib's manifest" \
        $PY "$META" compare "$WDATA/$name.sion.manifest.txt" "$name.sion"
    check "$name: file identical to the SIONlib fixture" cmp "$name.sion" "$WDATA/$name.sion"
}
fixture a_4tasks 4 --bytes-per-rank 100,1234,2999,5000 --fsblksize 4096
fixture b_multichunk 3 --bytes-per-rank 2500,1000,4000 --chunk 1024 \
    --write-size 900,1000,4000 --records --fsblksize 512
fixture c1_multifile 5 --bytes-per-rank 500,900,1300,1700,2100 --chunk 2048 \
    --write-size 1400 --records --fsblksize 1024 --nfiles 2
check "c1_multifile: member file identical" cmp c1_multifile.sion.000001 "$WDATA/c1_multifile.sion.000001"
fixture d_emptytask 4 --bytes-per-rank 10,0,0,1500 --chunk 1024,0,1024,1024 \
    --write-size 1000 --records --fsblksize 512
fixture e_keyval 2 --bytes-per-rank 0 --chunk 1024 --kv-keys 3 --kv-records 7 --fsblksize 512

# ---- 2. write, mount, compare --------------------------------------------------
roundtrip() {
    local name=$1 np=$2 lens=$3; shift 3
    if ! mpi "$np" --format sion -q --bytes-per-rank "$lens" "$@" "$name.sion"; then
        fail "$name: hpcwrite failed"; return 1
    fi
    if ! mount_container "$name.sion" "$TMP/m_$name"; then
        fail "$name: mount failed"; return 1
    fi
    check_ranks "$TMP/m_$name" "$np" "$lens"
}
roundtrip zero 1 0
roundtrip onechunk 2 8192 --chunk 8192 --fsblksize 4096 &&
    expect_eq "onechunk: exactly one block" 1 "$(info_col "$TMP/m_onechunk" 1 7)"
roundtrip manyblocks 3 100000 --chunk 4096 --write-size 3000 --fsblksize 4096 &&
    expect_eq "manyblocks: 25 blocks of 4096" 25 "$(info_col "$TMP/m_manyblocks" 2 7)"
roundtrip odd8 8 0,1,4095,4096,4097,12345,0,70000 --chunk 4096 --nfiles 3 --write-size 777 &&
    expect_eq "odd8: hpcdump reads rank 7 alike" "$(sha "$TMP/m_odd8/rank-000007")" \
        "$("$HPCDUMP" cat odd8.sion rank-000007 | sha256sum | cut -d' ' -f1)"
check "odd8: three physical files" test -s odd8.sion.000002
roundtrip records5 5 7777 --chunk 2500 --write-size 1000 --records --fsblksize 512 &&
    expect_eq "records5: 4 blocks of 2000 bytes" 4 "$(info_col "$TMP/m_records5" 4 7)"
roundtrip nochunk6 6 5000,0,5000,0,5000,5000 --chunk 4096,0,4096,0,4096,4096
roundtrip fsdefault7 7 3000 --nfiles 7

# ---- 3. errors: on every rank (a bad command line: once), no hang ---------
fails too_many_files 4 "need 1 to 4 files" --format sion --bytes-per-rank 10 --nfiles 5 e1.sion
fails_once short_list 3 "has 2 values for 3 ranks" --format sion --bytes-per-rank 1,2 e2.sion
fails_once bad_value_one_rank 4 "'x' is not a size" --format sion --bytes-per-rank 1,2,x,4 e3.sion
fails no_directory 3 "cannot create" --format sion --bytes-per-rank 10 --fsblksize 4096 "$TMP/nodir/e4.sion"
fails no_directory_fs 2 "file system block size" --format sion --bytes-per-rank 10 "$TMP/nodir/e4.sion"
fails_once unknown_format 2 "unknown --format" --format tar --bytes-per-rank 10 e5.sion
# parameters that must agree but differ between ranks (MPMD: other arguments)
timeout 120 mpirun --oversubscribe -np 1 "$HPCWRITE" --format sion --bytes-per-rank 10 \
    --fsblksize 512 e7.sion : -np 2 "$HPCWRITE" --format sion --bytes-per-rank 10 \
    --fsblksize 1024 e7.sion > e7.out 2>&1
rc=$?
check "fsblksize differs: non-zero exit, no hang (rc $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
expect_eq "fsblksize differs: an error on each of the 3 ranks" 3 \
    "$(grep -c '^hpcwrite: rank [0-9]*: .*differ between ranks' e7.out)"
# a rank that cannot write fails alone, the others still close the file
mpi 4 --format sion -q --bytes-per-rank 100 --chunk 512,512,0,512 e6.sion > e6.out 2>&1
rc=$?
check "write with chunk 0: non-zero exit, no hang (rc $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "write with chunk 0: rank 2 says so" grep -q "rank 2: .*chunk size 0" e6.out
if mount_container e6.sion "$TMP/m_e6"; then
    expect_eq "e6: the file was closed, rank 3 intact" "$($PY "$META" pattern 3 100)" \
        "$(sha "$TMP/m_e6/rank-000003")"
else
    fail "e6: the others' file does not mount"
fi

finish
