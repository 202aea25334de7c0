/* fti_gen.c - write a large FTI-FF checkpoint for benchmarks (i64 layout,
 * as shared/spec/fti.md describes it), with level-3 Reed-Solomon parity
 * files for the first group.
 *
 *   fti_gen DIR RANKS VARS VAR_MIB [GROUP]
 *
 * writes DIR/Local/node<r>/bench/l3/Ckpt1-Rank<r>.fti for every rank (VARS
 * variables of VAR_MIB MiB, one chunk each, pseudo-random bytes) and
 * Ckpt1-RSed<i>.fti for the ranks of group 0 (GROUP ranks, default 4).
 */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fti_rs.h"

#define META 106
#define SLICE (1u << 20)

static void put(unsigned char *p, uint64_t v, unsigned w)
{
    for (unsigned i = 0; i < w; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static char *rank_dir(const char *dir, unsigned r)
{
    char node[32];
    g_snprintf(node, sizeof node, "node%u", r);
    char *d = g_build_filename(dir, "Local", node, "bench", "l3", NULL);
    g_mkdir_with_parents(d, 0755);
    return d;
}

/* The 106-byte file meta with its myHash. */
static void file_meta(unsigned char *m, const char *hex, int32_t ckpt, int64_t ckpt_size,
                      int64_t meta_size, int64_t data_size, int64_t fs, int64_t max_fs,
                      int64_t pt_fs)
{
    memset(m, 0, META);
    memcpy(m, hex, 32);
    put(m + 49, (uint32_t)ckpt, 4);
    int64_t v[6] = { ckpt_size, meta_size, data_size, fs, max_fs, pt_fs };
    for (int i = 0; i < 6; i++)
        put(m + 53 + 8 * i, (uint64_t)v[i], 8);
    put(m + 101, 12345, 4);
    GChecksum *h = g_checksum_new(G_CHECKSUM_MD5);
    g_checksum_update(h, m, 33);
    g_checksum_update(h, m + 101, 4);
    g_checksum_update(h, m + 53, 32);       /* ckptSize metaSize dataSize fs */
    g_checksum_update(h, m + 93, 8);        /* ptFs */
    g_checksum_update(h, m + 85, 8);        /* maxFs */
    gsize dl = 16;
    g_checksum_get_digest(h, m + 33, &dl);
    g_checksum_free(h);
}

static int write_rank(const char *dir, unsigned r, unsigned nvars, uint64_t vbytes,
                      int64_t max_fs, uint64_t *fs_out)
{
    char name[64];
    char *d = rank_dir(dir, r);
    g_snprintf(name, sizeof name, "Ckpt1-Rank%u.fti", r);
    char *path = g_build_filename(d, name, NULL);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "fti_gen: %s: %s\n", path, g_strerror(errno));
        return 1;
    }
    unsigned char *buf = g_malloc(SLICE);
    unsigned char (*md5)[16] = g_malloc(16 * (gsize)nvars);
    guint32 x = 2463534242u ^ (r * 7919u + 1);
    for (unsigned v = 0; v < nvars; v++) {
        GChecksum *h = g_checksum_new(G_CHECKSUM_MD5);
        for (uint64_t done = 0; done < vbytes;) {
            size_t n = (size_t)MIN((uint64_t)SLICE, vbytes - done);
            for (size_t i = 0; i + 4 <= n; i += 4) {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5;
                memcpy(buf + i, &x, 4);
            }
            g_checksum_update(h, buf, n);
            fwrite(buf, 1, n, f);
            done += n;
        }
        gsize dl = 16;
        g_checksum_get_digest(h, md5[v], &dl);
        g_checksum_free(h);
    }
    uint64_t ds = vbytes * nvars;
    size_t mlen = 12 + 58 * (size_t)nvars;
    unsigned char *meta = g_malloc0(mlen);
    put(meta, nvars, 4);
    put(meta + 4, ds, 8);
    GChecksum *all = g_checksum_new(G_CHECKSUM_MD5);
    for (unsigned v = 0; v < nvars; v++) {
        unsigned char *q = meta + 12 + 58 * v;
        put(q, v, 4);
        q[8] = 1;
        put(q + 18, vbytes * v, 8);
        put(q + 26, vbytes, 8);
        put(q + 34, vbytes, 8);
        memcpy(q + 42, md5[v], 16);
        g_checksum_update(all, md5[v], 16);
    }
    fwrite(meta, 1, mlen, f);
    uint64_t fs = ds + mlen + META;
    unsigned char m[META];
    file_meta(m, g_checksum_get_string(all), 1, (int64_t)fs, (int64_t)(mlen + META),
              (int64_t)ds, (int64_t)fs, max_fs, -1);
    fwrite(m, 1, META, f);
    int rc = fclose(f) != 0;
    *fs_out = fs;
    g_checksum_free(all);
    g_free(meta);
    g_free(md5);
    g_free(buf);
    g_free(path);
    g_free(d);
    return rc;
}

