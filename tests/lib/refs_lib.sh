# refs_lib.sh - sourced by bash tests after tests/lib/lib.sh: comparisons of
# references with tests/mount/refs_verify.py, queued and then run in one
# interpreter (refs_verify.py --batch), since the imports of zarr, xarray
# and the formats' libraries cost more CPU than most comparisons.

REFS_VERIFY="$top_srcdir/tests/mount/refs_verify.py"
REFS_BATCH="$TMP/refs.batch"
: >"$REFS_BATCH"

# refs_queue DESCRIPTION REFS_JSON TREE [refs_verify args...]: one
# comparison for refs_batch, its check named DESCRIPTION
refs_queue() {
    local what=$1 args; shift
    printf -v args '%q ' "$@"
    printf '%s\t%s\t%s\n' "$TMP/refs.$(wc -l <"$REFS_BATCH").v" "$args" "$what" >>"$REFS_BATCH"
}

# refs_batch: every queued comparison, a check each (a failing one's output
# goes to the log); the queue is emptied
refs_batch() {
    local v what
    $PY "$REFS_VERIFY" --batch "$REFS_BATCH" >"$TMP/refs.batch.out" 2>&1 ||
        fail "refs_verify.py --batch: $(tail -3 "$TMP/refs.batch.out")"
    while IFS=$'\t' read -r v _ what; do
        if [ "$(tail -1 "$v" 2>/dev/null)" = "status: 0" ]; then
            pass "$what"
        else
            fail "$what"
            sed 's/^/    /' "$v" 2>/dev/null | tail -20
        fi
    done <"$REFS_BATCH"
    : >"$REFS_BATCH"
}
