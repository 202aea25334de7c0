/* hdf5_chunk.c - chunks of HDF5 datasets read with pread and decoded in the
 * calling thread (see hdf5_chunk.h). */
#include "config.h"
#include "hdf5_chunk.h"
#include "hpc_bytes.h"
#include "hpc_error.h"

#include <glib.h>
#include <inttypes.h>
#include <string.h>

#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif
#ifdef HAVE_LIBLZF
#include <lzf.h>
#endif

#define MAX_FILTERS 8
#define NSHARDS 16

typedef enum { F_SHUFFLE, F_DEFLATE, F_FLETCHER, F_LZF } filt_kind;

struct hpc_h5chunk_plan {
    int rank;
    int full_from;                     /* dims after this one are whole in every chunk */
    uint64_t dims[HPC_HDF5_MAX_RANK];
    uint64_t cdims[HPC_HDF5_MAX_RANK];
    uint64_t nchunk[HPC_HDF5_MAX_RANK]; /* chunks along each dimension */
    size_t esize;
    uint64_t chunk_elems, chunk_bytes;
    unsigned nfilt;
    filt_kind filt[MAX_FILTERS];       /* in the order the writer applied them */
    size_t shuffle_size;
    int raw_edges;                     /* partial edge chunks are stored unfiltered */
    hid_t mtype;                       /* the type served, for chunks libhdf5 reads */
};

/* ---- filters ---------------------------------------------------------- */

uint32_t hpc_h5chunk_fletcher32(const unsigned char *data, size_t len)
{
    /* big-endian 16-bit words, sums folded every 360 words so that the
     * 32-bit accumulators never overflow; an odd last byte is the high
     * byte of a final word */
    uint32_t a = 0, b = 0;
    size_t words = len / 2;
    while (words) {
        size_t n = words > 360 ? 360 : words;
        words -= n;
        for (size_t i = 0; i < n; i++, data += 2) {
            a += ((uint32_t)data[0] << 8) | data[1];
            b += a;
        }
        a = (a & 0xffff) + (a >> 16);
        b = (b & 0xffff) + (b >> 16);
    }
    if (len % 2) {
        a += (uint32_t)data[0] << 8;
        b += a;
        a = (a & 0xffff) + (a >> 16);
        b = (b & 0xffff) + (b >> 16);
    }
    a = (a & 0xffff) + (a >> 16);
    b = (b & 0xffff) + (b >> 16);
    return (b << 16) | a;
}

/* Unshuffle n elements of 2, 4 and 8 bytes: the output is written in
 * order, one element at a time from each plane (the compiler vectorises
 * these; a stride-esize pass per plane is 4-9x slower). */
static void unshuffle2(const unsigned char *s, unsigned char *d, size_t n)
{
    const unsigned char *p1 = s + n;
    for (size_t i = 0; i < n; i++, d += 2) {
        d[0] = s[i];
        d[1] = p1[i];
    }
}

static void unshuffle4(const unsigned char *s, unsigned char *d, size_t n)
{
    const unsigned char *p1 = s + n, *p2 = p1 + n, *p3 = p2 + n;
    for (size_t i = 0; i < n; i++, d += 4) {
        d[0] = s[i];
        d[1] = p1[i];
        d[2] = p2[i];
        d[3] = p3[i];
    }
}

static void unshuffle8(const unsigned char *s, unsigned char *d, size_t n)
{
    const unsigned char *p1 = s + n, *p2 = p1 + n, *p3 = p2 + n, *p4 = p3 + n, *p5 = p4 + n,
                        *p6 = p5 + n, *p7 = p6 + n;
    for (size_t i = 0; i < n; i++, d += 8) {
        d[0] = s[i];
        d[1] = p1[i];
        d[2] = p2[i];
        d[3] = p3[i];
        d[4] = p4[i];
        d[5] = p5[i];
        d[6] = p6[i];
        d[7] = p7[i];
    }
}

