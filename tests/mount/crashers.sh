#!/bin/sh
# crashers.sh - files on which libhdf5 or libhdf4 crash or hang
# (tests/data/crashers/README): hpcmount and hpcdump must refuse each with
# one line naming the file (the member of a set when the library was
# opening one), exit non-zero, with nothing mounted.  The libraries run in
# the supervised helper process (src/container/hpc_remote.h); the hang is judged by
# the helper's CPU time (-o helper_cpu), never by the wall clock, so the
# time limits below are generous bounds on an event, not speed checks.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse

CR="$DATA/crashers"
# crashes inside the libraries are expected here: sanitizer builds report
# them (in the helper) somewhere the final check does not look
mkdir -p "$TMP/expected"
export ASAN_OPTIONS="log_path=$TMP/expected/asan:${ASAN_OPTIONS#log_path=*:}"
export UBSAN_OPTIONS="log_path=$TMP/expected/ubsan:print_stacktrace=1"

# refused NAME PATTERN MAXSECONDS TOOL ARGS...: TOOL fails with exactly one
# line on stderr matching PATTERN, within MAXSECONDS, nothing mounted
refused() {
    local name=$1 pat=$2 max=$3; shift 3
    local t0 t1 rc lines
    t0=$(date +%s.%N)
    timeout 600 "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    t1=$(date +%s.%N)
    lines=$(wc -l <"$TMP/err")
    check "$name: exit status non-zero (got $rc), not killed by a signal" test "$rc" -ne 0 -a "$rc" -lt 124
    expect_eq "$name: one line on stderr" 1 "$lines"
    check "$name: the line says why ($(head -c 160 "$TMP/err"))" grep -qE "$pat" "$TMP/err"
    # how long it took is printed, not asserted (no test depends on speed)
    echo "$name: refused in $($PY -c "print('%.1f' % ($t1 - $t0))") s (expected about $max s at most)"
    check "$name: nothing mounted" sh -c "! grep -q ' $TMP/m ' /proc/self/mounts"
}

# the HDF5 file needs the HDF5 reader (configure --without-hdf5 leaves it out)
H5=0
"$HPCDUMP" --version | grep -q '^formats:.* hdf5' && H5=1

mkdir -p "$TMP/m"
for tool in hpcmount hpcdump; do
    if [ $tool = hpcmount ]; then set -- "$HPCMOUNT" X "$TMP/m"; else set -- "$HPCDUMP" ls X; fi
    [ $H5 = 1 ] && refused "$tool segv_userblock.h5" \
        "segv_userblock\.h5: libhdf5 (crashed \(signal 11|ended the process).*not mounted" 20 \
        $(echo "$@" | sed "s#X#$CR/segv_userblock.h5#")
    refused "$tool dhdf_abort/mhf.hdf" "dhdf_abort/mhf\.hdf: " 60 \
        $(echo "$@" | sed "s#X#$CR/dhdf_abort/mhf.hdf#")
    # the hang: 2 s of the helper's CPU end it; the line names the member
    refused "$tool dhdf_hang/main.hdf" \
        "dhdf_hang/main\.hdf: libhdf4 used more than 2 s of CPU .*member .*dhdf_hang/ahf2\.hdf" 60 \
        $(echo "$@" | sed "s#X#$CR/dhdf_hang/main.hdf#" | sed "s#^\([^ ]*\)#\1 -o helper_cpu=2#")
done
refused "hpcmount -o open_timeout=1 (the former name of helper_cpu) on the hang" \
    "used more than 1 s of CPU" 60 "$HPCMOUNT" -o open_timeout=1 "$CR/dhdf_hang/main.hdf" "$TMP/m"
refused "bad -o helper_cpu" "helper_cpu" 30 "$HPCDUMP" -o helper_cpu=soon ls "$CR/dhdf_hang/main.hdf"
refused "bad -o open_timeout" "open_timeout" 30 "$HPCDUMP" -o open_timeout=soon ls "$CR/dhdf_hang/main.hdf"

# what the helper saves hpcmount from: the same file with the library in
# the process (-o inproc) kills it (SIGSEGV inside libhdf5; a sanitizer
# build's report exits 1)
if [ $H5 = 1 ]; then
    "$HPCDUMP" -o inproc ls "$CR/segv_userblock.h5" >/dev/null 2>&1
    rc=$?
    check "without the helper libhdf5 takes the process down (exit $rc)" \
        test "$rc" -ge 128 -o -n "$(ls "$TMP"/expected/asan* 2>/dev/null)"
fi

# files that open fine still mount (the helper serves them)
check "a good HDF4 set still mounts" mount_container "$DATA/dhdf/mhf.hdf" "$TMP/good"
check "and reads" test "$(stat -c %s "$TMP/good/sds1")" = 400000

finish
