/* nc3_data.c - the netCDF-3 reader's tree, bytes and xattrs.
 *
 * A variable's served byte off lies in record off / slab (0 for a fixed
 * variable) at off % slab into its slab there.  Single-byte types are
 * verbatim (map: one extent per record); the others are read through the
 * same extents and byte-swapped (read). */
#include "nc3_int.h"
#include "hpc_json.h"

#include <math.h>

/* ---- the tree ------------------------------------------------------------- */

/* Variable i of s as a node, or NULL. */
static const nc3_var *var_of(const nc3_state *s, hpc_ino ino)
{
    if (ino < NC3_INO_VAR || ino - NC3_INO_VAR >= s->h->nvars)
        return NULL;
    const nc3_var *v = &s->h->vars[ino - NC3_INO_VAR];
    return v->hidden ? NULL : v;
}

static void var_stat(const nc3_state *s, const nc3_var *v, hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = NC3_INO_VAR + (hpc_ino)(v - s->h->vars);
    st->mode = HPC_MODE_FILE;
    st->nlink = 1;
    st->size = nc3_var_bytes(s->h, v);
}

int nc3_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    nc3_maybe_refresh(c);
    if (ino == HPC_INO_ROOT) {
        memset(st, 0, sizeof *st);
        st->ino = ino;
        st->mode = HPC_MODE_DIR;
        return HPC_OK;
    }
    nc3_state *s = nc3_state_get(c->priv);
    const nc3_var *v = var_of(s, ino);
    if (v)
        var_stat(s, v, st);
    nc3_state_unref(s);
    return v ? HPC_OK : HPC_E_NOENT;
}

int nc3_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    if (parent != HPC_INO_ROOT)
        return HPC_E_NOTDIR;
    nc3_maybe_refresh(c);
    nc3_state *s = nc3_state_get(c->priv);
    int rc = HPC_E_NOENT;
    for (uint32_t i = 0; i < s->h->nvars && rc != HPC_OK; i++) {
        const nc3_var *v = &s->h->vars[i];
        if (!v->hidden && strcmp(v->name, name) == 0) {
            var_stat(s, v, st);
            rc = HPC_OK;
        }
    }
    nc3_state_unref(s);
    return rc;
}

int nc3_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    if (dir != HPC_INO_ROOT)
        return HPC_E_NOTDIR;
    nc3_maybe_refresh(c);
    nc3_state *s = nc3_state_get(c->priv);
    for (uint64_t i = cookie; i < s->h->nvars; i++) {
        const nc3_var *v = &s->h->vars[i];
        hpc_stat st;
        if (v->hidden)
            continue;
        var_stat(s, v, &st);
        if (fn(ctx, v->name, &st, i + 1))
            break;
    }
    nc3_state_unref(s);
    return HPC_OK;
}

/* ---- bytes ------------------------------------------------------------------ */

/* The extents of [off, off+len) of v (clipped to its bytes), at most max. */
static void extents(const nc3 *n, const nc3_state *s, const nc3_var *v, uint64_t off,
                    uint64_t len, hpc_extent *ext, unsigned max, unsigned *cnt)
{
    uint64_t size = nc3_var_bytes(s->h, v);
    *cnt = 0;
    if (off >= size)
        return;
    len = MIN(len, size - off);
    while (len > 0 && *cnt < max) {
        uint64_t rec = off / v->slab, in = off % v->slab;
        uint64_t take = MIN(len, v->slab - in);
        ext[(*cnt)++] = (hpc_extent){ n->src, v->begin + rec * s->h->recsize + in, take,
                                      s->space, s->size };
        off += take;
        len -= take;
    }
}

int nc3_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len, hpc_extent *ext,
            unsigned max, unsigned *n)
{
    nc3_state *s = nc3_state_get(c->priv);
    const nc3_var *v = var_of(s, ino);
    int rc = !v ? HPC_E_NOENT : nc3_type_size(v->type) > 1 ? HPC_E_NOTSUP : HPC_OK;
    *n = 0;
    if (rc == HPC_OK)
        extents(c->priv, s, v, off, len, ext, max, n);
    nc3_state_unref(s);
    return rc;
}

