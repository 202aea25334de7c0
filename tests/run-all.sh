#!/bin/sh
# tests/run-all.sh - the whole test suite, as CI runs it: install what is
# needed, build with -Werror and run `make check`, build again with ASan and
# UBSan and run `make check`, then replay every libFuzzer harness's corpus
# (tests/fuzz/corpus/NAME and the fixtures of tests/fuzz/seeds.txt) under
# ASan and UBSan: the same inputs on every machine, so the result does not
# depend on a random seed or on how many inputs a busy machine gets through.
# FUZZ_SECONDS=N fuzzes each harness for N seconds instead: a search for new
# bugs, whose finds are added to the corpus (tests/README.md).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# phase NAME COMMAND...: run a phase, its wall and CPU seconds into
# $phases/NAME (tests/lib/timed.py; printed at the end)
phases=$(mktemp -d "${TMPDIR:-/tmp}/hpcphases.XXXXXX")
trap 'rm -rf "$phases"' EXIT
phase() { local n=$1; shift; /usr/bin/python3 "$top/tests/lib/timed.py" -o "$phases/$n" "$@"; }
command -v /usr/bin/python3 >/dev/null || "$top/tests/deps.sh"
phase 0-deps "$top/tests/deps.sh"
cd "$top"
# the real files of tests/mount/conformance.sh and tests/mount/hdf5_cve.sh: CI clones
# the repository with shared/ beside it
if [ -z "${HPC_CORPUS:-}" ] && [ -d "$top/../shared/corpus" ]; then
    HPC_CORPUS=$(cd "$top/../shared/corpus" && pwd); export HPC_CORPUS
fi
if [ -z "${HPC_CVE_DIR:-}" ] && [ -n "${HPC_CORPUS:-}" ] && [ -d "$HPC_CORPUS/hdf5-cve" ]; then
    HPC_CVE_DIR=$HPC_CORPUS/hdf5-cve; export HPC_CVE_DIR
fi
phase 1-autoreconf sh -c 'autoreconf -fi >/dev/null 2>&1'
status=0
for variant in plain sanitizers; do
    dir="$top/build-ci-$variant"
    rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
    flags="--enable-werror"; [ "$variant" = sanitizers ] && flags="$flags --enable-sanitizers"
    # the CVE reproducers, the corpus mounted under load
    # (tests/mount/load_mount.sh) and every corpus file checked against its
    # library (tests/mount/conformance.sh) in both builds.  The references
    # read through zarr and xarray (tests/mount/refs_corpus_[01].sh) and
    # the other tests' corpus parts in the plain build only: under ASan
    # they would not fit CI's budget
    cve=${HPC_CVE_DIR:-}; corpus=${HPC_CORPUS:-}; load_corpus=$corpus
    conf_corpus=$corpus
    [ "$variant" = sanitizers ] && corpus=""
    echo "=== $variant build: configure $flags"
    phase "2-$variant-configure" "$top/configure" $flags > configure.log || { cat configure.log; exit 1; }
    phase "3-$variant-make" make -j"$(nproc)" > make.log 2>&1 || { cat make.log; exit 1; }
    if ! phase "4-$variant-check" env HPC_CVE_DIR="$cve" HPC_CORPUS="$corpus" HPC_REFS_CORPUS="$corpus" \
        HPC_LOAD_CORPUS="$load_corpus" HPC_CONFORMANCE_CORPUS="$conf_corpus" \
        make -j"$(nproc)" check > check.log 2>&1; then
        status=1
        tail -n 200 test-suite.log || true
    fi
    grep -E "^(PASS|SKIP|FAIL|ERROR|XFAIL|XPASS):" check.log || true
    grep -E "^# (TOTAL|PASS|SKIP|FAIL|ERROR)" check.log || true
    cd "$top"
done
# the Debian packages, once: a clean clone built by dpkg-buildpackage
# (minutes: a full build), lintian, their contents, and as root an install
# from them, used from the system paths, and its removal (tests/pkg/debian.sh)
echo "=== debian packages"
pkgrc=0; phase 5-debian bash "$top/tests/pkg/debian.sh" > "$top/build-ci-plain/debian.log" 2>&1 || pkgrc=$?
tail -1 "$top/build-ci-plain/debian.log"
[ "$pkgrc" -eq 0 ] || [ "$pkgrc" -eq 77 ] || { status=1; cat "$top/build-ci-plain/debian.log"; }
secs=${FUZZ_SECONDS:-0}
fuzzed=0; fuzzfail=0
for h in "$top"/tests/fuzz/fuzz_*.c; do
    name=$(basename "$h" .c); name=${name#fuzz_}
    if [ "$secs" -gt 0 ]; then
        echo "=== fuzz $name for ${secs}s"; runs=""
    else
        echo "=== fuzz $name: replay its corpus"; runs=0
    fi
    rc=0; phase "5-fuzz-$name" env FUZZ_RUNS="$runs" "$top/tests/fuzz/run.sh" "$name" "$secs" \
        > "$top/build-ci-plain/fuzz-$name.log" 2>&1 || rc=$?
    tail -3 "$top/build-ci-plain/fuzz-$name.log"
    if [ "$rc" -eq 77 ]; then continue; fi
    fuzzed=$((fuzzed + 1))
    [ "$rc" -eq 0 ] || { fuzzfail=$((fuzzfail + 1)); status=1; cat "$top/build-ci-plain/fuzz-$name.log"; }
done
# what the run cost: every phase, then the 15 slowest tests of each build
# (wall and CPU seconds of the test's processes, tests/lib/timed.py)
echo "=== seconds per phase (wall, CPU of its processes)"
for f in "$phases"/*; do
    printf '  %-28s %s\n' "$(basename "$f")" "$(cut -d' ' -f1-4 "$f")"
done
for v in plain sanitizers; do
    echo "=== the 15 slowest tests of the $v build (wall, CPU seconds)"
    find "$top/build-ci-$v/tests" -name '*.time' | while read -r f; do
        t=${f#"$top/build-ci-$v/"}
        printf '%s %s\n' "$(cat "$f")" "${t%.time}"
    done | sort -k2,2nr | head -15 | awk '{ printf "  %7.1f %7.1f  %s\n", $2, $4, $9 }'
done
# one closing line over both builds and the fuzzers
p=0; f=0
for v in plain sanitizers; do
    p=$((p + $(grep -cE "^PASS:" "$top/build-ci-$v/check.log" || true)))
    f=$((f + $(grep -cE "^(FAIL|ERROR):" "$top/build-ci-$v/check.log" || true)))
done
p=$((p + fuzzed - fuzzfail)); f=$((f + fuzzfail))
case $pkgrc in 0) p=$((p + 1)) ;; 77) ;; *) f=$((f + 1)) ;; esac
echo "$p passed, $f failed"
exit $status
