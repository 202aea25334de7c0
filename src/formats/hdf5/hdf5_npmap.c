/* hdf5_npmap.c - which NumPy type h5py gives an HDF5 file type, by h5py's
 * own rules, and the types it gives none (or a layout other than the
 * file's), whose reads therefore fail with EIO and a reason in .info:
 *
 *   - an enum of exactly FALSE = 0 and TRUE = 1 is NumPy's bool, whatever
 *     its base integer (h5py reads it into a 1-byte enum);
 *   - a compound of two members "r" then "i" that are floats of the same
 *     NumPy float and byte order is complex (r, i adjacent, wherever the
 *     file has them); of 2-byte floats NumPy has no complex: refused;
 *   - a float is the first NumPy float (f2, f4, f8, the x87 long double)
 *     at least as large as the file's type whose mantissa and exponent
 *     range hold the file's (its bias included);
 *   - integers are NumPy's of the same size: 1, 2, 4 or 8 bytes only;
 *   - bit fields are read only when they are one of HDF5's standard ones
 *     (8 to 64 bits, no padding): h5py converts nothing else;
 *   - HDF5 time types have no NumPy type;
 *   - a compound whose member is served in more bytes than the file gives
 *     it (a 3-byte float read as f4) overlaps the next member: h5py's
 *     bytes for it do not follow its own dtype.
 *
 * The memory type a dataset is served in (hpc_h5t_mem_type) is built
 * here too, by the same rules. */
#include "hdf5_type.h"
#include "hpc_error.h"

#include <string.h>

#define MAX_VALUE_BYTES 64          /* enum values compared at most this wide */

enum { NPTAG_NONE, NPTAG_ASIS, NPTAG_SWAP, NPTAG_BAD };

/* NumPy's floats as h5py weighs them: itemsize, mantissa bits (the x87
 * long double's explicit leading bit counted, as h5py does), and the
 * largest and smallest exponent (numpy.finfo's maxexp and minexp). */
static const struct np_float {
    size_t size, mant;
    int64_t maxexp, minexp;
} np_floats[] = {
    { 2, 10, 16, -14 },
    { 4, 23, 128, -126 },
    { 8, 52, 1024, -1022 },
    { 16, 64, 16384, -16382 },
};

int hpc_h5t_np_float(hid_t t, size_t *size)
{
    size_t spos, epos, esize, mpos, msize, tsize = H5Tget_size(t), ebias = H5Tget_ebias(t);
    *size = 0;
    if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0 || tsize == 0)
        return HPC_E_CORRUPT;
    if (H5Tget_order(t) == H5T_ORDER_VAX) {
        /* h5py has no byte order for VAX floats; libhdf5 converts them
         * to the IEEE float of their size */
        *size = tsize == 4 || tsize == 8 ? tsize : 0;
        return *size ? HPC_OK : HPC_E_UNSUPPORTED;
    }
    if (esize > 62 || ebias > (size_t)INT64_MAX / 2)
        return HPC_E_UNSUPPORTED;
    int64_t top = ((int64_t)1 << esize) - (int64_t)ebias - 1, bottom = 1 - (int64_t)ebias;
    for (size_t k = 0; k < G_N_ELEMENTS(np_floats); k++) {
        const struct np_float *f = &np_floats[k];
        if (f->size >= tsize && msize <= f->mant && top <= f->maxexp && bottom >= f->minexp) {
            *size = f->size;
            return HPC_OK;
        }
    }
    return HPC_E_UNSUPPORTED;
}

/* The value of member i of enum t (base type base) as a long long;
 * FALSE when it cannot be converted. */
static gboolean enum_value(hid_t t, hid_t base, unsigned i, long long *v)
{
    unsigned char buf[MAX_VALUE_BYTES] = { 0 };
    size_t bs = H5Tget_size(base);
    if (bs == 0 || bs > sizeof buf || H5Tget_member_value(t, i, buf) < 0 ||
        H5Tconvert(base, H5T_NATIVE_LLONG, 1, buf, NULL, H5P_DEFAULT) < 0)
        return FALSE;
    memcpy(v, buf, sizeof *v);
    return TRUE;
}

