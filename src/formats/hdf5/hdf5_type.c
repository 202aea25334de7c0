/* hdf5_type.c - HDF5 datatypes: the memory type a dataset is served in,
 * its NumPy name (user.dtype) and attribute values rendered as text.
 * Split from fmt_hdf5.c so that type work and tree work stay apart. */
#include "hdf5_type.h"
#include "hpc_bytes.h"
#include "hpc_error.h"
#include "hpc_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_ATTR_ELEMS (1u << 20)

/* ---- types ------------------------------------------------------------ */

/* Integers and bit fields in full precision: the same size and sign,
 * little-endian, bit offset 0, so that n-bit data arrive as values.  Bytes
 * too are little-endian, as h5py's native type: libhdf5 keeps the bits above
 * a big-endian byte's precision (offset 0) when it converts it to the
 * native type, and clears them when it converts it to a big-endian one. */
static hid_t int_mem_type(hid_t t)
{
    hid_t m = H5Tcopy(t);
    if (m < 0)
        return m;
    if (H5Tset_order(m, H5T_ORDER_LE) < 0 || H5Tset_offset(m, 0) < 0 ||
        H5Tset_precision(m, 8 * H5Tget_size(t)) < 0 ||
        H5Tset_pad(m, H5T_PAD_ZERO, H5T_PAD_ZERO) < 0) {
        H5Tclose(m);
        return H5I_INVALID_HID;
    }
    return m;
}

/* IEEE half precision, little-endian (NumPy's <f2). */
static hid_t half_type(void)
{
    hid_t m = H5Tcopy(H5T_IEEE_F32LE);
    if (m >= 0 && (H5Tset_fields(m, 15, 10, 5, 0, 10) < 0 || H5Tset_precision(m, 16) < 0 ||
                   H5Tset_size(m, 2) < 0 || H5Tset_ebias(m, 15) < 0)) {
        H5Tclose(m);
        m = H5I_INVALID_HID;
    }
    return m;
}

/* The little-endian NumPy float of size bytes (2, 4, 8, 16). */
static hid_t np_float_type(size_t size)
{
    switch (size) {
    case 2: return half_type();
    case 4: return H5Tcopy(H5T_IEEE_F32LE);
    case 8: return H5Tcopy(H5T_IEEE_F64LE);
    case 16: return H5Tcopy(H5T_NATIVE_LDOUBLE);
    default: return H5I_INVALID_HID;
    }
}

/* Floats become the NumPy float h5py chooses (hdf5_npmap.c): f2, f4, f8
 * or the platform's long double (x87 80-bit in 16 bytes on x86_64). */
static hid_t float_mem_type(hid_t t)
{
    size_t size;
    return hpc_h5t_np_float(t, &size) == HPC_OK ? np_float_type(size) : H5I_INVALID_HID;
}

/* Fixed-length strings as NumPy's S<n> holds them through h5py: the same
 * size and character set, NUL-padded (libhdf5 drops the trailing spaces of
 * space-padded strings and the bytes after the NUL of NUL-terminated ones;
 * NUL-padded strings are copied as stored). */
static hid_t str_mem_type(hid_t t)
{
    if (H5Tis_variable_str(t) != 0)
        return H5I_INVALID_HID;
    hid_t m = H5Tcopy(t);
    if (m >= 0 && H5Tset_strpad(m, H5T_STR_NULLPAD) < 0) {
        H5Tclose(m);
        m = H5I_INVALID_HID;
    }
    return m;
}

/* h5py's complex: r then i, adjacent, of one little-endian float. */
static hid_t complex_mem_type(size_t part)
{
    hid_t f = np_float_type(part), m = f >= 0 ? H5Tcreate(H5T_COMPOUND, 2 * part) : H5I_INVALID_HID;
    if (m >= 0 && (H5Tinsert(m, "r", 0, f) < 0 || H5Tinsert(m, "i", part, f) < 0)) {
        H5Tclose(m);
        m = H5I_INVALID_HID;
    }
    if (f >= 0)
        H5Tclose(f);
    return m;
}

