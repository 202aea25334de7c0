/* hpc_npyview.c - array files shown as NAME.npy (-o npy).
 *
 * The view needs nothing from the readers beyond user.dtype and user.shape:
 * the header is built from them (hpc_npy.c), checked against the file's
 * size where the dtype is a plain type, and kept in a small table per
 * container keyed by node, so that reads do not rebuild it.  A live
 * container's arrays may grow (GSD series): an entry is rebuilt when the
 * raw size it was built for changes.  Files that are not arrays, or whose
 * size does not match, are shown raw: a wrong header is worse than none.
 */
#include "hpc_npyview.h"
#include "hpc_error.h"
#include "hpc_npy.h"

#include <string.h>

#define NPY_SUFFIX ".npy"
#define NPY_TABLE_MAX 65536   /* entries before the table starts afresh */

/* The view over one implementation of the node interface. */
typedef struct npy_view {
    hpc_nodes head;
    hpc_nodes *below;
    GMutex lock;           /* guards headers */
    GHashTable *headers;   /* ino -> npy_entry */
} npy_view;

typedef struct npy_entry {
    uint64_t raw_size;
    GBytes *header;        /* NULL: not an array */
} npy_entry;

static void entry_free(gpointer p)
{
    npy_entry *e = p;
    if (e->header)
        g_bytes_unref(e->header);
    g_free(e);
}

static npy_view *view_of(hpc_nodes *n)
{
    return (npy_view *)n;
}

static char *xattr_string(hpc_nodes *below, hpc_ino ino, const char *name)
{
    void *v = NULL;
    size_t len = 0;
    if (below->ops->getxattr(below, ino, name, &v, &len) != HPC_OK)
        return NULL;
    char *s = v ? g_strndup(v, len) : g_strdup("");   /* "" comes back as NULL */
    g_free(v);
    return s;
}

/* Does an array of this dtype and shape take exactly size bytes? */
static gboolean size_matches(const char *dtype, const char *shape, uint64_t size)
{
    uint64_t n;
    if (hpc_npy_itemsize(dtype, &n) != HPC_OK)
        return FALSE;
    gchar **dims = g_strsplit(shape, ",", -1);
    for (gchar **d = dims; *d && **d; d++) {
        uint64_t k = g_ascii_strtoull(*d, NULL, 10);
        if (k && n > G_MAXUINT64 / k) {
            n = G_MAXUINT64;
            break;
        }
        n *= k;
    }
    g_strfreev(dims);
    return n == size;
}

/* A subarray dtype "(BASE, (d1, d2,))" (an HDF5 array type) is an array of
 * BASE with the dimensions appended to the shape, as h5py reads it.  Splits
 * it into *base (a new string) and appends ",d1,d2" to shape; FALSE when
 * dtype is not of that form. */
static gboolean split_subarray(const char *dtype, GString *shape, char **base)
{
    size_t n = strlen(dtype);
    const char *dims = g_strrstr(dtype, ", (");
    if (dtype[0] != '(' || n < 8 || strcmp(dtype + n - 2, "))") != 0 || !dims)
        return FALSE;
    const char *b = dtype + 1, *e = dims;
    if (*b == '\'' && e[-1] == '\'' && e - b > 2)
        *base = g_strndup(b + 1, (size_t)(e - b - 2));
    else if ((*b == '[' && e[-1] == ']') || (*b == '{' && e[-1] == '}'))
        *base = g_strndup(b, (size_t)(e - b));
    else
        return FALSE;
    for (const char *p = dims + 3; p < dtype + n - 2; p++) {
        if (g_ascii_isdigit(*p) && (p == dims + 3 || !g_ascii_isdigit(p[-1])))
            g_string_append(shape, shape->len ? "," : "");
        if (g_ascii_isdigit(*p))
            g_string_append_c(shape, *p);
        else if (*p != ',' && *p != ' ')
            return FALSE;
    }
    return TRUE;
}

static GBytes *build_header(hpc_nodes *below, hpc_ino ino, uint64_t size)
{
    char *dtype = xattr_string(below, ino, "user.dtype");
    char *shape = xattr_string(below, ino, "user.shape");
    char *base = NULL;
    GBytes *b = NULL;
    if (!dtype || !shape)
        goto out;
    GString *full = g_string_new(shape);
    const char *descr = split_subarray(dtype, full, &base) ? base : dtype;
    GString *h = g_string_new(NULL);
    if (size_matches(descr, full->str, size) &&
        hpc_npy_header(descr, full->str, h, NULL) == HPC_OK)
        b = g_bytes_new(h->str, h->len);
    g_string_free(h, TRUE);
    g_string_free(full, TRUE);
out:
    g_free(base);
    g_free(dtype);
    g_free(shape);
    return b;
}

