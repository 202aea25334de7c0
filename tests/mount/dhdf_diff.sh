#!/bin/sh
# dhdf_diff.sh - differential test of the distributed HDF fast reads (issue
# 21): random sets written now with the HDF4 C API by tests/gen/dhdf_diffgen
# (every number type in big- and little-endian storage, ranks 1-4, random
# shapes and piece grids, pieces contiguous, deflate, RLE, skipping
# Huffman, n-bit, chunked with and without deflate, unwritten or partly written
# with and without fill values), every assembled array and piece compared
# with libhdf4's own SDreaddata bytes through a real mount (reads at odd
# offsets and of odd sizes across the pieces' edges, with the default and
# an odd cache block size), hpcdump extract and hpcdump cat.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
GEN="$top_builddir/tests/gen/dhdf_diffgen"
D="$top_srcdir/tests/mount/dhdf_diff.py"
[ -x "$GEN" ] || { echo "SKIP: tests/gen/dhdf_diffgen not built"; exit 77; }

for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
    S="$TMP/set$seed"
    "$GEN" "$S" "$seed" || { fail "seed $seed: dhdf_diffgen"; continue; }
    what="seed $seed ($(grep -c '^array' "$S/layout.txt") arrays, $(grep -c '^piece' "$S/layout.txt") pieces)"
    for opt in "" "-o blocksize=4099"; do
        M="$TMP/m$seed"
        # shellcheck disable=SC2086
        if mount_container "$S/main.hdf" "$M" $opt; then
            check "$what ${opt:-default blocks}: arrays and pieces as SDreaddata reads them, odd reads" \
                $PY "$D" check "$M" "$S"
            unmount_container "$M"
        else
            fail "$what: mount $opt"
        fi
    done
    "$HPCDUMP" extract "$S/main.hdf" "$TMP/x$seed" >/dev/null || fail "$what: hpcdump extract"
    check "$what: hpcdump extract as SDreaddata reads it" $PY "$D" check "$TMP/x$seed" "$S" noxattr
    check "$what: hpcdump cat as SDreaddata reads it" $PY "$D" hpcdump "$HPCDUMP" "$S"
done

finish
