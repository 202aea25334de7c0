/* gsd_state.c - the live snapshots of a GSD file (gsd_state): built from
 * the header, the name list and the index, validated against the file's
 * size and the previous snapshot, and rebuilt when the file changed
 * (gsd_maybe_refresh).  fmt_gsd.c opens the first one.
 */
#include "gsd_int.h"

static void state_clear(gpointer p)
{
    gsd_state *s = p;
    if (s->cache && s->space)
        hpc_cache_drop_space(s->cache, s->space);
    if (s->damage)
        g_string_free(s->damage, TRUE);
    if (s->warnings)
        g_string_free(s->warnings, TRUE);
    if (s->strings)
        g_string_chunk_free(s->strings);
    g_free(s->names);
    g_free(s->leaf);
    g_free(s->nodes);
    g_free(s->kids);
    g_free(s->lend_id);
    g_free(s->log_need);
    g_free(s->lend_group);
    gsd_series_set_free(s->series);
    gsd_series_set_free(s->series_seed);
    g_mutex_clear(&s->series_lock);
}

void gsd_state_unref(gsd_state *s)
{
    if (s)
        g_atomic_rc_box_release_full(s, state_clear);
}

static void copy_text(char *dst, const unsigned char *src)
{
    size_t n = strnlen((const char *)src, GSD_NAME_FIELD);
    for (size_t i = 0; i < n; i++)
        dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? (char)src[i] : '?';
    dst[n] = '\0';
}

/* Check entries [from, to) in order (prev: entry from-1 or NULL); on the
 * first bad one set *bad to its index and *why. */
static int check_range(const gsd_state *s, uint64_t from, uint64_t to, gsd_entry *prev,
                       uint64_t *bad, const char **why)
{
    gsd_entry batch[BATCH];
    gsd_entry last = prev ? *prev : (gsd_entry){ 0 };
    int have = prev != NULL;
    *bad = UINT64_MAX;
    for (uint64_t i = from; i < to;) {
        uint64_t k = MIN(to - i, (uint64_t)BATCH);
        int rc = gsd_read_entries(s, i, k, batch);
        if (rc != HPC_OK)
            return rc;
        for (uint64_t j = 0; j < k; j++) {
            const char *w = gsd_entry_problem(s, &batch[j], have ? &last : NULL);
            if (w) {
                *bad = i + j;
                *why = w;
                return HPC_OK;
            }
            last = batch[j];
            have = 1;
        }
        i += k;
    }
    return HPC_OK;
}


/* Find the end of the index (an entry with location 0) by binary search,
 * step for step as the GSD library does (its halving of [0, allocated)), so
 * that both count the same entries even where a damaged index has holes;
 * the library's lookup of a name written twice in a frame depends on that
 * count (gsd_index.c). */
static int index_end(const gsd_state *s, uint64_t *end)
{
    gsd_entry e;
    *end = 0;
    if (s->index_usable == 0)
        return HPC_OK;
    int rc = gsd_read_entry(s, 0, &e);
    if (rc != HPC_OK || e.location == 0)
        return rc;
    uint64_t lo = 0, hi = s->index_usable;
    do {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((rc = gsd_read_entry(s, mid, &e)) != HPC_OK)
            return rc;
        if (e.location != 0)
            lo = mid;
        else
            hi = mid;
    } while (hi - lo > 1);
    *end = hi;
    return HPC_OK;
}

/* Decide which entries are served: all if they check out, else those before
 * the first bad one.  Large indexes are checked at both ends only (the rest
 * when their frames are read).  prev: the snapshot this one follows. */
