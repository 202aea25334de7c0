/* hdf5_chunk.c - chunks of HDF5 datasets read with pread and decoded in the
 * calling thread (see hdf5_chunk.h). */
#include "config.h"
#include "hdf5_chunk_int.h"
#include "hpc_bytes.h"
#include "hpc_error.h"

#include <glib.h>
#include <inttypes.h>
#include <string.h>

#define NSHARDS 16

/* ---- plans ------------------------------------------------------------ */

static int plan_filters(hpc_h5chunk_plan *p, hid_t dcpl)
{
    int nf = H5Pget_nfilters(dcpl);
    if (nf < 0 || nf > MAX_FILTERS)
        return HPC_E_NOTSUP;
    for (int i = 0; i < nf; i++) {
        unsigned flags, cd[8];
        size_t ncd = G_N_ELEMENTS(cd);
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL);
        switch (id) {
        case H5Z_FILTER_DEFLATE:
            p->filt[i] = F_DEFLATE;
            break;
        case H5Z_FILTER_FLETCHER32:
            p->filt[i] = F_FLETCHER;
            break;
        case H5Z_FILTER_SHUFFLE:
            p->filt[i] = F_SHUFFLE;
            /* the element size the writer shuffled with */
            p->shuffle_size = ncd >= 1 && cd[0] > 0 ? cd[0] : p->esize;
            break;
#ifdef HAVE_LIBLZF
        case HPC_H5CHUNK_FILTER_LZF:
            p->filt[i] = F_LZF;
            break;
#endif
        default:
            return HPC_E_NOTSUP;
        }
    }
    /* the input size of a second compressor is not known: H5Dread */
    unsigned packers = 0;
    for (int i = 0; i < nf; i++)
        packers += p->filt[i] == F_DEFLATE || p->filt[i] == F_LZF;
    if (packers > 1)
        return HPC_E_NOTSUP;
    p->nfilt = (unsigned)nf;
    return HPC_OK;
}

/* The shape of a plan: rank dims in chunks of cdims, elements of esize
 * bytes.  HPC_E_NOTSUP when empty or a chunk is over HPC_H5CHUNK_MAX_BYTES. */
static int plan_shape(hpc_h5chunk_plan *p, int rank, const uint64_t *dims,
                      const uint64_t *cdims, uint64_t esize)
{
    if (rank < 1 || rank > HPC_HDF5_MAX_RANK || esize == 0)
        return HPC_E_NOTSUP;
    p->rank = rank;
    p->esize = (size_t)esize;
    p->chunk_elems = 1;
    uint64_t elems = 1;
    for (int k = 0; k < rank; k++) {
        if (cdims[k] == 0 || dims[k] == 0 ||
            !hpc_mul_u64(p->chunk_elems, cdims[k], &p->chunk_elems) ||
            !hpc_mul_u64(elems, dims[k], &elems))
            return HPC_E_NOTSUP;
        p->dims[k] = dims[k];
        p->cdims[k] = cdims[k];
        p->nchunk[k] = (dims[k] + cdims[k] - 1) / cdims[k];
    }
    if (!hpc_mul_u64(p->chunk_elems, esize, &p->chunk_bytes) ||
        p->chunk_bytes > HPC_H5CHUNK_MAX_BYTES)
        return HPC_E_NOTSUP;
    p->full_from = rank - 1;
    while (p->full_from > 0 && p->cdims[p->full_from] == p->dims[p->full_from])
        p->full_from--;
    return HPC_OK;
}