/* Compound: the same member offsets and size, each member in its memory
 * type (libhdf5 refuses members that would overlap: no byte image). */
static hid_t compound_mem_type(hid_t t)
{
    size_t part;
    if (hpc_h5t_is_complex(t, &part))
        return part == 2 ? H5I_INVALID_HID : complex_mem_type(part);
    int nm = H5Tget_nmembers(t);
    hid_t m = nm >= 0 ? H5Tcreate(H5T_COMPOUND, H5Tget_size(t)) : H5I_INVALID_HID;
    for (int i = 0; m >= 0 && i < nm; i++) {
        hid_t ft = H5Tget_member_type(t, (unsigned)i);
        hid_t mt = ft >= 0 ? hpc_h5t_mem_type_of(ft) : H5I_INVALID_HID;
        char *name = H5Tget_member_name(t, (unsigned)i);
        int bad = mt < 0 || !name || H5Tinsert(m, name, H5Tget_member_offset(t, (unsigned)i), mt) < 0;
        H5free_memory(name);
        if (mt >= 0)
            H5Tclose(mt);
        if (ft >= 0)
            H5Tclose(ft);
        if (bad) {
            H5Tclose(m);
            m = H5I_INVALID_HID;
        }
    }
    return m;
}

/* h5py's bool: an enum of 1-byte integers, FALSE = 0, TRUE = 1. */
static hid_t bool_mem_type(void)
{
    signed char f = 0, t = 1;
    hid_t m = H5Tenum_create(H5T_NATIVE_INT8);
    if (m >= 0 && (H5Tenum_insert(m, "FALSE", &f) < 0 || H5Tenum_insert(m, "TRUE", &t) < 0)) {
        H5Tclose(m);
        m = H5I_INVALID_HID;
    }
    return m;
}

/* Enum members fix the order of the base type: a new enum of the base's
 * memory type with the same members, when the base already is that type
 * (libhdf5 then copies the elements: pread and the chunk decoder apply).
 * Otherwise (another byte order, padding bits) the base's memory type:
 * h5py reads enums as their numbers, and libhdf5 converting one enum
 * into another turns values that are not members into all ones.  h5py's
 * bool for FALSE/TRUE. */
static hid_t enum_mem_type(hid_t t)
{
    if (hpc_h5t_is_bool(t))
        return bool_mem_type();
    hid_t m = H5I_INVALID_HID, fbase = H5Tget_super(t);
    hid_t base = fbase >= 0 ? hpc_h5t_mem_type_of(fbase) : H5I_INVALID_HID;
    if (base >= 0 && H5Tequal(fbase, base) <= 0) {
        H5Tclose(fbase);
        return base;
    }
    int nm = H5Tget_nmembers(t);
    size_t bs = base >= 0 ? H5Tget_size(base) : 0;
    int ok = base >= 0 && nm >= 0 && bs > 0 && bs <= 16 && (m = H5Tenum_create(base)) >= 0;
    for (int i = 0; ok && i < nm; i++) {
        unsigned char v[16];
        char *name = H5Tget_member_name(t, (unsigned)i);
        ok = name && H5Tget_member_value(t, (unsigned)i, v) >= 0 &&
             H5Tconvert(fbase, base, 1, v, NULL, H5P_DEFAULT) >= 0 && H5Tenum_insert(m, name, v) >= 0;
        H5free_memory(name);
    }
    if (!ok && m >= 0) {
        H5Tclose(m);
        m = H5I_INVALID_HID;
    }
    if (base >= 0)
        H5Tclose(base);
    if (fbase >= 0)
        H5Tclose(fbase);
    return m;
}

