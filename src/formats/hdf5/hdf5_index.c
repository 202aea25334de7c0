/* hdf5_index.c - fixed- and extensible-array chunk indexes read without
 * libhdf5 (hdf5_index.h). */
#include "config.h"
#include "hdf5_index.h"

#include "hpc_bytes.h"
#include "hpc_error.h"

#include <string.h>

#define NOTSUP HPC_E_NOTSUP
#define BLOCK_MAX (64u << 20)      /* one block of the index read at most */
#define IDX_FARRAY 3               /* hpc_h5ohdr.cindex */
#define IDX_EARRAY 4
#define EA_MAX_SBLKS 64

/* What reading one index needs. */
typedef struct rd {
    const hpc_h5ohdr_file *f;
    const hpc_source *src;
    uint64_t hdr;                  /* the index header's address (relative) */
    unsigned client;               /* 0 unfiltered chunks, 1 filtered */
    unsigned esize;                /* bytes of one element */
    uint64_t chunk_bytes;          /* an unfiltered chunk's */
    uint64_t limit;
    uint64_t end;                  /* index elements past the last one set */
    hpc_h5idx *ix;
} rd;

static uint64_t le_n(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << 8 * i;
    return v;
}

static uint64_t undef_addr(const rd *r)
{
    unsigned sa = r->f->sizeof_addr;
    return sa < 8 ? (UINT64_C(1) << 8 * sa) - 1 : UINT64_MAX;
}

/* The len bytes at relative address addr, a block that starts with sig (or
 * none), version 0, the index's client and (sig with a header address)
 * the header's address, and ends with the checksum of the rest. */
static uint8_t *block(const rd *r, uint64_t addr, uint64_t len, const char *sig, int back)
{
    uint64_t off;
    unsigned sa = r->f->sizeof_addr;
    if (len < 4 || len > BLOCK_MAX || !hpc_add_u64(r->f->base, addr, &off) ||
        !hpc_source_contains(r->src, off, len))
        return NULL;
    uint8_t *p = g_malloc((size_t)len);
    int ok = hpc_source_pread(r->src, p, (size_t)len, off) == HPC_OK &&
             hpc_h5_checksum(p, (size_t)len - 4) == hpc_le32(p + len - 4);
    if (ok && sig)              /* a header says the client, a block names its header */
        ok = len >= 6 + (back ? sa : 0) + 4 && !memcmp(p, sig, 4) && p[4] == 0 &&
             (!back || (p[5] == r->client && le_n(p + 6, sa) == r->hdr));
    if (!ok)
        g_free(p);
    return ok ? p : NULL;
}

/* The n elements at p, the first being index element idx, into the list. */
static int elements(rd *r, const uint8_t *p, uint64_t n, uint64_t idx)
{
    unsigned sa = r->f->sizeof_addr, sl = r->esize - sa - (r->client ? 4 : 0);
    for (uint64_t i = 0; i < n && idx + i < r->end; i++, p += r->esize) {
        hpc_h5idx_chunk c = { .idx = idx + i, .addr = le_n(p, sa), .size = r->chunk_bytes };
        if (c.addr == undef_addr(r))
            continue;
        if (r->client) {
            c.size = le_n(p + sa, sl);
            c.mask = hpc_le32(p + sa + sl);
        }
        if (r->ix->chunks->len >= r->limit || !hpc_add_u64(r->f->base, c.addr, &c.addr))
            return NOTSUP;
        g_array_append_val(r->ix->chunks, c);
    }
    return HPC_OK;
}

/* The element layout of the client: an address, and for filtered chunks
 * the chunk's size (1..8 bytes) and filter mask. */
static int client_ok(const rd *r)
{
    unsigned sa = r->f->sizeof_addr;
    return r->client == 0 ? r->esize == sa : r->client == 1 && r->esize >= sa + 5 && r->esize <= sa + 12;
}

/* ---- fixed arrays ------------------------------------------------------ */