static int type_has_var(hid_t t, int depth)
{
    H5T_class_t c = H5Tget_class(t);
    int n = c == H5T_COMPOUND ? H5Tget_nmembers(t) : 0, v = 0;
    if (c == H5T_VLEN || c == H5T_REFERENCE || (c == H5T_STRING && H5Tis_variable_str(t) > 0))
        return 1;
    if (depth > HPC_H5T_MAX_DEPTH)
        return 0;
    for (int i = 0; !v && i < n; i++) {
        hid_t m = H5Tget_member_type(t, (unsigned)i);
        v = m >= 0 && type_has_var(m, depth + 1);
        if (m >= 0)
            H5Tclose(m);
    }
    if (c == H5T_ARRAY) {
        hid_t b = H5Tget_super(t);
        v = b >= 0 && type_has_var(b, depth + 1);
        if (b >= 0)
            H5Tclose(b);
    }
    return v;
}

int hpc_h5t_has_var(hid_t t)
{
    return type_has_var(t, 0);
}

int hpc_h5t_is_bool(hid_t t)
{
    if (H5Tget_class(t) != H5T_ENUM || H5Tget_nmembers(t) != 2)
        return 0;
    hid_t base = H5Tget_super(t);
    unsigned seen = 0;
    for (unsigned i = 0; base >= 0 && i < 2; i++) {
        char *name = H5Tget_member_name(t, i);
        long long v = -1;
        if (name && enum_value(t, base, i, &v))
            seen |= strcmp(name, "FALSE") == 0 && v == 0 ? 1u : strcmp(name, "TRUE") == 0 && v == 1 ? 2u : 0u;
        H5free_memory(name);
    }
    if (base >= 0)
        H5Tclose(base);
    return seen == 3;
}

/* The NumPy float size and byte order of member i of compound t, or 0. */
static size_t member_float(hid_t t, unsigned i, H5T_order_t *order)
{
    hid_t mt = H5Tget_member_type(t, i);
    size_t size = 0;
    if (mt >= 0 && H5Tget_class(mt) == H5T_FLOAT && hpc_h5t_np_float(mt, &size) == HPC_OK)
        *order = H5Tget_order(mt);
    if (mt >= 0)
        H5Tclose(mt);
    return size;
}

int hpc_h5t_is_complex(hid_t t, size_t *part)
{
    *part = 0;
    if (H5Tget_class(t) != H5T_COMPOUND || H5Tget_nmembers(t) != 2)
        return 0;
    char *r = H5Tget_member_name(t, 0), *i = H5Tget_member_name(t, 1);
    int named = r && i && strcmp(r, "r") == 0 && strcmp(i, "i") == 0;
    H5free_memory(r);
    H5free_memory(i);
    H5T_order_t o0 = H5T_ORDER_ERROR, o1 = H5T_ORDER_ERROR;
    size_t s0 = named ? member_float(t, 0, &o0) : 0, s1 = named ? member_float(t, 1, &o1) : 0;
    if (s0 == 0 || s0 != s1 || o0 != o1)
        return 0;
    *part = s0;
    return 1;
}

/* Whether t, the dtype of an opaque tag, names size bytes that are served
 * as stored: little-endian or byte-order free, the opaque's item size, and
 * nothing but a datetime unit ("[s]", "[10us]") after the size. */
