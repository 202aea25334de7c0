/* hdf5_remote.c - chunks of HDF5 datasets served by the helper, read and
 * decoded by the daemon (see hdf5_remote.h). */
#include "config.h"
#include "hdf5_remote.h"
#include "hdf5_chunk.h"
#include "hdf5_options.h"
#include "hpc_error.h"
#include "hpc_format.h"
#include "hpc_source.h"

#include <string.h>

#define WHERE_BATCH 64           /* chunk places asked per round trip */
#define WHERE_MAX (1u << 20)     /* places remembered (then forgotten at once) */

typedef struct dplan {
    hpc_h5chunk_plan *p;         /* NULL: the helper reads this dataset */
    uint64_t size;               /* bytes of the dataset */
} dplan;

typedef struct where_key {
    hpc_ino ino;
    uint64_t chunk;
} where_key;

typedef struct hpc_h5remote {
    GMutex lock;                 /* the tables */
    GHashTable *plans;           /* ino -> dplan */
    GHashTable *where;           /* where_key -> hpc_h5chunk_where */
    hpc_h5chunk_cache *cc;
} hpc_h5remote;

static void dplan_free(gpointer p)
{
    dplan *d = p;
    hpc_h5chunk_plan_free(d->p);
    g_free(d);
}

static guint where_hash(gconstpointer p)
{
    const where_key *k = p;
    return g_int64_hash(&k->ino) ^ g_int64_hash(&k->chunk) * 31u;
}

static gboolean where_equal(gconstpointer a, gconstpointer b)
{
    const where_key *x = a, *y = b;
    return x->ino == y->ino && x->chunk == y->chunk;
}

static void *h5r_new(uint64_t cache_bytes)
{
    hpc_h5remote *hr = g_new0(hpc_h5remote, 1);
    g_mutex_init(&hr->lock);
    hr->plans = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, dplan_free);
    hr->where = g_hash_table_new_full(where_hash, where_equal, g_free, g_free);
    hr->cc = hpc_h5chunk_cache_new(cache_bytes);
    return hr;
}

static void h5r_free(void *st)
{
    hpc_h5remote *hr = st;
    if (!hr)
        return;
    g_hash_table_destroy(hr->plans);
    g_hash_table_destroy(hr->where);
    hpc_h5chunk_cache_free(hr->cc);
    g_mutex_clear(&hr->lock);
    g_free(hr);
}

/* The plan of dataset ino, asked of the helper the first time. */
static const dplan *plan_of(hpc_h5remote *hr, hpc_container *c, hpc_remote_call call,
                            hpc_ino ino)
{
    g_mutex_lock(&hr->lock);
    const dplan *known = g_hash_table_lookup(hr->plans, &ino);
    g_mutex_unlock(&hr->lock);
    if (known)
        return known;
    char *payload = NULL;
    size_t len = 0;
    dplan *d = g_new0(dplan, 1);
    hpc_h5chunk_wire_plan w;
    int rc = call(c, H5_RQ_CHUNK_PLAN, ino, 0, 0, &payload, &len);
    if (rc == HPC_OK && len == sizeof w + sizeof d->size) {
        memcpy(&w, payload, sizeof w);
        memcpy(&d->size, payload + sizeof w, sizeof d->size);
        if (hpc_h5chunk_plan_unpack(&w, &d->p) != HPC_OK)
            d->p = NULL;
    }
    g_free(payload);
    if (rc != HPC_OK && rc != HPC_E_NOTSUP) {
        dplan_free(d);           /* not an answer: ask again next time */
        return NULL;
    }
    g_mutex_lock(&hr->lock);
    known = g_hash_table_lookup(hr->plans, &ino);
    if (!known) {
        g_hash_table_insert(hr->plans, g_memdup2(&ino, sizeof ino), d);
        known = d;
        d = NULL;
    }
    g_mutex_unlock(&hr->lock);
    if (d)
        dplan_free(d);
    return known;
}

/* Ask the helper where chunks from `chunk` on are, and remember them. */
static int where_fetch(hpc_h5remote *hr, hpc_container *c, hpc_remote_call call, hpc_ino ino,
                       uint64_t chunk)
{
    char *payload = NULL;
    size_t len = 0;
    int rc = call(c, H5_RQ_CHUNK_WHERE, ino, chunk, WHERE_BATCH, &payload, &len);
    size_t n = len / sizeof(hpc_h5chunk_where);
    if (rc == HPC_OK && (n == 0 || n > WHERE_BATCH || len % sizeof(hpc_h5chunk_where)))
        rc = HPC_E_IO;
    g_mutex_lock(&hr->lock);
    if (rc == HPC_OK && g_hash_table_size(hr->where) + n > WHERE_MAX)
        g_hash_table_remove_all(hr->where);
    for (size_t i = 0; rc == HPC_OK && i < n; i++) {
        where_key *k = g_new(where_key, 1);
        *k = (where_key){ ino, chunk + i };
        g_hash_table_replace(hr->where, k,
                             g_memdup2(payload + i * sizeof(hpc_h5chunk_where),
                                       sizeof(hpc_h5chunk_where)));
    }
    g_mutex_unlock(&hr->lock);
    g_free(payload);
    return rc;
}

