#!/bin/bash
# refs_corpus.sh - `hpcdump refs` of every file of the public corpus (gsd,
# hdf5, hdf4, sion, netcdf3; not hdf5-cve): a file hpcdump refuses gives exit 1, one
# line, nothing on stdout; of the others every array zarr and xarray read
# through the references equals the tree's bytes (hpcdump extract) and the
# library's values (gsd.fl, h5py, SDreaddata); arrays above 256 MiB on a
# fixed sample of their chunks (tests/mount/refs_verify.py).  Of an HDF5
# or netCDF-3 file, xarray through the same references (hpcmount.refs_dataset) equals
# xarray on the file (engine="netcdf4", libnetcdf) in its first 32 groups
# (refs_verify.py --nc; every HDF5 file unless HPC_REFS_XARRAY_EVERY=N
# asks for every Nth): files xarray cannot open itself are skipped and
# counted, a file that differs must be listed with its reason in
# tests/mount/refs_xarray_expected.txt (and one listed there must still
# differ).  The closing note counts
# files, arrays verified, arrays not covered by reason, refused files,
# xarray's verdicts and failures.
#
# The corpus: $HPC_REFS_CORPUS, else $HPC_CORPUS (tests/run-all.sh sets it
# in the plain build); skipped without.  HPC_REFS_CORPUS_SHARD=K/N checks
# only the files whose index modulo N is K: make check runs it as
# refs_corpus_0.sh and refs_corpus_1.sh, two halves side by side under -j2.
# Every program runs under a 4 GiB address-space cap.
. "$(dirname "$0")/../lib/lib.sh"
HPC_CORPUS=${HPC_REFS_CORPUS:-${HPC_CORPUS:-}}
[ -n "$HPC_CORPUS" ] && [ -d "$HPC_CORPUS" ] || { echo "SKIP: neither HPC_REFS_CORPUS nor HPC_CORPUS set"; exit 77; }
$PY -c "import fsspec, zarr, xarray, h5py, gsd.fl" 2>/dev/null ||
    { echo "SKIP: python3-fsspec/zarr/xarray/h5py/gsd missing (tests/deps.sh)"; exit 77; }
