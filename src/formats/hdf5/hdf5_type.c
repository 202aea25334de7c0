/* hdf5_type.c - HDF5 datatypes: attribute values rendered as text, and
 * the padding of a memory type.  The memory types and NumPy names are
 * hdf5_npmap.c's, which this file stands on. */
#include "hdf5_type.h"
#include "hpc_bytes.h"
#include "hpc_error.h"
#include "hpc_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

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

/* Strings s[i] of len[i] bytes as the text of an attribute: joined by
 * '\n', or, where one holds '\n', each ended with NUL (as the text of a
 * dataset of strings: docs/hdf5.md), so that a value ends with NUL only
 * then.  Strings holding NUL (fixed-length ones may) have no such text
 * when one of them holds '\n' too: HPC_E_UNSUPPORTED (attr_fstrings
 * serves their bytes). */
static int put_strings(const char *const *s, const size_t *len, size_t n, GString *o)
{
    int nl = 0, nul = 0;
    for (size_t i = 0; i < n; i++) {
        nl |= memchr(s[i], '\n', len[i]) != NULL;
        nul |= memchr(s[i], '\0', len[i]) != NULL;
    }
    if (nl && nul)
        return HPC_E_UNSUPPORTED;
    for (size_t i = 0; i < n; i++) {
        if (i && !nl)
            g_string_append_c(o, '\n');
        g_string_append_len(o, s[i], (gssize)len[i]);
        if (nl)
            g_string_append_c(o, '\0');
    }
    return HPC_OK;
}

/* The attribute's n variable-length strings (put_strings); a null one
 * is empty, as h5py gives it. */
static int attr_vstrings(hid_t aid, hid_t t, hid_t sp, size_t n, GString *o)
{
    hid_t m = H5Tcopy(H5T_C_S1);
    char **v = NULL;
    int rc = HPC_E_IO;
    if (m >= 0 && H5Tset_size(m, H5T_VARIABLE) >= 0 && H5Tset_cset(m, H5Tget_cset(t)) >= 0)
        rc = attr_read(aid, m, n * sizeof *v, (void **)&v);
    const char **s = g_new0(const char *, n + 1);
    size_t *len = g_new0(size_t, n + 1);
    for (size_t i = 0; rc == HPC_OK && i < n; i++) {
        s[i] = v[i] ? v[i] : "";
        len[i] = strlen(s[i]);
    }
    if (rc == HPC_OK) {
        rc = put_strings(s, len, n, o);
        H5Dvlen_reclaim(m, sp, H5P_DEFAULT, v);
    }
    g_free(s);
    g_free(len);
    g_free(v);
    if (m >= 0)
        H5Tclose(m);
    return rc;
}

/* The attribute's n fixed-length strings of tsize bytes (put_strings), as
 * h5py gives them: NUL-padded, trailing NULs dropped.  Where they have no
 * text (NUL and a newline), their NUL-padded bytes, h5py's S<tsize>
 * elements, and *esize = tsize. */
static int attr_fstrings(hid_t aid, hid_t t, size_t n, size_t tsize, GString *o,
                         size_t *esize)
{
    hid_t m = hpc_h5t_mem_type_of(t);   /* a fixed string: NUL-padded */
    char *v = NULL;
    int rc = attr_read(aid, m, n * tsize, (void **)&v);
    const char **s = g_new0(const char *, n + 1);
    size_t *len = g_new0(size_t, n + 1);
    for (size_t i = 0; rc == HPC_OK && i < n; i++) {
        s[i] = v + i * tsize;
        len[i] = tsize;
        while (len[i] > 0 && s[i][len[i] - 1] == '\0')
            len[i]--;
    }
    if (rc == HPC_OK)
        rc = put_strings(s, len, n, o);
    if (rc == HPC_E_UNSUPPORTED) {
        g_string_append_len(o, v, (gssize)(n * tsize));
        *esize = tsize;
        rc = HPC_OK;
    }
    g_free(s);
    g_free(len);
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

void hpc_h5t_hex_text(GString *o, const unsigned char *v, size_t n, size_t es)
{
    for (size_t i = 0; i < n; i++) {
        g_string_append(o, i ? ",0x" : "0x");
        for (size_t b = 0; b < es; b++)
            g_string_append_printf(o, "%02x", v[i * es + b]);
    }
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
    if (v && rc == HPC_OK)
        hpc_h5t_hex_text(o, v, n, ms);
    g_free(v);
    if (m >= 0)
        H5Tclose(m);
    return rc;
}

/* The attribute's n values of type t (of tsize bytes) as text, or as
 * bytes of *esize-byte strings (attr_fstrings). */
static int attr_values(hid_t aid, hid_t t, hid_t s, size_t n, size_t tsize, GString *o,
                       size_t *esize)
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
        return attr_fstrings(aid, t, n, tsize, o, esize);
    if (cls == H5T_ENUM)
        return attr_enums(aid, t, n, o);
    return attr_bytes(aid, t, n, o);
}

/* dtype: the NumPy dtype of attribute values of type t that are not text:
 * |S<esize> for strings' bytes, user.dtype's for the hex of attr_bytes. */
static void attr_dtype(hid_t t, size_t esize, GString *dtype)
{
    H5T_class_t cls = H5Tget_class(t);
    if (esize) {
        g_string_printf(dtype, "|S%zu", esize);
        return;
    }
    if (cls == H5T_INTEGER || cls == H5T_FLOAT || cls == H5T_STRING || cls == H5T_ENUM)
        return;
    hid_t m = hpc_h5t_mem_type(t);
    if (m >= 0) {       /* the memory type attr_bytes read the hex in */
        hpc_h5t_np_dtype(t, m, dtype);
        H5Tclose(m);
    }
}

/* Render attribute aid as text: numbers joined by ',', strings one per
 * line (or NUL-ended: put_strings), enums by member name, other types as
 * hex; fixed-length strings without a text form as their bytes.  limit:
 * the file size, which the attribute's raw data must fit in. */
int hpc_h5t_attr_text(hid_t aid, uint64_t limit, GString *o, GString *dtype, size_t *esize)
{
    hid_t t = H5Aget_type(aid), s = H5Aget_space(aid);
    int rc = HPC_E_IO;
    *esize = 0;
    g_string_truncate(dtype, 0);
    hssize_t np = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    if (t < 0 || np < 0)
        goto out;
    rc = HPC_OK;
    if ((uint64_t)np > HPC_H5T_MAX_ATTR_ELEMS) {
        g_string_append_printf(o, "(%" PRId64 " elements not shown)", (int64_t)np);
        goto out;
    }
    size_t n = (size_t)np, tsize = H5Tget_size(t);
    uint64_t raw;
    if (tsize == 0 || !hpc_mul_u64((uint64_t)n, (uint64_t)tsize, &raw) || raw > limit) {
        g_string_append_printf(o, "(%zu elements of %zu bytes: larger than the file)", n, tsize);
        goto out;
    }
    rc = attr_values(aid, t, s, n, tsize, o, esize);
    if (rc == HPC_OK)
        attr_dtype(t, *esize, dtype);
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

int hpc_h5t_text_eol(GString *t)
{
    if (memchr(t->str, '\n', t->len))
        return 1;
    char *end = t->str + t->len;
    for (char *p = t->str; (p = memchr(p, '\0', (size_t)(end - p))); p++)
        *p = '\n';
    return 0;
}
