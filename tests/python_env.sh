# tests/python_env.sh - the environment of a Python test of the package
# (sourced after lib.sh): the build tree's package, which loads the build
# tree's libhpcmount and helper.  In a sanitizer build the interpreter must
# load the ASan runtime first (LD_PRELOAD); its own leaks are not ours.
export PYTHONPATH="$top_builddir/python${PYTHONPATH:+:$PYTHONPATH}"
export HPCMOUNT_HELPER="$top_builddir/helper/hpcmount-helper"
if grep -q __asan_init "$top_builddir/src/.libs/libhpcmount.so" 2>/dev/null; then
    asan=$(${CC:-gcc} -print-file-name=libasan.so)
    [ -f "$asan" ] || { echo "SKIP: sanitizer build, but libasan.so not found to preload"; exit 77; }
    export LD_PRELOAD="$asan"
    export ASAN_OPTIONS="detect_leaks=0:$ASAN_OPTIONS"
fi