. "$top_srcdir/tests/lib/python_env.sh"
V="$top_srcdir/tests/mount/refs_verify.py"
EXPECTED="$top_srcdir/tests/mount/refs_xarray_expected.txt"
O="$top_builddir/tests/gen/hdf4_oracle"
ulimit -v 4194304
shard=${HPC_REFS_CORPUS_SHARD:-0/1}
# xarray on the file, in a server process reused from file to file
# (refs_verify.py's Worker), costs about 0.1-0.3 CPU s per file, 20 (its
# CPU limit) per file libnetcdf loops on, and all of them are compared;
# HPC_REFS_XARRAY_EVERY=N compares every Nth HDF5 file of each shard only
# (every netCDF-3 file)
XEVERY=${HPC_REFS_XARRAY_EVERY:-1}
sk=${shard%/*} sn=${shard#*/}
files=0 refused=0 described=0 idx=-1 inbatch=0
: >"$TMP/refused"
: >"$TMP/batch"
: >"$TMP/all"
# BATCH files per interpreter (imports of zarr, xarray and h5py cost more
# than most files' checks); each file's output is read once at the end
BATCH=${HPC_REFS_CORPUS_BATCH:-60}
verify_batch() {
    [ -s "$TMP/batch" ] || return 0
    pypkg "$V" --batch "$TMP/batch" >"$TMP/batch.out" 2>&1 || sed 's/^/  /' "$TMP/batch.out"
    cat "$TMP/batch" >>"$TMP/all"
    rm -rf "$TMP"/w/*/x
    : >"$TMP/batch"; inbatch=0
}
dirs=()
for d in gsd hdf5 hdf4 sion netcdf3; do
    [ ! -d "$HPC_CORPUS/$d" ] || dirs+=("$HPC_CORPUS/$d")
done
while IFS= read -r f; do
    idx=$((idx + 1))
    [ $((idx % sn)) -eq "$sk" ] || continue
    files=$((files + 1)); echo "[$files] $f"
    w="$TMP/w/$idx"; mkdir -p "$w"
    "$HPCDUMP" refs "$f" >"$w/r.json" 2>"$TMP/err"; rc=$?
    if [ $rc -ne 0 ]; then
        refused=$((refused + 1))
        mapfile -t err <"$TMP/err"
        [ $rc -eq 1 ] && [ ${#err[@]} -eq 1 ] && [ ! -s "$w/r.json" ] ||
            fail "$f: refused without exit 1, one line and nothing on stdout (rc $rc)"
        echo "refused: ${err[*]}" >>"$TMP/refused"
        continue
    fi
    described=$((described + 1))
    # the tree is read for the arrays of the references only (and, of a
    # GSD file, walked for chunks that are none): references without an
    # array (tbigdims.h5: 4 GiB of fill value, not covered) need none
    mkdir -p "$w/x"
    if [[ $f == */gsd/* ]] || grep -q '\.zarray": ' "$w/r.json"; then
        "$HPCDUMP" extract "$f" "$w/x" >/dev/null 2>&1
    fi
    lib=()
    case "$f" in
        */gsd/*) lib=(--gsd "$f") ;;
        */hdf5/*) lib=(--h5 "$f")
                  [ $((idx / sn % XEVERY)) -ne 0 ] || lib+=(--nc "$f") ;;
        */netcdf3/*) lib=(--nc "$f") ;;
        */hdf4/*) [ -x "$O" ] && "$O" "$f" >"$w/o" 2>/dev/null && lib=(--hdf4 "$w/o") ;;
    esac
    printf -v args '%q ' "$w/r.json" "$w/x" "${lib[@]}" --min-arrays 0
    printf '%s\t%s\t%s\n' "$w/v" "$args" "$f" >>"$TMP/batch"
    inbatch=$((inbatch + 1))
    [ "$inbatch" -lt "$BATCH" ] || verify_batch
done < <(find -H "${dirs[@]}" -type f ! -name '*.txt' ! -name '*.log' ! -name '*.md' ! -name 'SOURCES*' |
         sort)
verify_batch
# every file's verdict and counts, in one pass over the outputs
while IFS=$'\t' read -r v _ f; do
    if grep -qx 'status: 0' "$v" 2>/dev/null; then
        checks=$((checks + 1))
    else
        fail "$f: $(grep -m3 -E 'FAIL|Error' "$v" 2>/dev/null | tr '\n' ' ')(verifier status: $(tail -1 "$v" 2>/dev/null))"
    fi
done <"$TMP/all"
# a file's output: "arrays: N, compared with the library: L, not covered: M",
# "  not covered: NAME: WHY" and "  sampled (...): NAME"
summary() {
    cut -f1,3 "$TMP/all" | awk -F'\t' -v what="$1" '
        { name = $2; sub(/.*\//, "", name)
          while ((getline line < $1) > 0) {
              if (what == "counts" && line ~ /^arrays:/) { split(line, w, /[ ,]+/); a += w[2]; l += w[7] }
              if (what == "notes" && line ~ /^  not covered: /) { sub(/^  not covered: /, "", line); print name ": " line }
              if (what == "sampled" && line ~ /^  sampled /) { sub(/^ +/, "", line); print name ": " line }
          }
          close($1) }
        END { if (what == "counts") print a + 0, l + 0 }'
}
# xarray through the references against xarray on the file (HDF5 files
# named below hdf5/, netCDF-3 ones as netcdf3/...)
xarray_verdicts() {
    local v f rel line
    while IFS=$'\t' read -r v _ f; do
        line=$(grep -m1 '^xarray: ' "$v" 2>/dev/null) || continue
        rel=${f#"$HPC_CORPUS"/}
        rel=${rel#hdf5/}
        printf '%s\t%s\n' "$rel" "${line#xarray: }"
    done <"$TMP/all" >"$TMP/xarray"
    grep -v '^#' "$EXPECTED" | grep . | cut -f1 | sort >"$TMP/expected"
    grep -P '^[^#][^\t]*\tsometimes: ' "$EXPECTED" | cut -f1 >"$TMP/sometimes"
    while IFS=$'\t' read -r rel verdict; do
        listed=0
        grep -qxF "$rel" "$TMP/expected" && listed=1
        case "$verdict" in
            differ*) [ $listed = 1 ] || fail "$rel: xarray through the references differs from xarray on the file: ${verdict#differ }" ;;
            *) [ $listed = 0 ] || grep -qxF "$rel" "$TMP/sometimes" ||
                   fail "$rel: listed in refs_xarray_expected.txt, but ${verdict%% *} now" ;;
        esac
    done <"$TMP/xarray"
}
xarray_verdicts
summary notes >"$TMP/notes"
summary sampled >"$TMP/sampled"
read -r arrays withlib < <(summary counts)
echo "note: $files files: $described described, $refused refused; $arrays arrays verified" \
     "(zarr and xarray equal to the tree's bytes), $withlib of them also to the library's values," \
     "$(wc -l <"$TMP/sampled") of them on a sample of chunks (larger than 256 MiB);" \
     "$(wc -l <"$TMP/notes") arrays not covered; $failures failures"
echo "xarray through the references vs xarray on the file (HDF5 and netCDF-3, first 32 groups):" \
     "$(cut -f2 "$TMP/xarray" | cut -d' ' -f1 | sort | uniq -c | tr -s ' ' | paste -sd, -)"
echo "differing (refs_xarray_expected.txt says why):"
grep -P '\tdiffer' "$TMP/xarray" | sed 's/^/  /'
echo "skipped (xarray cannot open the file itself), by reason (count):"
grep -P '\tskipped' "$TMP/xarray" | cut -f2 | cut -c9-60 | sort | uniq -c | sort -rn | sed 's/^/  /'
echo "not covered, by reason (count):"
sed 's/^[^:]*: [^:]*: //' "$TMP/notes" | sort | uniq -c | sort -rn | sed 's/^/  /'
echo "refused files:"
sed 's/^/  /' "$TMP/refused"
echo "every array sampled or not covered:"
sed 's/^/  /' "$TMP/sampled" "$TMP/notes"
finish