/* Big-endian values of es bytes into little-endian, in place. */
static void swap(unsigned char *p, size_t len, unsigned es)
{
    for (size_t i = 0; i + es <= len; i += es)
        for (unsigned a = 0, b = es - 1; a < b; a++, b--) {
            unsigned char t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

/* Whole values [off, off+len) of v into buf. */
static int read_values(hpc_container *c, const nc3_state *s, const nc3_var *v,
                       unsigned char *buf, uint64_t len, uint64_t off)
{
    hpc_extent ext[HPC_MAX_EXTENTS];
    while (len > 0) {
        unsigned n;
        size_t got;
        extents(c->priv, s, v, off, len, ext, HPC_MAX_EXTENTS, &n);
        if (n == 0)
            return HPC_E_CORRUPT;
        int rc = c->host->read_extents(c, ext, n, buf, (size_t)len, &got);
        if (rc != HPC_OK)
            return rc;
        swap(buf, got, nc3_type_size(v->type));
        buf += got;
        off += got;
        len -= got;
    }
    return HPC_OK;
}

int nc3_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
             size_t *nread)
{
    nc3_state *s = nc3_state_get(c->priv);
    const nc3_var *v = var_of(s, ino);
    int rc = v ? HPC_OK : HPC_E_NOENT;
    *nread = 0;
    uint64_t size = v ? nc3_var_bytes(s->h, v) : 0;
    if (rc == HPC_OK && off < size) {
        unsigned es = nc3_type_size(v->type);
        len = (size_t)MIN((uint64_t)len, size - off);
        uint64_t a = off - off % es, b = off + len + (es - (off + len) % es) % es;
        int direct = a == off && b == off + len;
        unsigned char *p = direct ? buf : g_try_malloc(b - a);
        rc = p ? read_values(c, s, v, p, b - a, a) : HPC_E_NOMEM;
        if (rc == HPC_OK && !direct)
            memcpy(buf, p + (off - a), len);
        if (rc == HPC_OK)
            *nread = len;
        if (!direct)
            g_free(p);
    }
    nc3_state_unref(s);
    return rc;
}

/* ---- xattrs ----------------------------------------------------------------- */

/* Element i of a big-endian array of a numeric type: integers in decimal,
 * reals through real() (the xattrs and the references write them each in
 * their own form). */
void nc3_append_number(GString *o, uint32_t type, const unsigned char *p, uint64_t i,
                       void (*real)(GString *o, double x, int single))
{
    unsigned es = nc3_type_size(type);
    uint64_t u = hpc_load_uint(p + i * es, es, TRUE);
    union { uint32_t u; float f; } f32 = { (uint32_t)u };
    union { uint64_t u; double d; } f64 = { u };

    if (type == NC_FLOAT || type == NC_DOUBLE) {
        real(o, type == NC_FLOAT ? (double)f32.f : f64.d, type == NC_FLOAT);
    } else if (type == NC_BYTE || type == NC_SHORT || type == NC_INT || type == NC_INT64) {
        int64_t v = es == 8 ? (int64_t)u : (int64_t)(u ^ (1ull << (es * 8 - 1))) - (1ll << (es * 8 - 1));
        g_string_append_printf(o, "%" PRId64, v);
    } else {
        g_string_append_printf(o, "%" PRIu64, u);
    }
}

/* Text as netCDF-4 files show it through the HDF5 reader: chars as one
 * string without its trailing NULs, numbers joined by ','. */
void nc3_att_text(const nc3_att *a, GString *o)
{
    if (a->type == NC_CHAR) {
        size_t l = (size_t)a->nelems;
        while (l > 0 && a->values[l - 1] == '\0')
            l--;
        g_string_append_len(o, (const char *)a->values, (gssize)l);
        return;
    }
    for (uint64_t i = 0; i < a->nelems && o->len < NC3_XATTR_VALUE_MAX; i++) {
        if (i)
            g_string_append_c(o, ',');
        nc3_append_number(o, a->type, a->values, i, hpc_json_real_text);
    }
}

static int atts_xattrs(const nc3_att *atts, uint32_t n, hpc_xattr_fn fn, void *ctx)
{
    GString *name = g_string_new(NULL), *val = g_string_new(NULL);
    int stop = 0;
    for (uint32_t i = 0; !stop && i < n; i++) {
        g_string_printf(name, "user.attr.%s", atts[i].name);
        if (name->len > NC3_XATTR_NAME_MAX)
            continue;
        g_string_truncate(val, 0);
        nc3_att_text(&atts[i], val);
        stop = fn(ctx, name->str, val->str, MIN(val->len, (gsize)NC3_XATTR_VALUE_MAX));
    }
    g_string_free(name, TRUE);
    g_string_free(val, TRUE);
    return stop;
}

static int var_xattrs(const nc3_hdr *h, const nc3_var *v, hpc_xattr_fn fn, void *ctx)
{
    GString *shape = g_string_new(NULL), *dims = g_string_new(NULL);
    for (uint32_t d = 0; d < v->ndims; d++) {
        const nc3_dim *dim = &h->dims[v->dimids[d]];
        g_string_append_printf(shape, "%s%" PRIu64, d ? "," : "",
                               d == 0 && v->is_rec ? h->numrecs : dim->len);
        g_string_append_printf(dims, "%s%s", d ? "," : "", dim->name);
    }
    const char *dt = nc3_type_dtype(v->type);
    int stop = fn(ctx, "user.shape", shape->str, shape->len) ||
               fn(ctx, "user.dtype", dt, strlen(dt)) ||
               (v->ndims && fn(ctx, "user.dims", dims->str, dims->len)) ||
               atts_xattrs(v->atts, v->natts, fn, ctx);
    g_string_free(shape, TRUE);
    g_string_free(dims, TRUE);
    return stop;
}

int nc3_xattrs(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx)
{
    nc3_state *s = nc3_state_get(c->priv);
    const nc3_var *v = var_of(s, ino);
    int rc = HPC_OK;
    if (ino == HPC_INO_ROOT)
        atts_xattrs(s->h->gatts, s->h->ngatts, fn, ctx);
    else if (v)
        var_xattrs(s->h, v, fn, ctx);
    else
        rc = HPC_E_NOENT;
    nc3_state_unref(s);
    return rc;
}
