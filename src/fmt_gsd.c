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
 * Directory operations re-stat the file at most every REFRESH_US and build a
 * new snapshot when it changed; readers of the old one finish with it.  Each
 * snapshot reads the file through its own cache space, so index blocks
 * cached before an append are never served after it.
 *
 * See shared/spec/gsd.md for the on-disk facts.
 */
#include "hpc_formats.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define GSD_MAGIC UINT64_C(0x65DF65DF65DF65DF)
#define HEADER_SIZE 256
#define ENTRY_SIZE 32
#define NAME_SLOT 64                  /* layer 1.0 name slots; block unit of both */
#define MAX_NAMES 65536               /* ids are 16 bits */
#define NODE_BITS 20
#define MAX_NODES (UINT32_C(1) << NODE_BITS)
#define NO_NODE UINT32_MAX
#define INO_FRAMES HPC_INO_FIRST      /* /frames */
#define INO_NODE_BASE (HPC_INO_FIRST + 16)  /* + (frame << NODE_BITS | node) */
#define MAX_FRAME (UINT64_C(1) << 43) /* frame numbers that still fit an inode */
#define MAX_FRAME_GAP 4096            /* empty frames in a row taken as real */
#define FULL_CHECK 65536              /* indexes this small are checked whole at mount */
#define WINDOW 4096                   /* else: the first and last entries */
#define MAX_FRAME_ENTRIES 131072      /* entries one frame may have (2 * 65536 ids) */
#define REFRESH_US 500000
#define INFO_MAX_FRAMES 10000         /* .info lists per-frame counts up to here */
#define BATCH 256                     /* entries read per cache call when scanning */

static const uint8_t type_size[12] = { 0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1 };
static const char *const type_dtype[12] = { NULL, "u1", "u2", "u4", "u8", "i1", "i2",
                                            "i4", "i8", "f4", "f8", "S1" };

typedef struct gsd_entry {
    uint64_t frame, N;
    int64_t location;
    uint32_t M;
    uint16_t id;
    uint8_t type, flags;
} gsd_entry;

typedef struct gsd_node {
    const char *name;         /* path component; "" for the frame directory */
    uint32_t parent, depth;
    uint32_t first_kid, nkids; /* into kids[], sorted by name */
    uint32_t pos;             /* own place among the parent's kids */
    int32_t chunk;            /* name id, -1 for directories */
} gsd_node;

/* What a snapshot reads the file through. */
typedef struct gsd_fill {
    const hpc_source *src;
    uint64_t size;
} gsd_fill;

/* One consistent view of the file. */
typedef struct gsd_state {
    hpc_cache *cache;
    uint64_t space;           /* cache space of this snapshot's bytes */
    gsd_fill fill;            /* fill.size: the file size it was built from */
    uint64_t index_location, index_allocated, namelist_location, namelist_allocated;
    uint64_t index_usable;    /* allocated entries that lie inside the file */
    uint32_t gsd_version, schema_version;
    char application[65], schema[65];
    uint64_t nentries;        /* valid index entries, served */
    uint64_t seen;            /* entries before the first with location 0 */
    uint64_t nframes;
    int checked_all;          /* every served entry was checked at build */
    GString *damage;          /* what was skipped and why; empty: nothing */
    GString *warnings;        /* names that could not be shown */
    GStringChunk *strings;
    uint32_t nnames;
    char **names;             /* by id */
    uint32_t *leaf;           /* id -> file node, NO_NODE if not shown */
    gsd_node *nodes;          /* node 0: a frame directory */
    uint32_t nnodes;
    uint32_t *kids;
} gsd_state;

typedef struct gsd {
    hpc_source *src;
    GMutex lock;              /* guards cur */
    gsd_state *cur;           /* g_atomic_rc_box */
    GMutex refresh_lock;      /* one refresh at a time */
    gint64 last_check;        /* monotonic us, atomic */
    int pending;              /* a refresh failed: retry even if unchanged */
    int warned;               /* read-time damage already logged */
} gsd;

/* ---- byte order and sizes --------------------------------------------- */

static uint64_t le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return GUINT64_FROM_LE(v);
}

static uint32_t le32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return GUINT32_FROM_LE(v);
}

static void decode_entry(const unsigned char *p, gsd_entry *e)
{
    uint16_t id;
    e->frame = le64(p);
    e->N = le64(p + 8);
    e->location = (int64_t)le64(p + 16);
    e->M = le32(p + 24);
    memcpy(&id, p + 28, 2);
    e->id = GUINT16_FROM_LE(id);
    e->type = p[30];
    e->flags = p[31];
}

