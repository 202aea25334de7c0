/* gsd_series.c - /series/<name>: one chunk name over all frames, as runs
 * of frames found by one scan of the index, and its part of the tree. */
#include "gsd_int.h"

/* ---- /series: a chunk name over all frames -------------------------------- */

int gsd_series_usable(const gsd_series_set *set)
{
    return set && !set->problem;
}

uint64_t gsd_series_scanned(const gsd_series_set *set)
{
    return set->scanned;
}

void gsd_series_set_free(gsd_series_set *set)
{
    if (!set)
        return;
    for (uint32_t i = 0; i < set->nnames; i++)
        if (set->by_id[i].runs)
            g_array_free(set->by_id[i].runs, TRUE);
    g_free(set->by_id);
    g_free(set->problem);
    g_free(set->shown);
    g_free(set);
}

/* A copy of set for a snapshot with nnames names (>= set's). */
gsd_series_set *gsd_series_set_copy(const gsd_series_set *set, uint32_t nnames)
{
    gsd_series_set *c = g_new0(gsd_series_set, 1);
    c->scanned = set->scanned;
    c->runs = set->runs;
    c->last = set->last;
    c->nnames = nnames;
    c->by_id = g_new0(gsd_series, nnames ? nnames : 1);
    for (uint32_t i = 0; i < set->nnames && i < nnames; i++) {
        c->by_id[i] = set->by_id[i];
        if (set->by_id[i].runs) {
            GArray *r = set->by_id[i].runs;
            c->by_id[i].runs = g_array_sized_new(FALSE, FALSE, sizeof(gsd_run), r->len);
            g_array_append_vals(c->by_id[i].runs, r->data, r->len);
        }
    }
    return c;
}

static void series_reject(gsd_series *x, const char *why, uint64_t frame)
{
    if (x->why)
        return;
    x->why = why;
    x->why_frame = frame;
    if (x->runs)
        g_array_free(x->runs, TRUE);
    x->runs = NULL;
}

/* Add entry e to its name's series. */
static void series_add(gsd_series *x, const gsd_entry *e, uint64_t *all_runs)
{
    if (x->count == 0) {
        x->N = e->N;
        x->M = e->M;
        x->type = e->type;
        x->runs = g_array_new(FALSE, FALSE, sizeof(gsd_run));
    } else if (e->frame == x->last) {
        series_reject(x, "the name occurs twice in one frame", e->frame);
    } else if (e->type != x->type) {
        series_reject(x, "the type changes", e->frame);
    } else if (e->N != x->N || e->M != x->M) {
        series_reject(x, "N or M changes", e->frame);
    }
    x->count++;
    x->last = e->frame;
    if (x->why)
        return;
    GArray *r = x->runs;
    gsd_run *t = r->len ? &g_array_index(r, gsd_run, r->len - 1) : NULL;
    if (t && t->count == 1) {
        t->stride = e->frame - t->first;
        t->count = 2;
    } else if (t && e->frame == t->first + t->stride * t->count) {
        t->count++;
    } else if (r->len >= MAX_RUNS) {
        series_reject(x, "the frames holding it follow no regular pattern (over 4096 runs)", e->frame);
    } else if (*all_runs >= MAX_ALL_RUNS) {
        series_reject(x, "the series of this file occupy over 262144 runs of frames", e->frame);
    } else {
        ++*all_runs;
        gsd_run n = { e->frame, 0, 1, x->count - 1 };
        g_array_append_val(r, n);
    }
}

/* Scan index entries [set->scanned, s->nentries) into set, straight from the
 * file in large reads (once; the cache is left to the tree). */
static int series_scan(const gsd_state *s, gsd_series_set *set)
{
    unsigned char *raw = g_malloc((size_t)SCAN_BATCH * GSD_ENTRY_SIZE);
    int rc = HPC_OK;
    for (uint64_t i = set->scanned; i < s->nentries && !set->problem;) {
        uint64_t k = MIN(s->nentries - i, (uint64_t)SCAN_BATCH);
        rc = hpc_source_pread(s->fill.src, raw, (size_t)k * GSD_ENTRY_SIZE, s->index_location + i * GSD_ENTRY_SIZE);
        if (rc != HPC_OK)
            break;
        for (uint64_t j = 0; j < k; j++, i++) {
            gsd_entry e;
            gsd_decode_entry(raw + j * GSD_ENTRY_SIZE, &e);
            const char *why = gsd_entry_problem(s, &e, i ? &set->last : NULL);
            if (why) {
                set->problem = g_strdup_printf("index entry %" PRIu64 " (frame %" PRIu64 "): %s",
                                               i, e.frame, why);
                break;
            }
            series_add(&set->by_id[e.id], &e, &set->runs);
            set->last = e;
            set->scanned = i + 1;
        }
    }
    g_free(raw);
    return rc;
}