void hpc_h5chunk_unshuffle(const unsigned char *src, unsigned char *dst, size_t n, size_t esize)
{
    size_t nelem = esize ? n / esize : 0;
    if (esize <= 1 || nelem <= 1) {
        memcpy(dst, src, n);
        return;
    }
    if (esize == 2) {
        unshuffle2(src, dst, nelem);
    } else if (esize == 4) {
        unshuffle4(src, dst, nelem);
    } else if (esize == 8) {
        unshuffle8(src, dst, nelem);
    } else {
        /* byte k of every element is stored in plane k */
        for (size_t k = 0; k < esize; k++) {
            const unsigned char *plane = src + k * nelem;
            unsigned char *out = dst + k;
            for (size_t i = 0; i < nelem; i++)
                out[i * esize] = plane[i];
        }
    }
    /* bytes after the last whole element are stored as they are */
    memcpy(dst + nelem * esize, src + nelem * esize, n - nelem * esize);
}

/* Check and strip the Fletcher-32 trailer: *len shrinks by 4. */
static int check_fletcher(const unsigned char *buf, size_t *len, char **why)
{
    if (*len < 4) {
        *why = g_strdup("chunk shorter than its Fletcher-32 checksum");
        return HPC_E_IO;
    }
    size_t n = *len - 4;
    uint32_t stored = (uint32_t)buf[n] | (uint32_t)buf[n + 1] << 8 |
                      (uint32_t)buf[n + 2] << 16 | (uint32_t)buf[n + 3] << 24;
    uint32_t sum = hpc_h5chunk_fletcher32(buf, n);
    /* files of libhdf5 before 1.6.3 stored the checksum with the bytes of
     * each half swapped */
    uint32_t swapped = ((sum & 0x00ff00ffu) << 8) | ((sum >> 8) & 0x00ff00ffu);
    if (stored != sum && stored != swapped) {
        *why = g_strdup_printf("Fletcher-32 checksum mismatch (stored %08x, computed %08x)",
                               stored, sum);
        return HPC_E_IO;
    }
    *len = n;
    return HPC_OK;
}

#ifdef HAVE_LIBDEFLATE
static void decompressor_free(gpointer p)
{
    libdeflate_free_decompressor(p);
}
static GPrivate decompressor_key = G_PRIVATE_INIT(decompressor_free);
#endif

/* Inflate the zlib stream in[0..inlen) into exactly want bytes of out. */
static int inflate_exact(const unsigned char *in, size_t inlen, unsigned char *out, size_t want,
                         char **why)
{
#ifdef HAVE_LIBDEFLATE
    struct libdeflate_decompressor *d = g_private_get(&decompressor_key);
    if (!d) {
        d = libdeflate_alloc_decompressor();
        if (!d)
            return HPC_E_NOMEM;
        g_private_set(&decompressor_key, d);
    }
    size_t got = 0;
    enum libdeflate_result r = libdeflate_zlib_decompress(d, in, inlen, out, want, &got);
    if (r != LIBDEFLATE_SUCCESS || got != want) {
        *why = g_strdup_printf("inflate failed (%s, %zu of %zu bytes)",
                               r == LIBDEFLATE_BAD_DATA ? "bad data" :
                               r == LIBDEFLATE_INSUFFICIENT_SPACE ? "more data than a chunk" :
                               r == LIBDEFLATE_SUCCESS ? "short" : "error", got, want);
        return HPC_E_IO;
    }
    return HPC_OK;
#else
    uLongf got = want;
    int r = uncompress(out, &got, in, (uLong)inlen);
    if (r != Z_OK || got != want) {
        *why = g_strdup_printf("inflate failed (zlib %d, %lu of %zu bytes)", r,
                               (unsigned long)got, want);
        return HPC_E_IO;
    }
    return HPC_OK;
#endif
}

#ifdef HAVE_LIBLZF
/* Decompress the LZF block in[0..inlen) into exactly want bytes of out. */
static int lzf_exact(const unsigned char *in, size_t inlen, unsigned char *out, size_t want,
                     char **why)
{
    unsigned got = want ? lzf_decompress(in, (unsigned)inlen, out, (unsigned)want) : 0;
    if (inlen > UINT_MAX || want > UINT_MAX || got != want) {
        *why = g_strdup_printf("LZF decompression failed (%u of %zu bytes)", got, want);
        return HPC_E_IO;
    }
    return HPC_OK;
}
#endif

/* Bytes the writer handed to filter i: the chunk plus a Fletcher-32
 * trailer for each checksum applied before it. */
static size_t size_into(const hpc_h5chunk_plan *p, unsigned i, unsigned mask)
{
    size_t n = (size_t)p->chunk_bytes;
    for (unsigned j = 0; j < i; j++)
        if (p->filt[j] == F_FLETCHER && !(mask & (1u << j)))
            n += 4;
    return n;
}