static int is_v2(const gsd_state *s)
{
    return s->gsd_version >= 0x20000;
}

static int valid_type(const gsd_state *s, uint8_t t)
{
    return (t >= 1 && t <= 10) || (t == 11 && s->gsd_version >= 0x20001);
}

/* Bytes of an entry's data; FALSE on overflow. */
static gboolean entry_bytes(const gsd_entry *e, uint64_t *n)
{
    uint64_t nm;
    if (e->type < 1 || e->type > 11)
        return FALSE;
    return !__builtin_mul_overflow(e->N, (uint64_t)e->M, &nm) &&
           !__builtin_mul_overflow(nm, (uint64_t)type_size[e->type], n);
}

static int gsd_probe(const char *path, const unsigned char *head, size_t len)
{
    (void)path;
    return (head && len >= 8 && le64(head) == GSD_MAGIC) ? 100 : 0;
}

/* ---- reading through a snapshot's cache space -------------------------- */

/* Copy [off, off+len) of the file as of snapshot s. */
static int snap_read(const gsd_state *s, void *buf, size_t len, uint64_t off)
{
    return hpc_cache_read_file(s->cache, s->fill.src, s->space, s->fill.size, buf, len, off);
}

static int read_entries(const gsd_state *s, uint64_t first, uint64_t n, gsd_entry *out)
{
    unsigned char raw[BATCH * ENTRY_SIZE];
    while (n > 0) {
        uint64_t k = MIN(n, (uint64_t)BATCH);
        int rc = snap_read(s, raw, (size_t)k * ENTRY_SIZE, s->index_location + first * ENTRY_SIZE);
        if (rc != HPC_OK)
            return rc;
        for (uint64_t i = 0; i < k; i++)
            decode_entry(raw + i * ENTRY_SIZE, &out[i]);
        out += k;
        first += k;
        n -= k;
    }
    return HPC_OK;
}

static int read_entry(const gsd_state *s, uint64_t i, gsd_entry *e)
{
    return read_entries(s, i, 1, e);
}

/* Why entry e (after prev, or NULL when not known; first: it is entry 0)
 * is not valid, or NULL. */
static const char *entry_problem(const gsd_state *s, const gsd_entry *e, const gsd_entry *prev,
                                 int first)
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
    if (!entry_bytes(e, &n) || e->location < HEADER_SIZE ||
        (uint64_t)e->location > s->fill.size || n > s->fill.size - (uint64_t)e->location)
        return "data beyond the end of the file";
    /* Frames without chunks have no entries, but a writer does not end
     * thousands of frames without writing anything: a big jump is a
     * damaged frame number (it would make as many empty directories). */
    if ((first && e->frame > MAX_FRAME_GAP) || (prev && e->frame > prev->frame + MAX_FRAME_GAP))
        return "frame number jumps by more than 4096";
    if (prev) {
        if (e->frame < prev->frame)
            return "frame number goes backwards";
        if (is_v2(s) && e->frame == prev->frame && e->id <= prev->id)
            return "entries of a frame not in name id order";
    }
    return NULL;
}

/* ---- names ------------------------------------------------------------- */

static gboolean component_ok(const char *p, size_t len)
{
    return len > 0 && len <= 255 && !(len == 1 && p[0] == '.') &&
           !(len == 2 && p[0] == '.' && p[1] == '.');
}

typedef struct build_node {
    gsd_node n;
    GArray *kids;             /* uint32 */
} build_node;

static int cmp_kid_r(const void *a, const void *b, void *p)
{
    const gsd_node *nodes = p;
    return strcmp(nodes[*(const uint32_t *)a].name, nodes[*(const uint32_t *)b].name);
}

/* Build the name tree of s->names; names that cannot be paths are left out
 * with a warning.  Node ids depend only on the names in id order, so a
 * list that grew keeps the ids of the nodes it had. */
