/* fmt_nc3.c - netCDF-3 files: CDF-1 (classic), CDF-2 (64-bit offset) and
 * CDF-5 (64-bit data, PnetCDF's).
 *
 * Tree: /<variable> for each variable, its values as little-endian C-order
 * bytes; a record variable's slabs, interleaved record by record with the
 * other record variables in the file, are served one after the other.
 * Nothing is decoded at mount beyond the header; values are swapped as
 * they are read through the block cache.
 *
 * Live files: the header is a reference-counted snapshot (nc3_state).
 * Directory operations re-stat the file at most every NC3_REFRESH_US and
 * parse the header again when it changed (numrecs grows as records are
 * appended); readers of the old snapshot finish with it.  Each snapshot
 * reads through its own cache space, so bytes cached before a write are
 * never served after it.
 *
 * This file: snapshots, open/close and .info; nc3_header.c parses the
 * header, nc3_data.c serves the tree, bytes and xattrs, nc3_refs.c
 * describes the bytes for references.  docs/netcdf3.md. */
#include "nc3_int.h"

static int nc3_probe(const char *path, const unsigned char *head, size_t len)
{
    (void)path;
    if (!head || len < 4 || memcmp(head, "CDF", 3) != 0)
        return 0;
    return head[3] == 1 || head[3] == 2 || head[3] == 5 ? 100 : 0;
}

/* ---- snapshots ------------------------------------------------------------ */

static void state_clear(gpointer p)
{
    nc3_state *s = p;
    if (s->cache && s->space)
        hpc_cache_drop_space(s->cache, s->space);
    nc3_hdr_free(s->h);
}

void nc3_state_unref(nc3_state *s)
{
    if (s)
        g_atomic_rc_box_release_full(s, state_clear);
}

nc3_state *nc3_state_get(nc3 *n)
{
    g_mutex_lock(&n->lock);
    nc3_state *s = g_atomic_rc_box_acquire(n->cur);
    g_mutex_unlock(&n->lock);
    return s;
}

/* Read the header through snapshot s: NC3_HEAD_READ bytes first, then
 * twice as many until it fits (never more than the file holds). */
static int read_header(nc3_state *s, const hpc_source *src, GError **err)
{
    uint64_t want = MIN((uint64_t)NC3_HEAD_READ, s->size);
    for (;;) {
        unsigned char *buf = g_malloc(want ? want : 1);
        int rc = want ? hpc_cache_read_file(s->cache, src, s->space, s->size, buf, want, 0)
                      : HPC_OK;
        if (rc != HPC_OK) {
            g_free(buf);
            return hpc_fail(err, rc, src->path, "header", 0, "cannot read %" PRIu64
                            " bytes: %s", want, hpc_strerror(rc));
        }
        rc = nc3_parse(buf, want, s->size, src->path, &s->h, err);
        g_free(buf);
        if (rc != HPC_E_RANGE)
            return rc;
        want = want > s->size / 2 ? s->size : want * 2;
    }
}

static int state_build(hpc_container *c, nc3 *n, nc3_state **out, GError **err)
{
    nc3_state *s = g_atomic_rc_box_new0(nc3_state);
    s->cache = c->host->cache(c);
    s->space = hpc_cache_space_new();
    s->size = __atomic_load_n(&n->src->size, __ATOMIC_ACQUIRE);
    int rc = read_header(s, n->src, err);
    if (rc != HPC_OK) {
        nc3_state_unref(s);
        return rc;
    }
    *out = s;
    return HPC_OK;
}

/* Re-stat at most every NC3_REFRESH_US; a new snapshot when the file
 * changed.  Failures keep the old one (a writer may be midway). */
void nc3_maybe_refresh(hpc_container *c)
{
    nc3 *n = c->priv;
    gint64 now = g_get_monotonic_time();
    if (now - __atomic_load_n(&n->last_check, __ATOMIC_RELAXED) < NC3_REFRESH_US)
        return;
    if (!g_mutex_trylock(&n->refresh_lock))
        return;
    __atomic_store_n(&n->last_check, now, __ATOMIC_RELAXED);
    gboolean changed = FALSE;
    nc3_state *fresh = NULL;
    if (hpc_source_refresh(n->src, &changed) == HPC_OK && (changed || n->pending)) {
        n->pending = state_build(c, n, &fresh, NULL) != HPC_OK;
        if (fresh) {
            g_mutex_lock(&n->lock);
            nc3_state *old = n->cur;
            n->cur = fresh;
            g_mutex_unlock(&n->lock);
            nc3_state_unref(old);
            c->host->info_changed(c);
        }
    }
    g_mutex_unlock(&n->refresh_lock);
}

