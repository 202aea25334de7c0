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
 * See docs/formats/gsd.md for the on-disk facts.
 */
#include "gsd_layout.h"
#include "hpc_bytes.h"
#include "hpc_format.h"
#include "hpc_tree.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
#define NGROUPS 7                     /* hoomd particle and topology groups */
#define INO_SERIES_BASE (INO_NODE_BASE + (MAX_FRAME << NODE_BITS)) /* + node: /series/<name> */
#define INO_SERIES_FRAMES (INO_SERIES_BASE + MAX_NODES)            /* + node: <name>.frames */
#define MAX_RUNS 4096                 /* runs of frames a series may occupy */
#define MAX_ALL_RUNS 262144           /* and all series together (8 MiB) */
#define SCAN_BATCH 4096               /* entries read at once by the series scan */

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

typedef struct gsd_series_set gsd_series_set;
static gsd_series_set *series_set_copy(const gsd_series_set *set, uint32_t nnames);
static void series_set_free(gsd_series_set *set);
static int series_usable(const gsd_series_set *set);
static uint64_t series_scanned(const gsd_series_set *set);

/* One consistent view of the file. */
typedef struct gsd_state {
    hpc_cache *cache;
    uint64_t space;           /* cache space of this snapshot's bytes */
    gsd_fill fill;            /* fill.size: the file size it was built from */
    uint64_t index_location, index_allocated, namelist_location, namelist_allocated;
    uint64_t index_usable;    /* allocated entries that lie inside the file */
    uint32_t gsd_version, schema_version;
    char application[GSD_NAME_FIELD + 1], schema[GSD_NAME_FIELD + 1];
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
    int continued;            /* validation went on from prev's entries */
    /* hoomd schema: chunks frame 0 lends to frames that lack them */
    int hoomd;
    uint32_t nlend;
    uint16_t *lend_id;        /* names frame 0 holds and lends */
    int8_t *lend_group;       /* -1: always; else the group whose N must match */
    int32_t n_id[NGROUPS];    /* id of "<group>/N", -1 if none */
    int n0_ok;                /* frame 0's N values are usable */
    long double n0[NGROUPS];  /* frame 0's N of each group (0 when absent) */
    /* /series, computed on first use (series_lock) */
    GMutex series_lock;
    gsd_series_set *series, *series_seed;
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

static void decode_entry(const unsigned char *p, gsd_entry *e)
{
    e->frame = hpc_le64(p + GSD_ENT_FRAME);
    e->N = hpc_le64(p + GSD_ENT_N);
    e->location = (int64_t)hpc_le64(p + GSD_ENT_LOCATION);
    e->M = hpc_le32(p + GSD_ENT_M);
    e->id = hpc_le16(p + GSD_ENT_ID);
    e->type = p[GSD_ENT_TYPE];
    e->flags = p[GSD_ENT_FLAGS];
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
    if (e->type < 1 || e->type > GSD_TYPE_MAX)
        return FALSE;
    return hpc_mul_u64(e->N, e->M, &nm) && hpc_mul_u64(nm, gsd_type_size(e->type), n);
}

static int gsd_probe(const char *path, const unsigned char *head, size_t len)
{
    (void)path;
    return (head && len >= 8 && hpc_le64(head) == GSD_MAGIC) ? 100 : 0;
}

/* ---- reading through a snapshot's cache space -------------------------- */

/* Copy [off, off+len) of the file as of snapshot s. */
static int snap_read(const gsd_state *s, void *buf, size_t len, uint64_t off)
{
    return hpc_cache_read_file(s->cache, s->fill.src, s->space, s->fill.size, buf, len, off);
}

static int read_entries(const gsd_state *s, uint64_t first, uint64_t n, gsd_entry *out)
{
    unsigned char raw[BATCH * GSD_ENTRY_SIZE];
    while (n > 0) {
        uint64_t k = MIN(n, (uint64_t)BATCH);
        int rc = snap_read(s, raw, (size_t)k * GSD_ENTRY_SIZE, s->index_location + first * GSD_ENTRY_SIZE);
        if (rc != HPC_OK)
            return rc;
        for (uint64_t i = 0; i < k; i++)
            decode_entry(raw + i * GSD_ENTRY_SIZE, &out[i]);
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
    if (!entry_bytes(e, &n) || e->location < GSD_HEADER_SIZE ||
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
    if (!hpc_mul_u64(s->namelist_allocated, GSD_NAME_UNIT, &block) ||
        s->namelist_location < GSD_HEADER_SIZE || s->namelist_location >= size)
        return hpc_fail(err, HPC_E_CORRUPT, path, "namelist_location", GSD_OFF_NAMES_LOC,
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
        for (uint64_t p = 0; p < block && names->len < GSD_MAX_IDS;) {
            const unsigned char *end = memchr(raw + p, '\0', (size_t)(block - p));
            if (!end || end == raw + p)
                break;        /* empty string ends the list; unterminated: cut */
            g_ptr_array_add(names, g_string_chunk_insert_len(s->strings, (const char *)raw + p,
                                                             (gssize)(end - (raw + p))));
            p = (uint64_t)(end - raw) + 1;
        }
    } else {
        for (uint64_t p = 0; p + GSD_NAME_UNIT <= block && names->len < GSD_MAX_IDS; p += GSD_NAME_UNIT) {
            size_t len = strnlen((const char *)raw + p, GSD_NAME_UNIT - 1);
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
    g_free(s->lend_id);
    g_free(s->lend_group);
    series_set_free(s->series);
    series_set_free(s->series_seed);
    g_mutex_clear(&s->series_lock);
}

static void state_unref(gsd_state *s)
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
static int hoomd_setup(hpc_container *c, gsd_state *s);

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
        s->continued = 1;
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
                               bad, s->index_location + bad * GSD_ENTRY_SIZE, e.frame, e.id, why,
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
    unsigned char h[GSD_HEADER_SIZE];
    gsd_state *s = g_atomic_rc_box_new0(gsd_state);
    int rc;
    s->cache = hpc_container_cache(c);
    s->space = hpc_cache_space_new();
    s->fill.src = g->src;
    s->fill.size = __atomic_load_n(&g->src->size, __ATOMIC_ACQUIRE);
    s->damage = g_string_new(NULL);
    s->warnings = g_string_new(NULL);
    s->strings = g_string_chunk_new(4096);
    g_mutex_init(&s->series_lock);
    *out = NULL;

    rc = snap_read(s, h, GSD_HEADER_SIZE, 0);
    if (rc != HPC_OK) {
        rc = hpc_fail(err, rc, path, "header", 0, "the file (%" PRIu64 " bytes) is shorter "
                      "than the %d-byte header", s->fill.size, GSD_HEADER_SIZE);
        goto out;
    }
    if (hpc_le64(h) != GSD_MAGIC) {
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "magic", 0, "0x%016" PRIx64 " is not the GSD magic",
                      hpc_le64(h));
        goto out;
    }
    s->index_location = hpc_le64(h + GSD_OFF_INDEX_LOC);
    s->index_allocated = hpc_le64(h + GSD_OFF_INDEX_ALLOC);
    s->namelist_location = hpc_le64(h + GSD_OFF_NAMES_LOC);
    s->namelist_allocated = hpc_le64(h + GSD_OFF_NAMES_ALLOC);
    s->schema_version = hpc_le32(h + GSD_OFF_SCHEMA_VERSION);
    s->gsd_version = hpc_le32(h + GSD_OFF_GSD_VERSION);
    copy_text(s->application, h + GSD_OFF_APPLICATION);
    copy_text(s->schema, h + GSD_OFF_SCHEMA);
    if (s->gsd_version != 3 && (s->gsd_version < 0x10000 || s->gsd_version >= 0x30000)) {
        rc = hpc_fail(err, HPC_E_UNSUPPORTED, path, "gsd_version", GSD_OFF_GSD_VERSION,
                      "file layer %u.%u is not supported (0.3 and 1.0 to 2.x are)",
                      s->gsd_version >> 16, s->gsd_version & 0xffff);
        goto out;
    }
    if (s->index_location < GSD_HEADER_SIZE || s->index_location >= s->fill.size ||
        s->fill.size - s->index_location < GSD_ENTRY_SIZE) {
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "index_location", GSD_OFF_INDEX_LOC,
                      "index at %" PRIu64 " lies outside the file (%" PRIu64 " bytes)",
                      s->index_location, s->fill.size);
        goto out;
    }
    s->index_usable = (s->fill.size - s->index_location) / GSD_ENTRY_SIZE;
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
    if ((rc = hoomd_setup(c, s)) != HPC_OK) {
        rc = hpc_fail(err, rc, path, "index", s->index_location, "cannot read frame 0: %s",
                      hpc_strerror(rc));
        goto out;
    }
    if (prev && s->continued) {      /* the series extend the previous ones */
        gsd_state *p = (gsd_state *)prev;
        g_mutex_lock(&p->series_lock);
        if (series_usable(p->series) && series_scanned(p->series) <= s->nentries)
            s->series_seed = series_set_copy(p->series, s->nnames);
        g_mutex_unlock(&p->series_lock);
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
        int rc = snap_read(s, b, 8, s->index_location + mid * GSD_ENTRY_SIZE);
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

/* ---- hoomd schema: what frame 0 lends ------------------------------------ */

/* gsd.hoomd (python3-gsd) fills a chunk a frame lacks from frame 0 for the
 * names it knows: configuration/{step,dimensions,box}, <group>/N,
 * <group>/types (not constraints), particles/type_shapes and every log/
 * name always; the per-item quantities of a group only when the frame's N
 * equals frame 0's N (else it makes defaults, which are no chunk). */
enum { LEND_NONE, LEND_ALWAYS, LEND_SAME_N };

static const char *const hoomd_group[NGROUPS] = { "particles", "bonds", "angles", "dihedrals",
                                                  "impropers", "constraints", "pairs" };
#define GROUP_PARTICLES 0
#define GROUP_CONSTRAINTS 5

static int in_list(const char *const *list, const char *q)
{
    for (; *list; list++)
        if (strcmp(*list, q) == 0)
            return 1;
    return 0;
}

/* How frame 0 lends chunk `name`; *group: the group of a LEND_SAME_N name. */
static int hoomd_lend_kind(const char *name, int *group)
{
    static const char *const conf[] = { "step", "dimensions", "box", NULL };
    static const char *const part[] = { "typeid", "mass", "charge", "diameter", "body",
                                        "moment_inertia", "position", "orientation",
                                        "velocity", "angmom", "image", NULL };
    static const char *const topo[] = { "typeid", "group", NULL };
    static const char *const cons[] = { "value", "group", NULL };
    const char *slash = strchr(name, '/');
    if (g_str_has_prefix(name, "log/"))
        return LEND_ALWAYS;
    if (!slash)
        return LEND_NONE;
    size_t glen = (size_t)(slash - name);
    const char *q = slash + 1;
    if (glen == 13 && memcmp(name, "configuration", 13) == 0)
        return in_list(conf, q) ? LEND_ALWAYS : LEND_NONE;
    int g = 0;
    while (g < NGROUPS && !(strlen(hoomd_group[g]) == glen && memcmp(name, hoomd_group[g], glen) == 0))
        g++;
    if (g == NGROUPS)
        return LEND_NONE;
    *group = g;
    if (strcmp(q, "N") == 0 || (strcmp(q, "types") == 0 && g != GROUP_CONSTRAINTS) ||
        (strcmp(q, "type_shapes") == 0 && g == GROUP_PARTICLES))
        return LEND_ALWAYS;
    if (g == GROUP_PARTICLES)
        return in_list(part, q) ? LEND_SAME_N : LEND_NONE;
    return in_list(g == GROUP_CONSTRAINTS ? cons : topo, q) ? LEND_SAME_N : LEND_NONE;
}

/* The first element of an N chunk as gsd.hoomd takes it (N_arr[0]): *ok 0
 * when it has none or is not a number (gsd.hoomd then fails or compares
 * arrays; no link is made). */
static int chunk_first_value(const gsd_state *s, const gsd_entry *e, long double *v, int *ok)
{
    unsigned char b[8];
    *ok = 0;
    if (e->N == 0 || e->M != 1 || e->type < 1 || e->type > 10)
        return HPC_OK;
    int rc = snap_read(s, b, gsd_type_size(e->type), (uint64_t)e->location);
    if (rc != HPC_OK)
        return rc;
    union { uint8_t u1; uint16_t u2; uint32_t u4; uint64_t u8; int8_t i1; int16_t i2;
            int32_t i4; int64_t i8; float f4; double f8; } x;
    memcpy(&x, b, gsd_type_size(e->type));
    switch (e->type) {
    case 1: *v = x.u1; break;
    case 2: *v = x.u2; break;
    case 3: *v = x.u4; break;
    case 4: *v = x.u8; break;
    case 5: *v = x.i1; break;
    case 6: *v = x.i2; break;
    case 7: *v = x.i4; break;
    case 8: *v = x.i8; break;
    case 9: *v = x.f4; break;
    default: *v = x.f8; break;
    }
    *ok = 1;
    return HPC_OK;
}

/* For a hoomd file (schema "hoomd", version 1.x, as gsd.hoomd opens): the
 * names frame 0 holds and lends, and frame 0's N of each group. */
static int hoomd_setup(hpc_container *c, gsd_state *s)
{
    gsd_entry *es = NULL;
    uint64_t k = 0;
    for (int g = 0; g < NGROUPS; g++) {
        s->n_id[g] = -1;
        s->n0[g] = 0;
    }
    s->hoomd = strcmp(s->schema, "hoomd") == 0 && (s->schema_version >> 16) == 1;
    if (!s->hoomd || s->nframes < 2)
        return HPC_OK;
    for (uint32_t id = 0; id < s->nnames; id++) {
        const char *name = s->names[id];
        size_t len = strlen(name);
        for (int g = 0; g < NGROUPS; g++)
            if (len == strlen(hoomd_group[g]) + 2 && g_str_has_prefix(name, hoomd_group[g]) &&
                strcmp(name + len - 2, "/N") == 0 && s->n_id[g] < 0)
                s->n_id[g] = (int32_t)id;
    }
    int rc = frame_entries(c, s, 0, &es, &k);
    if (rc != HPC_OK)
        return rc;
    s->lend_id = g_new(uint16_t, k ? k : 1);
    s->lend_group = g_new(int8_t, k ? k : 1);
    s->n0_ok = 1;
    for (uint64_t i = 0; i < k && rc == HPC_OK; i++) {
        int group = -1, kind = hoomd_lend_kind(s->names[es[i].id], &group);
        for (int g = 0; g < NGROUPS; g++) {
            int ok = 1;
            if ((int32_t)es[i].id == s->n_id[g] && (rc = chunk_first_value(s, &es[i], &s->n0[g], &ok)) == HPC_OK)
                s->n0_ok = s->n0_ok && ok;
        }
        if (kind == LEND_NONE || s->leaf[es[i].id] == NO_NODE)
            continue;
        s->lend_id[s->nlend] = es[i].id;
        s->lend_group[s->nlend++] = (int8_t)(kind == LEND_ALWAYS ? -1 : group);
    }
    g_free(es);
    return rc;
}

/* Does frame f's N of group g equal frame 0's?  es: frame f's entries. */
static int same_n(const gsd_state *s, int g, const gsd_entry *es, uint64_t k, int *same)
{
    *same = s->n0_ok;
    for (uint64_t i = 0; i < k && s->n_id[g] >= 0; i++) {
        if ((int32_t)es[i].id != s->n_id[g])
            continue;
        long double v;
        int ok;
        int rc = chunk_first_value(s, &es[i], &v, &ok);
        *same = *same && ok && v == s->n0[g];
        return rc;
    }
    return HPC_OK;
}

/* The names frame 0 lends to frame f (entries es), into *out (g_free). */
static int frame_lent(const gsd_state *s, uint64_t f, const gsd_entry *es, uint64_t k,
                      uint16_t **out, uint32_t *n)
{
    int rc = HPC_OK, same[NGROUPS];
    *out = NULL;
    *n = 0;
    if (!s->hoomd || f == 0 || s->nlend == 0)
        return HPC_OK;
    for (int g = 0; g < NGROUPS && rc == HPC_OK; g++)
        rc = same_n(s, g, es, k, &same[g]);
    if (rc != HPC_OK)
        return rc;
    guint8 *has = g_malloc0(s->nnames / 8 + 1);
    for (uint64_t i = 0; i < k; i++)
        has[es[i].id / 8] |= (guint8)(1u << (es[i].id % 8));
    *out = g_new(uint16_t, s->nlend);
    for (uint32_t i = 0; i < s->nlend; i++) {
        uint16_t id = s->lend_id[i];
        if (has[id / 8] & (1u << (id % 8)))
            continue;
        if (s->lend_group[i] < 0 || same[s->lend_group[i]])
            (*out)[(*n)++] = id;
    }
    g_free(has);
    return HPC_OK;
}

/* Target of a lent chunk's link: up to the frames directory, into frame 0. */
static char *lend_target(const gsd_state *s, uint32_t n)
{
    GString *t = g_string_new(NULL);
    for (uint32_t d = 0; d < s->nodes[n].depth; d++)
        g_string_append(t, "../");
    g_string_append_printf(t, "000000/%s", s->names[s->nodes[n].chunk]);
    return g_string_free(t, FALSE);
}

/* ---- /series: a chunk name over all frames -------------------------------- */

/* Frames holding one name, as arithmetic runs: frames first, first+stride,
 * ... (count of them); ord: how many frames the runs before hold. */
typedef struct gsd_run {
    uint64_t first, stride, count, ord;
} gsd_run;

typedef struct gsd_series {
    uint64_t count;           /* frames holding the name */
    uint64_t last;            /* the last of them */
    uint64_t N;
    uint32_t M;
    uint8_t type;
    const char *why;          /* not offered: why (static text); NULL: offered */
    uint64_t why_frame;       /* the frame that made it so */
    GArray *runs;             /* gsd_run; NULL once not offered */
} gsd_series;

/* Every name's series as of the first `scanned` index entries. */
struct gsd_series_set {
    uint64_t scanned;
    uint64_t runs;            /* of all series */
    uint32_t nnames;
    gsd_series *by_id;
    gsd_entry last;           /* entry scanned-1 */
    char *problem;            /* an invalid entry stopped the scan: no series */
    double seconds;           /* time the scan took */
    uint8_t *shown;           /* by node: an offered series is at or below it */
    uint32_t nnodes;
};

static int series_usable(const gsd_series_set *set)
{
    return set && !set->problem;
}

static uint64_t series_scanned(const gsd_series_set *set)
{
    return set->scanned;
}

static void series_set_free(gsd_series_set *set)
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
static gsd_series_set *series_set_copy(const gsd_series_set *set, uint32_t nnames)
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
            decode_entry(raw + j * GSD_ENTRY_SIZE, &e);
            const char *why = entry_problem(s, &e, i ? &set->last : NULL, i == 0);
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
static int series_compute(hpc_container *c, const gsd_state *cs, int notify,
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
            series_set_free(set);
        }
    }
    *out = s->series;
    g_mutex_unlock(&s->series_lock);
    /* after the unlock: .info's builder holds the core's lock and waits
     * for series_lock */
    if (computed && notify)
        hpc_container_info_changed(c);
    return rc;
}

static int series_get(hpc_container *c, const gsd_state *cs, const gsd_series_set **out)
{
    return series_compute(c, cs, 1, out);
}

/* Bytes of one frame's chunk of series x. */
static uint64_t series_chunk_bytes(const gsd_series *x)
{
    gsd_entry e = { .N = x->N, .M = x->M, .type = x->type };
    uint64_t b = 0;
    entry_bytes(&e, &b);
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
        if ((rc = read_entries(s, *pos + 1, k, b)) != HPC_OK)
            return rc;
        for (uint64_t j = 0; j < k && b[j].frame <= f; j++)
            if (b[j].frame == f && b[j].id == id) {
                *pos += 1 + j;
                *e = b[j];
                return HPC_OK;
            }
    }
    if ((rc = lower_bound(s, f, &i)) != HPC_OK)
        return rc;
    for (uint64_t end = MIN(s->nentries, i + MAX_FRAME_ENTRIES); i < end;) {
        uint64_t k = MIN(end - i, (uint64_t)32);
        if ((rc = read_entries(s, i, k, b)) != HPC_OK)
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
static int series_extents(const gsd *g, const gsd_state *s, const gsd_series *x, uint16_t id,
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
static void series_frames_bytes(const gsd_series *x, unsigned char *buf, size_t len, uint64_t off,
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

static void fill_stat(const gsd_state *s, uint64_t f, uint32_t n, const gsd_entry *e, int lent,
                      hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = node_ino(f, n);
    if (is_file_node(s, n) && lent) {
        st->mode = HPC_MODE_LINK;
        st->size = 3 * s->nodes[n].depth + 7 + strlen(s->names[s->nodes[n].chunk]);
    } else if (is_file_node(s, n)) {
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

/* Is node n, or a node below it, the file node of name id? */
static int reaches(const gsd_state *s, uint16_t id, uint32_t n)
{
    uint32_t x = s->leaf[id];
    while (x != NO_NODE && s->nodes[x].depth > s->nodes[n].depth)
        x = s->nodes[x].parent;
    return x == n;
}

/* Does node n exist in frame f?  *e gets the entry of a file node, *lent is
 * 1 for a file frame 0 lends (a link; hoomd files). */
static int node_present(hpc_container *c, const gsd_state *s, uint64_t f, uint32_t n, gsd_entry *e,
                        int *lent)
{
    *lent = 0;
    if (n == 0)
        return HPC_OK;
    gsd_entry *es;
    uint64_t k;
    uint16_t *ids = NULL;
    uint32_t nids = 0;
    int rc = frame_entries(c, s, f, &es, &k);
    if (rc != HPC_OK)
        return rc;
    rc = HPC_E_NOENT;
    for (uint64_t i = 0; i < k && rc != HPC_OK; i++) {
        if (reaches(s, es[i].id, n)) {
            *e = es[i];
            rc = HPC_OK;
        }
    }
    if (rc != HPC_OK && (rc = frame_lent(s, f, es, k, &ids, &nids)) == HPC_OK) {
        rc = HPC_E_NOENT;
        for (uint32_t i = 0; i < nids && rc != HPC_OK; i++)
            if (reaches(s, ids[i], n)) {
                *lent = is_file_node(s, n);
                rc = HPC_OK;
            }
    }
    g_free(ids);
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

/* ---- /series tree ---------------------------------------------------------- */

static int is_series_ino(hpc_ino ino)
{
    return ino >= INO_SERIES_BASE && ino < INO_SERIES_FRAMES + MAX_NODES;
}

/* Node of a /series inode (*frames: its .frames file) that snapshot s shows. */
static int series_decode(const gsd_state *s, const gsd_series_set *set, hpc_ino ino, uint32_t *n,
                         int *frames)
{
    *frames = ino >= INO_SERIES_FRAMES;
    *n = (uint32_t)(ino - (*frames ? INO_SERIES_FRAMES : INO_SERIES_BASE));
    if (*n >= s->nnodes || *n >= set->nnodes || !set->shown[*n])
        return HPC_E_NOENT;
    if (*frames && !is_file_node(s, *n))
        return HPC_E_NOENT;
    return HPC_OK;
}

static const gsd_series *node_series(const gsd_state *s, const gsd_series_set *set, uint32_t n)
{
    return &set->by_id[s->nodes[n].chunk];
}

static void series_stat(const gsd_state *s, const gsd_series_set *set, uint32_t n, int frames,
                        hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = (frames ? INO_SERIES_FRAMES : INO_SERIES_BASE) + n;
    if (!is_file_node(s, n)) {
        st->mode = HPC_MODE_DIR;
        return;
    }
    const gsd_series *x = node_series(s, set, n);
    st->mode = HPC_MODE_FILE;
    st->size = frames ? x->count * 8 : x->count * series_chunk_bytes(x);
}

/* Kid of directory node d named name, NO_NODE if none. */
static uint32_t kid_named(const gsd_state *s, uint32_t d, const char *name)
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

static int series_lookup(const gsd_state *s, const gsd_series_set *set, uint32_t d,
                         const char *name, hpc_stat *st)
{
    if (is_file_node(s, d))
        return HPC_E_NOTDIR;
    uint32_t k = kid_named(s, d, name);
    if (k != NO_NODE && set->shown[k]) {
        series_stat(s, set, k, 0, st);
        return HPC_OK;
    }
    size_t len = strlen(name);
    if (len <= 7 || strcmp(name + len - 7, ".frames") != 0)
        return HPC_E_NOENT;
    char *base = g_strndup(name, len - 7);
    k = kid_named(s, d, base);
    g_free(base);
    if (k == NO_NODE || !set->shown[k] || !is_file_node(s, k))
        return HPC_E_NOENT;
    series_stat(s, set, k, 1, st);
    return HPC_OK;
}

/* Positions: 2j the j-th kid, 2j+1 its .frames file (file kids only). */
static int series_readdir(const gsd_state *s, const gsd_series_set *set, uint32_t d,
                          uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    const gsd_node *dn = &s->nodes[d];
    hpc_stat st;
    if (is_file_node(s, d))
        return HPC_E_NOTDIR;
    for (uint64_t p = cookie; p < 2 * (uint64_t)dn->nkids; p++) {
        uint32_t k = s->kids[dn->first_kid + p / 2];
        if (!set->shown[k] || (p % 2 == 1 && !is_file_node(s, k)))
            continue;
        char *name = g_strdup_printf("%s%s", s->nodes[k].name, p % 2 ? ".frames" : "");
        int taken = p % 2 == 1 && kid_named(s, d, name) != NO_NODE;   /* a real name wins */
        series_stat(s, set, k, (int)(p % 2), &st);
        int full = taken ? 0 : fn(ctx, name, &st, p + 1);
        g_free(name);
        if (full)
            break;
    }
    return HPC_OK;
}

/* .info lines about the series. */
static void series_info(const gsd_state *s, GString *o)
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

/* ---- tree ---------------------------------------------------------------- */

static int series_getattr(hpc_container *c, const gsd_state *s, hpc_ino ino, hpc_stat *st)
{
    const gsd_series_set *set;
    uint32_t n;
    int frames;
    int rc = series_get(c, s, &set);
    if (rc == HPC_OK)
        rc = series_decode(s, set, ino, &n, &frames);
    if (rc == HPC_OK)
        series_stat(s, set, n, frames, st);
    return rc;
}

static int gsd_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    gsd *g = c->priv;
    if (ino == HPC_INO_ROOT || ino == INO_FRAMES) {
        maybe_refresh(c);
        st->ino = ino;
        st->mode = HPC_MODE_DIR;
        return HPC_OK;
    }
    if (is_series_ino(ino)) {
        maybe_refresh(c);      /* series grow with the file */
        gsd_state *s = state_get(g);
        int rc = series_getattr(c, s, ino, st);
        state_unref(s);
        return rc;
    }
    gsd_state *s = state_get(g);
    uint64_t f;
    uint32_t n;
    gsd_entry e = { 0 };
    int lent = 0;
    int rc = decode_ino(s, ino, &f, &n);
    if (rc == HPC_OK && !is_file_node(s, n)) {
        state_unref(s);
        maybe_refresh(c);
        s = state_get(g);
        rc = decode_ino(s, ino, &f, &n);
    }
    if (rc == HPC_OK)
        rc = node_present(c, s, f, n, &e, &lent);
    if (rc == HPC_OK)
        fill_stat(s, f, n, &e, lent, st);
    state_unref(s);
    return rc;
}

/* Lookup in a frame's directory node (f, n). */
static int frame_lookup(hpc_container *c, const gsd_state *s, uint64_t f, uint32_t n,
                        const char *name, hpc_stat *st)
{
    if (is_file_node(s, n))
        return HPC_E_NOTDIR;
    uint32_t k = kid_named(s, n, name);
    if (k == NO_NODE)
        return HPC_E_NOENT;
    gsd_entry e = { 0 };
    int lent = 0;
    int rc = node_present(c, s, f, k, &e, &lent);
    if (rc == HPC_OK)
        fill_stat(s, f, k, &e, lent, st);
    return rc;
}

static int gsd_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    gsd *g = c->priv;
    maybe_refresh(c);
    gsd_state *s = state_get(g);
    const gsd_series_set *set;
    uint64_t f;
    uint32_t n;
    int frames, rc = HPC_E_NOENT;
    memset(st, 0, sizeof *st);
    if (parent == HPC_INO_ROOT) {
        st->mode = HPC_MODE_DIR;
        st->ino = strcmp(name, "frames") == 0 ? INO_FRAMES : INO_SERIES_BASE;
        rc = strcmp(name, "frames") == 0 || strcmp(name, "series") == 0 ? HPC_OK : HPC_E_NOENT;
    } else if (parent == INO_FRAMES) {
        if (parse_frame(name, &f) == HPC_OK && f < s->nframes) {
            st->ino = node_ino(f, 0);
            st->mode = HPC_MODE_DIR;
            rc = HPC_OK;
        }
    } else if (is_series_ino(parent)) {
        if ((rc = series_get(c, s, &set)) == HPC_OK &&
            (rc = series_decode(s, set, parent, &n, &frames)) == HPC_OK)
            rc = frames ? HPC_E_NOTDIR : series_lookup(s, set, n, name, st);
    } else if ((rc = decode_ino(s, parent, &f, &n)) == HPC_OK) {
        rc = frame_lookup(c, s, f, n, name, st);
    }
    state_unref(s);
    return rc;
}

#define LENT_MARK UINT64_MAX

/* List directory node n of frame f from cookie. */
static int frame_readdir(hpc_container *c, const gsd_state *s, uint64_t f, uint32_t n,
                         uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    const gsd_node *d = &s->nodes[n];
    gsd_entry *es = NULL;
    uint16_t *ids = NULL;
    uint64_t k = 0;
    uint32_t nids = 0;
    hpc_stat st;
    if (is_file_node(s, n))
        return HPC_E_NOTDIR;
    int rc = frame_entries(c, s, f, &es, &k);
    if (rc == HPC_OK)
        rc = frame_lent(s, f, es, k, &ids, &nids);
    if (rc != HPC_OK)
        goto out;
    /* which children this frame has: entry index + 1, or LENT_MARK */
    uint64_t *which = g_new0(uint64_t, d->nkids ? d->nkids : 1);
    gboolean any = n == 0;
    for (uint64_t i = 0; i < k + nids; i++) {
        uint32_t kid = child_towards(s, n, s->leaf[i < k ? es[i].id : ids[i - k]]);
        if (kid == NO_NODE)
            continue;
        any = TRUE;
        if (which[s->nodes[kid].pos] == 0)
            which[s->nodes[kid].pos] = i < k ? i + 1 : LENT_MARK;
    }
    if (!any)
        rc = HPC_E_NOENT;
    for (uint64_t j = cookie; rc == HPC_OK && j < d->nkids; j++) {
        if (which[j] == 0)
            continue;
        uint32_t kid = s->kids[d->first_kid + j];
        int lent = which[j] == LENT_MARK;
        fill_stat(s, f, kid, lent ? NULL : &es[which[j] - 1], lent, &st);
        if (fn(ctx, s->nodes[kid].name, &st, j + 1))
            break;
    }
    g_free(which);
out:
    g_free(ids);
    g_free(es);
    return rc;
}

static int gsd_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    gsd *g = c->priv;
    maybe_refresh(c);
    gsd_state *s = state_get(g);
    const gsd_series_set *set;
    hpc_stat st;
    char name[32];
    uint64_t f;
    uint32_t n;
    int frames, rc = HPC_OK;
    memset(&st, 0, sizeof st);
    if (dir == HPC_INO_ROOT) {
        st.mode = HPC_MODE_DIR;
        st.ino = INO_FRAMES;
        if (cookie == 0 && fn(ctx, "frames", &st, 1) == 0)
            cookie = 1;
        st.ino = INO_SERIES_BASE;
        if (cookie == 1)
            fn(ctx, "series", &st, 2);
    } else if (dir == INO_FRAMES) {
        for (f = cookie; f < s->nframes; f++) {
            st.ino = node_ino(f, 0);
            st.mode = HPC_MODE_DIR;
            g_snprintf(name, sizeof name, "%06" PRIu64, f);
            if (fn(ctx, name, &st, f + 1))
                break;
        }
    } else if (is_series_ino(dir)) {
        if ((rc = series_get(c, s, &set)) == HPC_OK &&
            (rc = series_decode(s, set, dir, &n, &frames)) == HPC_OK)
            rc = frames ? HPC_E_NOTDIR : series_readdir(s, set, n, cookie, fn, ctx);
    } else if ((rc = decode_ino(s, dir, &f, &n)) == HPC_OK) {
        rc = frame_readdir(c, s, f, n, cookie, fn, ctx);
    }
    state_unref(s);
    return rc;
}

static int gsd_readlink(hpc_container *c, hpc_ino ino, char **target)
{
    gsd *g = c->priv;
    gsd_state *s = state_get(g);
    gsd_entry e;
    uint64_t f;
    uint32_t n;
    int lent = 0;
    int rc = decode_ino(s, ino, &f, &n);
    if (rc == HPC_OK)
        rc = node_present(c, s, f, n, &e, &lent);
    if (rc == HPC_OK && !lent)
        rc = HPC_E_INVAL;
    if (rc == HPC_OK)
        *target = lend_target(s, n);
    state_unref(s);
    return rc;
}

/* ---- data ---------------------------------------------------------------- */

/* The entry of file node ino. */
static int file_entry(hpc_container *c, const gsd_state *s, hpc_ino ino, gsd_entry *e)
{
    uint64_t f;
    uint32_t n;
    int lent = 0;
    int rc = decode_ino(s, ino, &f, &n);
    if (rc != HPC_OK)
        return rc;
    if (!is_file_node(s, n))
        return HPC_E_ISDIR;
    rc = node_present(c, s, f, n, e, &lent);
    return rc == HPC_OK && lent ? HPC_E_INVAL : rc;
}

/* The series (or its .frames file) of ino; *id its name id. */
static int series_file(hpc_container *c, const gsd_state *s, hpc_ino ino, const gsd_series **x,
                       uint16_t *id, int *frames)
{
    const gsd_series_set *set;
    uint32_t n;
    int rc = series_get(c, s, &set);
    if (rc == HPC_OK)
        rc = series_decode(s, set, ino, &n, frames);
    if (rc == HPC_OK && !is_file_node(s, n))
        rc = HPC_E_ISDIR;
    if (rc == HPC_OK) {
        *id = (uint16_t)s->nodes[n].chunk;
        *x = node_series(s, set, n);
    }
    return rc;
}

/* The only bytes GSD computes: a series' <name>.frames file (gsd_map
 * serves every other file). */
static int gsd_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                    size_t *nread)
{
    gsd_state *s = state_get(c->priv);
    const gsd_series *x;
    uint16_t id;
    int frames, rc = HPC_E_NOTSUP;
    *nread = 0;
    if (is_series_ino(ino) && (rc = series_file(c, s, ino, &x, &id, &frames)) == HPC_OK) {
        if (frames)
            series_frames_bytes(x, buf, len, off, nread);
        else
            rc = HPC_E_NOTSUP;
    }
    state_unref(s);
    return rc;
}

static int gsd_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                   hpc_extent *ext, unsigned max, unsigned *n)
{
    gsd *g = c->priv;
    gsd_state *s = state_get(g);
    const gsd_series *x;
    gsd_entry e;
    uint64_t size = 0;
    uint16_t id;
    int frames, rc;
    *n = 0;
    if (is_series_ino(ino)) {
        rc = series_file(c, s, ino, &x, &id, &frames);
        if (rc == HPC_OK)
            rc = frames ? HPC_E_NOTSUP : series_extents(g, s, x, id, off, len, ext, max, n);
    } else if ((rc = file_entry(c, s, ino, &e)) == HPC_OK && max > 0 && entry_bytes(&e, &size) &&
               off < size) {
        ext[0] = (hpc_extent){ g->src, (uint64_t)e.location + off, MIN(len, size - off),
                               s->space, s->fill.size };
        *n = 1;
    }
    state_unref(s);
    return rc;
}

static void dtype_of(uint8_t type, char *dtype, size_t len)
{
    g_snprintf(dtype, len, "%c%s",
               gsd_type_size(type) == 1 ? '|' : (G_BYTE_ORDER == G_LITTLE_ENDIAN ? '<' : '>'),
               type_dtype[type]);
}

/* user.shape as gsd.fl.read_chunk shapes the chunk: (N,) when M is 1, else
 * (N, M); a series prepends the frame count. */
static void shape_of(char *buf, size_t size, const char *prefix, uint64_t N, uint32_t M)
{
    if (M == 1)
        g_snprintf(buf, size, "%s%" PRIu64, prefix, N);
    else
        g_snprintf(buf, size, "%s%" PRIu64 ",%" PRIu32, prefix, N, M);
}

static int series_xattrs(hpc_container *c, const gsd_state *s, hpc_ino ino, hpc_xattr_fn fn, void *ctx)
{
    const gsd_series *x;
    uint16_t id;
    int frames;
    char shape[80], dtype[8];
    int rc = series_file(c, s, ino, &x, &id, &frames);
    if (rc == HPC_E_ISDIR)
        return HPC_OK;
    if (rc != HPC_OK)
        return rc;
    if (frames) {
        g_snprintf(shape, sizeof shape, "%" PRIu64, x->count);
        g_strlcpy(dtype, "<u8", sizeof dtype);
    } else {
        char frames_dim[24];
        g_snprintf(frames_dim, sizeof frames_dim, "%" PRIu64 ",", x->count);
        shape_of(shape, sizeof shape, frames_dim, x->N, x->M);
        dtype_of(x->type, dtype, sizeof dtype);
    }
    if (fn(ctx, "user.shape", shape, strlen(shape)) == 0)
        fn(ctx, "user.dtype", dtype, strlen(dtype));
    return HPC_OK;
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
    int lent = 0, rc;
    if (is_series_ino(ino)) {
        rc = series_xattrs(c, s, ino, fn, ctx);
    } else if ((rc = decode_ino(s, ino, &f, &n)) == HPC_OK && is_file_node(s, n) &&
               (rc = node_present(c, s, f, n, &e, &lent)) == HPC_OK && !lent) {
        char shape[48], dtype[8];
        shape_of(shape, sizeof shape, "", e.N, e.M);
        dtype_of(e.type, dtype, sizeof dtype);
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
    if (s->hoomd)
        g_string_append_printf(o, "hoomd: frame 0 lends %u chunks to frames without them (links)\n",
                               s->nlend);
    /* the same .info whenever it is built (mount or hpcdump, before or
     * after /series was used): compute the series for it */
    const gsd_series_set *set;
    series_compute(c, s, 0, &set);
    series_info(s, o);
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
    .readlink = gsd_readlink,
    .read = gsd_read,
    .map = gsd_map,
    .xattrs = gsd_xattrs,
    .info = gsd_info,
};