/* Mark the nodes an offered series lies at or below. */
static void series_mark(const gsd_state *s, gsd_series_set *set)
{
    set->nnodes = s->nnodes;
    set->shown = g_new0(uint8_t, s->nnodes);
    set->shown[0] = 1;
    for (uint32_t id = 0; id < set->nnames && !set->problem; id++) {
        if (set->by_id[id].count == 0 || set->by_id[id].why || s->leaf[id] == NO_NODE)
            continue;
        for (uint32_t x = s->leaf[id]; x != NO_NODE && !set->shown[x]; x = s->nodes[x].parent)
            set->shown[x] = 1;
    }
}

/* The series of snapshot s, computed on first use: one pass over the index
 * (from where the previous snapshot's pass ended, when it had one).  notify:
 * tell the core that .info changed (not while the core builds .info). */
int gsd_series_compute(hpc_container *c, const gsd_state *cs, int notify,
                       const gsd_series_set **out)
{
    gsd_state *s = (gsd_state *)cs;          /* only the lazily filled part changes */
    int rc = HPC_OK, computed = 0;
    g_mutex_lock(&s->series_lock);
    if (!s->series) {
        gint64 t0 = g_get_monotonic_time();
        gsd_series_set *set = s->series_seed;
        s->series_seed = NULL;
        if (!set) {
            set = g_new0(gsd_series_set, 1);
            set->nnames = s->nnames;
            set->by_id = g_new0(gsd_series, s->nnames ? s->nnames : 1);
        }
        rc = series_scan(s, set);
        if (rc == HPC_OK) {
            set->seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
            series_mark(s, set);
            s->series = set;
            computed = 1;
        } else {
            gsd_series_set_free(set);
        }
    }
    *out = s->series;
    g_mutex_unlock(&s->series_lock);
    /* after the unlock: .info's builder holds the core's lock and waits
     * for series_lock */
    if (computed && notify)
        c->host->info_changed(c);
    return rc;
}

int gsd_series_get(hpc_container *c, const gsd_state *cs, const gsd_series_set **out)
{
    return gsd_series_compute(c, cs, 1, out);
}

/* Bytes of one frame's chunk of series x. */
static uint64_t series_chunk_bytes(const gsd_series *x)
{
    gsd_entry e = { .N = x->N, .M = x->M, .type = x->type };
    uint64_t b = 0;
    gsd_entry_bytes(&e, &b);
    return b;
}

/* The frame of the k-th chunk of series x. */
static uint64_t series_frame(const gsd_series *x, uint64_t k)
{
    const gsd_run *r = (const gsd_run *)x->runs->data;
    guint lo = 0, hi = x->runs->len;
    while (hi - lo > 1) {
        guint mid = lo + (hi - lo) / 2;
        if (r[mid].ord <= k)
            lo = mid;
        else
            hi = mid;
    }
    return r[lo].first + r[lo].stride * (k - r[lo].ord);
}

/* Entry of name id in frame f into *e.  *pos: where the previous chunk of
 * the series was found (a short scan from there), UINT64_MAX if none; it
 * is set to where this one is. */