/* The memory type of an array type: its base's, repeated. */
static hid_t array_mem_type(hid_t t)
{
    hsize_t adims[H5S_MAX_RANK];
    int nd = H5Tget_array_ndims(t);
    hid_t m = H5I_INVALID_HID, fbase = H5Tget_super(t);
    hid_t base = fbase >= 0 ? hpc_h5t_mem_type_of(fbase) : H5I_INVALID_HID;
    if (base >= 0 && nd >= 1 && nd <= H5S_MAX_RANK && H5Tget_array_dims2(t, adims) >= 0)
        m = H5Tarray_create2(base, (unsigned)nd, adims);
    if (base >= 0)
        H5Tclose(base);
    if (fbase >= 0)
        H5Tclose(fbase);
    return m;
}

hid_t hpc_h5t_mem_type(hid_t t)
{
    char *why = NULL;
    if (hpc_h5t_refusal(t, &why) != HPC_OK) {
        g_free(why);
        return H5I_INVALID_HID;
    }
    return hpc_h5t_mem_type_of(t);
}

/* The memory type for file type t: what h5py reads it into, little-endian,
 * built recursively for compound, array and enum types.  Negative when t
 * has no byte image (variable-length data, references). */
hid_t hpc_h5t_mem_type_of(hid_t t)
{
    switch (H5Tget_class(t)) {
    case H5T_INTEGER:
    case H5T_BITFIELD:
        return int_mem_type(t);
    case H5T_FLOAT:
        return float_mem_type(t);
    case H5T_OPAQUE:
        return H5Tcopy(t);
    case H5T_STRING:
        return str_mem_type(t);
    case H5T_COMPOUND:
        return compound_mem_type(t);
    case H5T_ENUM:
        return enum_mem_type(t);
    case H5T_ARRAY:
        return array_mem_type(t);
    default:
        return H5I_INVALID_HID;
    }
}

/* ---- attributes as text ----------------------------------------------- */

/* Read all values of attribute aid (bytes of them in memory type m) into
 * *buf, a new zeroed buffer the caller frees even on failure. */
static int attr_read(hid_t aid, hid_t m, size_t bytes, void **buf)
{
    *buf = g_malloc0(bytes + 1);
    return m >= 0 && H5Aread(aid, m, *buf) >= 0 ? HPC_OK : HPC_E_IO;
}

/* The attribute's n integers, as decimal numbers. */
static int attr_ints(hid_t aid, hid_t t, size_t n, GString *o)
{
    int sgn = H5Tget_sign(t) == H5T_SGN_2;
    int64_t *v = NULL;
    int rc = attr_read(aid, sgn ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64, n * sizeof *v,
                       (void **)&v);
    for (size_t i = 0; rc == HPC_OK && i < n; i++) {
        if (sgn)
            g_string_append_printf(o, "%s%" PRId64, i ? "," : "", v[i]);
        else
            g_string_append_printf(o, "%s%" PRIu64, i ? "," : "", (uint64_t)v[i]);
    }
    g_free(v);
    return rc;
}

/* The attribute's n reals (single precision when tsize <= 4). */
static int attr_reals(hid_t aid, size_t n, size_t tsize, GString *o)
{
    double *v = NULL;
    int rc = attr_read(aid, H5T_NATIVE_DOUBLE, n * sizeof *v, (void **)&v);
    for (size_t i = 0; rc == HPC_OK && i < n; i++) {
        if (i)
            g_string_append_c(o, ',');
        hpc_json_real_text(o, v[i], tsize <= 4);
    }
    g_free(v);
    return rc;
}

