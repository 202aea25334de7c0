/* gsd_names.c - the GSD name list read into a small tree: a '/' in a chunk
 * name makes directories; names that cannot be shown become warnings. */
#include "gsd_int.h"

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

/* Every '/'-separated component of name is a valid file name. */
static gboolean name_is_path(const char *name)
{
    for (const char *p = name;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (!component_ok(p, len))
            return FALSE;
        if (!slash)
            return TRUE;
        p = slash + 1;
    }
}

/* The build node of component [p, p+len) below node at, made if new. */
static int name_child(gsd_state *s, GArray *bn, GHashTable *index, uint32_t at, const char *p,
                      size_t len, uint32_t *out)
{
    char *key = g_strdup_printf("%u/%.*s", at, (int)len, p);
    gpointer v;
    if (g_hash_table_lookup_extended(index, key, NULL, &v)) {
        *out = GPOINTER_TO_UINT(v);
        g_free(key);
        return HPC_OK;
    }
    if (bn->len >= MAX_NODES) {
        g_free(key);
        return HPC_E_UNSUPPORTED;
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
    *out = id_new;
    return HPC_OK;
}

/* Name id as a path of build nodes; its last node holds the chunk. */
static int name_insert(gsd_state *s, GArray *bn, GHashTable *index, uint32_t id)
{
    const char *name = s->names[id];
    uint32_t at = 0;
    for (const char *p = name;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        int rc = name_child(s, bn, index, at, p, len, &at);
        if (rc != HPC_OK)
            return rc;
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
    return HPC_OK;
}

/* The build nodes as s->nodes and s->kids; kids sorted by name, chunks
 * that are also directories left out with a warning, s->leaf filled. */
static void tree_flatten(gsd_state *s, GArray *bn)
{
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
        s->leaf[id] = NO_NODE;
        if (!name_is_path(s->names[id])) {
            g_string_append_printf(s->warnings, "warning: chunk name %u '%s' is not a valid path; not shown\n",
                                   id, s->names[id]);
            continue;
        }
        if ((rc = name_insert(s, bn, index, id)) != HPC_OK)
            goto out;
    }
    tree_flatten(s, bn);
out:
    for (guint i = 0; i < bn->len; i++)
        if (g_array_index(bn, build_node, i).kids)
            g_array_free(g_array_index(bn, build_node, i).kids, TRUE);
    g_array_free(bn, TRUE);
    g_hash_table_destroy(index);
    return rc;
}

/* Read the name list (layer 1: 64-byte slots; layer 2: NUL-separated). */
int gsd_read_names(gsd_state *s, const char *path, GError **err)
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
    int rc = gsd_snap_read(s, raw, (size_t)block, s->namelist_location);
    if (rc != HPC_OK) {
        g_free(raw);
        return hpc_fail(err, rc, path, "namelist", s->namelist_location, "cannot read the name list");
    }
    GPtrArray *names = g_ptr_array_new();
    if (gsd_is_v2(s)) {
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