static int validate(gsd_state *s, const gsd_state *prev)
{
    uint64_t from = 0, bad = UINT64_MAX, b;
    const char *why = NULL, *w;
    gsd_entry before, *pb = NULL;
    int rc;
    /* Entries a previous snapshot checked are still valid: GSD only
     * appends to an index that stays in place. */
    if (prev && prev->index_location == s->index_location && prev->gsd_version == s->gsd_version &&
        prev->nnames <= s->nnames && prev->fill.size <= s->fill.size &&
        prev->damage->len == 0 && prev->nentries <= s->seen) {
        from = prev->nentries;
        s->continued = 1;
        s->checked_all = prev->checked_all;
        if (from > 0) {
            if ((rc = gsd_read_entry(s, from - 1, &before)) != HPC_OK)
                return rc;
            pb = &before;
        }
    } else {
        s->checked_all = 1;
    }
    uint64_t n = s->seen - from;
    if (n <= FULL_CHECK) {
        rc = check_range(s, from, s->seen, pb, &bad, &why);
    } else {
        s->checked_all = 0;
        rc = check_range(s, from, from + WINDOW, pb, &bad, &why);
        if (rc == HPC_OK && bad == UINT64_MAX) {
            if ((rc = gsd_read_entry(s, s->seen - WINDOW - 1, &before)) != HPC_OK)
                return rc;
            rc = check_range(s, s->seen - WINDOW, s->seen, &before, &b, &w);
            if (rc == HPC_OK && b != UINT64_MAX) {
                bad = b;
                why = w;
            }
        }
    }
    if (rc != HPC_OK)
        return rc;
    s->nentries = bad == UINT64_MAX ? s->seen : bad;
    gsd_entry e, last;
    int partial = 0;
    if (bad != UINT64_MAX) {
        if ((rc = gsd_read_entry(s, bad, &e)) != HPC_OK)
            return rc;
        g_string_append_printf(s->damage, "skipped: index entry %" PRIu64 " at offset %" PRIu64
                               " (frame %" PRIu64 ", name id %u): %s; it and the %" PRIu64
                               " entries after it are not served\n",
                               bad, s->index_location + bad * GSD_ENTRY_SIZE, e.frame, e.id, why,
                               s->seen - bad - 1);
        /* Unless the bad entry plausibly starts a later frame, the frame
         * before it may have lost a chunk: do not serve it half. */
        if (bad > 0 && (rc = gsd_read_entry(s, bad - 1, &last)) == HPC_OK)
            partial = !(e.frame > last.frame && e.frame <= last.frame + MAX_FRAME_GAP);
    } else if (s->index_usable < s->index_allocated && s->seen == s->index_usable && s->seen > 0) {
        /* the index is cut by the end of the file: its last frame may be too */
        rc = gsd_read_entry(s, s->seen - 1, &last);
        partial = 1;
    }
    if (rc != HPC_OK)
        return rc;
    if (partial) {
        uint64_t first;
        if ((rc = gsd_lower_bound(s, last.frame, &first)) != HPC_OK)
            return rc;
        g_string_append_printf(s->damage, "skipped: frame %" PRIu64 " may be incomplete; its %"
                               PRIu64 " valid entries are not served\n",
                               last.frame, s->nentries - first);
        s->nentries = first;
    }
    s->nframes = 0;
    if (s->nentries > 0) {
        if ((rc = gsd_read_entry(s, s->nentries - 1, &last)) != HPC_OK)
            return rc;
        s->nframes = last.frame + 1;
    }
    return HPC_OK;
}

/* Read and check the file header of snapshot s: magic, version, where the
 * index and the names lie; how many index entries lie inside the file. */
static int state_header(gsd_state *s, const char *path, GError **err)
{
    unsigned char h[GSD_HEADER_SIZE];
    int rc = gsd_snap_read(s, h, GSD_HEADER_SIZE, 0);
    if (rc != HPC_OK)
        return hpc_fail(err, rc, path, "header", 0, "the file (%" PRIu64 " bytes) is shorter "
                        "than the %d-byte header", s->fill.size, GSD_HEADER_SIZE);
    if (hpc_le64(h) != GSD_MAGIC)
        return hpc_fail(err, HPC_E_CORRUPT, path, "magic", 0, "0x%016" PRIx64 " is not the GSD magic",
                        hpc_le64(h));
    s->index_location = hpc_le64(h + GSD_OFF_INDEX_LOC);
    s->index_allocated = hpc_le64(h + GSD_OFF_INDEX_ALLOC);
    s->namelist_location = hpc_le64(h + GSD_OFF_NAMES_LOC);
    s->namelist_allocated = hpc_le64(h + GSD_OFF_NAMES_ALLOC);
    s->schema_version = hpc_le32(h + GSD_OFF_SCHEMA_VERSION);
    s->gsd_version = hpc_le32(h + GSD_OFF_GSD_VERSION);
    copy_text(s->application, h + GSD_OFF_APPLICATION);
    copy_text(s->schema, h + GSD_OFF_SCHEMA);
    if (s->gsd_version != 3 && (s->gsd_version < 0x10000 || s->gsd_version >= 0x30000))
        return hpc_fail(err, HPC_E_UNSUPPORTED, path, "gsd_version", GSD_OFF_GSD_VERSION,
                        "file layer %u.%u is not supported (0.3 and 1.0 to 2.x are)",
                        s->gsd_version >> 16, s->gsd_version & 0xffff);
    if (s->index_location < GSD_HEADER_SIZE || s->index_location >= s->fill.size ||
        s->fill.size - s->index_location < GSD_ENTRY_SIZE)
        return hpc_fail(err, HPC_E_CORRUPT, path, "index_location", GSD_OFF_INDEX_LOC,
                        "index at %" PRIu64 " lies outside the file (%" PRIu64 " bytes)",
                        s->index_location, s->fill.size);
    s->index_usable = (s->fill.size - s->index_location) / GSD_ENTRY_SIZE;
    if (s->index_allocated <= s->index_usable)
        s->index_usable = s->index_allocated;
    else
        g_string_append_printf(s->damage, "index: only %" PRIu64 " of %" PRIu64
                               " allocated entries lie inside the file\n",
                               s->index_usable, s->index_allocated);
    return HPC_OK;
}