static int build_tree(gsd_state *s)
{
    GArray *bn = g_array_new(FALSE, TRUE, sizeof(build_node));
    GHashTable *index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    build_node root = { { "", NO_NODE, 0, 0, 0, 0, -1 }, NULL };
    int rc = HPC_OK;
    g_array_append_val(bn, root);
    s->leaf = g_new(uint32_t, s->nnames ? s->nnames : 1);
    for (uint32_t id = 0; id < s->nnames; id++) {
        const char *name = s->names[id];
        s->leaf[id] = NO_NODE;
        gboolean ok = TRUE;
        for (const char *p = name;;) {
            const char *slash = strchr(p, '/');
            size_t len = slash ? (size_t)(slash - p) : strlen(p);
            ok = ok && component_ok(p, len);
            if (!slash)
                break;
            p = slash + 1;
        }
        if (!ok) {
            g_string_append_printf(s->warnings, "warning: chunk name %u '%s' is not a valid path; not shown\n",
                                   id, name);
            continue;
        }
        uint32_t at = 0;
        for (const char *p = name; ok;) {
            const char *slash = strchr(p, '/');
            size_t len = slash ? (size_t)(slash - p) : strlen(p);
            char *key = g_strdup_printf("%u/%.*s", at, (int)len, p);
            gpointer v;
            if (g_hash_table_lookup_extended(index, key, NULL, &v)) {
                at = GPOINTER_TO_UINT(v);
                g_free(key);
            } else {
                if (bn->len >= MAX_NODES) {
                    g_free(key);
                    rc = HPC_E_UNSUPPORTED;
                    goto out;
                }
                build_node nn = { { g_string_chunk_insert_len(s->strings, p, (gssize)len), at,
                                    g_array_index(bn, build_node, at).n.depth + 1, 0, 0, 0, -1 }, NULL };
                uint32_t id_new = bn->len;
                g_array_append_val(bn, nn);
                build_node *par = &g_array_index(bn, build_node, at);
                if (!par->kids)
                    par->kids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
                g_array_append_val(par->kids, id_new);
                g_hash_table_insert(index, key, GUINT_TO_POINTER(id_new));
                at = id_new;
            }
            if (!slash)
                break;
            p = slash + 1;
        }
        build_node *leaf = &g_array_index(bn, build_node, at);
        if (leaf->n.chunk >= 0)
            g_string_append_printf(s->warnings, "warning: chunk name %u '%s' repeats name %d; not shown\n",
                                   id, name, leaf->n.chunk);
        else
            leaf->n.chunk = (int32_t)id;
    }
    s->nnodes = bn->len;
    s->nodes = g_new0(gsd_node, s->nnodes);
    s->kids = g_new(uint32_t, s->nnodes);
    uint32_t nk = 0;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        build_node *b = &g_array_index(bn, build_node, i);
        s->nodes[i] = b->n;
        s->nodes[i].first_kid = nk;
        s->nodes[i].nkids = b->kids ? b->kids->len : 0;
        if (b->kids)
            memcpy(s->kids + nk, b->kids->data, b->kids->len * sizeof(uint32_t));
        nk += s->nodes[i].nkids;
    }
    for (uint32_t i = 0; i < s->nnodes; i++) {
        gsd_node *n = &s->nodes[i];
        if (n->nkids > 1)
            g_qsort_with_data(s->kids + n->first_kid, (gint)n->nkids, sizeof(uint32_t),
                              cmp_kid_r, s->nodes);
        for (uint32_t j = 0; j < n->nkids; j++)
            s->nodes[s->kids[n->first_kid + j]].pos = j;
        if (n->chunk < 0)
            continue;
        if (n->nkids > 0) {
            g_string_append_printf(s->warnings, "warning: chunk name %d '%s' is also a directory; "
                                   "the chunk is not shown\n", n->chunk, s->names[n->chunk]);
            n->chunk = -1;
        } else {
            s->leaf[n->chunk] = i;
        }
    }
out:
    for (guint i = 0; i < bn->len; i++)
        if (g_array_index(bn, build_node, i).kids)
            g_array_free(g_array_index(bn, build_node, i).kids, TRUE);
    g_array_free(bn, TRUE);
    g_hash_table_destroy(index);
    return rc;
}

