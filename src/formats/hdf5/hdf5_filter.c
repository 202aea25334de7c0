/* hdf5_filter.c - undoing the filters of an HDF5 chunk in the daemon:
 * shuffle, deflate (libdeflate or zlib), LZF and the Fletcher-32 check,
 * with decode buffers kept per thread. */
#include "config.h"
#include "hdf5_chunk_int.h"
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

/* hpc_h5chunk_decode: the last step writes into out, the others into
 * this thread's scratch buffers. */
int hpc_h5chunk_decode(const hpc_h5chunk_plan *p, unsigned char *raw, size_t len, unsigned mask,
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