int hpc_h5chunk_plan_new(hid_t dcpl, hid_t ftype, hid_t mtype, size_t esize, int rank,
                         const uint64_t *dims, hpc_h5chunk_plan **out)
{
    hsize_t cd[HPC_HDF5_MAX_RANK];
    uint64_t cdims[HPC_HDF5_MAX_RANK];
    hpc_h5chunk_plan *p = g_new0(hpc_h5chunk_plan, 1);
    unsigned opts = 0;
    int rc = HPC_E_NOTSUP;
    *out = NULL;
    p->mtype = H5Tcopy(mtype);
    if (p->mtype < 0 || H5Pget_chunk_opts(dcpl, &opts) < 0)
        goto out;
    p->raw_edges = (opts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) != 0;
    if (rank < 1 || rank > HPC_HDF5_MAX_RANK || esize == 0 || H5Tequal(ftype, mtype) <= 0 ||
        H5Tget_size(ftype) != esize || H5Pget_external_count(dcpl) != 0 ||
        H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, rank, cd) != rank)
        goto out;
    for (int k = 0; k < rank; k++)
        cdims[k] = cd[k];
    if (plan_shape(p, rank, dims, cdims, esize) == HPC_OK && plan_filters(p, dcpl) == HPC_OK) {
        *out = p;
        p = NULL;
        rc = HPC_OK;
    }
out:
    hpc_h5chunk_plan_free(p);
    return rc;
}

void hpc_h5chunk_plan_free(hpc_h5chunk_plan *p)
{
    if (!p)
        return;
    if (p->mtype >= 0)
        H5Tclose(p->mtype);
    g_free(p);
}

uint64_t hpc_h5chunk_plan_chunk_bytes(const hpc_h5chunk_plan *p)
{
    return p->chunk_bytes;
}

uint64_t hpc_h5chunk_plan_esize(const hpc_h5chunk_plan *p)
{
    return p->esize;
}

uint64_t hpc_h5chunk_plan_nchunks(const hpc_h5chunk_plan *p)
{
    uint64_t n = 1;
    for (int k = 0; k < p->rank; k++)
        n *= p->nchunk[k];       /* cannot overflow: chunk grid <= elements */
    return n;
}

int hpc_h5chunk_plan_checked(const hpc_h5chunk_plan *p)
{
    for (unsigned i = 0; i < p->nfilt; i++)
        if (p->filt[i] == F_DEFLATE || p->filt[i] == F_FLETCHER)
            return 1;
    return 0;
}

void hpc_h5chunk_plan_pack(const hpc_h5chunk_plan *p, hpc_h5chunk_wire_plan *w)
{
    memset(w, 0, sizeof *w);
    w->rank = (uint32_t)p->rank;
    w->nfilt = p->nfilt;
    w->raw_edges = (uint32_t)p->raw_edges;
    w->esize = p->esize;
    w->shuffle_size = p->shuffle_size;
    for (int k = 0; k < p->rank; k++) {
        w->dims[k] = p->dims[k];
        w->cdims[k] = p->cdims[k];
    }
    for (unsigned i = 0; i < p->nfilt; i++)
        w->filt[i] = (uint32_t)p->filt[i];
}

int hpc_h5chunk_plan_unpack(const hpc_h5chunk_wire_plan *w, hpc_h5chunk_plan **out)
{
    hpc_h5chunk_plan *p = g_new0(hpc_h5chunk_plan, 1);
    p->mtype = H5I_INVALID_HID;  /* no library reads: chunks it cannot decode go back */
    p->shuffle_size = (size_t)w->shuffle_size;
    p->raw_edges = (int)w->raw_edges;
    p->nfilt = w->nfilt;
    unsigned packers = 0;
    int ok = w->nfilt <= MAX_FILTERS && w->raw_edges <= 1 && w->rank <= HPC_HDF5_MAX_RANK &&
             plan_shape(p, (int)w->rank, w->dims, w->cdims, w->esize) == HPC_OK;
    for (unsigned i = 0; ok && i < p->nfilt; i++) {
        p->filt[i] = (filt_kind)w->filt[i];
        packers += p->filt[i] == F_DEFLATE || p->filt[i] == F_LZF;
        ok = w->filt[i] <= F_LZF && (p->filt[i] != F_SHUFFLE || p->shuffle_size > 0);
    }
    if (!ok || packers > 1) {
        hpc_h5chunk_plan_free(p);
        p = NULL;
    }
    *out = p;
    return p ? HPC_OK : HPC_E_IO;
}