static gboolean np_tag_ok(const char *t, size_t size)
{
    if ((t[0] != '<' && t[0] != '|') || !t[1] || !strchr("biufcSVMmU", t[1]) || !g_ascii_isdigit(t[2]))
        return FALSE;
    char *end = NULL;
    guint64 n = g_ascii_strtoull(t + 2, &end, 10);
    if ((t[1] == 'U' ? n * 4 : n) != size)
        return FALSE;
    size_t len = strlen(end);
    if (len == 0)
        return TRUE;
    return (t[1] == 'M' || t[1] == 'm') && len > 2 && end[0] == '[' && end[len - 1] == ']' &&
           strspn(end + 1, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == len - 2;
}

/* What the tag of an opaque type of size bytes says: h5py's "NUMPY:<dtype>"
 * of a dtype served as stored, of a big-endian number (integer, float,
 * complex, datetime) whose elements (or parts) are served swapped, of another dtype (which
 * the mount does not serve), or no such tag. */
static int np_tag_kind(const char *tag, size_t size)
{
    if (!g_str_has_prefix(tag, "NUMPY:"))
        return NPTAG_NONE;
    const char *t = tag + 6;
    if (t[0] == '>' && t[1] && ((strchr("iufMm", t[1]) && (size == 2 || size == 4 || size == 8)) ||
                                (t[1] == 'c' && (size == 8 || size == 16)))) {
        char *le = g_strdup(t);
        le[0] = '<';
        gboolean ok = np_tag_ok(le, size);
        g_free(le);
        return ok ? NPTAG_SWAP : NPTAG_BAD;
    }
    return np_tag_ok(t, size) ? NPTAG_ASIS : NPTAG_BAD;
}

size_t hpc_h5t_opaque_swap(hid_t t)
{
    if (H5Tget_class(t) != H5T_OPAQUE)
        return 0;
    char *tag = H5Tget_tag(t);
    size_t size = H5Tget_size(t);
    int kind = tag ? np_tag_kind(tag, size) : NPTAG_NONE;
    /* a complex number: its real and imaginary parts each */
    size_t unit = kind != NPTAG_SWAP ? 0 : tag[7] == 'c' ? size / 2 : size;
    H5free_memory(tag);
    return unit;
}

/* An opaque type: refused when h5py's tag names a dtype the mount does
 * not serve, or a big-endian one inside a compound or array (elements are
 * swapped whole, not members). */
static int opaque_refusal(hid_t t, GString *why, int depth)
{
    char *tag = H5Tget_tag(t);
    int kind = tag ? np_tag_kind(tag, H5Tget_size(t)) : NPTAG_NONE;
    if (kind == NPTAG_BAD)
        g_string_append_printf(why, "an opaque type tagged '%s' of %zu bytes: the mount serves "
                               "no such NumPy dtype", tag, H5Tget_size(t));
    else if (kind == NPTAG_SWAP && depth > 0)
        g_string_append_printf(why, "an opaque type tagged '%s' (big-endian) inside a compound "
                               "or array", tag);
    H5free_memory(tag);
    return kind == NPTAG_BAD || (kind == NPTAG_SWAP && depth > 0) ? HPC_E_UNSUPPORTED : HPC_OK;
}

static int refusal_in(hid_t t, GString *why, int depth);

/* The offset at which the member after member i of compound t (by offset)
 * starts, or the element's size. */
static size_t member_end(hid_t t, int nm, int i)
{
    size_t off = H5Tget_member_offset(t, (unsigned)i), end = H5Tget_size(t);
    for (int k = 0; k < nm; k++) {
        size_t o = H5Tget_member_offset(t, (unsigned)k);
        if (k != i && o > off && o < end)
            end = o;
    }
    return end;
}

/* Member i of compound t: refused itself, or served in more bytes than
 * lie before the next member. */
static int member_refusal(hid_t t, int nm, int i, GString *why, int depth)
{
    hid_t ft = H5Tget_member_type(t, (unsigned)i), mt = H5I_INVALID_HID;
    char *name = H5Tget_member_name(t, (unsigned)i);
    size_t off = H5Tget_member_offset(t, (unsigned)i), room = member_end(t, nm, i) - off;
    gsize at = why->len;
    int rc = ft < 0 ? HPC_E_CORRUPT : refusal_in(ft, why, depth + 1);
    if (rc == HPC_OK && (mt = hpc_h5t_mem_type_of(ft)) >= 0 && H5Tget_size(mt) > room) {
        g_string_append_printf(why, "%zu bytes served in %zu, over what follows it: h5py's "
                               "bytes for it do not follow its dtype", H5Tget_size(ft),
                               H5Tget_size(mt));
        rc = HPC_E_UNSUPPORTED;
    }
    if (rc == HPC_E_UNSUPPORTED) {
        char *pre = g_strdup_printf("member '%s': ", name ? name : "?");
        g_string_insert(why, (gssize)at, pre);
        g_free(pre);
    }
    H5free_memory(name);
    if (mt >= 0)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    return rc;
}

static int compound_refusal(hid_t t, GString *why, int depth)
{
    size_t part;
    int n = H5Tget_nmembers(t);
    for (int i = 0; i < n; i++) {
        char *name = H5Tget_member_name(t, (unsigned)i);
        int utf8 = name && g_utf8_validate(name, -1, NULL);
        if (!utf8)
            g_string_append(why, "a compound member name that is not UTF-8 (h5py cannot read it)");
        H5free_memory(name);
        if (!utf8)
            return HPC_E_UNSUPPORTED;
    }
    if (hpc_h5t_is_complex(t, &part)) {
        if (part != 2)
            return HPC_OK;
        g_string_append(why, "a complex of two 2-byte floats: NumPy has no complex type for it");
        return HPC_E_UNSUPPORTED;
    }
    int nm = H5Tget_nmembers(t), rc = nm < 0 ? HPC_E_CORRUPT : HPC_OK;
    for (int i = 0; rc == HPC_OK && i < nm; i++)
        rc = member_refusal(t, nm, i, why, depth);
    return rc;
}

/* A bit field h5py reads: HDF5's standard ones of 8 to 64 bits, no
 * padding, but not the 8-bit big-endian one: h5py reads it as NumPy's u1,
 * which has no byte order, and libhdf5 has no conversion from it to a
 * little-endian byte (ds[()] and attribute reads raise; an array of them
 * would read, but is refused here too: an error, never a wrong byte). */
static int std_bitfield(hid_t t)
{
    const hid_t std[] = { H5T_STD_B8LE, H5T_STD_B16LE, H5T_STD_B32LE, H5T_STD_B64LE,
                          H5T_STD_B16BE, H5T_STD_B32BE, H5T_STD_B64BE };
    for (size_t i = 0; i < G_N_ELEMENTS(std); i++)
        if (H5Tequal(t, std[i]) > 0)
            return 1;
    return 0;
}

/* Atomic types: integers, bit fields, floats, strings, time. */
static int atomic_refusal(hid_t t, H5T_class_t cls, GString *why)
{
    size_t size = H5Tget_size(t), fsize, spos, epos, esize = 0, mpos, msize = 0;
    gsize at = why->len;
    if (cls == H5T_INTEGER && size != 1 && size != 2 && size != 4 && size != 8) {
        g_string_append_printf(why, "an integer of %zu bytes: NumPy has no such integer", size);
    } else if (cls == H5T_BITFIELD && !std_bitfield(t)) {
        g_string_append_printf(why, "a bit field of %zu bits at bit %d of %zu bytes (or with "
                               "padding bits set): h5py has no conversion for it",
                               H5Tget_precision(t), H5Tget_offset(t), size);
    } else if (cls == H5T_FLOAT && hpc_h5t_np_float(t, &fsize) != HPC_OK) {
        H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize);
        g_string_append_printf(why, "a float of %zu bytes (%zu exponent bits of bias %zu, %zu "
                               "mantissa bits): no NumPy float holds it", size, esize,
                               H5Tget_ebias(t), msize);
    } else if (cls == H5T_TIME) {
        g_string_append(why, "an HDF5 time type: h5py has no NumPy type for it");
    } else if (cls == H5T_STRING && H5Tget_cset(t) != H5T_CSET_ASCII &&
               H5Tget_cset(t) != H5T_CSET_UTF8) {
        g_string_append_printf(why, "strings of character set %d: h5py knows ASCII and UTF-8 only",
                               (int)H5Tget_cset(t));
    }
    return why->len > at ? HPC_E_UNSUPPORTED : HPC_OK;
}