/* Build a snapshot of the file as it is now. */
int gsd_state_build(hpc_container *c, gsd *g, const gsd_state *prev, gsd_state **out,
                       GError **err)
{
    const char *path = g->src->path;
    gsd_state *s = g_atomic_rc_box_new0(gsd_state);
    int rc;
    s->cache = c->host->cache(c);
    s->space = hpc_cache_space_new();
    s->fill.src = g->src;
    s->fill.size = __atomic_load_n(&g->src->size, __ATOMIC_ACQUIRE);
    s->damage = g_string_new(NULL);
    s->warnings = g_string_new(NULL);
    s->strings = g_string_chunk_new(4096);
    g_mutex_init(&s->series_lock);
    *out = NULL;

    if ((rc = state_header(s, path, err)) != HPC_OK)
        goto out;
    if ((rc = gsd_read_names(s, path, err)) != HPC_OK)
        goto out;
    if ((rc = index_end(s, &s->seen)) != HPC_OK || (rc = validate(s, prev)) != HPC_OK) {
        rc = hpc_fail(err, rc, path, "index", s->index_location, "cannot read the index: %s",
                      hpc_strerror(rc));
        goto out;
    }
    if ((rc = gsd_hoomd_setup(c, s)) != HPC_OK) {
        rc = hpc_fail(err, rc, path, "index", s->index_location, "cannot read frame 0: %s",
                      hpc_strerror(rc));
        goto out;
    }
    if (prev && s->continued) {      /* the series extend the previous ones */
        gsd_state *p = (gsd_state *)prev;
        g_mutex_lock(&p->series_lock);
        if (gsd_series_usable(p->series) && gsd_series_scanned(p->series) <= s->nentries)
            s->series_seed = gsd_series_set_copy(p->series, s->nnames);
        g_mutex_unlock(&p->series_lock);
    }
    *out = s;
    return HPC_OK;
out:
    gsd_state_unref(s);
    return rc;
}

gsd_state *gsd_state_get(gsd *g)
{
    g_mutex_lock(&g->lock);
    gsd_state *s = g_atomic_rc_box_acquire(g->cur);
    g_mutex_unlock(&g->lock);
    return s;
}

/* Live files: a new snapshot when the file changed (hpc_refresh).
 * Failures keep the old snapshot (a writer may be midway). */
void gsd_maybe_refresh(hpc_container *c)
{
    gsd *g = c->priv;
    if (!hpc_refresh_begin(&g->refresh, g->src))
        return;
    gsd_state *old = gsd_state_get(g), *fresh = NULL;
    gboolean built = gsd_state_build(c, g, old, &fresh, NULL) == HPC_OK;
    if (built) {
        g_mutex_lock(&g->lock);
        g->cur = fresh;
        g_mutex_unlock(&g->lock);
        gsd_state_unref(old);      /* the reference cur held */
        c->host->info_changed(c);
    }
    gsd_state_unref(old);
    hpc_refresh_end(&g->refresh, built);
}

