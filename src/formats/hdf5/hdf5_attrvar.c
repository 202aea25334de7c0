/* hdf5_attrvar.c - attributes of references, variable-length sequences,
 * and compounds or arrays holding them, as xattrs (docs/hdf5.md,
 * "Attributes of references and sequences"): rendered as a dataset of
 * their type is (hdf5_vlen.c), then each part of that as xattrs:
 *   user.attr<M>.<name>         the values
 *   user.attrref<M>.<name>      references: "object" or "region"
 *   user.attroffsets<M>.<name>  sequences: the N + 1 offsets into the values
 *   user.attrdtype<M>.<name>    values that are no text: their dtype
 *   user.attrshape<M>.<name>    a shape the values' count does not tell
 * where M is empty for the attribute and ":k" per level for member k of a
 * compound (":1:0": member 0 of member 1), which no attribute name can
 * make: the name starts after the first '.'. */
#include "hdf5_int.h"
#include "hpc_json.h"

/* The xattrs of one attribute, all made before any is kept: one that
 * cannot be one leaves the attribute out whole. */
typedef struct var_ctx {
    const char *name;              /* the attribute's */
    GPtrArray *names, *values;     /* char *, GString * */
    char *why;                     /* not shown: why */
} var_ctx;

static void gstring_free(gpointer p)
{
    if (p)                         /* NULL: kept (var_keep) */
        g_string_free(p, TRUE);
}

/* Xattr user.<family><member>.<name> = val (taken). */
static void var_put(var_ctx *v, const char *family, const char *member, GString *val)
{
    char *x = g_strdup_printf("user.%s%s.%s", family, member, v->name);
    if (!v->why && strlen(x) > XATTR_NAME_MAX_LEN)
        v->why = g_strdup_printf("the name of its xattr user.%s%s is too long", family, member);
    else if (!v->why && val->len > XATTR_VALUE_MAX)
        v->why = g_strdup_printf("user.%s%s would be %zu bytes, longer than an xattr", family,
                                 member, val->len);
    g_ptr_array_add(v->names, x);
    g_ptr_array_add(v->values, val);
}

static void var_put_str(var_ctx *v, const char *family, const char *member, const char *s)
{
    var_put(v, family, member, g_string_new(s));
}

/* The count of elements of shape s ("" a scalar: 1). */
static uint64_t shape_count(const char *s)
{
    uint64_t n = 1;
    gchar **p = g_strsplit(s, ",", -1);
    for (gchar **q = p; *s && *q; q++)
        n *= g_ascii_strtoull(*q, NULL, 10);
    g_strfreev(p);
    return n;
}

/* Does shape s need user.attrshape: not a scalar, nor 1-D of other than
 * one element (the rule of attributes' text, docs/hdf5.md)? */
static int shape_told(const char *s)
{
    return strchr(s, ',') || !strcmp(s, "1");
}

/* A signed or unsigned little-endian integer of size bytes at b. */
static void int_text(const uint8_t *b, size_t size, int sgn, GString *o)
{
    uint64_t u = 0;
    for (size_t k = 0; k < size; k++)
        u |= (uint64_t)b[k] << (8 * k);
    if (sgn && size < 8 && (u >> (8 * size - 1)) & 1)
        u |= ~(uint64_t)0 << (8 * size);
    if (sgn)
        g_string_append_printf(o, "%" PRId64, (int64_t)u);
    else
        g_string_append_printf(o, "%" PRIu64, u);
}

/* n values of NumPy type dt at b as the text of an attribute of them:
 * integers, <f4 and <f8 reals, bools; 0 for other types. */
