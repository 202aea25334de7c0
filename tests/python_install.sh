#!/bin/bash
# python_install.sh - `make install` puts the package where Debian's
# python3 finds it for the prefix (PREFIX/lib/python3.X/dist-packages, on
# sys.path for /usr/local), with _libpath.py naming the installed library,
# and the installed package works: staged with DESTDIR, imported from the
# staging directory with the staged library, a container listed and read.
. "$(dirname "$0")/lib.sh"
"$PY" -c "import numpy" 2>/dev/null || { echo "SKIP: python3-numpy missing (tests/deps.sh)"; exit 77; }
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" "$@"; }
prefix=$(mk -s print-python-dirs | sed -n 's/^prefix=//p')
libdir=$(mk -s print-python-dirs | sed -n 's/^libdir=//p')
pydir=$(mk -s print-python-dirs | sed -n 's/^pydir=//p')
check "make knows the install directories" test -n "$prefix" -a -n "$pydir"
mk install-libLTLIBRARIES install-hpcmount_pyDATA install-data-local DESTDIR="$TMP/root" \
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
. "$top_srcdir/tests/python_env.sh"
out=$(cd "$TMP" && PYTHONPATH="$TMP/root$pydir" HPCMOUNT_LIBRARY="$TMP/root$libdir/libhpcmount.so.0" \
    pypkg -c '
import sys, hpcmount
assert hpcmount.__file__.startswith(sys.argv[1]), hpcmount.__file__
with hpcmount.open(sys.argv[2]) as c:
    print(len(c.read("rank-000002")), c.array("rank-000002").flags.owndata)
' "$TMP/root" "$DATA/a_4tasks.sion" 2>&1)
expect_eq "the installed package reads a container" "$("$HPCDUMP" cat "$DATA/a_4tasks.sion" rank-000002 | wc -c) False" "$out"
finish
