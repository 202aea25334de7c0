#!/bin/sh
# tests/fuzz/run.sh NAME [SECONDS] - build tests/fuzz/fuzz_NAME.c with clang's
# libFuzzer, ASan and UBSan against the core library and every reader, then
# fuzz it for SECONDS (default 30) from the seed corpus tests/fuzz/corpus/NAME
# and the fixtures tests/fuzz/seeds.txt names.
# With FUZZ_RUNS=0 it only replays those inputs, each once (what
# tests/run-all.sh does: the same inputs on every machine).
# The readers' objects are kept in $FUZZ_OBJ (default
# ${TMPDIR:-/tmp}/hpcfuzz-objects-N, N a checksum of the checkout's path)
# for the next harness: run one harness at a time per FUZZ_OBJ.
# Leaks inside third-party libraries are suppressed by tests/lib/lsan.supp; any
# other leak, crash or undefined behaviour fails the run.
# Exit 0 when no crash was found, 77 when clang/libFuzzer is missing.
set -eu
name=$1; secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/../.." && pwd)
out=${FUZZ_OUT:-${TMPDIR:-/tmp}/hpcfuzz-$name}
command -v clang >/dev/null || { echo "SKIP: clang missing"; exit 77; }
# a replay starts from the seeds alone, not from what earlier runs added
[ -z "${FUZZ_RUNS:-}" ] || rm -rf "$out/corpus"
mkdir -p "$out/corpus"
# a config.h for a build outside automake, and every reader this machine can
# build, as configure would choose them
printf '#define PACKAGE_VERSION "fuzz"\n' > "$out/config.h"
# the harnesses run every reader in process (-o inproc); the helper's path
# is only compiled in
printf '#define HPC_HELPER_PATH "/nonexistent/hpcmount-helper"\n' >> "$out/config.h"
sources="" cflags="" libs=""
# the FTI reader: Reed-Solomon arithmetic (gf-complete), MD5 (libcrypto)
libs="$libs -lgf_complete -lcrypto"
have_hdf5=no have_hdf4=no
if pkg-config --exists hdf5; then
    have_hdf5=yes
    cflags="$cflags $(pkg-config --cflags hdf5)"; libs="$libs $(pkg-config --libs hdf5)"
    echo '#define HAVE_HDF5 1' >> "$out/config.h"
    # the reader inflates chunks itself: libdeflate when present, else zlib
    if pkg-config --exists libdeflate; then
        cflags="$cflags $(pkg-config --cflags libdeflate)"; libs="$libs $(pkg-config --libs libdeflate)"
        echo '#define HAVE_LIBDEFLATE 1' >> "$out/config.h"
    else
        libs="$libs -lz"
    fi
fi
if [ -f /usr/include/hdf/mfhdf.h ]; then
    have_hdf4=yes
    cflags="$cflags -I/usr/include/hdf"; libs="$libs -lmfhdf -ldf"
    echo '#define HAVE_HDF4 1' >> "$out/config.h"
fi
# every source folder of src/ (docs/design.md): its .c files, and -I for its
# headers, which the sources name without their folder
incs=""
for d in $(find "$top/src" -type d | sort); do incs="$incs -I$d"; done
for f in $(find "$top/src" -name '*.c' | sort); do
    case $(basename "$f" .c) in
    fmt_hdf5|hdf5_*) [ "$have_hdf5" = yes ] || continue;;
    fmt_dhdf|dhdf_*) [ "$have_hdf4" = yes ] || continue;;
    esac
    sources="$sources $f"
done
extra=""   # FUZZ_SOURCES: further files, not the readers already taken
for f in ${FUZZ_SOURCES:-}; do
    case $(basename "$f") in fmt_*.c|hpc_*.c) ;; *) extra="$extra $f";; esac
done
: > "$out/build.log"
# The readers are the same in every harness: compiled once, on every core,
# into objects in $FUZZ_OBJ (default beside $out) that the other harnesses
# link as long as no file of src/ and none of the flags changed since
san="-g -O1 -fno-sanitize-recover=undefined"
# (one folder per checkout: two clones on one machine do not share it)
objs=${FUZZ_OBJ:-${TMPDIR:-/tmp}/hpcfuzz-objects-$(printf '%s' "$top" | cksum | cut -d' ' -f1)}
# shellcheck disable=SC2086
set -- $san -fsanitize=fuzzer-no-link,address,undefined -I"$objs" $incs $cflags ${FUZZ_CFLAGS:-} \
    $(pkg-config --cflags glib-2.0)
flags="$* | $sources | $(cat "$out/config.h")"
if [ "$(cat "$objs/flags" 2>/dev/null)" != "$flags" ] || [ ! -f "$objs/stamp" ] ||
   [ -n "$(find "$top/src" -newer "$objs/stamp" -print -quit)" ]; then
    rm -rf "$objs"; mkdir -p "$objs"
    cp "$out/config.h" "$objs/config.h"
    # shellcheck disable=SC2086
    if ! printf '%s\n' $sources | xargs -P "$(nproc)" -I{} sh -c \
        'f=$1; shift; exec clang "$@" -c "$f" -o "$0/$(basename "$f" .c).o"' "$objs" {} "$@" \
        2>> "$out/build.log"; then
        cat "$out/build.log"; rm -rf "$objs"; exit 1
    fi
    printf '%s\n' "$flags" > "$objs/flags"
    touch "$objs/stamp"
fi
# shellcheck disable=SC2086
if ! clang $san -fsanitize=fuzzer,address,undefined \
    -I"$out" $incs $cflags ${FUZZ_CFLAGS:-} $(pkg-config --cflags glib-2.0) \
    "$here/fuzz_$name.c" "$objs"/*.o $extra -o "$out/fuzz_$name" \
    $(pkg-config --libs glib-2.0) $libs ${FUZZ_LIBS:-} -lpthread -lm 2>> "$out/build.log"; then
    if grep -q "fsanitize=fuzzer" "$out/build.log" || grep -q "libclang_rt.fuzzer" "$out/build.log"; then
        echo "SKIP: libFuzzer runtime missing"; exit 77
    fi
    cat "$out/build.log"; exit 1
fi
# one cp for all the files, not a process per file
find "$top/tests/fuzz/corpus/$name" -type f ! -name README -exec cp -t "$out/corpus/" {} + 2>/dev/null || true
# fixtures of tests/data that seed this harness too (tests/fuzz/seeds.txt)
globs=$(awk -v n="$name" '$1 == n { $1 = ""; print }' "$here/seeds.txt")
for g in $globs; do
    # shellcheck disable=SC2086
    for f in "$top"/tests/data/$g; do [ -f "$f" ] && cp "$f" "$out/corpus/"; done
done
status=0
budget="-max_total_time=$secs"
[ -z "${FUZZ_RUNS:-}" ] || budget="-runs=$FUZZ_RUNS"
# shellcheck disable=SC2086
LSAN_OPTIONS="suppressions=$top/tests/lib/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
"$out/fuzz_$name" $budget -max_len=65536 -rss_limit_mb=2048 \
    -error_exitcode=1 -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus" > "$out/fuzz.log" 2>&1 || status=$?
tail -n 25 "$out/fuzz.log"
[ "$status" -ne 77 ] || status=1   # 77 means "skipped" to our callers
[ "$status" -eq 0 ] || echo "FAIL: fuzz_$name found a crash (status $status); artifacts in $out"
exit "$status"
