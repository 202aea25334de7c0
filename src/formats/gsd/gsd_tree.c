/* gsd_tree.c - the GSD reader's tree and data calls: node ids, lookup,
 * getattr, readdir, links, reads, extents and xattrs. */
#include "gsd_int.h"

static const char *const type_dtype[12] = { NULL, "u1", "u2", "u4", "u8", "i1", "i2",
                                            "i4", "i8", "f4", "f8", "S1" };

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

static hpc_ino node_ino(uint64_t f, uint32_t n)
{
    return INO_NODE_BASE + ((f << NODE_BITS) | n);
}

static void fill_stat(const gsd_state *s, uint64_t f, uint32_t n, const gsd_entry *e, int lent,
                      hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = node_ino(f, n);
    if (gsd_is_file_node(s, n) && lent) {
        st->mode = HPC_MODE_LINK;
        st->size = 3 * s->nodes[n].depth + 7 + strlen(s->names[s->nodes[n].chunk]);
    } else if (gsd_is_file_node(s, n)) {
        uint64_t bytes = 0;
        gsd_entry_bytes(e, &bytes);
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
    int rc = gsd_frame_entries(c, s, f, &es, &k);
    if (rc != HPC_OK)
        return rc;
    rc = HPC_E_NOENT;
    for (uint64_t i = 0; i < k && rc != HPC_OK; i++) {
        if (reaches(s, es[i].id, n)) {
            *e = es[i];
            rc = HPC_OK;
        }
    }
    if (rc != HPC_OK && (rc = gsd_frame_lent(s, f, es, k, &ids, &nids)) == HPC_OK) {
        rc = HPC_E_NOENT;
        for (uint32_t i = 0; i < nids && rc != HPC_OK; i++)
            if (reaches(s, ids[i], n)) {
                *lent = gsd_is_file_node(s, n);
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

/* ---- tree ---------------------------------------------------------------- */

static int series_getattr(hpc_container *c, const gsd_state *s, hpc_ino ino, hpc_stat *st)
{
    const gsd_series_set *set;
    uint32_t n;
    int frames;
    int rc = gsd_series_get(c, s, &set);
    if (rc == HPC_OK)
        rc = gsd_series_decode(s, set, ino, &n, &frames);
    if (rc == HPC_OK)
        gsd_series_stat(s, set, n, frames, st);
    return rc;
}

int gsd_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    gsd *g = c->priv;
    if (ino == HPC_INO_ROOT || ino == INO_FRAMES) {
        gsd_maybe_refresh(c);
        st->ino = ino;
        st->mode = HPC_MODE_DIR;
        return HPC_OK;
    }
    if (gsd_is_series_ino(ino)) {
        gsd_maybe_refresh(c);      /* series grow with the file */
        gsd_state *s = gsd_state_get(g);
        int rc = series_getattr(c, s, ino, st);
        gsd_state_unref(s);
        return rc;
    }
    gsd_state *s = gsd_state_get(g);
    uint64_t f;
    uint32_t n;
    gsd_entry e = { 0 };
    int lent = 0;
    int rc = decode_ino(s, ino, &f, &n);
    if (rc == HPC_OK && !gsd_is_file_node(s, n)) {
        gsd_state_unref(s);
        gsd_maybe_refresh(c);
        s = gsd_state_get(g);
        rc = decode_ino(s, ino, &f, &n);
    }
    if (rc == HPC_OK)
        rc = node_present(c, s, f, n, &e, &lent);
    if (rc == HPC_OK)
        fill_stat(s, f, n, &e, lent, st);
    gsd_state_unref(s);
    return rc;
}

/* Lookup in a frame's directory node (f, n). */
static int frame_lookup(hpc_container *c, const gsd_state *s, uint64_t f, uint32_t n,
                        const char *name, hpc_stat *st)
{
    if (gsd_is_file_node(s, n))
        return HPC_E_NOTDIR;
    uint32_t k = gsd_kid_named(s, n, name);
    if (k == NO_NODE)
        return HPC_E_NOENT;
    gsd_entry e = { 0 };
    int lent = 0;
    int rc = node_present(c, s, f, k, &e, &lent);
    if (rc == HPC_OK)
        fill_stat(s, f, k, &e, lent, st);
    return rc;
}

int gsd_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    gsd *g = c->priv;
    gsd_maybe_refresh(c);
    gsd_state *s = gsd_state_get(g);
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
    } else if (gsd_is_series_ino(parent)) {
        if ((rc = gsd_series_get(c, s, &set)) == HPC_OK &&
            (rc = gsd_series_decode(s, set, parent, &n, &frames)) == HPC_OK)
            rc = frames ? HPC_E_NOTDIR : gsd_series_lookup(s, set, n, name, st);
    } else if ((rc = decode_ino(s, parent, &f, &n)) == HPC_OK) {
        rc = frame_lookup(c, s, f, n, name, st);
    }
    gsd_state_unref(s);
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
    if (gsd_is_file_node(s, n))
        return HPC_E_NOTDIR;
    int rc = gsd_frame_entries(c, s, f, &es, &k);
    if (rc == HPC_OK)
        rc = gsd_frame_lent(s, f, es, k, &ids, &nids);
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

int gsd_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    gsd *g = c->priv;
    gsd_maybe_refresh(c);
    gsd_state *s = gsd_state_get(g);
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
    } else if (gsd_is_series_ino(dir)) {
        if ((rc = gsd_series_get(c, s, &set)) == HPC_OK &&
            (rc = gsd_series_decode(s, set, dir, &n, &frames)) == HPC_OK)
            rc = frames ? HPC_E_NOTDIR : gsd_series_readdir(s, set, n, cookie, fn, ctx);
    } else if ((rc = decode_ino(s, dir, &f, &n)) == HPC_OK) {
        rc = frame_readdir(c, s, f, n, cookie, fn, ctx);
    }
    gsd_state_unref(s);
    return rc;
}