/* The super type (enum base, array element, sequence element) of t. */
static int super_refusal(hid_t t, GString *why, int depth)
{
    hid_t base = H5Tget_super(t);
    int rc = base < 0 ? HPC_E_CORRUPT : refusal_in(base, why, depth + 1);
    if (base >= 0)
        H5Tclose(base);
    return rc;
}

static int refusal_in(hid_t t, GString *why, int depth)
{
    if (depth > HPC_H5T_MAX_DEPTH) {
        g_string_append(why, "types nested too deep");
        return HPC_E_UNSUPPORTED;
    }
    H5T_class_t cls = H5Tget_class(t);
    switch (cls) {
    case H5T_INTEGER:
    case H5T_BITFIELD:
    case H5T_FLOAT:
    case H5T_TIME:
    case H5T_STRING:
        return atomic_refusal(t, cls, why);
    case H5T_OPAQUE:
        return opaque_refusal(t, why, depth);
    case H5T_REFERENCE:
        return HPC_OK;
    case H5T_ENUM:
        return hpc_h5t_is_bool(t) ? HPC_OK : super_refusal(t, why, depth);
    case H5T_COMPOUND:
        return compound_refusal(t, why, depth);
    case H5T_ARRAY:
    case H5T_VLEN:
        return super_refusal(t, why, depth);
    default:
        g_string_append_printf(why, "a type of class %d: h5py has no NumPy type for it", (int)cls);
        return HPC_E_UNSUPPORTED;
    }
}

