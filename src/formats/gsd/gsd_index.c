/* gsd_index.c - the GSD index: entries decoded from the file's byte order,
 * read through a snapshot's cache space and checked, and the binary search
 * that finds a frame's entries (fmt_gsd.c says why nothing is kept per frame). */
#include "gsd_int.h"

/* ---- byte order and sizes --------------------------------------------- */

void gsd_decode_entry(const unsigned char *p, gsd_entry *e)
{
    e->frame = hpc_le64(p + GSD_ENT_FRAME);
    e->N = hpc_le64(p + GSD_ENT_N);
    e->location = (int64_t)hpc_le64(p + GSD_ENT_LOCATION);
    e->M = hpc_le32(p + GSD_ENT_M);
    e->id = hpc_le16(p + GSD_ENT_ID);
    e->type = p[GSD_ENT_TYPE];
    e->flags = p[GSD_ENT_FLAGS];
}

int gsd_is_v2(const gsd_state *s)
{
    return s->gsd_version >= 0x20000;
}

static int valid_type(const gsd_state *s, uint8_t t)
{
    return (t >= 1 && t <= 10) || (t == 11 && s->gsd_version >= 0x20001);
}

/* Bytes of an entry's data; FALSE on overflow. */
gboolean gsd_entry_bytes(const gsd_entry *e, uint64_t *n)
{
    uint64_t nm;
    if (e->type < 1 || e->type > GSD_TYPE_MAX)
        return FALSE;
    return hpc_mul_u64(e->N, e->M, &nm) && hpc_mul_u64(nm, gsd_type_size(e->type), n);
}

/* ---- reading through a snapshot's cache space -------------------------- */

/* Copy [off, off+len) of the file as of snapshot s. */
int gsd_snap_read(const gsd_state *s, void *buf, size_t len, uint64_t off)
{
    return hpc_cache_read_file(s->cache, s->fill.src, s->space, s->fill.size, buf, len, off);
}

int gsd_read_entries(const gsd_state *s, uint64_t first, uint64_t n, gsd_entry *out)
{
    unsigned char raw[BATCH * GSD_ENTRY_SIZE];
    while (n > 0) {
        uint64_t k = MIN(n, (uint64_t)BATCH);
        int rc = gsd_snap_read(s, raw, (size_t)k * GSD_ENTRY_SIZE, s->index_location + first * GSD_ENTRY_SIZE);
        if (rc != HPC_OK)
            return rc;
        for (uint64_t i = 0; i < k; i++)
            gsd_decode_entry(raw + i * GSD_ENTRY_SIZE, &out[i]);
        out += k;
        first += k;
        n -= k;
    }
    return HPC_OK;
}

int gsd_read_entry(const gsd_state *s, uint64_t i, gsd_entry *e)
{
    return gsd_read_entries(s, i, 1, e);
}

/* Why entry e (after prev, or NULL when not known) is not valid, or NULL. */
const char *gsd_entry_problem(const gsd_state *s, const gsd_entry *e, const gsd_entry *prev)
{
    uint64_t n;
    if (e->location == 0)
        return "location 0 (end of the index)";
    if (!valid_type(s, e->type))
        return "unknown data type";
    if (e->flags != 0)
        return "flags are not 0";
    if (e->id >= s->nnames)
        return "name id beyond the name list";
    if (e->frame >= MAX_FRAME)
        return "frame number too large";
    if (!gsd_entry_bytes(e, &n) || e->location < GSD_HEADER_SIZE ||
        (uint64_t)e->location > s->fill.size || n > s->fill.size - (uint64_t)e->location)
        return "data beyond the end of the file";
    /* Frames without chunks have no entries, so frame numbers may jump;
     * the GSD library's bound is the index's allocated entries (which lie
     * in the file): so a damaged frame number makes no more empty frames
     * than the file has room for entries. */
    if (e->frame >= s->index_usable)
        return "frame number not below the index's allocated entries";
    if (prev) {
        if (e->frame < prev->frame)
            return "frame number goes backwards";
        /* equal ids: a name written twice in a frame (frame_dedupe) */
        if (gsd_is_v2(s) && e->frame == prev->frame && e->id < prev->id)
            return "entries of a frame not in name id order";
    }
    return NULL;
}