/* ---- the cache -------------------------------------------------------- */

typedef struct centry {
    uint64_t key, chunk;
    int state;                    /* 0 decoding, 1 ready, -1 failed */
    int refs;                     /* readers copying from it, and the cache's own */
    GList lru;                    /* in the shard's LRU while ready */
    unsigned char *data;
    uint64_t len;
} centry;

typedef struct cshard {
    GMutex lock;
    GCond done;
    GHashTable *map;              /* centry -> centry */
    GQueue lru;
    uint64_t bytes, capacity;
} cshard;

struct hpc_h5chunk_cache {
    cshard shard[NSHARDS];
    uint64_t decoded, hits, library;
};

static uint64_t mix(uint64_t key, uint64_t chunk)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull ^ (chunk + 0x632BE59BD9B4E019ull);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
}

static guint centry_hash(gconstpointer p)
{
    const centry *e = p;
    return (guint)mix(e->key, e->chunk);
}

static gboolean centry_equal(gconstpointer a, gconstpointer b)
{
    const centry *x = a, *y = b;
    return x->key == y->key && x->chunk == y->chunk;
}

hpc_h5chunk_cache *hpc_h5chunk_cache_new(uint64_t capacity)
{
    hpc_h5chunk_cache *cc = g_new0(hpc_h5chunk_cache, 1);
    for (int i = 0; i < NSHARDS; i++) {
        cshard *s = &cc->shard[i];
        g_mutex_init(&s->lock);
        g_cond_init(&s->done);
        s->map = g_hash_table_new(centry_hash, centry_equal);
        g_queue_init(&s->lru);
        s->capacity = capacity / NSHARDS;
    }
    return cc;
}

static void centry_free(centry *e)
{
    g_free(e->data);
    g_free(e);
}

void hpc_h5chunk_cache_free(hpc_h5chunk_cache *cc)
{
    if (!cc)
        return;
    for (int i = 0; i < NSHARDS; i++) {
        cshard *s = &cc->shard[i];
        GHashTableIter it;
        gpointer k;
        g_hash_table_iter_init(&it, s->map);
        while (g_hash_table_iter_next(&it, &k, NULL))
            centry_free(k);
        g_hash_table_destroy(s->map);
        g_cond_clear(&s->done);
        g_mutex_clear(&s->lock);
    }
    g_free(cc);
}

void hpc_h5chunk_cache_stats(hpc_h5chunk_cache *cc, uint64_t *decoded, uint64_t *hits,
                             uint64_t *library)
{
    *decoded = __atomic_load_n(&cc->decoded, __ATOMIC_RELAXED);
    *hits = __atomic_load_n(&cc->hits, __ATOMIC_RELAXED);
    *library = __atomic_load_n(&cc->library, __ATOMIC_RELAXED);
}

static cshard *shard_of(hpc_h5chunk_cache *cc, uint64_t key, uint64_t chunk)
{
    return &cc->shard[(mix(key, chunk) >> 40) % NSHARDS];
}

/* Drop unreferenced entries from the LRU tail while over capacity; the
 * shard lock is held. */
static void shrink(cshard *s)
{
    GList *l = s->lru.tail;
    while (l && s->bytes > s->capacity) {
        GList *prev = l->prev;
        centry *e = l->data;
        if (e->refs == 0) {
            g_queue_unlink(&s->lru, l);
            g_hash_table_remove(s->map, e);
            s->bytes -= e->len;
            centry_free(e);
        }
        l = prev;
    }
}

static void release(hpc_h5chunk_cache *cc, centry *e)
{
    cshard *s = shard_of(cc, e->key, e->chunk);
    g_mutex_lock(&s->lock);
    e->refs--;
    shrink(s);
    g_mutex_unlock(&s->lock);
}

/* ---- reading chunks --------------------------------------------------- */

typedef struct chunk_src {
    const hpc_h5chunk_plan *p;
    hid_t did;
    const hpc_source *src;
} chunk_src;