/* The header of node st (raw attributes), or NULL: not an array. */
static GBytes *header_of(npy_view *v, const hpc_stat *st)
{
    if (!S_ISREG(st->mode) || HPC_INO_IS_TEXT(st->ino))
        return NULL;
    g_mutex_lock(&v->lock);
    npy_entry *e = g_hash_table_lookup(v->headers, &st->ino);
    GBytes *b = NULL;
    gboolean hit = e && e->raw_size == st->size;
    if (hit && e->header)
        b = g_bytes_ref(e->header);
    g_mutex_unlock(&v->lock);
    if (hit)
        return b;

    b = build_header(v->below, st->ino, st->size);
    e = g_new0(npy_entry, 1);
    e->raw_size = st->size;
    e->header = b ? g_bytes_ref(b) : NULL;
    g_mutex_lock(&v->lock);
    if (g_hash_table_size(v->headers) >= NPY_TABLE_MAX)
        g_hash_table_remove_all(v->headers);
    g_hash_table_replace(v->headers, g_memdup2(&st->ino, sizeof st->ino), e);
    g_mutex_unlock(&v->lock);
    return b;
}

/* Add the header's size to an array's attributes; TRUE if it is one. */
static gboolean view_stat(npy_view *v, hpc_stat *st)
{
    GBytes *b = header_of(v, st);
    if (!b)
        return FALSE;
    st->size += g_bytes_get_size(b);
    g_bytes_unref(b);
    return TRUE;
}

static int view_lookup(hpc_nodes *n, hpc_ino parent, const char *name, hpc_stat *st)
{
    npy_view *v = view_of(n);
    size_t len = strlen(name), sl = strlen(NPY_SUFFIX);
    if (len > sl && strcmp(name + len - sl, NPY_SUFFIX) == 0) {
        char *raw = g_strndup(name, len - sl);
        int rc = v->below->ops->lookup(v->below, parent, raw, st);
        g_free(raw);
        if (rc == HPC_OK && view_stat(v, st))
            return HPC_OK;
    }
    /* An array's raw name is not listed but still resolves, to the same
     * .npy bytes: symlinks that readers write to raw names (GSD frames
     * lending frame 0's chunks, HDF5 soft links) keep working. */
    int rc = v->below->ops->lookup(v->below, parent, name, st);
    if (rc == HPC_OK)
        view_stat(v, st);
    return rc;
}

static int view_getattr(hpc_nodes *n, hpc_ino ino, hpc_stat *st)
{
    npy_view *v = view_of(n);
    int rc = v->below->ops->getattr(v->below, ino, st);
    if (rc == HPC_OK)
        view_stat(v, st);
    return rc;
}

typedef struct view_dir {
    npy_view *v;
    hpc_dirent_fn fn;
    void *ctx;
} view_dir;

/* An entry as the view lists it: an array as NAME.npy, its size the
 * header's more. */
static int view_dirent(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    view_dir *d = p;
    hpc_stat s = *st;
    if (!view_stat(d->v, &s))
        return d->fn(d->ctx, name, &s, next);
    char *shown = g_strconcat(name, NPY_SUFFIX, NULL);
    int full = d->fn(d->ctx, shown, &s, next);
    g_free(shown);
    return full;
}

static int view_readdir(hpc_nodes *n, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn,
                        void *ctx)
{
    npy_view *v = view_of(n);
    view_dir d = { v, fn, ctx };
    return v->below->ops->readdir(v->below, dir, cookie, view_dirent, &d);
}

/* The header of file ino (NULL: shown raw) into *b, its size into *hlen. */
static int header_at(npy_view *v, hpc_ino ino, GBytes **b, gsize *hlen)
{
    hpc_stat st;
    int rc = v->below->ops->getattr(v->below, ino, &st);
    *b = rc == HPC_OK ? header_of(v, &st) : NULL;
    *hlen = *b ? g_bytes_get_size(*b) : 0;
    return rc;
}

static int view_read(hpc_nodes *n, hpc_ino ino, void *buf, size_t len, uint64_t off,
                     size_t *nread)
{
    npy_view *v = view_of(n);
    hpc_nodes *below = v->below;
    GBytes *b;
    gsize hlen;
    *nread = 0;
    int rc = header_at(v, ino, &b, &hlen);
    if (rc != HPC_OK)
        return rc;
    if (!b)
        return below->ops->read(below, ino, buf, len, off, nread);
    size_t done = 0;
    if (off < hlen) {
        done = MIN(len, hlen - off);
        memcpy(buf, (const char *)g_bytes_get_data(b, NULL) + off, done);
    }
    size_t got = 0;
    if (done < len)
        rc = below->ops->read(below, ino, (char *)buf + done, len - done, off + done - hlen, &got);
    g_bytes_unref(b);
    *nread = rc == HPC_OK ? done + got : 0;
    return rc;
}

