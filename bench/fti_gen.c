/* fti_gen.c - write an FTI-FF checkpoint (i64 layout, as docs/fti.md
 * describes it) with its config.fti and Topology.fti, for benchmarks and
 * the recovery tests.
 *
 *   fti_gen [-S NODE_SIZE] [-H HEAD] [-l LEVEL] [-b BYTES] [-a]
 *           DIR RANKS VARS VAR_MIB [GROUP]
 *
 * RANKS is the number of MPI processes, heads included, as FTI numbers
 * them (whole blocks of GROUP nodes of NODE_SIZE processes).  Writes
 * DIR/config.fti ([basic] node_size, group_size, head),
 * DIR/Meta/bench/Topology.fti as FTI's FTI_SaveTopo does (one line
 * `<nodeID> = node<n>` per node) and, for every rank R that is not a head,
 * DIR/Local/node<n>/bench/l<LEVEL>/Ckpt1-Rank<R>.fti: VARS variables of
 * VAR_MIB MiB (or BYTES + 8 * R bytes with -b, so that ranks differ in
 * size), one chunk each, pseudo-random bytes seeded by R.
 *   LEVEL 3 (default): Ckpt1-RSed<R>.fti for the ranks of the first group
 *                      (of every group with -a);
 *   LEVEL 1:           the Rank files only;
 *   LEVEL 2:           Ckpt1-Pcof<R>.fti, a copy of the Rank file of R's
 *                      left partner, for every rank.
 * The groups are computed here on their own (not with the reader's code),
 * as FTI's topology code builds them with block placement: rank R on node
 * R / S at position R % S (position 0 is the head with -H 1 and writes no
 * file); blocks of GROUP nodes; a group is one position on the nodes of a
 * block; group rank = node % GROUP.
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

typedef struct gen {
    const char *dir;
    unsigned ranks, nvars, group, node_size, head, level, all;
    uint64_t vbytes, bytes;       /* bytes: -b, 0 if not given */
    uint64_t *fs;                 /* file size of each rank */
} gen;