/* A paged data block's pages (after its prefix of pre bytes). */
static int fa_pages(rd *r, uint64_t dblk, uint64_t pre, const uint8_t *init, uint64_t n,
                    uint64_t per)
{
    uint64_t at = dblk + pre;
    for (uint64_t k = 0; k * per < n; k++) {
        uint64_t cnt = MIN(per, n - k * per), len = cnt * r->esize + 4;
        if ((init[k / 8] & (0x80 >> (k % 8))) == 0) {
            at += len;                  /* a page never written */
            continue;
        }
        uint8_t *p = block(r, at, len, NULL, 0);
        int rc = p ? elements(r, p, cnt, k * per) : NOTSUP;
        g_free(p);
        if (rc != HPC_OK)
            return rc;
        at += len;
    }
    return HPC_OK;
}

static int fa_read(rd *r)
{
    unsigned sa = r->f->sizeof_addr, ss = r->f->sizeof_size;
    uint8_t *h = block(r, r->hdr, 8 + ss + sa + 4, "FAHD", 0);
    if (!h)
        return NOTSUP;
    r->client = h[5];
    r->esize = h[6];
    unsigned bits = h[7];
    uint64_t n = le_n(h + 8, ss), dblk = le_n(h + 8 + ss, sa), want = 1;
    g_free(h);
    for (int k = 0; k < r->ix->rank; k++)
        want = hpc_mul_u64_sat(want, r->ix->max_chunks[k]);
    if (!client_ok(r) || bits > 31 || n != want)
        return NOTSUP;
    if (dblk == undef_addr(r))
        return HPC_OK;                  /* no chunk written */
    uint64_t per = UINT64_C(1) << bits, pages = n > per ? (n + per - 1) / per : 0;
    uint64_t bm = (pages + 7) / 8, pre = 6 + sa + bm + 4;
    uint64_t len = pages ? pre : pre + hpc_mul_u64_sat(n, r->esize);
    uint8_t *p = block(r, dblk, len, "FADB", 1);
    int rc = !p ? NOTSUP : pages ? fa_pages(r, dblk, pre, p + 6 + sa, n, per)
                                 : elements(r, p + 6 + sa, n, 0);
    g_free(p);
    return rc;
}

/* ---- extensible arrays ------------------------------------------------- */

typedef struct ea {
    unsigned max_bits, iblk_elmts, page_bits, off_size;
    uint64_t dblk_min, sblk_min, max_idx;
    unsigned nsblks, iblk_sblks;   /* super blocks; those whose data blocks
                                      the index block holds */
    uint64_t ndblks[EA_MAX_SBLKS], dblk_elmts[EA_MAX_SBLKS], start[EA_MAX_SBLKS];
} ea;

static int log2_of2(uint64_t v, unsigned *out)
{
    if (!v || (v & (v - 1)))
        return 0;
    unsigned k = 0;
    while ((UINT64_C(1) << k) != v)
        k++;
    *out = k;
    return 1;
}

/* The super blocks' shapes, as libhdf5 computes them from the header. */
static int ea_shape(ea *e)
{
    unsigned lmin, lsb;
    if (!log2_of2(e->dblk_min, &lmin) || !log2_of2(e->sblk_min, &lsb) || e->max_bits > 64 ||
        e->max_bits < lmin || e->page_bits > 31)
        return 0;
    e->nsblks = 1 + e->max_bits - lmin;
    e->iblk_sblks = 2 * lsb;
    if (e->nsblks > EA_MAX_SBLKS || e->iblk_sblks > e->nsblks)
        return 0;
    uint64_t start = 0;
    for (unsigned u = 0; u < e->nsblks; u++) {
        e->ndblks[u] = UINT64_C(1) << (u / 2);
        e->dblk_elmts[u] = hpc_mul_u64_sat(UINT64_C(1) << ((u + 1) / 2), e->dblk_min);
        e->start[u] = start;
        if (!hpc_add_u64(start, hpc_mul_u64_sat(e->ndblks[u], e->dblk_elmts[u]), &start))
            start = UINT64_MAX;
    }
    e->off_size = (e->max_bits + 7) / 8;
    return 1;
}

/* Data block d of super block u at dblk; init: the super block's page
 * bits (paged data blocks only). */