int gsd_readlink(hpc_container *c, hpc_ino ino, char **target)
{
    gsd *g = c->priv;
    gsd_state *s = gsd_state_get(g);
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
        *target = gsd_lend_target(s, n);
    gsd_state_unref(s);
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
    if (!gsd_is_file_node(s, n))
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
    int rc = gsd_series_get(c, s, &set);
    if (rc == HPC_OK)
        rc = gsd_series_decode(s, set, ino, &n, frames);
    if (rc == HPC_OK && !gsd_is_file_node(s, n))
        rc = HPC_E_ISDIR;
    if (rc == HPC_OK) {
        *id = (uint16_t)s->nodes[n].chunk;
        *x = gsd_node_series(s, set, n);
    }
    return rc;
}

/* The only bytes GSD computes: a series' <name>.frames file (gsd_map
 * serves every other file). */
int gsd_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
             size_t *nread)
{
    gsd_state *s = gsd_state_get(c->priv);
    const gsd_series *x;
    uint16_t id;
    int frames, rc = HPC_E_NOTSUP;
    *nread = 0;
    if (gsd_is_series_ino(ino) && (rc = series_file(c, s, ino, &x, &id, &frames)) == HPC_OK) {
        if (frames)
            gsd_series_frames_bytes(x, buf, len, off, nread);
        else
            rc = HPC_E_NOTSUP;
    }
    gsd_state_unref(s);
    return rc;
}

int gsd_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
            hpc_extent *ext, unsigned max, unsigned *n)
{
    gsd *g = c->priv;
    gsd_state *s = gsd_state_get(g);
    const gsd_series *x;
    gsd_entry e;
    uint64_t size = 0;
    uint16_t id;
    int frames, rc;
    *n = 0;
    if (gsd_is_series_ino(ino)) {
        rc = series_file(c, s, ino, &x, &id, &frames);
        if (rc == HPC_OK)
            rc = frames ? HPC_E_NOTSUP : gsd_series_extents(g, s, x, id, off, len, ext, max, n);
    } else if ((rc = file_entry(c, s, ino, &e)) == HPC_OK && max > 0 && gsd_entry_bytes(&e, &size) &&
               off < size) {
        ext[0] = (hpc_extent){ g->src, (uint64_t)e.location + off, MIN(len, size - off),
                               s->space, s->fill.size };
        *n = 1;
    }
    gsd_state_unref(s);
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

int gsd_xattrs(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx)
{
    gsd *g = c->priv;
    if (ino < INO_NODE_BASE)
        return HPC_OK;
    gsd_state *s = gsd_state_get(g);
    gsd_entry e;
    uint64_t f;
    uint32_t n;
    int lent = 0, rc;
    if (gsd_is_series_ino(ino)) {
        rc = series_xattrs(c, s, ino, fn, ctx);
    } else if ((rc = decode_ino(s, ino, &f, &n)) == HPC_OK && gsd_is_file_node(s, n) &&
               (rc = node_present(c, s, f, n, &e, &lent)) == HPC_OK && !lent) {
        char shape[48], dtype[8];
        shape_of(shape, sizeof shape, "", e.N, e.M);
        dtype_of(e.type, dtype, sizeof dtype);
        if (fn(ctx, "user.shape", shape, strlen(shape)) == 0)
            fn(ctx, "user.dtype", dtype, strlen(dtype));
    }
    gsd_state_unref(s);
    return rc;
}