static int series_entry(const gsd_state *s, uint16_t id, uint64_t f, uint64_t *pos, gsd_entry *e)
{
    gsd_entry b[32];
    uint64_t i;
    int rc;
    if (*pos != UINT64_MAX && *pos + 1 < s->nentries) {
        uint64_t k = MIN(s->nentries - *pos - 1, (uint64_t)32);
        if ((rc = gsd_read_entries(s, *pos + 1, k, b)) != HPC_OK)
            return rc;
        for (uint64_t j = 0; j < k && b[j].frame <= f; j++)
            if (b[j].frame == f && b[j].id == id) {
                *pos += 1 + j;
                *e = b[j];
                return HPC_OK;
            }
    }
    if ((rc = gsd_lower_bound(s, f, &i)) != HPC_OK)
        return rc;
    for (uint64_t end = MIN(s->nentries, i + MAX_FRAME_ENTRIES); i < end;) {
        uint64_t k = MIN(end - i, (uint64_t)32);
        if ((rc = gsd_read_entries(s, i, k, b)) != HPC_OK)
            return rc;
        for (uint64_t j = 0; j < k && b[j].frame == f; j++)
            if (b[j].id == id) {
                *pos = i + j;
                *e = b[j];
                return HPC_OK;
            }
        if (b[k - 1].frame != f)
            break;
        i += k;
    }
    return HPC_E_CORRUPT;     /* the scan saw it: the index changed under us */
}

/* Extents of [off, off+len) of series x (name id): one per frame's chunk,
 * merged where chunks are adjacent in the file. */
int gsd_series_extents(const gsd *g, const gsd_state *s, const gsd_series *x, uint16_t id,
                       uint64_t off, uint64_t len, hpc_extent *ext, unsigned max, unsigned *n)
{
    uint64_t b = series_chunk_bytes(x), size, pos = UINT64_MAX;
    *n = 0;
    if (b == 0 || !hpc_mul_u64(b, x->count, &size) || off >= size)
        return HPC_OK;
    uint64_t end = len > size - off ? size : off + len;
    for (uint64_t k = off / b; off < end && *n < max; k++) {
        gsd_entry e;
        int rc = series_entry(s, id, series_frame(x, k), &pos, &e);
        if (rc == HPC_OK && (e.type != x->type || e.N != x->N || e.M != x->M))
            rc = HPC_E_CORRUPT;
        if (rc != HPC_OK)
            return rc;
        uint64_t inner = off - k * b, take = MIN(b - inner, end - off);
        uint64_t at = (uint64_t)e.location + inner;
        if (*n > 0 && ext[*n - 1].off + ext[*n - 1].len == at)
            ext[*n - 1].len += take;
        else
            ext[(*n)++] = (hpc_extent){ g->src, at, take, s->space, s->fill.size };
        off += take;
    }
    return HPC_OK;
}

/* Bytes of the <name>.frames file: the frame numbers as little-endian
 * uint64. */
void gsd_series_frames_bytes(const gsd_series *x, unsigned char *buf, size_t len, uint64_t off,
                             size_t *nread)
{
    uint64_t size = x->count * 8;
    *nread = 0;
    if (off >= size)
        return;
    size_t take = (size_t)MIN((uint64_t)len, size - off);
    for (size_t done = 0; done < take;) {
        uint64_t k = (off + done) / 8, v = GUINT64_TO_LE(series_frame(x, k));
        size_t in = (size_t)((off + done) % 8), part = MIN(8 - in, take - done);
        memcpy(buf + done, (unsigned char *)&v + in, part);
        done += part;
    }
    *nread = take;
}

/* The child of node `dir` on the path from the root to node x, NO_NODE if
 * x is not below dir. */
/* ---- /series tree ---------------------------------------------------------- */

int gsd_is_series_ino(hpc_ino ino)
{
    return ino >= INO_SERIES_BASE && ino < INO_SERIES_FRAMES + MAX_NODES;
}

/* Node of a /series inode (*frames: its .frames file) that snapshot s shows. */
int gsd_series_decode(const gsd_state *s, const gsd_series_set *set, hpc_ino ino, uint32_t *n,
                      int *frames)
{
    *frames = ino >= INO_SERIES_FRAMES;
    *n = (uint32_t)(ino - (*frames ? INO_SERIES_FRAMES : INO_SERIES_BASE));
    if (*n >= s->nnodes || *n >= set->nnodes || !set->shown[*n])
        return HPC_E_NOENT;
    if (*frames && !gsd_is_file_node(s, *n))
        return HPC_E_NOENT;
    return HPC_OK;
}

const gsd_series *gsd_node_series(const gsd_state *s, const gsd_series_set *set, uint32_t n)
{
    return &set->by_id[s->nodes[n].chunk];
}

