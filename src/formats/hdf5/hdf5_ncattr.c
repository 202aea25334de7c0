/* hdf5_ncattr.c - an object's attributes as netCDF-4 shows them, as typed
 * JSON values for the references (hdf5_refs.h).
 *
 * The values are netCDF4-python's (what xarray's attrs hold when it opens
 * the file with libnetcdf 4.9, libhdf5/hdf5open.c read_hdf5_att):
 * - integers and floats (of a type libnetcdf knows: one of C's native
 *   ones) as numbers, floats to the digit that reads back the value
 *   (NaN and infinities as zarr-python writes them in .zattrs); one
 *   element is a number, others a list;
 * - a scalar fixed-length string is netCDF's "char" text: its bytes with
 *   every NUL removed; other strings ("string" in netCDF: variable-length,
 *   or an array of fixed-length ones) each up to its first NUL, one of
 *   them a string, others a list; bytes that are no UTF-8 decoded as
 *   Python's errors="replace" does;
 * - an enum of a type equal to one of the file's committed types (a
 *   netCDF enum type) as the integers of its base type;
 * - libnetcdf's own attributes (its reserved names) and those of types it
 *   has no netCDF type for (other enums such as h5py's bools, compounds
 *   such as complex numbers, references, ...) are not shown, as libnetcdf
 *   hides them.
 * A dataset's _FillValue of the dataset's own type becomes an "ncfill"
 * line, its bytes in that type, for zarr's fill_value.
 */
#include "config.h"

#include <string.h>

#include "hpc_bytes.h"
#include "hpc_json.h"
#include "hdf5_refs.h"

#define MAX_ELEMS (1u << 20)

/* libnetcdf 4.9's reserved attributes (libsrc4/nc4internal.c NC_reserved) */
static const char *const reserved[] = {
    "CLASS", "DIMENSION_LIST", "NAME", "REFERENCE_LIST", "_ARRAY_DIMENSIONS", "_Codecs",
    "_Format", "_IsNetcdf4", "_NCProperties", "_Netcdf4Coordinates", "_Netcdf4Dimid",
    "_SuperblockVersion", "_nc3_strict", "_nczarr_attr", "_nczarr_group", "_nczarr_array",
    "_nczarr_superblock",
};

static int is_reserved(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(reserved); i++)
        if (!strcmp(name, reserved[i]))
            return 1;
    return 0;
}

/* ---- text ---------------------------------------------------------------- */

/* Bytes of a UTF-8 sequence that starts with lead byte b (0: invalid), and
 * the range its second byte must lie in (Unicode's table 3-7). */
static int utf8_len(unsigned char b, unsigned char *lo, unsigned char *hi)
{
    *lo = 0x80;
    *hi = 0xbf;
    if (b < 0x80)
        return 1;
    if (b < 0xc2 || b > 0xf4)
        return 0;
    if (b < 0xe0)
        return 2;
    if (b == 0xe0 || b == 0xed) {
        *lo = b == 0xe0 ? 0xa0 : 0x80;
        *hi = b == 0xe0 ? 0xbf : 0x9f;
    } else if (b == 0xf0 || b == 0xf4) {
        *lo = b == 0xf0 ? 0x90 : 0x80;
        *hi = b == 0xf0 ? 0xbf : 0x8f;
    }
    return b < 0xf0 ? 3 : 4;
}

/* p[0, n) with NULs dropped and what is no UTF-8 replaced as Python's
 * bytes.decode("utf-8", "replace") does: each maximal start of a sequence
 * that cannot be completed becomes one U+FFFD. */
static void utf8_decode(const char *p, size_t n, GString *out)
{
    const unsigned char *s = (const unsigned char *)p;
    for (size_t i = 0; i < n;) {
        unsigned char lo, hi;
        int len = utf8_len(s[i], &lo, &hi), ok = 1;
        for (int k = 1; k < len && ok; k++) {
            ok = i + k < n && s[i + k] >= (k == 1 ? lo : 0x80) && s[i + k] <= (k == 1 ? hi : 0xbf);
            if (!ok)
                len = k;                /* the part that could have been one */
        }
        if (len == 0 || !ok) {
            g_string_append(out, "\xef\xbf\xbd");
            i += MAX(len, 1);
        } else {
            if (s[i])
                g_string_append_len(out, p + i, len);
            i += (size_t)len;
        }
    }
}