/* Read the name list (layer 1: 64-byte slots; layer 2: NUL-separated). */
static int read_names(gsd_state *s, const char *path, GError **err)
{
    uint64_t block, size = s->fill.size;
    if (__builtin_mul_overflow(s->namelist_allocated, (uint64_t)NAME_SLOT, &block) ||
        s->namelist_location < HEADER_SIZE || s->namelist_location >= size)
        return hpc_fail(err, HPC_E_CORRUPT, path, "namelist_location", 24,
                        "name list at %" PRIu64 " (%" PRIu64 " slots) lies outside the file (%" PRIu64 " bytes)",
                        s->namelist_location, s->namelist_allocated, size);
    if (block > size - s->namelist_location) {
        g_string_append_printf(s->damage, "namelist: %" PRIu64 " of %" PRIu64
                               " bytes lie inside the file; names cut off are lost\n",
                               size - s->namelist_location, block);
        block = size - s->namelist_location;
    }
    unsigned char *raw = g_malloc(block ? block : 1);
    int rc = snap_read(s, raw, (size_t)block, s->namelist_location);
    if (rc != HPC_OK) {
        g_free(raw);
        return hpc_fail(err, rc, path, "namelist", s->namelist_location, "cannot read the name list");
    }
    GPtrArray *names = g_ptr_array_new();
    if (is_v2(s)) {
        for (uint64_t p = 0; p < block && names->len < MAX_NAMES;) {
            const unsigned char *end = memchr(raw + p, '\0', (size_t)(block - p));
            if (!end || end == raw + p)
                break;        /* empty string ends the list; unterminated: cut */
            g_ptr_array_add(names, g_string_chunk_insert_len(s->strings, (const char *)raw + p,
                                                             (gssize)(end - (raw + p))));
            p = (uint64_t)(end - raw) + 1;
        }
    } else {
        for (uint64_t p = 0; p + NAME_SLOT <= block && names->len < MAX_NAMES; p += NAME_SLOT) {
            size_t len = strnlen((const char *)raw + p, NAME_SLOT - 1);
            if (len == 0)
                break;
            g_ptr_array_add(names, g_string_chunk_insert_len(s->strings, (const char *)raw + p,
                                                             (gssize)len));
        }
    }
    g_free(raw);
    s->nnames = names->len;
    s->names = (char **)g_ptr_array_free(names, FALSE);
    rc = build_tree(s);
    if (rc != HPC_OK)
        return hpc_fail(err, rc, path, "namelist", s->namelist_location,
                        "the chunk names make more than %u directory entries", MAX_NODES);
    return HPC_OK;
}

/* ---- snapshots ---------------------------------------------------------- */

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
}

static void state_unref(gsd_state *s)
{
    if (s)
        g_atomic_rc_box_release_full(s, state_clear);
}