int hpc_h5t_refusal(hid_t t, char **why)
{
    GString *g = g_string_new(NULL);
    int rc = refusal_in(t, g, 0);
    if (rc == HPC_E_CORRUPT && g->len == 0)
        g_string_append(g, "libhdf5 cannot describe the type");
    *why = rc == HPC_OK ? NULL : g_strdup(g->str);
    g_string_free(g, TRUE);
    return rc == HPC_OK ? HPC_OK : HPC_E_UNSUPPORTED;
}

/* ---- NumPy's names of the types (user.dtype) -------------------------- */

/* s as a Python string literal: quotes and backslashes escaped, control
 * characters as \xNN (a newline in a member name stays one line). */
static void append_quoted(GString *o, const char *s)
{
    g_string_append_c(o, '\'');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f)
            g_string_append_printf(o, "\\x%02x", c);
        else if (c == '\'' || c == '\\')
            g_string_append_printf(o, "\\%c", c);
        else
            g_string_append_c(o, (char)c);
    }
    g_string_append_c(o, '\'');
}

/* h5py gives an opaque type tagged "NUMPY:<dtype>" that dtype: append
 * the dtype served (little-endian) when the tag is one the mount serves. */
static gboolean np_opaque_tag(hid_t m, size_t size, GString *o)
{
    char *tag = H5Tget_tag(m);
    int kind = tag ? np_tag_kind(tag, size) : NPTAG_NONE;
    if (kind == NPTAG_ASIS || kind == NPTAG_SWAP)
        g_string_append_printf(o, "%s%s", kind == NPTAG_SWAP ? "<" : "", tag + 6 + (kind == NPTAG_SWAP));
    H5free_memory(tag);
    return kind == NPTAG_ASIS || kind == NPTAG_SWAP;
}

/* NumPy's dtype string of an atomic file type t of memory type m ("<f8",
 * "|S10", "|b1"). */