typedef struct chunk_io {
    const hpc_h5chunk_plan *p;
    const hpc_h5chunk_io *io;
} chunk_io;

void hpc_h5chunk_origin(const hpc_h5chunk_plan *p, uint64_t chunk, hsize_t *off)
{
    uint64_t rest = chunk;
    for (int k = p->rank - 1; k >= 0; k--) {
        off[k] = (rest % p->nchunk[k]) * p->cdims[k];
        rest /= p->nchunk[k];
    }
}

/* Does the chunk at off reach beyond the dataset's extent? */
static int partial_edge(const hpc_h5chunk_plan *p, const hsize_t *off)
{
    for (int k = 0; k < p->rank; k++)
        if (off[k] + p->cdims[k] > p->dims[k])
            return 1;
    return 0;
}

/* The chunk at off read by libhdf5 (H5Dread of its box): unwritten chunks
 * (fill value, or nothing for H5D_FILL_TIME_NEVER: zeros, as h5py has
 * them) and any chunk the reader cannot decode with certainty. */
static int library_chunk(void *ctx, const hsize_t *off, unsigned char *out, char **why)
{
    const chunk_src *cs = ctx;
    const hpc_h5chunk_plan *p = cs->p;
    hsize_t count[HPC_HDF5_MAX_RANK], zero[HPC_HDF5_MAX_RANK] = { 0 }, cd[HPC_HDF5_MAX_RANK];
    for (int k = 0; k < p->rank; k++) {
        cd[k] = p->cdims[k];
        count[k] = MIN(p->cdims[k], p->dims[k] - off[k]);
    }
    memset(out, 0, (size_t)p->chunk_bytes);
    hid_t fs = H5Dget_space(cs->did), ms = H5Screate_simple(p->rank, cd, NULL);
    int rc = HPC_E_IO;
    if (fs >= 0 && ms >= 0 &&
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, count, NULL) >= 0 &&
        H5Sselect_hyperslab(ms, H5S_SELECT_SET, zero, NULL, count, NULL) >= 0 &&
        H5Dread(cs->did, p->mtype, ms, fs, H5P_DEFAULT, out) >= 0)
        rc = HPC_OK;
    else if (!*why)
        *why = g_strdup("libhdf5 cannot read the chunk");
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    return rc;
}

/* The raw bytes of the chunk at off and its filter mask, through the same
 * index lookup H5Dread makes (H5Dget_chunk_storage_size, H5Dread_chunk;
 * not H5Dget_chunk_info*, which walk the index and misplace the chunks of
 * extensible arrays in libhdf5 1.10).  *raw NULL: unwritten, or too large
 * to take (left to libhdf5). */
static int raw_chunk(void *ctx, uint64_t chunk, const hsize_t *off, unsigned char **raw,
                     size_t *len, unsigned *mask)
{
    const chunk_src *cs = ctx;
    hsize_t size = 0;
    (void)chunk;
    uint32_t filters = 0;
    *raw = NULL;
    if (H5Dget_chunk_storage_size(cs->did, off, &size) < 0 || size == 0 ||
        size > cs->src->size || size > 2 * cs->p->chunk_bytes + 4096)
        return HPC_OK;
    unsigned char *buf = g_try_malloc((size_t)size);
    if (!buf)
        return HPC_E_NOMEM;
    if (H5Dread_chunk(cs->did, H5P_DEFAULT, off, &filters, buf) < 0) {
        g_free(buf);
        return HPC_OK;
    }
    *raw = buf;
    *len = (size_t)size;
    *mask = filters;
    return HPC_OK;
}

/* Decode chunk number `chunk` into out (p->chunk_bytes, all written);
 * *by_library: read by libhdf5 instead. */