typedef struct raw_ctx {
    hpc_h5remote *hr;
    hpc_container *c;
    hpc_remote_call call;
    hpc_ino ino;
    uint64_t chunk_bytes;
} raw_ctx;

/* hpc_h5chunk_io.raw: pread the bytes the helper said hold the chunk. */
static int remote_raw(void *ctx, uint64_t chunk, const hsize_t *off, unsigned char **raw,
                      size_t *len, unsigned *mask)
{
    raw_ctx *x = ctx;
    where_key k = { x->ino, chunk };
    hpc_h5chunk_where w = { 0 };
    (void)off;
    *raw = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        g_mutex_lock(&x->hr->lock);
        const hpc_h5chunk_where *known = g_hash_table_lookup(x->hr->where, &k);
        if (known)
            w = *known;
        g_mutex_unlock(&x->hr->lock);
        if (known)
            break;
        int rc = attempt ? HPC_E_IO : where_fetch(x->hr, x->c, x->call, x->ino, chunk);
        if (rc != HPC_OK)
            return rc;
    }
    const hpc_source *src = x->c->sources->len ? g_ptr_array_index(x->c->sources, 0) : NULL;
    if (!src || w.size == 0 || w.size > 2 * x->chunk_bytes + 4096 ||
        !hpc_source_contains(src, w.addr, w.size))
        return HPC_OK;           /* the helper's: unwritten, or not proven */
    unsigned char *buf = g_try_malloc((size_t)w.size);
    if (!buf)
        return HPC_E_NOMEM;
    int rc = hpc_source_pread(src, buf, (size_t)w.size, w.addr);
    if (rc != HPC_OK) {
        g_free(buf);
        return rc;
    }
    *raw = buf;
    *len = (size_t)w.size;
    *mask = w.mask;
    return HPC_OK;
}

static int h5r_read(void *st, hpc_container *c, hpc_remote_call call, hpc_ino ino, void *buf,
                    size_t len, uint64_t off, size_t *nread)
{
    hpc_h5remote *hr = st;
    *nread = 0;
    const dplan *d = plan_of(hr, c, call, ino);
    if (!d || !d->p)
        return HPC_E_NOTSUP;
    if (off >= d->size || len == 0)
        return HPC_OK;
    len = (size_t)MIN((uint64_t)len, d->size - off);
    uint64_t esize = hpc_h5chunk_plan_esize(d->p);
    if (off % esize || len % esize)
        return HPC_E_NOTSUP;     /* parts of elements: the helper's element cache */
    raw_ctx x = { hr, c, call, ino, hpc_h5chunk_plan_chunk_bytes(d->p) };
    hpc_h5chunk_io io = { .raw = remote_raw, .library = NULL, .ctx = &x };
    char *why = NULL;
    int rc = hpc_h5chunk_read_io(hr->cc, d->p, ino, &io, off / esize, (off + len) / esize, buf,
                                 &why);
    g_free(why);
    /* the bytes count only if the file is still the one the helper described */
    if (rc == HPC_OK)
        rc = c->host->sources_unchanged(c);
    if (rc == HPC_OK)
        *nread = len;
    /* anything else: the helper reads it, and says why if it cannot */
    return rc == HPC_OK || rc == HPC_E_CHANGED ? rc : HPC_E_NOTSUP;
}

static void h5r_info(void *st, GString *out)
{
    hpc_h5remote *hr = st;
    uint64_t decoded, hits, helper;
    hpc_h5chunk_cache_stats(hr->cc, &decoded, &hits, &helper);
    g_string_append_printf(out, "chunks_in_daemon: %" G_GUINT64_FORMAT " decoded, %"
                           G_GUINT64_FORMAT " from the cache, %" G_GUINT64_FORMAT
                           " left to the helper (so far)\n",
                           (guint64)decoded, (guint64)hits, (guint64)helper);
}

/* libhdf5's chunk caches of the open datasets (-o h5cache). */
static uint64_t h5r_library_bytes(const hpc_options *opts)
{
    return hpc_hdf5_opt_cache(opts);
}

const hpc_remote_side hpc_h5remote_side = {
    .state_new = h5r_new,
    .state_free = h5r_free,
    .read = h5r_read,
    .info = h5r_info,
    .library_bytes = h5r_library_bytes,
};