static void np_simple(hid_t t, hid_t m, GString *o)
{
    size_t size = H5Tget_size(m);
    H5T_class_t cls = H5Tget_class(m);
    hid_t tb, mb;
    switch (cls) {
    case H5T_INTEGER:
    case H5T_BITFIELD:
        g_string_append_printf(o, "%c%c%zu", size == 1 ? '|' : '<',
                               cls == H5T_INTEGER && H5Tget_sign(m) == H5T_SGN_2 ? 'i' : 'u', size);
        break;
    case H5T_FLOAT:
        g_string_append_printf(o, "<f%zu", size);
        break;
    case H5T_STRING:
        g_string_append_printf(o, "|S%zu", size);
        break;
    case H5T_ENUM:                 /* (an enum served as its number is an integer here) */
        if (hpc_h5t_is_bool(t)) {
            g_string_append(o, "|b1");
            break;
        }
        tb = H5Tget_super(t);
        mb = H5Tget_super(m);
        if (tb >= 0 && mb >= 0)
            np_simple(tb, mb, o);
        if (tb >= 0)
            H5Tclose(tb);
        if (mb >= 0)
            H5Tclose(mb);
        break;
    default:
        if (cls != H5T_OPAQUE || !np_opaque_tag(m, size, o))
            g_string_append_printf(o, "|V%zu", size);
        break;
    }
}

static void np_literal(hid_t t, hid_t m, GString *o, int depth);

/* (base, (d0, d1, ...)) of array type t (memory type m) */
static void np_array(hid_t t, hid_t m, GString *o, int depth)
{
    hsize_t adims[H5S_MAX_RANK];
    int nd = H5Tget_array_ndims(m);
    hid_t tb = H5Tget_super(t), mb = H5Tget_super(m);
    g_string_append_c(o, '(');
    if (tb >= 0 && mb >= 0)
        np_literal(tb, mb, o, depth + 1);
    g_string_append(o, ", (");
    if (nd > 0 && nd <= H5S_MAX_RANK && H5Tget_array_dims2(m, adims) >= 0)
        for (int i = 0; i < nd; i++)
            g_string_append_printf(o, "%s%" G_GUINT64_FORMAT "%s", i ? " " : "", (guint64)adims[i],
                                   nd == 1 || i + 1 < nd ? "," : "");
    g_string_append(o, "))");
    if (tb >= 0)
        H5Tclose(tb);
    if (mb >= 0)
        H5Tclose(mb);
}

/* Member i of compound t (file type, in h5py's order) and the member of
 * the same name in its memory type m: *ft and the returned type (close
 * both), *name (H5free_memory it). */
static hid_t twin_member(hid_t t, hid_t m, unsigned i, hid_t *ft, char **name)
{
    *ft = H5Tget_member_type(t, i);
    *name = H5Tget_member_name(t, i);
    int k = *name ? H5Tget_member_index(m, *name) : -1;
    return k >= 0 ? H5Tget_member_type(m, (unsigned)k) : H5I_INVALID_HID;
}

/* Do the members of compound t, in h5py's order and served in memory
 * type m, follow each other without gaps? */
static gboolean is_packed(hid_t t, hid_t m)
{
    int nm = H5Tget_nmembers(t);
    size_t packed = 0;
    gboolean ok = TRUE;
    for (int i = 0; i < nm; i++) {
        hid_t ft;
        char *name;
        hid_t mt = twin_member(t, m, (unsigned)i, &ft, &name);
        ok = ok && mt >= 0 && H5Tget_member_offset(t, (unsigned)i) == packed;
        packed += mt >= 0 ? H5Tget_size(mt) : 0;
        H5free_memory(name);
        if (mt >= 0)
            H5Tclose(mt);
        if (ft >= 0)
            H5Tclose(ft);
    }
    return ok && packed == H5Tget_size(m);
}

/* One member of a packed compound as NumPy's dtype.descr has it:
 * ('name', 'type') or ('name', base, shape) for an array member. */
