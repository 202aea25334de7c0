#!/bin/bash
# python_install.sh - `make install` puts the package where Debian's
# python3 finds it for the prefix (PREFIX/lib/python3.X/dist-packages, on
# sys.path for /usr/local), with _libpath.py naming the installed library,
# and the installed package works: staged with DESTDIR, imported from the
# staging directory with the staged library, a container listed and read.
# The installed C library too: a program using only <hpcmount.h> built with
# `pkg-config --cflags --libs hpcmount` reads the same bytes.
. "$(dirname "$0")/../lib/lib.sh"
"$PY" -c "import numpy" 2>/dev/null || { echo "SKIP: python3-numpy missing (tests/deps.sh)"; exit 77; }
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" "$@"; }
prefix=$(mk -s print-python-dirs | sed -n 's/^prefix=//p')
libdir=$(mk -s print-python-dirs | sed -n 's/^libdir=//p')
pydir=$(mk -s print-python-dirs | sed -n 's/^pydir=//p')
check "make knows the install directories" test -n "$prefix" -a -n "$pydir"
mk install-libLTLIBRARIES install-hpcmount_pyDATA install-data-local install-includeHEADERS \
    install-pkgconfigDATA DESTDIR="$TMP/root" \
    > "$TMP/install.log" 2>&1
rc=$?
check "make install of the library and the package into a staging directory" test $rc -eq 0
[ $rc -eq 0 ] || cat "$TMP/install.log"

# the default prefix's folder is the one Debian's python3 puts on sys.path
if [ "$prefix" = /usr/local ] || [ "$prefix" = /usr ]; then
    check "$pydir is on python3's sys.path" \
        "$PY" -c "import sys; sys.exit('$pydir' not in sys.path)"
fi
check "package installed" test -f "$TMP/root$pydir/hpcmount/__init__.py"
check "fsspec module installed" test -f "$TMP/root$pydir/hpcmount/_fsspec.py"
expect_eq "_libpath.py names the installed library" "$libdir/libhpcmount.so.0" \
    "$(sed -n 's/^LIBRARY = "\(.*\)"$/\1/p' "$TMP/root$pydir/hpcmount/_libpath.py")"
check "the library is installed with its soname" test -e "$TMP/root$libdir/libhpcmount.so.0"

# the staged copy stands in for the installed one: the library from the
# staging directory (where _libpath.py's path will be once really installed)
. "$top_srcdir/tests/lib/python_env.sh"
out=$(cd "$TMP" && PYTHONPATH="$TMP/root$pydir" HPCMOUNT_LIBRARY="$TMP/root$libdir/libhpcmount.so.0" \
    pypkg -c '
import sys, hpcmount
assert hpcmount.__file__.startswith(sys.argv[1]), hpcmount.__file__
with hpcmount.open(sys.argv[2]) as c:
    print(len(c.read("rank-000002")), c.array("rank-000002").flags.owndata)
' "$TMP/root" "$DATA/a_4tasks.sion" 2>&1)
expect_eq "the installed package reads a container" "$("$HPCDUMP" cat "$DATA/a_4tasks.sion" rank-000002 | wc -c) False" "$out"

# C: the header alone, the .pc of the staged prefix
pcdir="$TMP/root$libdir/pkgconfig"
mkdir -p "$TMP/pc"
sed "s|^prefix=.*|prefix=$TMP/root$prefix|" "$pcdir/hpcmount.pc" > "$TMP/pc/hpcmount.pc"
cat > "$TMP/use.c" <<'CEOF'
#include <hpcmount.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    hpcmount *m;
    hpcmount_stat st;
    static char buf[1 << 16];
    size_t n = 0;
    if (hpcmount_open(argv[1], "cache_size=1M", &m) != HPCMOUNT_OK) {
        fprintf(stderr, "%s\n", hpcmount_last_error());
        return 1;
    }
    int rc = hpcmount_resolve(m, argv[2], &st);
    if (rc == HPCMOUNT_OK)
        rc = hpcmount_read(m, st.ino, buf, sizeof buf, 0, &n);
    if (rc == HPCMOUNT_OK)
        fwrite(buf, 1, n, stdout);
    hpcmount_close(m);
    return rc == HPCMOUNT_OK ? 0 : 1;
}
CEOF
if command -v pkg-config >/dev/null; then
    flags=$(PKG_CONFIG_PATH="$TMP/pc" pkg-config --cflags --libs hpcmount)
    # a sanitizer build's library needs its runtime in the program
    [ -n "$PY_PRELOAD" ] && flags="$flags -fsanitize=address,undefined"
    check "a C program builds with pkg-config hpcmount" \
        ${CC:-cc} -o "$TMP/use" "$TMP/use.c" $flags
    expect_eq "it reads what hpcdump cat reads" \
        "$("$HPCDUMP" cat "$DATA/a_4tasks.sion" rank-000002 | sha256sum)" \
        "$(LD_LIBRARY_PATH="$TMP/root$libdir" "$TMP/use" "$DATA/a_4tasks.sion" rank-000002 | sha256sum)"
fi
finish
