#!/bin/sh
# tests/unit/calls.sh - no call cycle between source files: when a.c calls
# a function of b.c, nothing in b.c calls back into a.c, directly or
# through other files (docs/design.md: each file of a module stands on the
# ones below it).  Read from the built objects (nm), so it sees calls
# through macros and inline code alike.  Prints each file tsort finds in a
# cycle and fails if there is one.
set -eu
export LC_ALL=C
build=${top_builddir:-.}
cd "$build"
# the core's objects are libtool's PIC ones under src/*/.libs
# (libhpc_la-*.o); the one other .libs object, libhpcmount's API file,
# stays out as before (hpcdump's own copy of it stands in where built)
objs=$(find src fuse dump helper mpi -name '*.o' \( ! -path '*/.libs/*' -o -name 'libhpc_la-*' \) | sort)
[ -n "$objs" ] || { echo "SKIP: no objects under $build (build first)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "symbol file" for each global definition and each use; a file is named
# by its folder and its source's name (libtool prefixes dropped)
# one nm for all objects (a process per object cost more than the check)
# shellcheck disable=SC2086
nm -A $objs | awk -v defs="$tmp/defs" -v uses="$tmp/uses" '
    {
        o = $1; sub(/:[^:]*$/, "", o)      # OBJ:VALUE TYPE NAME, OBJ: U NAME
        n = split(o, p, "/"); b = p[n]; sub(/\.o$/, "", b); sub(/^[a-z_]*-/, "", b)
        d = p[n - 1]; if (d == ".libs") d = p[n - 2]
        f = d "/" b
    }
    NF == 3 && $2 ~ /^[TDBR]$/ { print $3, f > defs }
    NF == 3 && $2 == "U" { print $3, f > uses }'
sort -u "$tmp/defs" > "$tmp/d"; sort -u "$tmp/uses" > "$tmp/u"
# caller callee, for callees defined in another file
join "$tmp/u" "$tmp/d" | awk '$2 != $3 { print $2, $3 }' | sort -u > "$tmp/edges"
tsort "$tmp/edges" > /dev/null 2> "$tmp/loops" || true
bad=0
for f in $(grep -v "input contains a loop" "$tmp/loops" | sed 's/^tsort: //' | sort -u); do
    echo "in a call cycle: $f (calls: $(awk -v f="$f" '$1 == f { printf "%s ", $2 }' "$tmp/edges"))"
    bad=1
done
[ $bad = 0 ] || { echo "FAIL: call cycles between source files"; exit 1; }
echo "PASS: no call cycle between source files ($(wc -l < "$tmp/edges") calls between files)"