static void put(unsigned char *p, uint64_t v, unsigned w)
{
    for (unsigned i = 0; i < w; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Write a file without g_file_set_contents' fsync (thousands in the tests). */
static int write_file(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    size_t n = fwrite(bytes, 1, len, f);
    return (fclose(f) != 0) | (n != len);
}

static unsigned node_of(const gen *g, unsigned r) { return r / g->node_size; }
static int is_head(const gen *g, unsigned r) { return g->head && r % g->node_size == 0; }

/* Rank at group rank j of r's group. */
static unsigned member(const gen *g, unsigned r, unsigned j)
{
    unsigned n = node_of(g, r), p = r % g->node_size;
    return (n / g->group * g->group + j) * g->node_size + p;
}

static unsigned left_partner(const gen *g, unsigned r)
{
    unsigned n = node_of(g, r);
    return member(g, r, (n % g->group + g->group - 1) % g->group);
}

static uint64_t var_bytes(const gen *g, unsigned r)
{
    return g->bytes ? g->bytes + 8 * (uint64_t)r : g->vbytes;
}

static uint64_t file_size(const gen *g, unsigned r)
{
    return var_bytes(g, r) * g->nvars + 12 + 58 * (uint64_t)g->nvars + META;
}

static char *rank_path(const gen *g, unsigned r, const char *kind)
{
    char node[32], lvl[8], name[64];
    g_snprintf(node, sizeof node, "node%u", node_of(g, r));
    g_snprintf(lvl, sizeof lvl, "l%u", g->level);
    char *d = g_build_filename(g->dir, "Local", node, "bench", lvl, NULL);
    g_mkdir_with_parents(d, 0755);
    g_snprintf(name, sizeof name, "Ckpt1-%s%u.fti", kind, r);
    char *p = g_build_filename(d, name, NULL);
    g_free(d);
    return p;
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

static int write_rank(const gen *g, unsigned r, int64_t max_fs, int64_t pt_fs)
{
    char *path = rank_path(g, r, "Rank");
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "fti_gen: %s: %s\n", path, g_strerror(errno));
        g_free(path);
        return 1;
    }
    uint64_t vbytes = var_bytes(g, r);
    unsigned nvars = g->nvars;
    unsigned char *buf = g_malloc(SLICE);
    unsigned char (*md5)[16] = g_malloc(16 * (gsize)nvars);
    guint32 x = 2463534242u ^ (r * 7919u + 1);
    for (unsigned v = 0; v < nvars; v++) {
        GChecksum *h = g_checksum_new(G_CHECKSUM_MD5);
        for (uint64_t done = 0; done < vbytes;) {
            size_t n = (size_t)MIN((uint64_t)SLICE, vbytes - done);
            for (size_t i = 0; i < n; i += 4) {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5;
                memcpy(buf + i, &x, MIN(4, n - i));
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
              (int64_t)ds, (int64_t)fs, max_fs, pt_fs);
    fwrite(m, 1, META, f);
    int rc = fclose(f) != 0;
    g_checksum_free(all);
    g_free(meta);
    g_free(md5);
    g_free(buf);
    g_free(path);
    return rc;
}

/* Pcof<r>: a byte copy of the Rank file of r's left partner. */
static int write_pcof(const gen *g, unsigned r)
{
    char *from = rank_path(g, left_partner(g, r), "Rank"), *to = rank_path(g, r, "Pcof");
    gchar *bytes;
    gsize len;
    int rc = !g_file_get_contents(from, &bytes, &len, NULL);
    if (rc == 0) {
        rc = write_file(to, bytes, len);
        g_free(bytes);
    }
    g_free(from);
    g_free(to);
    return rc;
}

/* RSed_i of the group of rank r0: sum_j M[i][j] * (Rank_j zero-extended
 * to maxFs, its size in the last 8 bytes). */
static int write_parity(const gen *g, unsigned r0, uint64_t max_fs)
{
    unsigned G = g->group, mem[FTI_RS_MAX_GROUP];
    FILE *in[FTI_RS_MAX_GROUP], *out[FTI_RS_MAX_GROUP];
    for (unsigned j = 0; j < G; j++) {
        mem[j] = member(g, r0, j);
        char *p = rank_path(g, mem[j], "Rank"), *q = rank_path(g, mem[j], "RSed");
        in[j] = fopen(p, "rb");
        out[j] = fopen(q, "wb");
        g_free(p);
        g_free(q);
        if (!in[j] || !out[j])
            return 1;
    }
    unsigned char *buf = g_malloc(SLICE);
    size_t words = SLICE / 2 + 1;
    uint16_t *acc = g_malloc((size_t)G * words * 2);
    GChecksum *h[FTI_RS_MAX_GROUP];
    for (unsigned i = 0; i < G; i++)
        h[i] = g_checksum_new(G_CHECKSUM_MD5);
    for (uint64_t off = 0; off < max_fs; off += SLICE) {
        size_t n = (size_t)MIN((uint64_t)SLICE, max_fs - off);
        memset(acc, 0, (size_t)G * words * 2);
        for (unsigned j = 0; j < G; j++) {
            uint64_t fs = g->fs[mem[j]];
            memset(buf, 0, n);
            if (off < fs && fread(buf, 1, (size_t)MIN((uint64_t)n, fs - off), in[j]) == 0)
                return 1;
            for (uint64_t x = MAX(off, max_fs - 8); x < off + n; x++)
                buf[x - off] = (unsigned char)(fs >> (8 * (x - (max_fs - 8))));
            for (unsigned i = 0; i < G; i++)
                fti_gf_mul_acc(acc + (size_t)i * words, buf, n, fti_rs_coef(G, i, j));
        }
        for (unsigned i = 0; i < G; i++) {
            unsigned char *o = (unsigned char *)(acc + (size_t)i * words);
            for (size_t w = 0; w < (n + 1) / 2; w++) {     /* little-endian words */
                uint16_t v = acc[(size_t)i * words + w];
                o[2 * w] = (unsigned char)v;
                o[2 * w + 1] = (unsigned char)(v >> 8);
            }
            fwrite(o, 1, n, out[i]);
            g_checksum_update(h[i], o, n);
        }
    }
    int rc = 0;
    for (unsigned i = 0; i < G; i++) {
        unsigned char m[META];
        file_meta(m, g_checksum_get_string(h[i]), 1, (int64_t)g->fs[mem[i]], 0, 0,
                  (int64_t)max_fs, (int64_t)max_fs, -1);
        fwrite(m, 1, META, out[i]);
        rc |= fclose(out[i]) != 0;
        fclose(in[i]);
        g_checksum_free(h[i]);
    }
    g_free(buf);
    g_free(acc);
    return rc;
}

/* config.fti and Meta/bench/Topology.fti, the latter laid out as FTI's
 * iniparser dump writes it: what remains of config.fti, then the nodes. */
static int write_config(const gen *g)
{
    GString *t = g_string_new("[injection]\nrank                           = 0\n\n\n"
                              "[topology]\n");
    for (unsigned n = 0; n < g->ranks / g->node_size; n++) {
        char key[16];
        g_snprintf(key, sizeof key, "%u", n);
        g_string_append_printf(t, "%-30s = node%u\n", key, n);
    }
    g_string_append_c(t, '\n');
    char *cfg = g_strdup_printf("[basic]\nhead = %u\nnode_size = %u\ngroup_size = %u\n"
                                "ckpt_io = 3\n", g->head, g->node_size, g->group);
    char *meta = g_build_filename(g->dir, "Meta", "bench", NULL);
    char *tp = g_build_filename(meta, "Topology.fti", NULL);
    char *cp = g_build_filename(g->dir, "config.fti", NULL);
    g_mkdir_with_parents(meta, 0755);
    int rc = write_file(tp, t->str, t->len) || write_file(cp, cfg, strlen(cfg));
    g_string_free(t, TRUE);
    g_free(cfg);
    g_free(meta);
    g_free(tp);
    g_free(cp);
    return rc;
}

/* maxFs of r's group: its largest file + 8. */
static uint64_t group_max_fs(const gen *g, unsigned r)
{
    uint64_t m = 0;
    for (unsigned j = 0; j < g->group; j++)
        m = MAX(m, g->fs[member(g, r, j)]);
    return m + 8;
}

static int generate(gen *g)
{
    unsigned block = g->node_size * g->group;      /* ranks of one block */
    g->fs = g_new(uint64_t, g->ranks);
    for (unsigned r = 0; r < g->ranks; r++)
        g->fs[r] = file_size(g, r);
    int rc = write_config(g);
    for (unsigned r = 0; r < g->ranks && rc == 0; r++) {
        if (is_head(g, r))
            continue;
        int with_parity = g->level == 3 && (g->all || r < block);
        int64_t max_fs = with_parity ? (int64_t)group_max_fs(g, r) : -1;
        int64_t pt_fs = g->level == 2 ? (int64_t)g->fs[left_partner(g, r)] : -1;
        rc = write_rank(g, r, max_fs, pt_fs);
    }
    for (unsigned r = 0; r < g->ranks && rc == 0; r++) {
        if (is_head(g, r))
            continue;
        if (g->level == 2)
            rc = write_pcof(g, r);
        else if (g->level == 3 && node_of(g, r) % g->group == 0 && (g->all || r < block))
            rc = write_parity(g, r, group_max_fs(g, r));
    }
    g_free(g->fs);
    return rc;
}

/* The generator as a call, for tests/unit/check_fti.c (built with
 * -DFTI_GEN_NO_MAIN): variables of bytes + 8 * rank bytes, parity for
 * every group.  0 on success. */
int fti_gen_run(const char *dir, unsigned ranks, unsigned nvars, uint64_t bytes,
                unsigned group, unsigned node_size, unsigned head, unsigned level);
int fti_gen_run(const char *dir, unsigned ranks, unsigned nvars, uint64_t bytes,
                unsigned group, unsigned node_size, unsigned head, unsigned level)
{
    gen g = { .dir = dir, .ranks = ranks, .nvars = nvars, .group = group,
              .node_size = node_size, .head = head, .level = level, .all = 1, .bytes = bytes };
    return generate(&g);
}

#ifndef FTI_GEN_NO_MAIN
int main(int argc, char **argv)
{
    gint node_size = 1, head = 0, level = 3, all = 0;
    gint64 bytes = 0;
    GOptionEntry opts[] = {
        { "node-size", 'S', 0, G_OPTION_ARG_INT, &node_size, "processes per node (1)", "S" },
        { "head", 'H', 0, G_OPTION_ARG_INT, &head, "1: one head process per node (0)", "H" },
        { "level", 'l', 0, G_OPTION_ARG_INT, &level, "1: no redundancy, 2: partner copies, 3: RS parity (3)", "L" },
        { "bytes", 'b', 0, G_OPTION_ARG_INT64, &bytes, "variable size BYTES + 8 * rank", "B" },
        { "all", 'a', 0, G_OPTION_ARG_NONE, &all, "parity for every group", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("DIR RANKS VARS VAR_MIB [GROUP]");
    g_option_context_add_main_entries(ctx, opts, NULL);
    GError *e = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &e) || argc < 5) {
        fprintf(stderr, "fti_gen: %s\n", e ? e->message : "usage: fti_gen [OPTION...] "
                "DIR RANKS VARS VAR_MIB [GROUP]");
        return 2;
    }
    g_option_context_free(ctx);
    gen g = { .dir = argv[1], .ranks = (unsigned)atoi(argv[2]), .nvars = (unsigned)atoi(argv[3]),
              .vbytes = (uint64_t)atoi(argv[4]) << 20, .group = argc > 5 ? (unsigned)atoi(argv[5]) : 4,
              .node_size = (unsigned)node_size, .head = (unsigned)head, .level = (unsigned)level,
              .all = (unsigned)all, .bytes = (uint64_t)bytes };
    if (g.group < 2 || g.group > FTI_RS_MAX_GROUP || g.nvars < 1 || (g.vbytes == 0 && !g.bytes) ||
        g.node_size < 1 || g.head > 1 || (g.head && g.node_size < 2) || (level < 1 || level > 3) ||
        g.ranks == 0 || g.ranks % (g.node_size * g.group) != 0) {
        fprintf(stderr, "fti_gen: RANKS must be whole blocks of GROUP nodes of %u processes\n",
                g.node_size ? g.node_size : 1);
        return 2;
    }
    return generate(&g);
}
#endif
