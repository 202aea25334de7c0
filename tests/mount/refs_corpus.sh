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
# (refs_verify.py's Worker), costs about 0.1-0.3 CPU s per file, 3 (the
# CPU limit of its open) per file libnetcdf loops on, and all of them are compared;
# HPC_REFS_XARRAY_EVERY=N compares every Nth HDF5 file of each shard only
# (every netCDF-3 file)
XEVERY=${HPC_REFS_XARRAY_EVERY:-1}
sk=${shard%/*} sn=${shard#*/}
files=0 refused=0 described=0 idx=-1
: >"$TMP/list"
dirs=()
for d in gsd hdf5 hdf4 sion netcdf3; do
    [ ! -d "$HPC_CORPUS/$d" ] || dirs+=("$HPC_CORPUS/$d")
done
# the shard's files and the libraries each is compared with; every file
# is then checked by one refs_verify.py --corpus (one interpreter for all:
# `hpcdump refs`, its refusal, `hpcdump extract`, hdf4_oracle and the
# comparisons; each file's verdict in its own WORK/v)
while IFS= read -r f; do
    idx=$((idx + 1))
    [ $((idx % sn)) -eq "$sk" ] || continue
    files=$((files + 1))
    lib=()
    case "$f" in
        */gsd/*) lib=(--gsd "$f") ;;
        */hdf5/*) lib=(--h5 "$f")
                  [ $((idx / sn % XEVERY)) -ne 0 ] || lib+=(--nc "$f") ;;
        */netcdf3/*) lib=(--nc "$f") ;;
        */hdf4/*) [ -x "$O" ] && lib=(--hdf4-oracle "$O") ;;
    esac
    args=""
    [ ${#lib[@]} -eq 0 ] || printf -v args '%q ' "${lib[@]}"
    printf '%s\t%s\t%s\n' "$TMP/w/$idx" "$f" "$args" >>"$TMP/list"
done < <(find -H "${dirs[@]}" -type f ! -name '*.txt' ! -name '*.log' ! -name '*.md' ! -name 'SOURCES*' |
         sort)
pypkg "$V" --corpus "$TMP/list" || fail "refs_verify.py --corpus: exit $?"
# every file's verdict in one pass over the outputs: FILE, its last
# "status: N" (none: the verifier never finished it), "refused: ..." (or
# -), its first FAIL or Error lines, its last line, its "xarray: " line
# (a field without: -; a tab is IFS white space, so no field may be empty)
awk -F'\t' '{
        v = $1 "/v"; st = "none"; ref = "-"; bad = ""; nb = 0; last = ""; xa = ""
        while ((getline line < v) > 0) {
            if (line ~ /^status: /) st = substr(line, 9)
            if (line ~ /^refused: /) ref = substr(line, 10)
            if (line ~ /^xarray: / && xa == "") xa = substr(line, 9)
            if (line ~ /FAIL|Error/ && nb < 3) { bad = bad line " "; nb++ }
            last = line
        }
        close(v)
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", $1, $2, st, ref, bad == "" ? "-" : bad,
               last == "" ? "-" : last, xa == "" ? "-" : xa
    }' "$TMP/list" >"$TMP/verdicts"
: >"$TMP/refused"
: >"$TMP/all"
: >"$TMP/xarray"
while IFS=$'\t' read -r w f st ref bad last xa; do
    if [ "$ref" != "-" ]; then
        refused=$((refused + 1))
        echo "refused: $ref" >>"$TMP/refused"
        [ "$st" = 0 ] || fail "$f: ${bad#-}"
        continue
    fi
    described=$((described + 1))
    printf '%s/v\t\t%s\n' "$w" "$f" >>"$TMP/all"
    if [ "$st" = 0 ]; then
        checks=$((checks + 1))
    else
        fail "$f: ${bad#-}(verifier status: ${last#-})"
    fi
    # HDF5 files named below hdf5/, netCDF-3 ones as netcdf3/...
    if [ "$xa" != - ]; then
        rel=${f#"$HPC_CORPUS"/}
        printf '%s\t%s\n' "${rel#hdf5/}" "$xa" >>"$TMP/xarray"
    fi
done <"$TMP/verdicts"
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
# xarray through the references against xarray on the file ($TMP/xarray)
# against refs_xarray_expected.txt: FILE, a tab, why (a why beginning
# "sometimes: " allows the file to agree too)
xarray_verdicts() {
    local rel why verdict
    local -A expected=() sometimes=()
    while IFS=$'\t' read -r rel why || [ -n "$rel" ]; do
        [ -n "$rel" ] && [ "${rel:0:1}" != "#" ] || continue
        expected[$rel]=1
        [[ $why != "sometimes: "* ]] || sometimes[$rel]=1
    done <"$EXPECTED"
    while IFS=$'\t' read -r rel verdict; do
        case "$verdict" in
            differ*) [ -n "${expected[$rel]:-}" ] || fail "$rel: xarray through the references differs from xarray on the file: ${verdict#differ }" ;;
            *) [ -z "${expected[$rel]:-}" ] || [ -n "${sometimes[$rel]:-}" ] ||
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