static int view_map(hpc_nodes *n, hpc_ino ino, uint64_t off, uint64_t len, hpc_extent *ext,
                    unsigned max, unsigned *count)
{
    npy_view *v = view_of(n);
    GBytes *b;
    gsize hlen;
    *count = 0;
    int rc = header_at(v, ino, &b, &hlen);
    if (b)
        g_bytes_unref(b);
    if (rc != HPC_OK)
        return rc;
    if (off < hlen)
        return HPC_E_NOTSUP;      /* the header is no source's bytes */
    return v->below->ops->map(v->below, ino, off - hlen, len, ext, max, count);
}

/* The references describe the raw bytes, not the view's. */
static int view_chunks(hpc_nodes *n, hpc_ino ino, GString *out)
{
    (void)n, (void)ino, (void)out;
    return HPC_E_NOTSUP;
}

/* Not passed down: hold (left NULL), since the view's bytes are its own,
 * an open file reads through the view. */

/* ---- what the view passes down as it is --------------------------------- */

static int view_readlink(hpc_nodes *n, hpc_ino ino, char **target)
{
    hpc_nodes *below = view_of(n)->below;
    return below->ops->readlink(below, ino, target);
}

static int view_getxattr(hpc_nodes *n, hpc_ino ino, const char *name, void **value,
                         size_t *len)
{
    hpc_nodes *below = view_of(n)->below;
    return below->ops->getxattr(below, ino, name, value, len);
}

static int view_listxattr(hpc_nodes *n, hpc_ino ino, GString *out)
{
    hpc_nodes *below = view_of(n)->below;
    return below->ops->listxattr(below, ino, out);
}

static void view_unmap(hpc_nodes *n, hpc_ino ino)
{
    hpc_nodes_unmap(view_of(n)->below, ino);
}

static int view_sources_unchanged(hpc_nodes *n, hpc_ino ino)
{
    hpc_nodes *below = view_of(n)->below;
    return below->ops->sources_unchanged(below, ino);
}

/* The view's extents are below's (map shifts only the file offset). */
static int view_extents_unchanged(hpc_nodes *n, hpc_ino ino, const hpc_extent *ext,
                                  unsigned count)
{
    hpc_nodes *below = view_of(n)->below;
    return below->ops->extents_unchanged(below, ino, ext, count);
}

static const char *view_format_name(hpc_nodes *n)
{
    hpc_nodes *below = view_of(n)->below;
    return below->ops->format_name(below);
}

static void view_meta(hpc_nodes *n, hpc_ino ino, hpc_node_meta *meta)
{
    hpc_nodes *below = view_of(n)->below;
    below->ops->meta(below, ino, meta);
}

static uint64_t view_source_bytes(hpc_nodes *n)
{
    hpc_nodes *below = view_of(n)->below;
    return below->ops->source_bytes(below);
}

static uint32_t view_block_size(hpc_nodes *n)
{
    hpc_nodes *below = view_of(n)->below;
    return below->ops->block_size(below);
}

static void view_close(hpc_nodes *n)
{
    npy_view *v = view_of(n);
    hpc_nodes_close(v->below);
    g_hash_table_destroy(v->headers);
    g_mutex_clear(&v->lock);
    g_free(v);
}

static const hpc_nodes_ops npy_view_ops = {
    .lookup = view_lookup,
    .getattr = view_getattr,
    .readdir = view_readdir,
    .readlink = view_readlink,
    .read = view_read,
    .map = view_map,
    .unmap = view_unmap,
    .getxattr = view_getxattr,
    .listxattr = view_listxattr,
    .chunks = view_chunks,
    .sources_unchanged = view_sources_unchanged,
    .extents_unchanged = view_extents_unchanged,
    .format_name = view_format_name,
    .meta = view_meta,
    .source_bytes = view_source_bytes,
    .block_size = view_block_size,
    .close = view_close,
};

hpc_nodes *hpc_npyview_new(hpc_nodes *below)
{
    npy_view *v = g_new0(npy_view, 1);
    v->head.ops = &npy_view_ops;
    v->below = below;
    g_mutex_init(&v->lock);
    v->headers = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, entry_free);
    return &v->head;
}