static int ea_dblock(rd *r, const ea *e, unsigned u, uint64_t d, uint64_t dblk, const uint8_t *init)
{
    uint64_t n = e->dblk_elmts[u], per = UINT64_C(1) << e->page_bits;
    uint64_t first = e->iblk_elmts + e->start[u] + d * n;
    uint64_t pre = 6 + r->f->sizeof_addr + e->off_size + 4;
    if (dblk == undef_addr(r) || first >= e->max_idx)
        return HPC_OK;
    if (n <= per) {
        uint8_t *p = block(r, dblk, pre + n * r->esize, "EADB", 1);
        int rc = p ? elements(r, p + pre - 4, n, first) : NOTSUP;
        g_free(p);
        return rc;
    }
    uint64_t pages = n / per;
    uint8_t *p = init ? block(r, dblk, pre, "EADB", 1) : NULL;
    int rc = p ? HPC_OK : NOTSUP;
    for (uint64_t k = 0; rc == HPC_OK && k < pages; k++) {
        uint64_t bit = d * pages + k, len = per * r->esize + 4;
        if ((init[bit / 8] & (0x80 >> (bit % 8))) == 0)
            continue;
        uint8_t *q = block(r, dblk + pre + k * len, len, NULL, 0);
        rc = q ? elements(r, q, per, first + k * per) : NOTSUP;
        g_free(q);
    }
    g_free(p);
    return rc;
}

/* Super block u (beyond those of the index block) at sblk. */
static int ea_sblock(rd *r, const ea *e, unsigned u, uint64_t sblk)
{
    unsigned sa = r->f->sizeof_addr;
    uint64_t per = UINT64_C(1) << e->page_bits, nd = e->ndblks[u];
    uint64_t pages = e->dblk_elmts[u] > per ? e->dblk_elmts[u] / per : 0;
    /* libhdf5 sizes the page bits by data block, numbers them across */
    uint64_t bm = nd * ((pages + 7) / 8), at = 6 + sa + e->off_size;
    if (sblk == undef_addr(r) || e->iblk_elmts + e->start[u] >= e->max_idx)
        return HPC_OK;
    uint8_t *p = block(r, sblk, at + bm + nd * sa + 4, "EASB", 1);
    int rc = p ? HPC_OK : NOTSUP;
    for (uint64_t d = 0; rc == HPC_OK && d < nd; d++)
        rc = ea_dblock(r, e, u, d, le_n(p + at + bm + d * sa, sa), p + at);
    g_free(p);
    return rc;
}

/* The index block: its own elements, the data blocks of the first super
 * blocks, the addresses of the other super blocks. */
static int ea_iblock(rd *r, const ea *e, uint64_t iblk)
{
    unsigned sa = r->f->sizeof_addr;
    uint64_t ndb = 2 * (e->sblk_min - 1), nsb = e->nsblks - e->iblk_sblks;
    uint64_t at = 6 + sa, dat = at + (uint64_t)e->iblk_elmts * r->esize, sat = dat + ndb * sa;
    uint8_t *p = block(r, iblk, sat + nsb * sa + 4, "EAIB", 1);
    if (!p)
        return NOTSUP;
    int rc = elements(r, p + at, MIN(e->iblk_elmts, e->max_idx), 0);
    uint64_t di = 0;
    for (unsigned u = 0; rc == HPC_OK && u < e->iblk_sblks; u++)
        for (uint64_t d = 0; rc == HPC_OK && d < e->ndblks[u]; d++, di++)
            rc = di < ndb ? ea_dblock(r, e, u, d, le_n(p + dat + di * sa, sa), NULL) : NOTSUP;
    for (unsigned u = e->iblk_sblks; rc == HPC_OK && u < e->nsblks; u++)
        rc = ea_sblock(r, e, u, le_n(p + sat + (u - e->iblk_sblks) * sa, sa));
    g_free(p);
    return rc;
}