/* Two decode buffers per thread, kept between chunks: fresh memory for
 * every chunk cost more than decoding it (a page fault per 4 KiB, twice
 * per chunk; on a virtual machine 35% of a bulk read).  Buffers over
 * SCRATCH_KEEP are not kept. */
#define SCRATCH_KEEP (4u << 20)

typedef struct scratch {
    unsigned char *buf[2];
    size_t cap[2];
} scratch;

static void scratch_free(gpointer p)
{
    scratch *s = p;
    g_free(s->buf[0]);
    g_free(s->buf[1]);
    g_free(s);
}

static GPrivate scratch_key = G_PRIVATE_INIT(scratch_free);

/* This thread's buffer `slot` of at least n bytes, or *own, a buffer of
 * its own for the caller to free; NULL when out of memory. */
static unsigned char *scratch_take(unsigned slot, size_t n, unsigned char **own)
{
    if (n > SCRATCH_KEEP)
        return *own = g_try_malloc(n);
    scratch *s = g_private_get(&scratch_key);
    if (!s) {
        s = g_new0(scratch, 1);
        g_private_set(&scratch_key, s);
    }
    if (s->cap[slot] < n) {
        g_free(s->buf[slot]);
        s->buf[slot] = g_try_malloc(n ? n : 1);
        s->cap[slot] = s->buf[slot] ? n : 0;
    }
    return s->buf[slot];
}

/* Undo filter i (a compressor or shuffle) on in[0..len) into dst, of
 * exactly the size `want` it was given. */
static int undo(const hpc_h5chunk_plan *p, unsigned i, const unsigned char *in, size_t len,
                unsigned char *dst, size_t want, char **why)
{
    if (p->filt[i] == F_SHUFFLE) {
        hpc_h5chunk_unshuffle(in, dst, len, p->shuffle_size);
        return HPC_OK;
    }
    if (p->filt[i] == F_DEFLATE)
        return inflate_exact(in, len, dst, want, why);
#ifdef HAVE_LIBLZF
    return lzf_exact(in, len, dst, want, why);
#else
    return HPC_E_NOTSUP;
#endif
}

/* The last filter decoding applies that moves bytes (not a checksum), or
 * -1: it may write straight into the output. */
static int last_mover(const hpc_h5chunk_plan *p, unsigned mask)
{
    for (unsigned i = 0; i < p->nfilt; i++)
        if (!(mask & (1u << i)) && p->filt[i] != F_FLETCHER)
            return (int)i;
    return -1;
}

/* Decode raw (len bytes, filters with mask bits set were skipped by the
 * writer) into out (p->chunk_bytes), undoing the filters in the reverse
 * of the order the file lists them: the last step writes into out, the
 * others into this thread's scratch buffers.  raw may be overwritten; out
 * holds garbage after a failure. */
static int decode(const hpc_h5chunk_plan *p, unsigned char *raw, size_t len, unsigned mask,
                  unsigned char *out, char **why)
{
    unsigned char *cur = raw, *own[2] = { NULL, NULL };
    unsigned slot = 0;
    int last = last_mover(p, mask), rc = HPC_OK;
    for (int i = (int)p->nfilt - 1; i >= 0 && rc == HPC_OK; i--) {
        if (mask & (1u << i))
            continue;
        if (p->filt[i] == F_FLETCHER) {
            rc = check_fletcher(cur, &len, why);
            continue;
        }
        size_t want = p->filt[i] == F_SHUFFLE ? len : size_into(p, (unsigned)i, mask);
        g_clear_pointer(&own[slot], g_free);     /* not cur: that is the other slot */
        unsigned char *dst = i == last && want == p->chunk_bytes
                                 ? out : scratch_take(slot, want, &own[slot]);
        rc = dst ? undo(p, (unsigned)i, cur, len, dst, want, why) : HPC_E_NOMEM;
        cur = dst;
        len = want;
        slot ^= 1u;
    }
    if (rc == HPC_OK && len != p->chunk_bytes) {
        *why = g_strdup_printf("chunk decodes to %zu bytes, not %" PRIu64, len, p->chunk_bytes);
        rc = HPC_E_IO;
    }
    if (rc == HPC_OK && cur != out)
        memcpy(out, cur, len);
    g_free(own[0]);
    g_free(own[1]);
    return rc;
}

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
        rc = decode(p, raw, len, mask, out, why);
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