void gsd_series_stat(const gsd_state *s, const gsd_series_set *set, uint32_t n, int frames,
                     hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = (frames ? INO_SERIES_FRAMES : INO_SERIES_BASE) + n;
    if (!gsd_is_file_node(s, n)) {
        st->mode = HPC_MODE_DIR;
        return;
    }
    const gsd_series *x = gsd_node_series(s, set, n);
    st->mode = HPC_MODE_FILE;
    st->size = frames ? x->count * 8 : x->count * series_chunk_bytes(x);
}

/* Kid of directory node d named name, NO_NODE if none. */
uint32_t gsd_kid_named(const gsd_state *s, uint32_t d, const char *name)
{
    uint32_t lo = 0, hi = s->nodes[d].nkids;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, k = s->kids[s->nodes[d].first_kid + mid];
        int cmp = strcmp(s->nodes[k].name, name);
        if (cmp == 0)
            return k;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NO_NODE;
}

int gsd_series_lookup(const gsd_state *s, const gsd_series_set *set, uint32_t d,
                      const char *name, hpc_stat *st)
{
    if (gsd_is_file_node(s, d))
        return HPC_E_NOTDIR;
    uint32_t k = gsd_kid_named(s, d, name);
    if (k != NO_NODE && set->shown[k]) {
        gsd_series_stat(s, set, k, 0, st);
        return HPC_OK;
    }
    size_t len = strlen(name);
    if (len <= 7 || strcmp(name + len - 7, ".frames") != 0)
        return HPC_E_NOENT;
    char *base = g_strndup(name, len - 7);
    k = gsd_kid_named(s, d, base);
    g_free(base);
    if (k == NO_NODE || !set->shown[k] || !gsd_is_file_node(s, k))
        return HPC_E_NOENT;
    gsd_series_stat(s, set, k, 1, st);
    return HPC_OK;
}

/* Positions: 2j the j-th kid, 2j+1 its .frames file (file kids only). */
int gsd_series_readdir(const gsd_state *s, const gsd_series_set *set, uint32_t d,
                       uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    const gsd_node *dn = &s->nodes[d];
    hpc_stat st;
    if (gsd_is_file_node(s, d))
        return HPC_E_NOTDIR;
    for (uint64_t p = cookie; p < 2 * (uint64_t)dn->nkids; p++) {
        uint32_t k = s->kids[dn->first_kid + p / 2];
        if (!set->shown[k] || (p % 2 == 1 && !gsd_is_file_node(s, k)))
            continue;
        char *name = g_strdup_printf("%s%s", s->nodes[k].name, p % 2 ? ".frames" : "");
        int taken = p % 2 == 1 && gsd_kid_named(s, d, name) != NO_NODE;   /* a real name wins */
        gsd_series_stat(s, set, k, (int)(p % 2), &st);
        int full = taken ? 0 : fn(ctx, name, &st, p + 1);
        g_free(name);
        if (full)
            break;
    }
    return HPC_OK;
}

/* .info lines about the series. */
void gsd_series_info(const gsd_state *s, GString *o)
{
    gsd_state *m = (gsd_state *)s;
    g_mutex_lock(&m->series_lock);
    const gsd_series_set *set = s->series;
    if (!set) {
        g_string_append(o, "series: not computed yet (they are on first use of /series)\n");
    } else if (set->problem) {
        g_string_append_printf(o, "series: none: %s\n", set->problem);
    } else {
        uint32_t offered = 0;
        for (uint32_t id = 0; id < set->nnames; id++)
            offered += set->by_id[id].count > 0 && !set->by_id[id].why && s->leaf[id] != NO_NODE;
        g_string_append_printf(o, "series: %u offered\n", offered);
        for (uint32_t id = 0; id < set->nnames; id++) {
            const gsd_series *x = &set->by_id[id];
            if (x->count == 0 || !x->why || s->leaf[id] == NO_NODE)
                continue;
            char *esc = g_strescape(s->names[id], NULL);
            g_string_append_printf(o, "series not offered: %s: %s (frame %" PRIu64 ")\n", esc,
                                   x->why, x->why_frame);
            g_free(esc);
        }
    }
    g_mutex_unlock(&m->series_lock);
}
