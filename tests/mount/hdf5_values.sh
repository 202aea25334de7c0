#!/bin/sh
# hdf5_values.sh - values that need a conversion to equal h5py's
# np.ascontiguousarray(ds[()]) in little-endian, through real mounts and
# hpcdump (tests/mount/hdf5_verify.py): n-bit and scale-offset data, fixed-length
# strings in each padding, long doubles in 16 and 12 bytes, nested and
# array-of-compound types (user.dtype parsed by numpy), filter plugins with
# and without the plugin installed; h5py's own type mapping (numpy.h5:
# bool enums of any base, complex compounds, the float it picks) and the
# types it has no NumPy image of (EIO, named in .info).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/hdf5_lib.sh"
need_fuse

H5_ODD=5
h5_generate

h5_verify "$G/values.h5"
h5_verify "$G/structs.h5"
h5_verify "$G/numpy.h5"
# Blosc's library leaks its global context at exit and libhdf5 unloads the
# plugin before LeakSanitizer reports: the slow unwinder reaches libhdf5's
# frames, which tests/lib/lsan.supp names (sanitizer builds only)
asan=$ASAN_OPTIONS
export ASAN_OPTIONS="$asan:fast_unwind_on_malloc=0"
h5_verify "$G/plugins.h5"
export ASAN_OPTIONS="$asan"

# the cases the verifier covers, spelled out
hex() { "$HPCDUMP" cat "$G/$1" "$2" | od -An -tx1 -N"$3" | tr -d ' \n'; }
expect_eq "n-bit int16 at bit offset 5: -1 is ffff" "ffff01fc" "$(hex values.h5 nbit_i16 4)"
expect_eq "space-padded string: trailing spaces become NULs" \
    "7370206163650000" "$(hex values.h5 str_spacepad 40 | tail -c 16)"
expect_eq "NUL-terminated string: bytes after the NUL become NULs" "6162202000000000" "$(hex values.h5 str_nullterm 8)"
expect_eq "96-bit long double served as <f16" "96 <f16" \
    "$("$HPCDUMP" info "$G/values.h5" | awk -F'\t' '$1 == "/ldouble96" { print $7, $3 }')"
M="$TMP/mnt-structs"
mount_container "$G/structs.h5" "$M" || fail "mount structs.h5"
expect_eq "user.shape of a scalar is empty" "" "$(getfattr --absolute-names --only-values -n user.shape "$M/scalar_struct" 2>&1)"
check "user.dtype of an array of arrays: numpy.dtype(ast.literal_eval(...))" "$PY" -c "
import ast, os, sys, numpy as np
d = np.dtype(ast.literal_eval(os.getxattr(sys.argv[1], 'user.dtype').decode()))
sys.exit(d != np.dtype((('<i4', (6, 3)), (4,))))" "$M/array_of_array"
unmount_container "$M"

# h5py's mapping, spelled out (numpy.h5, values.h5)
expect_eq "enum FALSE/TRUE of int32: NumPy's bool, 1 byte each, ff for other values" \
    "000101 00ffff" "$(hex numpy.h5 bool_i4 3) $("$HPCDUMP" cat "$G/numpy.h5" bool_i4 | od -An -tx1 -j3 | tr -d ' \n')"
expect_eq "complex with a gap: NumPy's complex128" "<c16 48" \
    "$("$HPCDUMP" info "$G/numpy.h5" | awk -F'\t' '$1 == "/complex_gap" { print $3, $7 }')"
expect_eq "half precision stored in 4 bytes: <f4" "<f4" \
    "$("$HPCDUMP" info "$G/numpy.h5" | awk -F'\t' '$1 == "/half_in_4" { print $3 }')"
M="$TMP/mnt-numpy"
mount_container "$G/numpy.h5" "$M" -o log="$TMP/numpy.log" || fail "mount numpy.h5"
for d in int3 int16 quad complex_f2 cmp_float24 cmp_ld12; do
    cat "$M/$d" > /dev/null 2> "$TMP/err"
    check "$d: no NumPy image in h5py: EIO" grep -q "Input/output error" "$TMP/err"
    check "$d: .info says why" grep -q "^warning: /$d: .*reads fail with EIO" "$M/.info"
done
check "refused read: the daemon logged why" grep -q "/int3: .*NumPy has no such integer" "$TMP/numpy.log"
check "link named ..: left out, in .info" grep -q "^/names/.. -> name that is no file name: not shown" "$M/.info"
expect_eq "link name that is not UTF-8: served as its bytes, the object's bytes" "$(od -An -tx1 "$M/names/...")" \
    "$(od -An -tx1 "$(printf '%s/names/bad\377\376name' "$M")")"
unmount_container "$M"
for d in bf_prec11_off5 bf8_prec3_pad_one cmp_bf_prec11 time_d32; do
    check "values.h5 $d: h5py converts none: EIO through hpcdump" sh -c "! '$HPCDUMP' cat '$G/values.h5' $d > /dev/null 2>&1"
done

# without the plugin: EIO, a log line and the filter id in .info
mkdir -p "$TMP/no-plugins"
M="$TMP/mnt-noplugin"
HDF5_PLUGIN_PATH="$TMP/no-plugins" mount_container "$G/plugins.h5" "$M" -o log="$TMP/noplugin.log" ||
    fail "mount plugins.h5 without plugins"
for d in lz4 bzip2 blosc; do
    [ -e "$M/$d" ] || continue
    cat "$M/$d" > /dev/null 2> "$TMP/err"
    check "no $d plugin: read fails with EIO" grep -q "Input/output error" "$TMP/err"
done
[ -e "$M/lz4" ] && check "no plugin: .info names filter 32004" grep -q "/lz4.*filter 32004.*not available" "$M/.info"
check "no plugin: the daemon logged the dataset" grep -q "/lz4\|/bzip2\|/blosc" "$TMP/noplugin.log"
expect_eq "no plugin: other data still served" "$("$PY" "$top_srcdir/tests/mount/hdf5_verify.py" --expect "$G/plugins.h5" plain)" "$(sha "$M/plain")"
unmount_container "$M"

# LZF: decoded by the reader (liblzf); without liblzf only through Debian's
# hdf5-plugin-lzf, whose library does not load: then EIO
if grep -q "define HAVE_LIBLZF 1" "$top_builddir/config.h"; then
    h5_verify "$G/lzf.h5"
    check "lzf: decoded by the reader, no warning" sh -c \
        "'$HPCDUMP' info '$G/lzf.h5' | grep -q '^/lzf	.*	lzf	.*	decode	' && ! '$HPCDUMP' info '$G/lzf.h5' | grep -q '^warning'"
else
    M="$TMP/mnt-lzf"
    mount_container "$G/lzf.h5" "$M" || fail "mount lzf.h5"
    check "lzf without liblzf: EIO" sh -c "! cat '$M/lzf' > /dev/null 2>&1"
    check "lzf without liblzf: .info names filter 32000" grep -q "filter 32000.*not available" "$M/.info"
    unmount_container "$M"
fi

finish