static void json_text(GString *o, const char *p, size_t n)
{
    GString *t = g_string_new(NULL);
    utf8_decode(p, n, t);
    hpc_json_str(o, t->str);
    g_string_free(t, TRUE);
}

/* ---- values -------------------------------------------------------------- */

typedef struct attr {
    hid_t id, ftype, ntype, space;
    size_t n;                      /* elements */
    int ndims;
} attr;

typedef union number {
    double d;
    int64_t i;
    uint64_t u;
} number;

/* n numbers v of class cls (signed: sgn), one a number, others a list. */
static void put_numbers(const number *v, size_t n, H5T_class_t cls, int sgn, GString *o)
{
    g_string_append(o, n == 1 ? "" : "[");
    for (size_t i = 0; i < n; i++) {
        g_string_append(o, i ? ", " : "");
        if (cls == H5T_FLOAT)
            hpc_json_double(o, v[i].d, HPC_JSON_NAN_BARE);
        else if (sgn)
            g_string_append_printf(o, "%" G_GINT64_FORMAT, v[i].i);
        else
            g_string_append_printf(o, "%" G_GUINT64_FORMAT, v[i].u);
    }
    g_string_append(o, n == 1 ? "" : "]");
}

/* Numbers: n elements of integer or float class cls. */
static int json_numbers(const attr *a, H5T_class_t cls, GString *o)
{
    int sgn = cls == H5T_INTEGER && H5Tget_sign(a->ntype) == H5T_SGN_2;
    hid_t m = cls == H5T_FLOAT ? H5T_NATIVE_DOUBLE : sgn ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64;
    number *v = g_new0(number, MAX(a->n, 1));
    int ok = a->n == 0 || H5Aread(a->id, m, v) >= 0;
    if (ok)
        put_numbers(v, a->n, cls, sgn, o);
    g_free(v);
    return ok;
}

/* An enum of a committed type (types: the file's, hdf5_ncdims.c), as
 * libnetcdf gives it: its values as integers of its base type; others
 * (h5py's bools) netCDF has no type for. */
static int json_enum(const attr *a, const GArray *types, GString *o)
{
    int known = 0;
    for (guint i = 0; types && !known && i < types->len; i++)
        known = H5Tequal(g_array_index(types, hid_t, i), a->ntype) > 0;
    hid_t base = known ? H5Tget_super(a->ntype) : H5I_INVALID_HID;
    if (base < 0)
        return 0;
    int sgn = H5Tget_sign(base) == H5T_SGN_2;
    number *v = g_new0(number, MAX(a->n, 1));
    /* an enum's bytes are its base type's: read as they are, converted */
    int ok = H5Tget_size(base) <= sizeof *v && (a->n == 0 ||
             (H5Aread(a->id, a->ntype, v) >= 0 &&
              H5Tconvert(base, sgn ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64, a->n, v, NULL,
                         H5P_DEFAULT) >= 0));
    if (ok)
        put_numbers(v, a->n, H5T_INTEGER, sgn, o);
    H5Tclose(base);
    g_free(v);
    return ok;
}

/* netCDF's "string": each element up to its first NUL. */
static int json_strings(const attr *a, GString *o)
{
    size_t size = H5Tget_size(a->ftype);
    int vlen = H5Tis_variable_str(a->ftype) > 0;
    hid_t m = H5Tcopy(vlen ? H5T_C_S1 : a->ftype);
    char *buf = g_malloc0(MAX(a->n * (vlen ? sizeof(char *) : size), 1));
    int ok = m >= 0 && (!vlen || (H5Tset_size(m, H5T_VARIABLE) >= 0 &&
                                  H5Tset_cset(m, H5Tget_cset(a->ftype)) >= 0)) &&
             (a->n == 0 || H5Aread(a->id, m, buf) >= 0);
    g_string_append(o, a->n == 1 ? "" : "[");
    for (size_t i = 0; ok && i < a->n; i++) {
        const char *s = vlen ? ((char **)(void *)buf)[i] : buf + i * size;
        g_string_append(o, i ? ", " : "");
        json_text(o, s ? s : "", s ? (vlen ? strlen(s) : strnlen(s, size)) : 0);
    }
    g_string_append(o, a->n == 1 ? "" : "]");
    if (ok && vlen && a->n)
        H5Dvlen_reclaim(m, a->space, H5P_DEFAULT, buf);
    if (m >= 0)
        H5Tclose(m);
    g_free(buf);
    return ok;
}