/* The attribute's n variable-length strings, one a line. */
static int attr_vstrings(hid_t aid, hid_t t, hid_t s, size_t n, GString *o)
{
    hid_t m = H5Tcopy(H5T_C_S1);
    char **v = NULL;
    int rc = HPC_E_IO;
    if (m >= 0 && H5Tset_size(m, H5T_VARIABLE) >= 0 && H5Tset_cset(m, H5Tget_cset(t)) >= 0)
        rc = attr_read(aid, m, n * sizeof *v, (void **)&v);
    for (size_t i = 0; rc == HPC_OK && i < n; i++)
        g_string_append_printf(o, "%s%s", i ? "\n" : "", v[i] ? v[i] : "");
    if (rc == HPC_OK)
        H5Dvlen_reclaim(m, s, H5P_DEFAULT, v);
    g_free(v);
    if (m >= 0)
        H5Tclose(m);
    return rc;
}

/* The attribute's n fixed-length strings of tsize bytes, one a line, as
 * h5py gives them: NUL-padded, trailing NULs dropped. */
static int attr_fstrings(hid_t aid, hid_t t, size_t n, size_t tsize, GString *o)
{
    hid_t m = str_mem_type(t);
    char *v = NULL;
    int rc = attr_read(aid, m, n * tsize, (void **)&v);
    for (size_t i = 0; rc == HPC_OK && i < n; i++) {
        const char *e = v + i * tsize;
        size_t l = tsize;
        while (l > 0 && e[l - 1] == '\0')
            l--;
        if (i)
            g_string_append_c(o, '\n');
        g_string_append_len(o, e, (gssize)l);
    }
    g_free(v);
    if (m >= 0)
        H5Tclose(m);
    return rc;
}

/* The attribute's n enum values, by member name ("?" for non-members);
 * h5py's bools (hpc_h5t_is_bool) as it converts them: values that are
 * neither FALSE nor TRUE are TRUE. */
static int attr_enums(hid_t aid, hid_t t, size_t n, GString *o)
{
    if (hpc_h5t_is_bool(t)) {
        hid_t b = hpc_h5t_mem_type_of(t);
        signed char *v = NULL;
        int rc = attr_read(aid, b, n, (void **)&v);
        for (size_t i = 0; rc == HPC_OK && i < n; i++)
            g_string_append_printf(o, "%s%s", i ? "," : "", v[i] ? "TRUE" : "FALSE");
        g_free(v);
        if (b >= 0)
            H5Tclose(b);
        return rc;
    }
    hid_t m = H5Tget_native_type(t, H5T_DIR_ASCEND);
    size_t ms = m >= 0 ? H5Tget_size(m) : 0;
    char *v = NULL;
    int rc = ms ? attr_read(aid, m, n * ms, (void **)&v) : HPC_E_IO;
    for (size_t i = 0; rc == HPC_OK && i < n; i++) {
        char name[256];
        if (i)
            g_string_append_c(o, ',');
        if (H5Tenum_nameof(m, v + i * ms, name, sizeof name) >= 0)
            g_string_append(o, name);
        else
            g_string_append(o, "?");
    }
    g_free(v);
    if (m >= 0)
        H5Tclose(m);
    return rc;
}

/* The attribute's n values of another type, as hex bytes of their memory
 * type; "(no text form)" for types without one. */
static int attr_bytes(hid_t aid, hid_t t, size_t n, GString *o)
{
    hid_t m = hpc_h5t_mem_type(t);
    size_t ms = m >= 0 ? H5Tget_size(m) : 0;
    unsigned char *v = NULL;
    int rc = HPC_OK;
    if (ms == 0)
        g_string_append(o, "(no text form)");
    else
        rc = attr_read(aid, m, n * ms, (void **)&v);
    for (size_t i = 0; v && rc == HPC_OK && i < n; i++) {
        g_string_append(o, i ? ",0x" : "0x");
        for (size_t b = 0; b < ms; b++)
            g_string_append_printf(o, "%02x", v[i * ms + b]);
    }
    g_free(v);
    if (m >= 0)
        H5Tclose(m);
    return rc;
}

