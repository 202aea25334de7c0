/* nc3_state.c - the live snapshots of a netCDF-3 file (nc3_state): the
 * header parsed as it is now, rebuilt when the file changed
 * (nc3_maybe_refresh).  fmt_nc3.c opens the first one. */
#include "nc3_int.h"

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

int nc3_state_build(hpc_container *c, nc3 *n, nc3_state **out, GError **err)
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

/* Live files: a new snapshot when the file changed (hpc_refresh).
 * Failures keep the old one (a writer may be midway). */
void nc3_maybe_refresh(hpc_container *c)
{
    nc3 *n = c->priv;
    if (!hpc_refresh_begin(&n->refresh, n->src))
        return;
    nc3_state *fresh = NULL;
    gboolean built = nc3_state_build(c, n, &fresh, NULL) == HPC_OK;
    if (fresh) {
        g_mutex_lock(&n->lock);
        nc3_state *old = n->cur;
        n->cur = fresh;
        g_mutex_unlock(&n->lock);
        nc3_state_unref(old);
        c->host->info_changed(c);
    }
    hpc_refresh_end(&n->refresh, built);
}