/* netCDF's "char" text: a scalar fixed-length string, NULs removed. */
static int json_chars(const attr *a, GString *o)
{
    size_t size = a->n ? H5Tget_size(a->ftype) : 0;
    char *buf = g_malloc0(size + 1);
    int ok = size == 0 || H5Aread(a->id, a->ftype, buf) >= 0;
    if (ok)
        json_text(o, buf, size);
    g_free(buf);
    return ok;
}

/* The value of a as JSON; 0 when netCDF does not show it. */
static int json_value(const attr *a, const GArray *types, GString *o)
{
    H5T_class_t cls = H5Tget_class(a->ntype);
    if (cls == H5T_INTEGER)
        return json_numbers(a, cls, o);
    if (cls == H5T_ENUM)
        return json_enum(a, types, o);
    if (cls == H5T_FLOAT)          /* long double: no netCDF type */
        return H5Tget_size(a->ntype) <= sizeof(double) && json_numbers(a, cls, o);
    if (cls != H5T_STRING)
        return 0;
    if (a->ndims == 0 && H5Tis_variable_str(a->ftype) == 0)
        return json_chars(a, o);
    return json_strings(a, o);
}

/* A dataset's _FillValue of its own type: its bytes in vtype, for zarr. */
static int fill_line(const attr *a, hid_t vtype, GString *o)
{
    size_t size = H5Tget_size(vtype);
    hid_t vn = H5Tget_native_type(vtype, H5T_DIR_DEFAULT);
    int same = vn >= 0 && H5Tequal(vn, a->ntype) > 0 && a->n == 1 && size <= 64 &&
               H5Tis_variable_str(vtype) == 0;
    unsigned char buf[64];
    if (same && H5Aread(a->id, vtype, buf) >= 0) {
        g_string_append(o, "ncfill ");
        for (size_t i = 0; i < size; i++)
            g_string_append_printf(o, "%02x", buf[i]);
        g_string_append_c(o, '\n');
    } else {
        same = 0;
    }
    if (vn >= 0)
        H5Tclose(vn);
    return same;
}

typedef struct visit {
    hid_t vtype;
    uint64_t limit;
    const GArray *types;
    GString *out;
} visit;

static herr_t one_attr(hid_t loc, const char *name, const H5A_info_t *info, void *p)
{
    (void)info;
    visit *v = p;
    attr a = { H5Aopen(loc, name, H5P_DEFAULT), -1, -1, -1, 0, 0 };
    hssize_t n = -1;
    uint64_t bytes;
    if (is_reserved(name) || a.id < 0)
        goto out;
    a.ftype = H5Aget_type(a.id);
    a.space = H5Aget_space(a.id);
    a.ntype = a.ftype >= 0 ? H5Tget_native_type(a.ftype, H5T_DIR_DEFAULT) : -1;
    n = a.space >= 0 ? H5Sget_simple_extent_npoints(a.space) : -1;
    a.ndims = a.space >= 0 ? H5Sget_simple_extent_ndims(a.space) : -1;
    if (a.ntype < 0 || n < 0 || n > MAX_ELEMS || a.ndims < 0 ||
        !hpc_mul_u64((uint64_t)n, H5Tget_size(a.ftype), &bytes) || bytes > v->limit)
        goto out;
    a.n = (size_t)n;
    if (v->vtype >= 0 && !strcmp(name, "_FillValue") && fill_line(&a, v->vtype, v->out))
        goto out;
    GString *val = g_string_new(NULL);
    if (json_value(&a, v->types, val)) {
        g_string_append(v->out, "attr ");
        hpc_json_str(v->out, name);
        g_string_append_printf(v->out, ": %s\n", val->str);
    }
    g_string_free(val, TRUE);
out:
    if (a.ntype >= 0)
        H5Tclose(a.ntype);
    if (a.ftype >= 0)
        H5Tclose(a.ftype);
    if (a.space >= 0)
        H5Sclose(a.space);
    if (a.id >= 0)
        H5Aclose(a.id);
    return 0;
}

int hpc_h5refs_attrs(hid_t oid, hid_t vtype, uint64_t limit, const GArray *types, GString *out)
{
    visit v = { vtype, limit, types, out };
    hsize_t at = 0;
    g_string_append(out, "attrs\n");      /* these are all of them */
    return H5Aiterate2(oid, H5_INDEX_NAME, H5_ITER_INC, &at, one_attr, &v) < 0 ? HPC_E_CORRUPT
           : HPC_OK;
}
