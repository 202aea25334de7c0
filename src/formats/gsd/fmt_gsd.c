/* fmt_gsd.c - GSD trajectory files (HOOMD-blue), file layers 1.0, 2.0, 2.1.
 *
 * Tree: /frames/<frame>/<chunk name>, a '/' in a chunk name making
 * directories.  Nothing is kept per frame or per index entry: a node id
 * encodes (frame, name-tree node), and a frame's entries are found by binary
 * search on the on-disk index through the block cache, so mount time and
 * memory do not grow with the number of frames.  Only the chunk names (at
 * most 65536) are held in memory, as a small tree.
 *
 * Live files: the metadata are a reference-counted snapshot (gsd_state).
 * Directory operations re-stat the file at most every HPC_REFRESH_US and build a
 * new snapshot when it changed; readers of the old one finish with it.  Each
 * snapshot reads the file through its own cache space, so index blocks
 * cached before an append are never served after it.
 *
 * This file: open/close and .info.  gsd_state.c builds, validates and
 * refreshes the live snapshots, gsd_index.c decodes and finds index entries, gsd_names.c builds
 * the name tree, gsd_hoomd.c decides what frame 0 lends, gsd_series.c
 * serves /series, gsd_tree.c the tree, data and xattrs; gsd_int.h is what
 * they share.
 *
 * See docs/formats/gsd.md for the on-disk facts.
 */
#include "gsd_int.h"

static int gsd_probe(const char *path, const unsigned char *head, size_t len)
{
    (void)path;
    return (head && len >= 8 && hpc_le64(head) == GSD_MAGIC) ? 100 : 0;
}

/* ---- open / close ------------------------------------------------------- */

static void gsd_close(hpc_container *c)
{
    gsd *g = c->priv;
    if (!g)
        return;
    gsd_state_unref(g->cur);
    g_mutex_clear(&g->lock);
    hpc_refresh_clear(&g->refresh);
    g_free(g);
    c->priv = NULL;
}

static int gsd_open(hpc_container *c, GError **err)
{
    gsd *g = g_new0(gsd, 1);
    int rc;
    g_mutex_init(&g->lock);
    hpc_refresh_init(&g->refresh);
    g->src = c->host->add_source(c, c->path, err);
    if (!g->src) {
        rc = HPC_E_IO;
        goto out;
    }
    c->priv = g;
    rc = gsd_state_build(c, g, NULL, &g->cur, err);
    if (rc != HPC_OK)
        goto out;
    c->live = 1;          /* a simulation may still be appending frames */
    return HPC_OK;
out:
    c->priv = g;
    gsd_close(c);
    return rc;
}

/* ---- .info --------------------------------------------------------------- */

static int gsd_info(hpc_container *c, GString *o)
{
    gsd *g = c->priv;
    gsd_state *s = gsd_state_get(g);
    int rc = HPC_OK;
    g_string_append_printf(o, "gsd_version: %u.%u\napplication: %s\nschema: %s\nschema_version: %u.%u\n"
                           "file_size: %" PRIu64 "\nindex_location: %" PRIu64 "\n"
                           "index_allocated_entries: %" PRIu64 "\nnamelist_location: %" PRIu64 "\n"
                           "namelist_allocated_entries: %" PRIu64 "\nnames: %u\n"
                           "index_entries: %" PRIu64 "\nframes: %" PRIu64 "\n"
                           "checked: %s\nlive: yes (re-read when the file changes)\n",
                           s->gsd_version >> 16, s->gsd_version & 0xffff, s->application,
                           s->schema, s->schema_version >> 16, s->schema_version & 0xffff,
                           s->fill.size, s->index_location, s->index_allocated,
                           s->namelist_location, s->namelist_allocated, s->nnames,
                           s->nentries, s->nframes,
                           s->checked_all ? "all index entries"
                                          : "first and last index entries (the rest when read)");
    g_string_append(o, s->damage->len ? s->damage->str : "damage: none\n");
    g_string_append(o, s->warnings->str);
    if (s->hoomd)
        gsd_hoomd_info(s, o);
    /* the same .info whenever it is built (mount or hpcdump, before or
     * after /series was used): compute the series for it */
    const gsd_series_set *set;
    gsd_series_compute(c, s, 0, &set);
    gsd_series_info(s, o);
    for (uint32_t i = 0; i < s->nnames; i++) {
        char *esc = g_strescape(s->names[i], NULL);   /* one line per name */
        g_string_append_printf(o, "name %u: %s\n", i, esc);
        g_free(esc);
    }
    uint64_t listed = MIN(s->nframes, (uint64_t)INFO_MAX_FRAMES);
    if (listed < s->nframes)
        g_string_append_printf(o, "table: frames 0 to %" PRIu64 " of %" PRIu64 " listed\n",
                               listed - 1, s->nframes);
    g_string_append(o, "\nframe\tchunks\n");
    /* per-frame counts from one sequential pass over the listed frames */
    uint64_t *count = g_new0(uint64_t, listed ? listed : 1);
    gsd_entry batch[BATCH];
    for (uint64_t i = 0; i < s->nentries && rc == HPC_OK;) {
        uint64_t k = MIN(s->nentries - i, (uint64_t)BATCH);
        if ((rc = gsd_read_entries(s, i, k, batch)) != HPC_OK)
            break;
        uint64_t j = 0;
        for (; j < k && batch[j].frame < listed; j++)
            count[batch[j].frame]++;
        if (j < k)
            break;
        i += k;
    }
    for (uint64_t f = 0; rc == HPC_OK && f < listed; f++)
        g_string_append_printf(o, "%06" PRIu64 "\t%" PRIu64 "\n", f, count[f]);
    g_free(count);
    gsd_state_unref(s);
    return rc;
}

const hpc_format hpc_format_gsd = {
    .name = "gsd",
    .probe = gsd_probe,
    .open = gsd_open,
    .close = gsd_close,
    .lookup = gsd_lookup,
    .getattr = gsd_getattr,
    .readdir = gsd_readdir,
    .readlink = gsd_readlink,
    .read = gsd_read,
    .map = gsd_map,
    .xattrs = gsd_xattrs,
    .info = gsd_info,
};
