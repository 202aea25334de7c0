#!/bin/sh
# dhdf_bad.sh - broken distributed HDF sets (written now with the HDF4 C
# API by tests/gen/dhdf_gen, then damaged) are refused at mount time with one
# clear line naming the file and the object, by hpcmount (nothing left
# mounted) and by hpcdump alike.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse

GEN="$top_builddir/tests/gen/dhdf_gen"

# bad CASE PATTERN [hpcmount args]: both front ends fail with PATTERN
bad() {
    local case=$1 pat=$2; shift 2
    local S="$TMP/$case" mnt="$TMP/mnt_$case"
    mkdir -p "$mnt"
    if "$HPCMOUNT" "$@" "$S/main.hdf" "$mnt" 2> "$TMP/$case.err"; then
        MOUNTS="$MOUNTS $mnt"
        fail "$case: mounted a broken set"
        return
    fi
    check "$case: nothing left mounted" sh -c "! grep -q ' $mnt fuse' /proc/self/mounts"
    expect_eq "$case: one line" 1 "$(wc -l < "$TMP/$case.err")"
    check "$case: hpcmount says: $pat" grep -q -- "$pat" "$TMP/$case.err" || cat "$TMP/$case.err"
    "$HPCDUMP" "$@" ls "$S/main.hdf" > /dev/null 2> "$TMP/$case.dump"
    check "$case: hpcdump says the same" grep -q -- "$pat" "$TMP/$case.dump"
}

for c in missing foreign fileid overlap holes exceed shape noname notable; do
    "$GEN" "$TMP/$c" "$c" || fail "dhdf_gen $c"
done
rm "$TMP/missing/ahf2.hdf"

bad missing "main.hdf: field File_Info.FileName at offset [0-9]*: associated file 2 'ahf2.hdf' is missing"
bad foreign "ahf1.hdf: field DHDF_SetId at offset [1-9][0-9]*: .* belongs to another set"
bad fileid "ahf1.hdf: field DHDF_FileId at offset [1-9][0-9]*: 7, but .*main.hdf lists the file as 1"
bad overlap "main.hdf: field temp\[5\].Origins at offset [1-9][0-9]*: pieces 4 'temp_chunk4' .* and 5 'temp_chunk5' .* overlap"
bad holes "main.hdf: field temp at offset [1-9][0-9]*: the 12 pieces leave 32 of 1961 elements uncovered (holes); mount with -o allowholes"
bad exceed "main.hdf: field temp\[11\].Origins at offset [1-9][0-9]*: piece 'temp_chunk11': origin 18 + size 20 in dimension 0 exceeds the array's 37"
bad shape "ahf1.hdf: field temp_chunk0 at offset [1-9][0-9]*: piece of 'temp' has type 22 shape 7,5, the chunk table of .* says type 22 shape 6,5"
bad noname "main.hdf: field temp\[0\].ChunkName at offset [1-9][0-9]*: piece 'temp_chunk0' is not an SDS of associated file 1"
bad notable "main.hdf: field orphan at offset [1-9][0-9]*: chunk table 'orphan' has no SDS of that name"

# an associated file that is not HDF4 at all
S="$TMP/nothdf"
"$GEN" "$S" tile2d
printf 'not an hdf file' > "$S/ahf3.hdf"
bad nothdf "ahf3.hdf: field magic at offset 0: associated file 3 of .* is not an HDF4 file"

# the byte offsets in the messages are real: the foreign set id is there
off=$(sed -n 's/.*DHDF_SetId at offset \([0-9]*\):.*/\1/p' "$TMP/foreign.err")
expect_eq "the offset of the foreign DHDF_SetId points at its bytes" "20250101T000000Z" \
    "$(dd if="$TMP/foreign/ahf1.hdf" bs=1 skip="$off" count=16 2>/dev/null)"

finish