static void np_member(hid_t ft, hid_t mt, const char *name, GString *o, int depth)
{
    g_string_append_c(o, '(');
    append_quoted(o, name);
    g_string_append(o, ", ");
    if (H5Tget_class(mt) != H5T_ARRAY) {
        np_literal(ft, mt, o, depth + 1);
    } else {
        GString *a = g_string_new(NULL);
        np_array(ft, mt, a, depth + 1);
        /* (base, shape) -> base, shape */
        g_string_append_len(o, a->str + 1, (gssize)a->len - 2);
        g_string_free(a, TRUE);
    }
    g_string_append_c(o, ')');
}

/* Compound t (memory type m): the list form of dtype.descr when packed,
 * else the dict form with names, formats, offsets and itemsize. */
static void np_compound(hid_t t, hid_t m, GString *o, int depth)
{
    int nm = H5Tget_nmembers(t);
    /* object members (pointers in m: sequences, references, variable
     * strings) have NumPy's size, not m's: listed in order, NumPy places
     * them */
    gboolean packed = is_packed(t, m) || hpc_h5t_has_var(m);
    GString *names = g_string_new(NULL), *formats = g_string_new(NULL), *offsets = g_string_new(NULL);
    for (int i = 0; i < nm; i++) {
        hid_t ft;
        char *name;
        hid_t mt = twin_member(t, m, (unsigned)i, &ft, &name);
        const char *sep = i ? ", " : "";
        g_string_append(names, sep);
        g_string_append(formats, sep);
        if (packed && mt >= 0 && ft >= 0) {
            np_member(ft, mt, name ? name : "", names, depth);
        } else {
            append_quoted(names, name ? name : "");
            if (mt >= 0 && ft >= 0)
                np_literal(ft, mt, formats, depth + 1);
            g_string_append_printf(offsets, "%s%zu", sep, H5Tget_member_offset(t, (unsigned)i));
        }
        H5free_memory(name);
        if (mt >= 0)
            H5Tclose(mt);
        if (ft >= 0)
            H5Tclose(ft);
    }
    if (packed)
        g_string_append_printf(o, "[%s]", names->str);
    else
        g_string_append_printf(o, "{'names': [%s], 'formats': [%s], 'offsets': [%s], 'itemsize': %zu}",
                               names->str, formats->str, offsets->str, H5Tget_size(m));
    g_string_free(names, TRUE);
    g_string_free(formats, TRUE);
    g_string_free(offsets, TRUE);
}

/* File type t (memory type m) as a Python literal that numpy.dtype()
 * accepts: a quoted dtype string, (base, shape) for arrays, a list or dict
 * for compounds. */
static void np_literal(hid_t t, hid_t m, GString *o, int depth)
{
    size_t part;
    if (depth > HPC_H5T_MAX_DEPTH) {
        g_string_append(o, "'|V0'");
    } else if (H5Tget_class(m) == H5T_VLEN || H5Tget_class(m) == H5T_REFERENCE ||
               (H5Tget_class(m) == H5T_STRING && H5Tis_variable_str(m) > 0)) {
        g_string_append(o, "'O'");  /* an object member (a directory's parts) */
    } else if (H5Tget_class(t) == H5T_ARRAY) {
        np_array(t, m, o, depth);
    } else if (hpc_h5t_is_complex(t, &part)) {
        g_string_append_printf(o, "'<c%zu'", 2 * part);
    } else if (H5Tget_class(t) == H5T_COMPOUND) {
        np_compound(t, m, o, depth);
    } else {
        GString *g = g_string_new(NULL);
        np_simple(t, m, g);
        append_quoted(o, g->str);
        g_string_free(g, TRUE);
    }
}

void hpc_h5t_np_dtype(hid_t t, hid_t m, GString *o)
{
    gsize at = o->len;
    np_literal(t, m, o, 0);
    /* a simple type is its dtype string without the quotes */
    if (o->str[at] == '\'') {
        g_string_erase(o, at, 1);
        g_string_truncate(o, o->len - 1);
    }
}

/* ---- the memory types h5py reads into ------------------------------------ */

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
