#!/bin/bash
# refs_corpus.sh - `hpcdump refs` of every file of $HPC_REFS_CORPUS (gsd, hdf5,
# hdf4, sion; not hdf5-cve): a file hpcdump refuses gives exit 1, one line,
# nothing on stdout; of the others every array zarr and xarray read
# through the references equals the tree's bytes (hpcdump extract) and the
# library's values (gsd.fl, h5py, SDreaddata).  The closing note counts
# the arrays and lists what is not covered, with why.  Skips unless
# HPC_REFS_CORPUS names the corpus (each file under a 4 GiB address-space cap).
. "$(dirname "$0")/../lib/lib.sh"
# its own variable, not HPC_CORPUS: a whole pass takes about 45 minutes,
# more than CI's budget leaves, so CI does not run it
HPC_CORPUS=${HPC_REFS_CORPUS:-}
[ -n "$HPC_CORPUS" ] && [ -d "$HPC_CORPUS" ] || { echo "SKIP: HPC_REFS_CORPUS not set"; exit 77; }
$PY -c "import fsspec, zarr, xarray, h5py, gsd.fl" 2>/dev/null ||
    { echo "SKIP: python3-fsspec/zarr/xarray/h5py/gsd missing (tests/deps.sh)"; exit 77; }
V="$top_srcdir/tests/mount/refs_verify.py"
O="$top_builddir/tests/gen/hdf4_oracle"
# HPC_REFS_CORPUS_SHARD=K/N: only the files whose index modulo N is K, so
# that a pass can run as N processes (each prints its own counts)
shard=${HPC_REFS_CORPUS_SHARD:-0/1}
sk=${shard%/*} sn=${shard#*/}
files=0 refused=0 described=0 idx=-1
: >"$TMP/notes"
: >"$TMP/counts"
: >"$TMP/big"
: >"$TMP/batch"
# run the verifier once over the files of $TMP/batch, then read each
# file's output: one interpreter per BATCH files, not one per file
BATCH=${HPC_REFS_CORPUS_BATCH:-40}
verify_batch() {
    [ -s "$TMP/batch" ] || return 0
    (ulimit -v 4194304; $PY "$V" --batch "$TMP/batch" >"$TMP/batch.out" 2>&1) ||
        sed 's/^/  /' "$TMP/batch.out"
    while IFS=$'\t' read -r v rest; do
        local w f
        w=$(dirname "$v"); f=$(cat "$w/name")
        if grep -qx 'status: 0' "$v" 2>/dev/null; then
            checks=$((checks + 1))
        else
            fail "$f: $(grep -m3 -E 'FAIL|Error' "$v" 2>/dev/null | tr '\n' ' ')(verifier status: $(tail -1 "$v" 2>/dev/null))"
        fi
        grep -E '^arrays:' "$v" | sed "s|^|$(basename "$f"): |" >>"$TMP/counts"
        grep '^  not compared' "$v" | sed "s|^ *|$(basename "$f"): |" >>"$TMP/big"
        grep '^  not covered: ' "$v" | sed "s|^ *not covered: |$(basename "$f"): |" >>"$TMP/notes"
        rm -rf "$w"
    done <"$TMP/batch"
    : >"$TMP/batch"
}
while IFS= read -r f; do
    idx=$((idx + 1))
    [ $((idx % sn)) -eq "$sk" ] || continue
    files=$((files + 1)); echo "[$files] $f"
    w="$TMP/w/$idx"; mkdir -p "$w"; echo "$f" >"$w/name"
    (ulimit -v 4194304; "$HPCDUMP" refs "$f" >"$w/r.json" 2>"$TMP/err"); rc=$?
    if [ $rc -ne 0 ]; then
        refused=$((refused + 1))
        [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && [ ! -s "$w/r.json" ] ||
            fail "$f: refused without exit 1, one line and nothing on stdout (rc $rc)"
        echo "refused: $(cat "$TMP/err")" >>"$TMP/notes"
        rm -rf "$w"
        continue
    fi
    described=$((described + 1))
    (ulimit -v 4194304; "$HPCDUMP" extract "$f" "$w/x" >/dev/null 2>&1)
    lib=()
    case "$f" in
        */gsd/*) lib=(--gsd "$f") ;;
        */hdf5/*) lib=(--h5 "$f") ;;
        */hdf4/*) [ -x "$O" ] && "$O" "$f" >"$w/o" 2>/dev/null && lib=(--hdf4 "$w/o") ;;
    esac
    printf '%s\t%s\n' "$w/v" "$(printf '%q ' "$w/r.json" "$w/x" "${lib[@]}" --min-arrays 0)" >>"$TMP/batch"
    [ "$(wc -l <"$TMP/batch")" -lt "$BATCH" ] || verify_batch
done < <(find "$HPC_CORPUS/gsd" "$HPC_CORPUS/hdf5" "$HPC_CORPUS/hdf4" "$HPC_CORPUS/sion" -type f \
         ! -name '*.txt' ! -name '*.log' ! -name '*.md' ! -name 'SOURCES*' | sort)
verify_batch
arrays=$(awk '{s += $3} END {print s + 0}' "$TMP/counts")
withlib=$(awk '{s += $8} END {print s + 0}' "$TMP/counts")
echo "note: $files files: $described described, $refused refused; $arrays arrays read through" \
     "zarr+xarray equal to the tree's bytes, $withlib of them also to the library's values;" \
     "$(wc -l <"$TMP/big") not compared (too large); $(grep -vc '^refused:' "$TMP/notes")" \
     "arrays not covered; $failures failures"
echo "not covered, by reason (count):"
grep -v '^refused:' "$TMP/notes" | sed 's/^[^:]*: [^:]*: //' | sort | uniq -c | sort -rn | sed 's/^/  /'
echo "every array not covered or not compared:"
sed 's/^/  /' "$TMP/big" "$TMP/notes"
finish
