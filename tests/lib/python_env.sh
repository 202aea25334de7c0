# tests/lib/python_env.sh - the environment of a Python test of the package
# (sourced after lib.sh): the build tree's package, which loads the build
# tree's libhpcmount and helper; pypkg ARGS... runs $PY on it.  In a
# sanitizer build the interpreter must load the ASan runtime first, so
# pypkg preloads it (for that process only: tools such as pgrep hang with
# it) and ignores the interpreter's own leaks.
export PYTHONPATH="$top_builddir/python${PYTHONPATH:+:$PYTHONPATH}"
export HPCMOUNT_HELPER="$top_builddir/helper/hpcmount-helper"
PY_PRELOAD=""
if grep -q __asan_init "$top_builddir/src/.libs/libhpcmount.so" 2>/dev/null; then
    PY_PRELOAD=$(${CC:-gcc} -print-file-name=libasan.so)
    [ -f "$PY_PRELOAD" ] || { echo "SKIP: sanitizer build, but libasan.so not found to preload"; exit 77; }
fi
pypkg() {
    if [ -n "$PY_PRELOAD" ]; then
        LD_PRELOAD="$PY_PRELOAD" ASAN_OPTIONS="detect_leaks=0:$ASAN_OPTIONS" "$PY" "$@"
    else
        "$PY" "$@"
    fi
}
# h5py_case SCRIPT SOURCE WHAT: SCRIPT gen writes its files into $TMP with
# h5py, SOURCE (one of them) is mounted at M=$TMP/mnt (log: $TMP/mnt.log),
# and the check WHAT is SCRIPT tree: the mount against h5py.
h5py_case() {
    "$PY" "$1" gen "$TMP" || fail "h5py writes $(basename "$2")"
    M="$TMP/mnt"
    mount_container "$2" "$M" -o log="$TMP/mnt.log" || fail "mount $(basename "$2")"
    check "$3" "$PY" "$1" tree "$M" "$2"
}
