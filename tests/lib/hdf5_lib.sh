# hdf5_lib.sh - sourced by the HDF5 tests after tests/lib/lib.sh.

# h5_verify FILE [hpcmount args...]: tests/mount/hdf5_verify.py on a fresh mount
# of FILE (every dataset through the mount and hpcdump against h5py); one
# ok/FAIL per check.  H5_ODD: reads at odd offsets per dataset (default 20).
h5_verify() {
    f=$1; shift
    mnt="$TMP/mnt-$(basename "$f" .h5)"
    if ! mount_container "$f" "$mnt" "$@"; then fail "mount $f"; return; fi
    "$PY" "$top_srcdir/tests/mount/hdf5_verify.py" "$f" "$mnt" "$HPCDUMP" --odd "${H5_ODD:-20}" \
        > "$TMP/verify.log" 2>&1
    rc=$?
    n=0
    while IFS= read -r line; do
        case $line in
            ok:*) pass "$(basename "$f"): ${line#ok: }"; n=$((n + 1)) ;;
            FAIL:*) fail "$(basename "$f"): ${line#FAIL: }" ;;
            *) echo "$line" ;;
        esac
    done < "$TMP/verify.log"
    [ "$rc" -eq 0 ] && [ "$n" -gt 0 ] || fail "$(basename "$f"): verifier exit $rc after $n checks"
    unmount_container "$mnt"
}

# h5_generate: skip without h5py; write the files of tests/gen/hdf5_gen.py and
# tests/gen/hdf5_gen into G="$TMP/h5"
h5_generate() {
    "$PY" -c 'import h5py' 2>/dev/null || { echo "SKIP: python3-h5py missing"; exit 77; }
    G="$TMP/h5"
    check "h5py generator" "$PY" "$top_srcdir/tests/gen/hdf5_gen.py" "$G"
    check "C API generator" "$top_builddir/tests/gen/hdf5_gen" "$G"
}