static int load_chunk(const chunk_io *cs, uint64_t chunk, unsigned char *out, int *by_library,
                      char **why)
{
    const hpc_h5chunk_plan *p = cs->p;
    const hpc_h5chunk_io *io = cs->io;
    hsize_t off[HPC_HDF5_MAX_RANK];
    unsigned char *raw = NULL;
    size_t len = 0;
    unsigned mask = 0;
    hpc_h5chunk_origin(p, chunk, off);
    int rc = io->raw(io->ctx, chunk, off, &raw, &len, &mask);
    if (rc != HPC_OK)
        return rc;
    *by_library = 1;
    if (!raw)
        return io->library ? io->library(io->ctx, off, out, why) : HPC_E_NOTSUP;
    /* libhdf5 ignores the filter mask of partial edge chunks stored
     * unfiltered (H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) */
    if (p->raw_edges && partial_edge(p, off))
        mask = ~0u;
    if ((mask >> MIN(p->nfilt, 31u)) != 0 && mask != ~0u) {
        rc = HPC_E_NOTSUP;
        *why = g_strdup_printf("filter mask %#x names filters the dataset lacks", mask);
    } else {
        rc = hpc_h5chunk_decode(p, raw, len, mask, out, why);
    }
    g_free(raw);
    if (rc == HPC_OK) {
        *by_library = 0;
        return HPC_OK;
    }
    /* what the reader cannot decode with certainty goes to libhdf5: its
     * answer (bytes or error) is the one h5py gets */
    if (!io->library) {
        g_clear_pointer(why, g_free);
        return HPC_E_NOTSUP;
    }
    rc = io->library(io->ctx, off, out, why);
    if (rc == HPC_OK) {
        char *note = g_strdup_printf("chunk %" PRIu64 " read by libhdf5: the reader's decoding "
                                     "failed (%s)", chunk, *why ? *why : hpc_strerror(rc));
        g_free(*why);
        *why = note;
    }
    return rc;
}

/* The decoded chunk, referenced: from the cache, or decoded now by this
 * thread (others wanting it wait). */
static int get_chunk(hpc_h5chunk_cache *cc, const chunk_io *cs, uint64_t key, uint64_t chunk,
                     centry **out, char **why)
{
    cshard *s = shard_of(cc, key, chunk);
    centry probe = { .key = key, .chunk = chunk };
    g_mutex_lock(&s->lock);
    centry *e;
    while ((e = g_hash_table_lookup(s->map, &probe)) && e->state == 0)
        g_cond_wait(&s->done, &s->lock);
    if (e) {
        e->refs++;
        g_queue_unlink(&s->lru, &e->lru);
        g_queue_push_head_link(&s->lru, &e->lru);
        g_mutex_unlock(&s->lock);
        __atomic_fetch_add(&cc->hits, 1, __ATOMIC_RELAXED);
        *out = e;
        return HPC_OK;
    }
    e = g_new0(centry, 1);
    e->key = key;
    e->chunk = chunk;
    e->refs = 1;
    e->lru.data = e;
    g_hash_table_add(s->map, e);
    g_mutex_unlock(&s->lock);

    e->data = g_try_malloc(cs->p->chunk_bytes);
    int by_library = 0;
    int rc = e->data ? load_chunk(cs, chunk, e->data, &by_library, why) : HPC_E_NOMEM;
    __atomic_fetch_add(by_library ? &cc->library : &cc->decoded, 1, __ATOMIC_RELAXED);

    g_mutex_lock(&s->lock);
    if (rc == HPC_OK) {
        e->state = 1;
        e->len = cs->p->chunk_bytes;
        s->bytes += e->len;
        g_queue_push_head_link(&s->lru, &e->lru);
        *out = e;
    } else {
        /* failures are not kept: the next read tries (and logs) again */
        g_hash_table_remove(s->map, e);
        centry_free(e);
    }
    g_cond_broadcast(&s->done);
    g_mutex_unlock(&s->lock);
    return rc;
}

/* Is the chunk in the cache (or being decoded into it)? */
static gboolean cached(hpc_h5chunk_cache *cc, uint64_t key, uint64_t chunk)
{
    cshard *s = shard_of(cc, key, chunk);
    centry probe = { .key = key, .chunk = chunk };
    g_mutex_lock(&s->lock);
    gboolean in = g_hash_table_contains(s->map, &probe);
    g_mutex_unlock(&s->lock);
    return in;
}