/* ---- frames ------------------------------------------------------------- */

/* First entry index with frame >= f. */
int gsd_lower_bound(const gsd_state *s, uint64_t f, uint64_t *out)
{
    unsigned char b[8];
    uint64_t lo = 0, hi = s->nentries;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int rc = gsd_snap_read(s, b, 8, s->index_location + mid * GSD_ENTRY_SIZE);
        if (rc != HPC_OK)
            return rc;
        if (hpc_le64(b) < f)
            lo = mid + 1;
        else
            hi = mid;
    }
    *out = lo;
    return HPC_OK;
}

/* The last frame each thread looked at: a walk asks for the same frame's
 * entries several times in a row (lookup, getattr, open, read). */
typedef struct frame_memo {
    uint64_t space, frame, n;   /* space: the snapshot's, never reused */
    gsd_entry *e;
} frame_memo;

static void memo_free(gpointer p)
{
    frame_memo *m = p;
    g_free(m->e);
    g_free(m);
}

static GPrivate memo_key = G_PRIVATE_INIT(memo_free);

/* Entries a large index did not check at mount are checked here: frame f's
 * n entries e, the first at index position lo. */
static int frame_check(hpc_container *c, const gsd_state *s, uint64_t f, uint64_t lo,
                       const gsd_entry *e, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        const char *why = gsd_entry_problem(s, &e[i], i ? &e[i - 1] : NULL);
        if (!why)
            continue;
        gsd *g = c->priv;
        if (!g_atomic_int_get(&g->warned)) {
            g_atomic_int_set(&g->warned, 1);
            hpc_log("%s: index entry %" PRIu64 " (frame %" PRIu64 "): %s", g->src->path,
                    lo + i, f, why);
        }
        return HPC_E_CORRUPT;
    }
    return HPC_OK;
}

/* Where the GSD library's own lookup of (frame f, name id) lands in a layer
 * 2 index: its binary search over all the entries it counts (s->seen, found
 * as it finds them), comparing (frame, id).  *at: that position, UINT64_MAX
 * when the search finds none. */
static int lib_search_v2(const gsd_state *s, uint64_t f, uint16_t id, uint64_t *at)
{
    int64_t lo = 0, hi = (int64_t)s->seen - 1;
    *at = UINT64_MAX;
    while (lo <= hi) {
        uint64_t m = (uint64_t)(lo + hi) / 2;
        gsd_entry e;
        int rc = gsd_read_entry(s, m, &e);
        if (rc != HPC_OK)
            return rc;
        if (e.frame < f || (e.frame == f && e.id < id)) {
            lo = (int64_t)m + 1;
        } else if (e.frame > f || e.id > id) {
            hi = (int64_t)m - 1;
        } else {
            *at = m;
            break;
        }
    }
    return HPC_OK;
}

/* Keep of the run es[a..b) of one name id in a layer 2 frame (index
 * positions lo+a..) the entry the library's lookup finds; *keep: its
 * place in the run, -1 for none. */
static int run_pick_v2(const gsd_state *s, uint64_t f, uint64_t lo, uint64_t a, uint64_t b,
                       uint16_t id, int64_t *keep)
{
    uint64_t at;
    int rc = lib_search_v2(s, f, id, &at);
    *keep = (rc == HPC_OK && at != UINT64_MAX && at >= lo + a && at < lo + b)
                ? (int64_t)(at - lo - a) : -1;
    return rc;
}

/* Layer 1: the library scans a frame's entries backwards, so of a name id
 * held twice or more it finds the last.  Keep those, in order. */