/* The attribute's n values of type t (of tsize bytes) as text. */
static int attr_values(hid_t aid, hid_t t, hid_t s, size_t n, size_t tsize, GString *o)
{
    H5T_class_t cls = H5Tget_class(t);
    if (cls == H5T_INTEGER)
        return attr_ints(aid, t, n, o);
    size_t npf = tsize;
    if (cls == H5T_FLOAT)          /* single precision where h5py has a <f2 or <f4 */
        return attr_reals(aid, n, hpc_h5t_np_float(t, &npf) == HPC_OK ? npf : tsize, o);
    if (cls == H5T_STRING && H5Tis_variable_str(t) > 0)
        return attr_vstrings(aid, t, s, n, o);
    if (cls == H5T_STRING)
        return attr_fstrings(aid, t, n, tsize, o);
    if (cls == H5T_ENUM)
        return attr_enums(aid, t, n, o);
    return attr_bytes(aid, t, n, o);
}

/* Render attribute aid as text: numbers joined by ',', strings one per
 * line, enums by member name, other types as hex.  limit: the file size,
 * which the attribute's raw data must fit in. */
int hpc_h5t_attr_text(hid_t aid, uint64_t limit, GString *o)
{
    hid_t t = H5Aget_type(aid), s = H5Aget_space(aid);
    int rc = HPC_E_IO;
    hssize_t np = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    if (t < 0 || np < 0)
        goto out;
    rc = HPC_OK;
    if ((uint64_t)np > MAX_ATTR_ELEMS) {
        g_string_append_printf(o, "(%" PRId64 " elements not shown)", (int64_t)np);
        goto out;
    }
    size_t n = (size_t)np, tsize = H5Tget_size(t);
    uint64_t raw;
    if (tsize == 0 || !hpc_mul_u64((uint64_t)n, (uint64_t)tsize, &raw) || raw > limit) {
        g_string_append_printf(o, "(%zu elements of %zu bytes: larger than the file)", n, tsize);
        goto out;
    }
    rc = attr_values(aid, t, s, n, tsize, o);
out:
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    return rc;
}

/* Mark in cover the bytes of type t at base that hold a value. */
static void cover_bytes(hid_t t, size_t base, unsigned char *cover)
{
    size_t size = H5Tget_size(t);
    H5T_class_t cls = H5Tget_class(t);
    if (cls == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            size_t off = H5Tget_member_offset(t, (unsigned)i);
            if (m >= 0 && off + H5Tget_size(m) <= size)
                cover_bytes(m, base + off, cover);
            if (m >= 0)
                H5Tclose(m);
        }
    } else if (cls == H5T_ARRAY) {
        /* one element of the base type, then copies of its pattern */
        hid_t b = H5Tget_super(t);
        size_t bs = b >= 0 ? H5Tget_size(b) : 0;
        if (bs > 0 && bs <= size) {
            cover_bytes(b, base, cover);
            for (size_t o = bs; o + bs <= size; o += bs)
                memcpy(cover + base + o, cover + base, bs);
        }
        if (b >= 0)
            H5Tclose(b);
    } else {
        memset(cover + base, 1, size);
    }
}

GArray *hpc_h5t_padding(hid_t m, size_t esize)
{
    if (esize == 0 || H5Tdetect_class(m, H5T_COMPOUND) <= 0 || H5Tget_size(m) != esize)
        return NULL;
    unsigned char *cover = g_try_malloc0(esize);
    if (!cover)
        return NULL;
    cover_bytes(m, 0, cover);
    GArray *pads = g_array_new(FALSE, FALSE, sizeof(hpc_h5t_pad));
    for (size_t i = 0; i < esize;) {
        size_t j = i;
        while (j < esize && !cover[j])
            j++;
        if (j > i) {
            hpc_h5t_pad p = { i, j - i };
            g_array_append_val(pads, p);
        }
        i = j + 1;
    }
    g_free(cover);
    if (pads->len == 0) {
        g_array_unref(pads);
        return NULL;
    }
    return pads;
}
