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
 * Directory operations re-stat the file at most every HPC_REFRESH_US and
 * parse the header again when it changed (numrecs grows as records are
 * appended); readers of the old snapshot finish with it.  Each snapshot
 * reads through its own cache space, so bytes cached before a write are
 * never served after it.
 *
 * This file: open/close and .info; nc3_state.c builds and refreshes the
 * snapshots, nc3_header.c parses the
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

/* ---- open / close --------------------------------------------------------- */

static void nc3_close(hpc_container *c)
{
    nc3 *n = c->priv;
    if (!n)
        return;
    nc3_state_unref(n->cur);
    g_mutex_clear(&n->lock);
    hpc_refresh_clear(&n->refresh);
    g_free(n);
    c->priv = NULL;
}

static int nc3_open(hpc_container *c, GError **err)
{
    nc3 *n = g_new0(nc3, 1);
    int rc = HPC_E_IO;
    g_mutex_init(&n->lock);
    hpc_refresh_init(&n->refresh);
    c->priv = n;
    n->src = c->host->add_source(c, c->path, err);
    if (n->src)
        rc = nc3_state_build(c, n, &n->cur, err);
    if (rc != HPC_OK) {
        nc3_close(c);
        return rc;
    }
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