/* Decode a chunk the caller reads whole straight into its buffer: no copy
 * through the cache, whose entries a bulk read would only evict. */
static int decode_into(hpc_h5chunk_cache *cc, const chunk_io *cs, uint64_t chunk,
                       unsigned char *dst, char **why)
{
    int by_library = 0;
    int rc = load_chunk(cs, chunk, dst, &by_library, why);
    __atomic_fetch_add(by_library ? &cc->library : &cc->decoded, 1, __ATOMIC_RELAXED);
    return rc;
}

/* One run of elements that are contiguous both in C order and in their
 * chunk, starting at element e: its chunk, offset in the chunk, length. */
static void run_at(const hpc_h5chunk_plan *p, uint64_t e, uint64_t *chunk, uint64_t *cin,
                   uint64_t *len)
{
    uint64_t c[HPC_HDF5_MAX_RANK], rest = e;
    for (int k = p->rank - 1; k >= 0; k--) {
        c[k] = rest % p->dims[k];
        rest /= p->dims[k];
    }
    uint64_t ch = 0, in = 0;
    for (int k = 0; k < p->rank; k++) {
        ch = ch * p->nchunk[k] + c[k] / p->cdims[k];
        in = in * p->cdims[k] + c[k] % p->cdims[k];
    }
    /* dimensions after full_from are whole in the chunk: the run goes on
     * to the end of the chunk along full_from */
    int j = p->full_from;
    uint64_t inner = 1, pos = 0;
    for (int k = p->rank - 1; k > j; k--) {
        pos += c[k] * inner;
        inner *= p->dims[k];
    }
    uint64_t end = MIN(p->dims[j], (c[j] / p->cdims[j] + 1) * p->cdims[j]);
    *chunk = ch;
    *cin = in;
    *len = (end - c[j]) * inner - pos;
}

int hpc_h5chunk_read(hpc_h5chunk_cache *cc, const hpc_h5chunk_plan *p, uint64_t key,
                     hid_t did, const hpc_source *src, uint64_t e0, uint64_t e1, void *buf,
                     char **why)
{
    chunk_src cs = { p, did, src };
    hpc_h5chunk_io io = { .raw = raw_chunk, .library = library_chunk, .ctx = &cs };
    return hpc_h5chunk_read_io(cc, p, key, &io, e0, e1, buf, why);
}

int hpc_h5chunk_read_io(hpc_h5chunk_cache *cc, const hpc_h5chunk_plan *p, uint64_t key,
                        const hpc_h5chunk_io *io, uint64_t e0, uint64_t e1, void *buf,
                        char **why)
{
    chunk_io cs = { p, io };
    unsigned char *dst = buf;
    centry *cur = NULL;
    int rc = HPC_OK;
    *why = NULL;
    for (uint64_t e = e0; e < e1 && rc == HPC_OK;) {
        uint64_t chunk, cin, len;
        run_at(p, e, &chunk, &cin, &len);
        len = MIN(len, e1 - e);
        if (cur && cur->chunk != chunk) {
            release(cc, cur);
            cur = NULL;
        }
        char *note = NULL;
        gboolean whole = !cur && cin == 0 && len == p->chunk_elems && !cached(cc, key, chunk);
        if (whole)
            rc = decode_into(cc, &cs, chunk, dst, &note);
        else if (!cur)
            rc = get_chunk(cc, &cs, key, chunk, &cur, &note);
        if (note) {
            /* a failure, or a chunk libhdf5 had to read: said once */
            g_free(*why);
            *why = note;
        }
        if (rc != HPC_OK)
            break;
        if (!whole)
            memcpy(dst, cur->data + cin * p->esize, (size_t)(len * p->esize));
        dst += len * p->esize;
        e += len;
    }
    if (cur)
        release(cc, cur);
    return rc;
}
