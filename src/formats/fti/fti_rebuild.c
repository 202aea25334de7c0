/* fti_rebuild.c - the bytes of a rank's file: its own file through the
 * block cache, or, for a rank lost and rebuilt from its L3 Reed-Solomon
 * group, decoded on demand for each read from the group's surviving files
 * (GF(2^16) products: fti_rs.c).  fti_recover.c decides which ranks are
 * rebuilt and from what; the file meta (fti_meta.c) reads rebuilt bytes
 * through here too. */
#include "fti.h"

#include <string.h>

/* Bytes [a, b) of piece p as it was encoded: a data piece zero-extended to
 * maxFs with its real size in the last 8 bytes. */
static int piece_read(const fti_rsjob *job, const fti_piece *p, uint8_t *buf, uint64_t a, uint64_t b)
{
    if (p->parity)
        return hpc_source_pread(p->src, buf, (size_t)(b - a), a);
    uint64_t have = a < p->fs ? MIN(b, p->fs) - a : 0;
    if (have) {
        int rc = hpc_source_pread(p->src, buf, (size_t)have, a);
        if (rc != HPC_OK)
            return rc;
    }
    memset(buf + have, 0, (size_t)(b - a - have));
    uint64_t tail = job->max_fs - 8;
    for (uint64_t x = MAX(a, tail); x < b; x++)
        buf[x - a] = (uint8_t)(p->fs >> (8 * (x - tail)));
    return HPC_OK;
}

/* Per-thread scratch of the decoder: an accumulator and one piece's
 * bytes, kept for the thread's life instead of fresh pages on every call.
 * FTI_RS_STEP bytes are decoded per pass, so that the destination and the
 * piece just read stay in the CPU's cache for the G products. */
#define RS_SCRATCH (FTI_RS_STEP + 128)
static GPrivate rs_scratch = G_PRIVATE_INIT(g_free);

static uint8_t *scratch(void)
{
    uint8_t *p = g_private_get(&rs_scratch);
    if (!p) {
        p = g_malloc(2 * RS_SCRATCH + 64);
        g_private_set(&rs_scratch, p);
    }
    return (uint8_t *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* Bytes [a, a + nb) of the lost file (a even, nb <= FTI_RS_STEP) as
 * little-endian words into dst, 2-byte aligned and holding (nb + 1) / 2
 * words: dst = sum of coef * piece over the pieces. */
static int decode_words(fti_rsjob *job, uint8_t *dst, size_t nb, uint64_t a)
{
    /* gf-complete wants the piece aligned like the destination */
    uint8_t *tmp = scratch() + RS_SCRATCH + ((uintptr_t)dst & 63);
    uint16_t *w = (uint16_t *)(void *)dst;
    if (job->npieces == 0)
        memset(dst, 0, (nb + 1) & ~(size_t)1);
    for (unsigned k = 0; k < job->npieces; k++) {
        int rc = piece_read(job, &job->pieces[k], tmp, a, a + nb);
        if (rc != HPC_OK)
            return rc;
        /* the first product is stored: no pass to zero dst first */
        if (k == 0)
            fti_gf_mul_set(w, tmp, nb, job->pieces[k].coef);
        else
            fti_gf_mul_acc(w, tmp, nb, job->pieces[k].coef);
    }
    return HPC_OK;
}

/* The first bytes of [off, off + len) when they cannot be decoded in place
 * (odd offset or destination, odd last byte): decoded into the scratch
 * accumulator and copied; *took says how many. */
static int decode_copy(fti_rsjob *job, uint8_t *o, size_t len, uint64_t off, size_t *took)
{
    uint64_t a = off & ~(uint64_t)1;
    uint64_t b = MIN(MIN(job->max_fs, a + FTI_RS_STEP), (off + len + 1) & ~(uint64_t)1);
    size_t nb = (size_t)(b - a), take = (size_t)MIN((uint64_t)len, b - off);
    uint8_t *acc = scratch();
    int rc = decode_words(job, acc, nb, a);
    if (rc != HPC_OK)
        return rc;
    if (G_BYTE_ORDER == G_LITTLE_ENDIAN) {
        memcpy(o, acc + (off - a), take);
    } else {
        const uint16_t *w = (const uint16_t *)(void *)acc;
        for (size_t i = 0; i < take; i++) {
            uint64_t x = off + i - a;
            o[i] = (uint8_t)(w[x / 2] >> (8 * (x & 1)));
        }
    }
    *took = take;
    return HPC_OK;
}
/* Rebuild bytes [off, off+len) of the lost file, straight into out where
 * the words line up with it (no copy), else through the accumulator. */
int fti_rs_decode(fti_rsjob *job, void *out, size_t len, uint64_t off)
{
    uint8_t *o = out;
    int rc = HPC_OK;
    if (off > job->max_fs || len > job->max_fs - off)
        return HPC_E_CORRUPT;
    while (len > 0 && rc == HPC_OK) {
        size_t take = MIN(len & ~(size_t)1, (size_t)FTI_RS_STEP);
        if (G_BYTE_ORDER == G_LITTLE_ENDIAN && !(off & 1) && !((uintptr_t)o & 1) && take)
            rc = decode_words(job, o, take, off);
        else
            rc = decode_copy(job, o, len, off, &take);
        o += take;
        off += take;
        len -= take;
    }
    return rc;
}

/* Bytes of a rebuilt rank are decoded for each read, not kept in the block
 * cache: decoding costs less than filling fresh cache blocks and copying
 * them out again, and the kernel keeps what was read (keep_cache). */
int fti_rank_read(hpc_container *c, const fti_rank *rk, void *buf, size_t len, uint64_t off)
{
    if (!rk->src) {
        if (off > rk->rs->fs || len > rk->rs->fs - off)
            return HPC_E_CORRUPT;
        return fti_rs_decode(rk->rs, buf, len, off);
    }
    hpc_cache *cache = c->host->cache(c);
    return cache ? hpc_cache_read_source(cache, rk->src, buf, len, off) : HPC_E_NOMEM;
}