static void copy_text(char *dst, const unsigned char *src)
{
    size_t n = strnlen((const char *)src, 64);
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
        int rc = read_entries(s, i, k, batch);
        if (rc != HPC_OK)
            return rc;
        for (uint64_t j = 0; j < k; j++) {
            const char *w = entry_problem(s, &batch[j], have ? &last : NULL, i + j == 0);
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

static int lower_bound(const gsd_state *s, uint64_t f, uint64_t *out);

/* Find the end of the index (first entry with location 0) by binary search,
 * as the GSD library does: entries are written in order. */
static int index_end(const gsd_state *s, uint64_t *end)
{
    gsd_entry e;
    *end = 0;
    if (s->index_usable == 0)
        return HPC_OK;
    int rc = read_entry(s, 0, &e);
    if (rc != HPC_OK || e.location == 0)
        return rc;
    uint64_t lo = 1, hi = s->index_usable;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((rc = read_entry(s, mid, &e)) != HPC_OK)
            return rc;
        if (e.location != 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *end = lo;
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
        s->checked_all = prev->checked_all;
        if (from > 0) {
            if ((rc = read_entry(s, from - 1, &before)) != HPC_OK)
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
            if ((rc = read_entry(s, s->seen - WINDOW - 1, &before)) != HPC_OK)
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
        if ((rc = read_entry(s, bad, &e)) != HPC_OK)
            return rc;
        g_string_append_printf(s->damage, "skipped: index entry %" PRIu64 " at offset %" PRIu64
                               " (frame %" PRIu64 ", name id %u): %s; it and the %" PRIu64
                               " entries after it are not served\n",
                               bad, s->index_location + bad * ENTRY_SIZE, e.frame, e.id, why,
                               s->seen - bad - 1);
        /* Unless the bad entry plausibly starts a later frame, the frame
         * before it may have lost a chunk: do not serve it half. */
        if (bad > 0 && (rc = read_entry(s, bad - 1, &last)) == HPC_OK)
            partial = !(e.frame > last.frame && e.frame <= last.frame + MAX_FRAME_GAP);
    } else if (s->index_usable < s->index_allocated && s->seen == s->index_usable && s->seen > 0) {
        /* the index is cut by the end of the file: its last frame may be too */
        rc = read_entry(s, s->seen - 1, &last);
        partial = 1;
    }
    if (rc != HPC_OK)
        return rc;
    if (partial) {
        uint64_t first;
        if ((rc = lower_bound(s, last.frame, &first)) != HPC_OK)
            return rc;
        g_string_append_printf(s->damage, "skipped: frame %" PRIu64 " may be incomplete; its %"
                               PRIu64 " valid entries are not served\n",
                               last.frame, s->nentries - first);
        s->nentries = first;
    }
    s->nframes = 0;
    if (s->nentries > 0) {
        if ((rc = read_entry(s, s->nentries - 1, &last)) != HPC_OK)
            return rc;
        s->nframes = last.frame + 1;
    }
    return HPC_OK;
}

/* Build a snapshot of the file as it is now. */
static int state_build(hpc_container *c, gsd *g, const gsd_state *prev, gsd_state **out,
                       GError **err)
{
    const char *path = g->src->path;
    unsigned char h[HEADER_SIZE];
    gsd_state *s = g_atomic_rc_box_new0(gsd_state);
    int rc;
    s->cache = hpc_container_cache(c);
    s->space = hpc_cache_space_new();
    s->fill.src = g->src;
    s->fill.size = __atomic_load_n(&g->src->size, __ATOMIC_ACQUIRE);
    s->damage = g_string_new(NULL);
    s->warnings = g_string_new(NULL);
    s->strings = g_string_chunk_new(4096);
    *out = NULL;

    rc = snap_read(s, h, HEADER_SIZE, 0);
    if (rc != HPC_OK) {
        rc = hpc_fail(err, rc, path, "header", 0, "the file (%" PRIu64 " bytes) is shorter "
                      "than the %d-byte header", s->fill.size, HEADER_SIZE);
        goto out;
    }
    if (le64(h) != GSD_MAGIC) {
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "magic", 0, "0x%016" PRIx64 " is not the GSD magic",
                      le64(h));
        goto out;
    }
    s->index_location = le64(h + 8);
    s->index_allocated = le64(h + 16);
    s->namelist_location = le64(h + 24);
    s->namelist_allocated = le64(h + 32);
    s->schema_version = le32(h + 40);
    s->gsd_version = le32(h + 44);
    copy_text(s->application, h + 48);
    copy_text(s->schema, h + 112);
    if (s->gsd_version != 3 && (s->gsd_version < 0x10000 || s->gsd_version >= 0x30000)) {
        rc = hpc_fail(err, HPC_E_UNSUPPORTED, path, "gsd_version", 44,
                      "file layer %u.%u is not supported (0.3 and 1.0 to 2.x are)",
                      s->gsd_version >> 16, s->gsd_version & 0xffff);
        goto out;
    }
    if (s->index_location < HEADER_SIZE || s->index_location >= s->fill.size ||
        s->fill.size - s->index_location < ENTRY_SIZE) {
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "index_location", 8,
                      "index at %" PRIu64 " lies outside the file (%" PRIu64 " bytes)",
                      s->index_location, s->fill.size);
        goto out;
    }
    s->index_usable = (s->fill.size - s->index_location) / ENTRY_SIZE;
    if (s->index_allocated <= s->index_usable)
        s->index_usable = s->index_allocated;
    else
        g_string_append_printf(s->damage, "index: only %" PRIu64 " of %" PRIu64
                               " allocated entries lie inside the file\n",
                               s->index_usable, s->index_allocated);
    if ((rc = read_names(s, path, err)) != HPC_OK)
        goto out;
    if ((rc = index_end(s, &s->seen)) != HPC_OK || (rc = validate(s, prev)) != HPC_OK) {
        rc = hpc_fail(err, rc, path, "index", s->index_location, "cannot read the index: %s",
                      hpc_strerror(rc));
        goto out;
    }
    *out = s;
    return HPC_OK;
out:
    state_unref(s);
    return rc;
}

static gsd_state *state_get(gsd *g)
{
    g_mutex_lock(&g->lock);
    gsd_state *s = g_atomic_rc_box_acquire(g->cur);
    g_mutex_unlock(&g->lock);
    return s;
}

/* Live files: re-stat at most every REFRESH_US; a new snapshot when the
 * file changed.  Failures keep the old snapshot (a writer may be midway). */
static void maybe_refresh(hpc_container *c)
{
    gsd *g = c->priv;
    gint64 now = g_get_monotonic_time();
    if (now - __atomic_load_n(&g->last_check, __ATOMIC_RELAXED) < REFRESH_US)
        return;
    if (!g_mutex_trylock(&g->refresh_lock))
        return;
    __atomic_store_n(&g->last_check, now, __ATOMIC_RELAXED);
    gboolean changed = FALSE;
    if (hpc_source_refresh(g->src, &changed) == HPC_OK && (changed || g->pending)) {
        gsd_state *old = state_get(g), *fresh = NULL;
        if (state_build(c, g, old, &fresh, NULL) == HPC_OK) {
            g_mutex_lock(&g->lock);
            g->cur = fresh;
            g_mutex_unlock(&g->lock);
            state_unref(old);      /* the reference cur held */
            g->pending = 0;
            hpc_container_info_changed(c);
        } else {
            g->pending = 1;
        }
        state_unref(old);
    }
    g_mutex_unlock(&g->refresh_lock);
}

/* ---- open / close ------------------------------------------------------- */

static void gsd_close(hpc_container *c)
{
    gsd *g = c->priv;
    if (!g)
        return;
    state_unref(g->cur);
    g_mutex_clear(&g->lock);
    g_mutex_clear(&g->refresh_lock);
    g_free(g);
    c->priv = NULL;
}

static int gsd_open(hpc_container *c, GError **err)
{
    gsd *g = g_new0(gsd, 1);
    int rc;
    g_mutex_init(&g->lock);
    g_mutex_init(&g->refresh_lock);
    g->src = hpc_container_add_source(c, c->path, err);
    if (!g->src) {
        rc = HPC_E_IO;
        goto out;
    }
    c->priv = g;
    rc = state_build(c, g, NULL, &g->cur, err);
    if (rc != HPC_OK)
        goto out;
    g->last_check = g_get_monotonic_time();
    c->live = 1;          /* a simulation may still be appending frames */
    return HPC_OK;
out:
    c->priv = g;
    gsd_close(c);
    return rc;
}

/* ---- frames ------------------------------------------------------------- */

/* First entry index with frame >= f. */
static int lower_bound(const gsd_state *s, uint64_t f, uint64_t *out)
{
    unsigned char b[8];
    uint64_t lo = 0, hi = s->nentries;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int rc = snap_read(s, b, 8, s->index_location + mid * ENTRY_SIZE);
        if (rc != HPC_OK)
            return rc;
        if (le64(b) < f)
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

/* The checked entries of frame f into *out (g_free). */
static int frame_entries(hpc_container *c, const gsd_state *s, uint64_t f, gsd_entry **out,
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
    int rc = lower_bound(s, f, &lo);
    for (uint64_t i = lo; rc == HPC_OK && i < s->nentries;) {
        uint64_t k = MIN(s->nentries - i, (uint64_t)32);
        if (*n + k > cap) {
            cap = (size_t)(*n + k) * 2;
            e = g_renew(gsd_entry, e, cap);
        }
        if ((rc = read_entries(s, i, k, e + *n)) != HPC_OK)
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
    /* Entries a large index did not check at mount are checked here. */
    for (uint64_t i = 0; rc == HPC_OK && i < *n; i++) {
        const char *why = entry_problem(s, &e[i], i ? &e[i - 1] : NULL, lo + i == 0);
        if (why) {
            gsd *g = c->priv;
            if (!g_atomic_int_get(&g->warned)) {
                g_atomic_int_set(&g->warned, 1);
                hpc_log("%s: index entry %" PRIu64 " (frame %" PRIu64 "): %s",
                        g->src->path, lo + i, f, why);
            }
            rc = HPC_E_CORRUPT;
        }
    }
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

/* The child of node `dir` on the path from the root to node x, NO_NODE if
 * x is not below dir. */
static uint32_t child_towards(const gsd_state *s, uint32_t dir, uint32_t x)
{
    if (x == NO_NODE)
        return NO_NODE;
    uint32_t want = s->nodes[dir].depth + 1;
    if (s->nodes[x].depth < want)
        return NO_NODE;
    while (s->nodes[x].depth > want)
        x = s->nodes[x].parent;
    return s->nodes[x].parent == dir ? x : NO_NODE;
}

static int is_file_node(const gsd_state *s, uint32_t n)
{
    return s->nodes[n].nkids == 0 && s->nodes[n].chunk >= 0;
}

static hpc_ino node_ino(uint64_t f, uint32_t n)
{
    return INO_NODE_BASE + ((f << NODE_BITS) | n);
}

static void fill_stat(const gsd_state *s, uint64_t f, uint32_t n, const gsd_entry *e, hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = node_ino(f, n);
    if (is_file_node(s, n)) {
        uint64_t bytes = 0;
        entry_bytes(e, &bytes);
        st->mode = HPC_MODE_FILE;
        st->size = bytes;
    } else {
        st->mode = HPC_MODE_DIR;
    }
}

/* Decode ino into (frame, node) of snapshot s. */
static int decode_ino(const gsd_state *s, hpc_ino ino, uint64_t *f, uint32_t *n)
{
    if (ino < INO_NODE_BASE)
        return HPC_E_NOENT;
    uint64_t x = ino - INO_NODE_BASE;
    *f = x >> NODE_BITS;
    *n = (uint32_t)(x & (MAX_NODES - 1));
    return (*f < s->nframes && *n < s->nnodes) ? HPC_OK : HPC_E_NOENT;
}

/* Does node n exist in frame f?  *e gets the entry of a file node. */
static int node_present(hpc_container *c, const gsd_state *s, uint64_t f, uint32_t n, gsd_entry *e)
{
    if (n == 0)
        return HPC_OK;
    gsd_entry *es;
    uint64_t k;
    int rc = frame_entries(c, s, f, &es, &k);
    if (rc != HPC_OK)
        return rc;
    rc = HPC_E_NOENT;
    for (uint64_t i = 0; i < k && rc != HPC_OK; i++) {
        uint32_t x = s->leaf[es[i].id];
        while (x != NO_NODE && s->nodes[x].depth > s->nodes[n].depth)
            x = s->nodes[x].parent;
        if (x == n) {
            *e = es[i];
            rc = HPC_OK;
        }
    }
    g_free(es);
    return rc;
}

/* Frame number from a directory name: exactly as we print it. */
static int parse_frame(const char *name, uint64_t *f)
{
    char again[32];
    if (!g_ascii_isdigit(name[0]) || strlen(name) > 20)
        return HPC_E_NOENT;
    for (const char *p = name; *p; p++)
        if (!g_ascii_isdigit(*p))
            return HPC_E_NOENT;
    guint64 v = g_ascii_strtoull(name, NULL, 10);
    g_snprintf(again, sizeof again, "%06" G_GUINT64_FORMAT, v);
    if (strcmp(again, name) != 0)
        return HPC_E_NOENT;
    *f = v;
    return HPC_OK;
}

/* ---- tree ---------------------------------------------------------------- */

static int gsd_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    gsd *g = c->priv;
    if (ino == HPC_INO_ROOT || ino == INO_FRAMES) {
        maybe_refresh(c);
        st->ino = ino;
        st->mode = HPC_MODE_DIR;
        return HPC_OK;
    }
    gsd_state *s = state_get(g);
    uint64_t f;
    uint32_t n;
    gsd_entry e = { 0 };
    int rc = decode_ino(s, ino, &f, &n);
    if (rc == HPC_OK && !is_file_node(s, n)) {
        state_unref(s);
        maybe_refresh(c);
        s = state_get(g);
        rc = decode_ino(s, ino, &f, &n);
    }
    if (rc == HPC_OK)
        rc = node_present(c, s, f, n, &e);
    if (rc == HPC_OK)
        fill_stat(s, f, n, &e, st);
    state_unref(s);
    return rc;
}

static int gsd_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    gsd *g = c->priv;
    maybe_refresh(c);
    gsd_state *s = state_get(g);
    uint64_t f;
    uint32_t n;
    int rc = HPC_E_NOENT;
    if (parent == HPC_INO_ROOT) {
        if (strcmp(name, "frames") == 0) {
            st->ino = INO_FRAMES;
            st->mode = HPC_MODE_DIR;
            rc = HPC_OK;
        }
    } else if (parent == INO_FRAMES) {
        if (parse_frame(name, &f) == HPC_OK && f < s->nframes) {
            st->ino = node_ino(f, 0);
            st->mode = HPC_MODE_DIR;
            rc = HPC_OK;
        }
    } else if ((rc = decode_ino(s, parent, &f, &n)) == HPC_OK) {
        const gsd_node *d = &s->nodes[n];
        rc = HPC_E_NOENT;
        if (is_file_node(s, n)) {
            rc = HPC_E_NOTDIR;
        } else {
            uint32_t lo = 0, hi = d->nkids;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                int cmp = strcmp(s->nodes[s->kids[d->first_kid + mid]].name, name);
                if (cmp == 0) {
                    uint32_t k = s->kids[d->first_kid + mid];
                    gsd_entry e = { 0 };
                    rc = node_present(c, s, f, k, &e);
                    if (rc == HPC_OK)
                        fill_stat(s, f, k, &e, st);
                    break;
                }
                if (cmp < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
        }
    }
    state_unref(s);
    return rc;
}

static int gsd_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    gsd *g = c->priv;
    maybe_refresh(c);
    gsd_state *s = state_get(g);
    hpc_stat st;
    char name[32];
    uint64_t f;
    uint32_t n;
    int rc = HPC_OK;
    if (dir == HPC_INO_ROOT) {
        memset(&st, 0, sizeof st);
        st.ino = INO_FRAMES;
        st.mode = HPC_MODE_DIR;
        if (cookie == 0)
            fn(ctx, "frames", &st, 1);
    } else if (dir == INO_FRAMES) {
        for (f = cookie; f < s->nframes; f++) {
            memset(&st, 0, sizeof st);
            st.ino = node_ino(f, 0);
            st.mode = HPC_MODE_DIR;
            g_snprintf(name, sizeof name, "%06" PRIu64, f);
            if (fn(ctx, name, &st, f + 1))
                break;
        }
    } else if ((rc = decode_ino(s, dir, &f, &n)) == HPC_OK) {
        const gsd_node *d = &s->nodes[n];
        gsd_entry *es = NULL;
        uint64_t k = 0;
        if (is_file_node(s, n))
            rc = HPC_E_NOTDIR;
        else
            rc = frame_entries(c, s, f, &es, &k);
        if (rc == HPC_OK) {
            /* which children this frame has; a file child's entry */
            uint64_t *which = g_new0(uint64_t, d->nkids ? d->nkids : 1);
            gboolean any = n == 0;
            for (uint64_t i = 0; i < k; i++) {
                uint32_t kid = child_towards(s, n, s->leaf[es[i].id]);
                if (kid == NO_NODE)
                    continue;
                any = TRUE;
                if (which[s->nodes[kid].pos] == 0)
                    which[s->nodes[kid].pos] = i + 1;
            }
            if (!any)
                rc = HPC_E_NOENT;
            for (uint64_t j = cookie; rc == HPC_OK && j < d->nkids; j++) {
                if (which[j] == 0)
                    continue;
                uint32_t kid = s->kids[d->first_kid + j];
                fill_stat(s, f, kid, &es[which[j] - 1], &st);
                if (fn(ctx, s->nodes[kid].name, &st, j + 1))
                    break;
            }
            g_free(which);
        }
        g_free(es);
    }
    state_unref(s);
    return rc;
}

/* ---- data ---------------------------------------------------------------- */

/* The entry of file node ino. */
static int file_entry(hpc_container *c, const gsd_state *s, hpc_ino ino, gsd_entry *e)
{
    uint64_t f;
    uint32_t n;
    int rc = decode_ino(s, ino, &f, &n);
    if (rc != HPC_OK)
        return rc;
    if (!is_file_node(s, n))
        return HPC_E_ISDIR;
    return node_present(c, s, f, n, e);
}

static int gsd_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                    size_t *nread)
{
    gsd *g = c->priv;
    gsd_state *s = state_get(g);
    gsd_entry e;
    uint64_t size = 0;
    *nread = 0;
    int rc = file_entry(c, s, ino, &e);
    if (rc == HPC_OK && entry_bytes(&e, &size) && off < size) {
        size_t take = (size_t)MIN((uint64_t)len, size - off);
        rc = snap_read(s, buf, take, (uint64_t)e.location + off);
        if (rc == HPC_OK)
            *nread = take;
    }
    state_unref(s);
    return rc;
}

static int gsd_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                   hpc_extent *ext, unsigned max, unsigned *n)
{
    gsd *g = c->priv;
    gsd_state *s = state_get(g);
    gsd_entry e;
    uint64_t size = 0;
    *n = 0;
    int rc = file_entry(c, s, ino, &e);
    if (rc == HPC_OK && max > 0 && entry_bytes(&e, &size) && off < size) {
        ext[0] = (hpc_extent){ g->src, (uint64_t)e.location + off, MIN(len, size - off) };
        *n = 1;
    }
    state_unref(s);
    return rc;
}

