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
#include "hpc_npy.h"

#include <string.h>

#define NPY_SUFFIX ".npy"
#define NPY_TABLE_MAX 65536   /* entries before the table starts afresh */

/* The view's state of one container (hpc_container_view_state). */
typedef struct npy_view {
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

static char *xattr_string(hpc_container *c, hpc_ino ino, const char *name)
{
    void *v = NULL;
    size_t len = 0;
    if (hpc_container_getxattr(c, ino, name, &v, &len) != HPC_OK)
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

static GBytes *build_header(hpc_container *c, hpc_ino ino, uint64_t size)
{
    char *dtype = xattr_string(c, ino, "user.dtype");
    char *shape = xattr_string(c, ino, "user.shape");
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
static GBytes *header_of(hpc_container *c, const hpc_stat *st)
{
    if (!S_ISREG(st->mode) || HPC_INO_IS_TEXT(st->ino))
        return NULL;
    npy_view *v = hpc_container_view_state(c);
    g_mutex_lock(&v->lock);
    npy_entry *e = g_hash_table_lookup(v->headers, &st->ino);
    GBytes *b = NULL;
    gboolean hit = e && e->raw_size == st->size;
    if (hit && e->header)
        b = g_bytes_ref(e->header);
    g_mutex_unlock(&v->lock);
    if (hit)
        return b;

    b = build_header(c, st->ino, st->size);
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
static gboolean view_stat(hpc_container *c, hpc_stat *st)
{
    GBytes *b = header_of(c, st);
    if (!b)
        return FALSE;
    st->size += g_bytes_get_size(b);
    g_bytes_unref(b);
    return TRUE;
}

static int view_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    size_t n = strlen(name), sl = strlen(NPY_SUFFIX);
    if (n > sl && strcmp(name + n - sl, NPY_SUFFIX) == 0) {
        char *raw = g_strndup(name, n - sl);
        int rc = hpc_container_raw_lookup(c, parent, raw, st);
        g_free(raw);
        if (rc == HPC_OK && view_stat(c, st))
            return HPC_OK;
    }
    /* An array's raw name is not listed but still resolves, to the same
     * .npy bytes: symlinks that readers write to raw names (GSD frames
     * lending frame 0's chunks, HDF5 soft links) keep working. */
    int rc = hpc_container_raw_lookup(c, parent, name, st);
    if (rc == HPC_OK)
        view_stat(c, st);
    return rc;
}

static int view_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    int rc = hpc_container_raw_getattr(c, ino, st);
    if (rc == HPC_OK)
        view_stat(c, st);
    return rc;
}

static int view_dirent(hpc_container *c, const char *name, hpc_stat *st, char **name_out)
{
    *name_out = (char *)name;
    if (view_stat(c, st))
        *name_out = g_strconcat(name, NPY_SUFFIX, NULL);
    return HPC_OK;
}

static int view_read(hpc_container *c, hpc_ino ino, void *buf, size_t len,
                     uint64_t off, size_t *nread)
{
    hpc_stat st;
    int rc = hpc_container_raw_getattr(c, ino, &st);
    if (rc != HPC_OK)
        return rc;
    GBytes *b = header_of(c, &st);
    if (!b)
        return hpc_container_raw_read(c, ino, buf, len, off, nread);
    gsize hlen;
    const char *h = g_bytes_get_data(b, &hlen);
    size_t done = 0;
    if (off < hlen) {
        done = MIN(len, hlen - off);
        memcpy(buf, h + off, done);
    }
    size_t got = 0;
    uint64_t body = off + done - hlen;
    if (done < len)
        rc = hpc_container_raw_read(c, ino, (char *)buf + done, len - done, body, &got);
    g_bytes_unref(b);
    *nread = rc == HPC_OK ? done + got : 0;
    return rc;
}

static int view_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                    hpc_extent *ext, unsigned max, unsigned *n)
{
    hpc_stat st;
    *n = 0;
    int rc = hpc_container_raw_getattr(c, ino, &st);
    if (rc != HPC_OK)
        return rc;
    GBytes *b = header_of(c, &st);
    if (!b)
        return hpc_container_raw_map(c, ino, off, len, ext, max, n);
    gsize hlen = g_bytes_get_size(b);
    g_bytes_unref(b);
    if (off < hlen)
        return HPC_E_NOTSUP;
    return hpc_container_raw_map(c, ino, off - hlen, len, ext, max, n);
}

static void view_free(void *state)
{
    npy_view *v = state;
    g_hash_table_destroy(v->headers);
    g_mutex_clear(&v->lock);
    g_free(v);
}

static const hpc_view npy_view_hooks = {
    .lookup = view_lookup,
    .getattr = view_getattr,
    .dirent = view_dirent,
    .read = view_read,
    .map = view_map,
    .free = view_free,
};

int hpc_npyview_open(const char *source, const hpc_options *opts, hpc_container **out,
                     GError **err)
{
    int rc = hpc_container_open(source, opts, out, err);
    if (rc != HPC_OK || !opts->npy)
        return rc;
    npy_view *v = g_new0(npy_view, 1);
    g_mutex_init(&v->lock);
    v->headers = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, entry_free);
    hpc_container_set_view(*out, &npy_view_hooks, v);
    return HPC_OK;
}