static void dedupe_v1(gsd_entry *es, uint64_t *n)
{
    uint8_t *held = g_malloc0(GSD_MAX_IDS / 8);
    uint64_t out = *n;
    for (uint64_t i = *n; i-- > 0;) {
        uint16_t id = es[i].id;
        if (held[id / 8] & (1u << (id % 8)))
            continue;
        held[id / 8] |= (uint8_t)(1u << (id % 8));
        es[--out] = es[i];          /* out > i until here: nothing unread is overwritten */
    }
    memmove(es, es + out, (size_t)(*n - out) * sizeof *es);
    *n -= out;
    g_free(held);
}

/* Layer 2 (a frame's entries in id order): of a run of one id, the entry
 * the library's binary search lands on. */
static int dedupe_v2(const gsd_state *s, uint64_t f, uint64_t lo, gsd_entry *es, uint64_t *n)
{
    uint64_t out = 0;
    for (uint64_t a = 0; a < *n;) {
        uint64_t b = a + 1;
        while (b < *n && es[b].id == es[a].id)
            b++;
        int64_t keep = 0;
        int rc = b - a > 1 ? run_pick_v2(s, f, lo, a, b, es[a].id, &keep) : HPC_OK;
        if (rc != HPC_OK)
            return rc;
        if (keep >= 0)
            es[out++] = es[a + (uint64_t)keep];
        a = b;
    }
    *n = out;
    return HPC_OK;
}

/* Frame f's n entries es (the first at index position lo) as the GSD
 * library finds them by name: a writer may write one name twice in a
 * frame, and the library's lookup then finds one of those entries only.
 * The others are dropped, in place. */
static int frame_dedupe(const gsd_state *s, uint64_t f, uint64_t lo, gsd_entry *es, uint64_t *n)
{
    if (*n < 2)
        return HPC_OK;
    if (gsd_is_v2(s))
        return dedupe_v2(s, f, lo, es, n);
    dedupe_v1(es, n);
    return HPC_OK;
}

/* The checked entries of frame f into *out (g_free). */
int gsd_frame_entries(hpc_container *c, const gsd_state *s, uint64_t f, gsd_entry **out,
                      uint64_t *n)
{
    uint64_t lo;
    gsd_entry *e = NULL;
    size_t cap = 0;
    frame_memo *m = g_private_get(&memo_key);
    if (m && m->space == s->space && m->frame == f) {
        *out = g_memdup2(m->e, (gsize)(m->n ? m->n : 1) * sizeof(gsd_entry));
        *n = m->n;
        return HPC_OK;
    }
    *out = NULL;
    *n = 0;
    int rc = gsd_lower_bound(s, f, &lo);
    for (uint64_t i = lo; rc == HPC_OK && i < s->nentries;) {
        uint64_t k = MIN(s->nentries - i, (uint64_t)32);
        if (*n + k > cap) {
            cap = (size_t)(*n + k) * 2;
            e = g_renew(gsd_entry, e, cap);
        }
        if ((rc = gsd_read_entries(s, i, k, e + *n)) != HPC_OK)
            break;
        uint64_t j = 0;
        while (j < k && e[*n + j].frame == f)
            j++;
        *n += j;
        if (j < k)
            break;
        i += k;
        if (*n > MAX_FRAME_ENTRIES)
            rc = HPC_E_CORRUPT;
    }
    if (rc == HPC_OK)
        rc = frame_check(c, s, f, lo, e, *n);
    if (rc == HPC_OK)
        rc = frame_dedupe(s, f, lo, e, n);
    if (rc != HPC_OK) {
        g_free(e);
        *n = 0;
        return rc;
    }
    if (!e)
        e = g_new(gsd_entry, 1);      /* an empty frame: still remembered */
    if (!m) {
        m = g_new0(frame_memo, 1);
        g_private_set(&memo_key, m);
    }
    g_free(m->e);
    m->space = s->space;
    m->frame = f;
    m->n = *n;
    m->e = g_memdup2(e, (gsize)(*n ? *n : 1) * sizeof(gsd_entry));
    *out = e;
    return HPC_OK;
}