static int num_text(const char *dt, const uint8_t *b, uint64_t n, GString *o)
{
    char *end = NULL;
    guint64 size = strlen(dt) > 2 ? g_ascii_strtoull(dt + 2, &end, 10) : 0;
    char k = size && !*end && strchr("<|", dt[0]) ? dt[1] : 0;
    if (!((k == 'i' || k == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) &&
        !(k == 'f' && (size == 4 || size == 8)) && !(k == 'b' && size == 1))
        return 0;
    for (uint64_t i = 0; i < n; i++, b += size) {
        if (i)
            g_string_append_c(o, ',');
        if (k == 'b') {
            g_string_append(o, b[0] ? "TRUE" : "FALSE");
        } else if (k == 'f' && size == 4) {
            uint32_t u;
            float f;
            memcpy(&u, b, sizeof u);
            u = GUINT32_FROM_LE(u);
            memcpy(&f, &u, sizeof f);
            hpc_json_real_text(o, f, 1);
        } else if (k == 'f') {
            uint64_t u;
            double d;
            memcpy(&u, b, sizeof u);
            u = GUINT64_FROM_LE(u);
            memcpy(&d, &u, sizeof d);
            hpc_json_real_text(o, d, 0);
        } else {
            int_text(b, (size_t)size, k == 'i', o);
        }
    }
    return 1;
}

/* A part that is a file: references and strings as text, numbers as
 * text, other types as hex (|S<n>: their bytes) with their dtype. */
static void put_file(var_ctx *v, const h5_part *p, const char *member)
{
    GString *val = g_string_new(NULL);
    uint64_t n = shape_count(p->shape);
    if (p->extra_name && !strcmp(p->extra_name, "user.h5ref")) {
        g_string_append_len(val, (const char *)p->bytes, (gssize)p->size);
        var_put_str(v, "attrref", member, p->extra);
    } else if (!strcmp(p->dtype, "O")) {
        /* strings: a string attribute's text, joined by '\n' unless they
         * are NUL-ended */
        g_string_append_len(val, (const char *)p->bytes, (gssize)p->size);
        if (!p->eol_nul && val->len)
            g_string_truncate(val, val->len - 1);
    } else if (!num_text(p->dtype, p->bytes, n, val)) {
        if (g_str_has_prefix(p->dtype, "|S"))
            g_string_append_len(val, (const char *)p->bytes, (gssize)p->size);
        else if (n)
            hpc_h5t_hex_text(val, p->bytes, (size_t)n, (size_t)(p->size / n));
        var_put_str(v, "attrdtype", member, p->dtype);
    }
    var_put(v, "attr", member, val);
}

static void put_part(var_ctx *v, const GArray *parts, const h5_part *p, const char *member);

/* A sequence: its values as a file is put, and their offsets. */
static void put_seq(var_ctx *v, const GArray *parts, const h5_part *p, const char *member)
{
    const h5_part *off = &g_array_index(parts, h5_part, p->first);
    const h5_part *vals = &g_array_index(parts, h5_part, p->first + 1);
    if (vals->dir) {
        if (!v->why)
            v->why = g_strdup("sequences of sequences or of compounds holding them");
        return;
    }
    GString *o = g_string_new(NULL);
    for (uint64_t i = 0; i < off->size / 8; i++) {
        int64_t x;
        memcpy(&x, off->bytes + 8 * i, sizeof x);
        g_string_append_printf(o, "%s%" PRId64, i ? "," : "", (int64_t)GINT64_FROM_LE(x));
    }
    var_put(v, "attroffsets", member, o);
    put_file(v, vals, member);
}

/* A compound: its dtype, no value of its own, each member under M:k. */
static void put_compound(var_ctx *v, const GArray *parts, const h5_part *p, const char *member)
{
    var_put_str(v, "attrdtype", member, p->dtype);
    var_put_str(v, "attr", member, "");
    for (uint32_t k = 0; k < p->n; k++) {
        const h5_part *c = &g_array_index(parts, h5_part, p->first + k);
        char *m = g_strdup_printf("%s:%u", member, k);
        put_part(v, parts, c, m);
        if (strcmp(c->shape, p->shape) && shape_told(c->shape))   /* an array member */
            var_put_str(v, "attrshape", m, c->shape);
        g_free(m);
    }
}

static void put_part(var_ctx *v, const GArray *parts, const h5_part *p, const char *member)
{
    if (p->dir && p->extra_name && !strcmp(p->extra_name, "user.vlen"))
        put_seq(v, parts, p, member);
    else if (p->dir)
        put_compound(v, parts, p, member);
    else
        put_file(v, p, member);
}

int h5_attrvar_is(hid_t t)
{
    return H5Tget_class(t) != H5T_STRING && hpc_h5t_has_var(t) > 0;
}

/* Keep v's xattrs in a, or note why the attribute is not shown. */
static void var_keep(attr_ctx *a, var_ctx *v)
{
    if (v->why) {
        g_string_append_printf(a->notes, "warning: %s: attribute '%s': %s: not shown\n",
                               a->path, v->name, v->why);
        return;
    }
    for (guint i = 0; i < v->names->len; i++) {
        g_ptr_array_add(a->names, g_steal_pointer(&v->names->pdata[i]));
        g_ptr_array_add(a->values, g_steal_pointer(&v->values->pdata[i]));
    }
}

/* The attribute's parts as xattrs, with its shape (null: a null
 * dataspace) where the values do not tell it. */
static void var_render(attr_ctx *a, var_ctx *v, hid_t loc, hid_t aid, hid_t t, int null,
                       uint64_t n, const uint64_t *dims, int rank)
{
    GArray *parts = NULL;
    char *why = NULL;
    h5 *h = a->h;
    if (!h->ref_names)             /* a target's path is one search of the file: once */
        h->ref_names = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    int rc = h5_attr_parts(aid, loc, a->path, h->ref_names, t, n, dims, rank, &parts, &why);
    if (rc == HPC_E_IO && !a->failed) {
        char *e = h5_errtext();
        a->failed = g_strdup_printf("attribute '%s': %s", v->name, e);
        g_free(e);
    } else if (rc != HPC_OK) {
        v->why = why ? g_strdup(why) : g_strdup("not rendered");
    } else {
        const h5_part *p0 = &g_array_index(parts, h5_part, 0);
        put_part(v, parts, p0, "");
        if (null || shape_told(p0->shape))
            var_put_str(v, "attrshape", "", null ? "null" : p0->shape);
    }
    g_free(why);
    h5_parts_free(parts);
    if (rc != HPC_E_IO)
        var_keep(a, v);
}

void h5_attrvar_add(attr_ctx *a, hid_t loc, hid_t aid, const char *name, hid_t t)
{
    var_ctx v = { name, g_ptr_array_new_with_free_func(g_free),
                  g_ptr_array_new_with_free_func(gstring_free), NULL };
    hid_t s = H5Aget_space(aid);
    hsize_t hd[H5S_MAX_RANK];
    uint64_t dims[H5S_MAX_RANK], raw;
    H5S_class_t cls = s >= 0 ? H5Sget_simple_extent_type(s) : H5S_NO_CLASS;
    int rank = cls == H5S_SIMPLE ? H5Sget_simple_extent_dims(s, hd, NULL) : 0;
    hssize_t np = s >= 0 && rank >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    for (int i = 0; i < rank; i++)
        dims[i] = hd[i];
    if (cls == H5S_NULL) {         /* no elements: rendered as (0,), shown "null" */
        rank = 1;
        dims[0] = 0;
    }
    if (s >= 0)
        H5Sclose(s);
    if (np < 0) {
        if (!a->failed)
            a->failed = g_strdup_printf("attribute '%s': no dataspace", name);
    } else if ((uint64_t)np > HPC_H5T_MAX_ATTR_ELEMS) {
        v.why = g_strdup_printf("%" PRId64 " elements", (int64_t)np);
        var_keep(a, &v);
    } else if (!hpc_mul_u64((uint64_t)np, H5Tget_size(t), &raw) || raw > a->h->src->size) {
        v.why = g_strdup("larger than the file");
        var_keep(a, &v);
    } else {
        var_render(a, &v, loc, aid, t, cls == H5S_NULL, (uint64_t)np, dims, rank);
    }
    g_ptr_array_free(v.names, TRUE);
    g_ptr_array_free(v.values, TRUE);
    g_free(v.why);
}