static int ea_read(rd *r)
{
    unsigned sa = r->f->sizeof_addr, ss = r->f->sizeof_size;
    uint8_t *h = block(r, r->hdr, 12 + 6 * ss + sa + 4, "EAHD", 0);
    if (!h)
        return NOTSUP;
    ea e = { .max_bits = h[7], .iblk_elmts = h[8], .dblk_min = h[9], .sblk_min = h[10],
             .page_bits = h[11], .max_idx = le_n(h + 12 + 4 * ss, ss) };
    r->client = h[5];
    r->esize = h[6];
    r->end = e.max_idx;
    uint64_t iblk = le_n(h + 12 + 6 * ss, sa);
    g_free(h);
    if (!client_ok(r) || !ea_shape(&e))
        return NOTSUP;
    return iblk == undef_addr(r) ? HPC_OK : ea_iblock(r, &e, iblk);
}

/* ---- the index --------------------------------------------------------- */

/* The shape from the layout: rank chunk dims, then the element's size. */
static int shape(rd *r, const hpc_h5ohdr *o, int rank, const uint64_t *maxdims)
{
    hpc_h5idx *ix = r->ix;
    if (rank < 1 || rank > HPC_H5OHDR_MAX_RANK || o->clayout_rank != (unsigned)rank + 1)
        return 0;
    ix->rank = rank;
    ix->unlim = -1;
    r->chunk_bytes = o->clayout_dims[rank];
    for (int k = 0; k < rank; k++) {
        ix->cdims[k] = o->clayout_dims[k];
        if (!ix->cdims[k] || (maxdims[k] == UINT64_MAX && ix->unlim >= 0))
            return 0;
        if (maxdims[k] == UINT64_MAX)
            ix->unlim = k;
        ix->max_chunks[k] = maxdims[k] == UINT64_MAX ? 0 : maxdims[k] / ix->cdims[k] +
                                                       (maxdims[k] % ix->cdims[k] != 0);
        if (maxdims[k] != UINT64_MAX && !ix->max_chunks[k])
            return 0;                   /* an empty axis: no chunk (and no division) */
        r->chunk_bytes = hpc_mul_u64_sat(r->chunk_bytes, ix->cdims[k]);
    }
    return r->chunk_bytes != UINT64_MAX;
}

int hpc_h5idx_read(const hpc_h5ohdr_file *f, const hpc_h5ohdr *o, int rank,
                   const uint64_t *maxdims, const hpc_source *src, uint64_t limit,
                   hpc_h5idx **out)
{
    hpc_h5idx *ix = g_new0(hpc_h5idx, 1);
    rd r = { .f = f, .src = src, .hdr = o->cindex_addr, .limit = limit, .end = UINT64_MAX,
             .ix = ix };
    ix->chunks = g_array_new(FALSE, FALSE, sizeof(hpc_h5idx_chunk));
    int rc = NOTSUP;
    *out = NULL;
    /* a fixed array has no unlimited axis, an extensible array one */
    int ok = shape(&r, o, rank, maxdims);
    if (ok && o->cindex == IDX_FARRAY && ix->unlim < 0)
        rc = fa_read(&r);
    else if (ok && o->cindex == IDX_EARRAY && ix->unlim >= 0)
        rc = ea_read(&r);
    if (rc == HPC_OK)
        *out = ix;
    else
        hpc_h5idx_free(ix);
    return rc;
}

void hpc_h5idx_origin(const hpc_h5idx *ix, uint64_t idx, uint64_t *off)
{
    /* an extensible array counts its unlimited axis first ("swizzled"),
     * then the others in order */
    uint64_t s[HPC_H5OHDR_MAX_RANK];
    int n = ix->rank, u = ix->unlim < 0 ? 0 : ix->unlim;
    for (int i = n - 1; i >= 1; i--) {
        int axis = ix->unlim < 0 ? i : i <= u ? i - 1 : i;
        s[axis] = idx % ix->max_chunks[axis];
        idx /= ix->max_chunks[axis];
    }
    s[u] = idx;
    for (int k = 0; k < n; k++)
        off[k] = s[k] * ix->cdims[k];
}

void hpc_h5idx_free(hpc_h5idx *ix)
{
    if (!ix)
        return;
    g_array_free(ix->chunks, TRUE);
    g_free(ix);
}
