#!/bin/sh
# tests/writer/writer_install.sh - the installed writer library is usable from
# outside the tree: the example program of docs/writer.md is compiled by
# plain $CC with nothing but `pkg-config --cflags --libs hpcwrite`, linked
# against the installed libhpcwrite.a, run on 3 MPI ranks, and the GSD file
# it writes is read by gsd.hoomd.  The header must compile on its own.
#
# In make check the library, header and .pc are installed into a staging
# directory (make install-... DESTDIR=); make installcheck sets
# HPCW_INSTALLED to $(DESTDIR)$(prefix), where make install put them.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/writer_lib.sh"
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config missing"; exit 77; }
cd "$TMP" || exit 1
CC=${CC:-cc}
PC="$top_builddir/mpi/hpcwrite.pc"

if [ -n "${HPCW_INSTALLED:-}" ]; then
    prefix=$HPCW_INSTALLED
else
    # the configured prefix, staged below $TMP/root
    prefix="$TMP/root$(sed -n 's/^prefix=//p' "$PC")"
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" install-libLIBRARIES \
        install-includeHEADERS install-pkgconfigDATA DESTDIR="$TMP/root" > install.log 2>&1
    rc=$?
    check "make install of the writer into a staging directory" test $rc -eq 0
    [ $rc -eq 0 ] || cat install.log
fi
pcdir=$(find "$prefix" -name hpcwrite.pc -path '*/pkgconfig/*' | head -1)
check "hpcwrite.pc installed" test -n "$pcdir"
# an install below DESTDIR or a staging directory has moved: a copy of its
# .pc gets the real prefix (libdir and includedir are relative to it)
mkdir -p "$TMP/pkgconfig"
sed "s|^prefix=.*|prefix=$prefix|" "${pcdir:-/dev/null}" > "$TMP/pkgconfig/hpcwrite.pc"
export PKG_CONFIG_PATH="$TMP/pkgconfig"
pc() { pkg-config "$@" hpcwrite; }
check "pkg-config knows hpcwrite" pc --exists
check "libhpcwrite.a installed" test -f "$(pc --variable=libdir)/libhpcwrite.a"
case "$(pc --cflags)" in
    *"$top_srcdir"*|*"$top_builddir"*) fail "pkg-config points into the source tree" ;;
    *) pass "pkg-config points outside the source tree" ;;
esac

# a library built with --enable-sanitizers needs their runtime to link
nm "$(pc --variable=libdir)/libhpcwrite.a" 2>/dev/null | grep -q ' U __asan_init' &&
    CC="$CC -fsanitize=address,undefined"

# the header alone, then the example from the docs (between its markers)
printf '#include <hpc_write.h>\n' > header.c
check "hpc_write.h compiles on its own" \
    $CC -Wall -Wextra -Werror -c header.c -o header.o $(pc --cflags)
# every function the header declares links from the installed library
# (the distributed-HDF ones only when the library was built with HDF4)
inc=$(pc --variable=includedir)
funcs=$(sed -n 's/^[a-zA-Z_][a-zA-Z0-9_ ]*[ *]\(hpc_[a-z0-9_]*\)(.*/\1/p' "$inc/hpc_write.h")
nm "$(pc --variable=libdir)/libhpcwrite.a" | grep -q ' T hpc_dhdf_open$' ||
    funcs=$(echo "$funcs" | grep -v '^hpc_dhdf_')
{
    printf '#include <hpc_write.h>\n#include <stdio.h>\nint main(void)\n{\n'
    for f in $funcs; do printf '    printf("%%p\\n", (void *)(size_t)&%s);\n' "$f"; done
    printf '    return 0;\n}\n'
} > allsyms.c
check "the header declares the writers ($(echo $funcs | wc -w) functions)" \
    test "$(echo $funcs | wc -w)" -ge 16
check "every declared function links from the installed library" \
    $CC -Wall -Wextra -Werror -o allsyms allsyms.c $(pc --cflags --libs)
sed -n '/<!-- example: tests\/writer\/writer_install.sh -->/,/^```$/p' "$top_srcdir/docs/writer.md" |
    sed '1,2d;$d' > example.c
check "the example is in docs/writer.md" grep -q "hpc_gsd_create" example.c
if $CC -Wall -Wextra -Werror -o example example.c $(pc --cflags --libs) > cc.log 2>&1; then
    pass "the example compiles and links with pkg-config --cflags --libs hpcwrite"
    timeout 120 mpirun --oversubscribe -np 3 ./example ex.gsd > run.log 2>&1
    rc=$?
    check "the example runs on 3 ranks" test $rc -eq 0
    [ $rc -eq 0 ] || cat run.log
    check "gsd.hoomd reads the example's file" $PY -c '
import sys, numpy as np, gsd.hoomd
t = gsd.hoomd.open("ex.gsd", "rb")
for fr in range(2):
    want = (100 * fr + np.arange(18, dtype=np.float32)).reshape(6, 3)
    assert len(t) == 2 and t[fr].particles.N == 6, (len(t), t[fr].particles.N)
    assert np.array_equal(t[fr].particles.position, want), t[fr].particles.position
'
else
    fail "the example does not compile: $(cat cc.log)"
fi

finish