static int gsd_xattrs(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx)
{
    gsd *g = c->priv;
    if (ino < INO_NODE_BASE)
        return HPC_OK;
    gsd_state *s = state_get(g);
    gsd_entry e;
    uint64_t f;
    uint32_t n;
    int rc = decode_ino(s, ino, &f, &n);
    if (rc == HPC_OK && is_file_node(s, n) && (rc = node_present(c, s, f, n, &e)) == HPC_OK) {
        char shape[48], dtype[8];
        g_snprintf(shape, sizeof shape, "%" PRIu64 ",%" PRIu32, e.N, e.M);
        g_snprintf(dtype, sizeof dtype, "%c%s",
                   type_size[e.type] == 1 ? '|' : (G_BYTE_ORDER == G_LITTLE_ENDIAN ? '<' : '>'),
                   type_dtype[e.type]);
        if (fn(ctx, "user.shape", shape, strlen(shape)) == 0)
            fn(ctx, "user.dtype", dtype, strlen(dtype));
    }
    state_unref(s);
    return rc;
}

/* ---- .info --------------------------------------------------------------- */

static int gsd_info(hpc_container *c, GString *o)
{
    gsd *g = c->priv;
    gsd_state *s = state_get(g);
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
        if ((rc = read_entries(s, i, k, batch)) != HPC_OK)
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
    state_unref(s);
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
    .read = gsd_read,
    .map = gsd_map,
    .xattrs = gsd_xattrs,
    .info = gsd_info,
};
