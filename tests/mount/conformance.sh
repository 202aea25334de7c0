#!/bin/sh
# conformance.sh [DIR] - hpcmount and hpcdump against the formats' own
# libraries (h5py, gsd.fl/gsd.hoomd, libhdf4's SD interface, SIONlib's
# recorded siondump output) over a directory of real files: DIR, else
# $HPC_CORPUS (tests/run-all.sh sets it to ../shared/corpus beside the
# clone when that exists); skipped (77) without one.  Every file is checked
# by tests/mount/conformance.py in a child process under `ulimit -v 4194304`;
# the test fails when any file FAILs (docs/conformance.md).
# HPC_CONFORMANCE_CORPUS, when set, comes before HPC_CORPUS;
# HPC_CONFORMANCE_SKIP=FMT,... leaves those formats' files out (for a
# developer's run: tests/run-all.sh checks every format in both builds).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
corpus=${1:-${HPC_CONFORMANCE_CORPUS:-${HPC_CORPUS:-}}}
if [ -z "$corpus" ] || [ ! -d "$corpus" ]; then
    echo "SKIP: no corpus (argument or HPC_CORPUS)"; exit 77
fi
need_fuse
"$PY" -c 'import h5py, gsd.fl, gsd.hoomd, numpy' 2>/dev/null ||
    { echo "SKIP: python3-h5py or python3-gsd missing"; exit 77; }
export top_srcdir top_builddir
rc=0
"$PY" "$top_srcdir/tests/mount/conformance.py" -j 2 \
    ${HPC_CONFORMANCE_SKIP:+--skip "$HPC_CONFORMANCE_SKIP"} "$corpus" || rc=$?
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 0 ] && pass "conformance over $corpus" || fail "conformance over $corpus (exit $rc)"
finish
