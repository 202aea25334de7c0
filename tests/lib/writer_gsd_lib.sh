# tests/lib/writer_gsd_lib.sh - helpers of the GSD writer tests (sourced after
# writer_lib.sh).
GSDPY="$top_srcdir/tests/writer/writer_gsd.py"

# verify NAME FILE RUNS... [--frames K]: gsd.fl and gsd.hoomd read the
# expected frames (writer_gsd.py) and a mount of FILE serves their bytes
verify() {
    local name=$1 file=$2; shift 2
    if ! mount_container "$file" "$TMP/m_$name"; then
        fail "$name: mount failed"; return 1
    fi
    check "$name: gsd.fl, gsd.hoomd and hpcmount read the expected frames" \
        $PY "$GSDPY" verify "$file" "$TMP/m_$name" "$@"
}