/* ---- open / close --------------------------------------------------------- */

static void nc3_close(hpc_container *c)
{
    nc3 *n = c->priv;
    if (!n)
        return;
    nc3_state_unref(n->cur);
    g_mutex_clear(&n->lock);
    g_mutex_clear(&n->refresh_lock);
    g_free(n);
    c->priv = NULL;
}

static int nc3_open(hpc_container *c, GError **err)
{
    nc3 *n = g_new0(nc3, 1);
    int rc = HPC_E_IO;
    g_mutex_init(&n->lock);
    g_mutex_init(&n->refresh_lock);
    c->priv = n;
    n->src = c->host->add_source(c, c->path, err);
    if (n->src)
        rc = state_build(c, n, &n->cur, err);
    if (rc != HPC_OK) {
        nc3_close(c);
        return rc;
    }
    n->last_check = g_get_monotonic_time();
    c->live = 1;          /* a model may still be appending records */
    return HPC_OK;
}

/* ---- .info ------------------------------------------------------------------ */

static const char *const version_name[6] = {
    NULL, "CDF-1 (classic)", "CDF-2 (64-bit offset)", NULL, NULL, "CDF-5 (64-bit data)",
};

static void info_dims(const nc3_hdr *h, const nc3_var *v, GString *o)
{
    for (uint32_t d = 0; d < v->ndims; d++)
        g_string_append_printf(o, "%s%s", d ? "," : "", h->dims[v->dimids[d]].name);
}

static void info_var(const nc3_hdr *h, const nc3_var *v, GString *o)
{
    char *name = g_strescape(v->name, NULL);     /* one line per variable */
    g_string_append_printf(o, "%s\t%s\t", name, nc3_type_name(v->type));
    g_free(name);
    info_dims(h, v, o);
    g_string_append_printf(o, "\t%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\n",
                           v->is_rec ? "record" : "fixed", v->begin, v->slab,
                           nc3_var_bytes(h, v), v->hidden ? v->hidden : "served");
}

static int nc3_info(hpc_container *c, GString *o)
{
    nc3_state *s = nc3_state_get(c->priv);
    const nc3_hdr *h = s->h;
    g_string_append_printf(o, "version: %s\nfile_size: %" PRIu64 "\nheader_bytes: %" PRIu64
                           "\nnumrecs: %" PRIu64 "%s\nrecord_bytes: %" PRIu64
                           "\nrecords_begin: %" PRIu64 "\nrecord_variables: %u\n"
                           "variables: %u\nglobal_attributes: %u\n"
                           "live: yes (re-read when the file changes)\n",
                           version_name[h->version], s->size, h->header_len, h->numrecs,
                           h->streaming ? " (STREAMING: computed from the file size)" : "",
                           h->recsize, h->begin_rec, h->nrecvars, h->nvars, h->ngatts);
    for (uint32_t i = 0; i < h->ndims; i++) {
        const nc3_dim *d = &h->dims[i];
        if (d->len)
            g_string_append_printf(o, "dimension %u: %s = %" PRIu64 "\n", i, d->name, d->len);
        else
            g_string_append_printf(o, "dimension %u: %s = UNLIMITED (%" PRIu64 " records)\n",
                                   i, d->name, h->numrecs);
    }
    g_string_append(o, "\nvariable\ttype\tdimensions\tlayout\tbegin\tslab_bytes\tbytes\tserved\n");
    for (uint32_t i = 0; i < h->nvars; i++)
        info_var(h, &h->vars[i], o);
    nc3_state_unref(s);
    return HPC_OK;
}

const hpc_format hpc_format_netcdf3 = {
    .name = "netcdf3",
    .probe = nc3_probe,
    .open = nc3_open,
    .close = nc3_close,
    .lookup = nc3_lookup,
    .getattr = nc3_getattr,
    .readdir = nc3_readdir,
    .map = nc3_map,
    .read = nc3_read,
    .xattrs = nc3_xattrs,
    .info = nc3_info,
    .chunks = nc3_chunks,
};