/* RSed_i of group 0: sum_j M[i][j] * (Rank_j zero-extended, size at the end). */
static int write_parity(const char *dir, unsigned g, uint64_t fs, uint64_t max_fs)
{
    FILE *in[FTI_RS_MAX_GROUP], *out[FTI_RS_MAX_GROUP];
    char name[64];
    for (unsigned j = 0; j < g; j++) {
        char *d = rank_dir(dir, j);
        g_snprintf(name, sizeof name, "Ckpt1-Rank%u.fti", j);
        char *p = g_build_filename(d, name, NULL);
        in[j] = fopen(p, "rb");
        g_snprintf(name, sizeof name, "Ckpt1-RSed%u.fti", j);
        g_free(p);
        p = g_build_filename(d, name, NULL);
        out[j] = fopen(p, "wb");
        g_free(p);
        g_free(d);
        if (!in[j] || !out[j])
            return 1;
    }
    unsigned char *buf = g_malloc(SLICE);
    uint16_t *acc = g_malloc((size_t)g * (SLICE / 2 + 1) * 2);
    GChecksum *h[FTI_RS_MAX_GROUP];
    for (unsigned i = 0; i < g; i++)
        h[i] = g_checksum_new(G_CHECKSUM_MD5);
    for (uint64_t off = 0; off < max_fs; off += SLICE) {
        size_t n = (size_t)MIN((uint64_t)SLICE, max_fs - off);
        memset(acc, 0, (size_t)g * (SLICE / 2 + 1) * 2);
        for (unsigned j = 0; j < g; j++) {
            memset(buf, 0, n);
            if (off < fs && fread(buf, 1, (size_t)MIN((uint64_t)n, fs - off), in[j]) == 0)
                return 1;
            for (uint64_t x = MAX(off, max_fs - 8); x < off + n; x++)
                buf[x - off] = (unsigned char)(fs >> (8 * (x - (max_fs - 8))));
            for (unsigned i = 0; i < g; i++)
                fti_gf_mul_acc(acc + (size_t)i * (SLICE / 2 + 1), buf, n, fti_rs_coef(g, i, j));
        }
        for (unsigned i = 0; i < g; i++) {
            unsigned char *o = (unsigned char *)(acc + (size_t)i * (SLICE / 2 + 1));
            for (size_t w = 0; w < (n + 1) / 2; w++) {     /* little-endian words */
                uint16_t v = acc[(size_t)i * (SLICE / 2 + 1) + w];
                o[2 * w] = (unsigned char)v;
                o[2 * w + 1] = (unsigned char)(v >> 8);
            }
            fwrite(o, 1, n, out[i]);
            g_checksum_update(h[i], o, n);
        }
    }
    int rc = 0;
    for (unsigned i = 0; i < g; i++) {
        unsigned char m[META];
        file_meta(m, g_checksum_get_string(h[i]), 1, (int64_t)fs, 0, 0, (int64_t)max_fs,
                  (int64_t)max_fs, -1);
        fwrite(m, 1, META, out[i]);
        rc |= fclose(out[i]) != 0;
        fclose(in[i]);
        g_checksum_free(h[i]);
    }
    g_free(buf);
    g_free(acc);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: fti_gen DIR RANKS VARS VAR_MIB [GROUP]\n");
        return 2;
    }
    unsigned ranks = (unsigned)atoi(argv[2]), nvars = (unsigned)atoi(argv[3]);
    uint64_t vbytes = (uint64_t)atoi(argv[4]) << 20;
    unsigned g = argc > 5 ? (unsigned)atoi(argv[5]) : 4;
    if (ranks < g || g < 2 || g > FTI_RS_MAX_GROUP || nvars < 1 || vbytes == 0)
        return 2;
    /* every rank has the same size, so maxFs is known up front */
    uint64_t fs = vbytes * nvars + 12 + 58 * (uint64_t)nvars + META;
    for (unsigned r = 0; r < ranks; r++) {
        uint64_t got;
        if (write_rank(argv[1], r, nvars, vbytes, r < g ? (int64_t)(fs + 8) : -1, &got) != 0)
            return 1;
    }
    return write_parity(argv[1], g, fs, fs + 8);
}
