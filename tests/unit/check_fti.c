/* check_fti.c - unit tests of the FTI-FF reader: every VAR line of the
 * fixture manifest (written by the real FTI) through the library with odd
 * read sizes; the older layouts (i32, v1.4, v1.3) made from the fixture
 * files by re-encoding their metadata as docs/formats/fti.md describes; the
 * GF(2^16) Reed-Solomon code against the parity files FTI wrote, and the
 * region products and the rebuild decoder at every alignment. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "fti.h"
#include "hpc_bytes.h"

static char *fixture(const char *rel)
{
    return g_build_filename(test_data_dir(), "fti", "master-i64", rel, NULL);
}

static char *manifest_text(void)
{
    char *p = g_build_filename(test_data_dir(), "fti", "MANIFEST.txt", NULL), *text = NULL;
    ck_assert_msg(g_file_get_contents(p, &text, NULL, NULL), "no manifest %s", p);
    g_free(p);
    return text;
}

/* Check the VAR lines of checkpoint ckpt (rank `only` if >= 0) in c; files
 * are named as in a directory mount, or /var-<id> when single.  Returns
 * how many were checked. */
static int check_vars(hpc_container *c, int ckpt, int only, int single, size_t step)
{
    char *text = manifest_text();
    gchar **lines = g_strsplit(text, "\n", -1);
    int n = 0;
    for (gchar **l = lines; *l; l++) {
        int ck, rank, id;
        unsigned long long size;
        char sha[65];
        if (sscanf(*l, "VAR master-i64 ckpt=%d rank=%d id=%d size=%llu sha256=%64s",
                   &ck, &rank, &id, &size, sha) != 5 || ck != ckpt || (only >= 0 && rank != only))
            continue;
        char path[96];
        if (single)
            g_snprintf(path, sizeof path, "var-%d", id);
        else
            g_snprintf(path, sizeof path, "ckpt-%d/rank-%06d/var-%d", ck, rank, id);
        hpc_stat st;
        ck_assert_msg(hpc_container_resolve(c, path, &st) == HPC_OK, "%s missing", path);
        uint64_t len = 0;
        char *got = test_sha256_node(c, st.ino, step, &len);
        ck_assert_msg(got != NULL, "%s unreadable", path);
        ck_assert_uint_eq(len, size);
        ck_assert_uint_eq(st.size, size);
        ck_assert_str_eq(got, sha);
        g_free(got);
        n++;
    }
    g_strfreev(lines);
    g_free(text);
    return n;
}

START_TEST(all_checkpoints)
{
    char *dir = g_build_filename(test_data_dir(), "fti", "master-i64", NULL);
    hpc_container *c = test_open(dir, NULL);
    ck_assert_str_eq(hpc_container_format_name(c), "fti");
    static const size_t steps[] = { 1, 7, 1000, 1 << 20 };
    int n = 0;
    for (int ck = 1; ck <= 5; ck++)
        n += check_vars(c, ck, -1, 0, steps[ck % 4]);
    ck_assert_int_eq(n, 92);
    hpc_container_close(c);
    g_free(dir);
}
END_TEST

/* Zero-copy extents of every variable of checkpoint 2 (variable 1 spans two
 * containers in two blocks) give the manifest's bytes. */
START_TEST(map_extents)
{
    char *dir = fixture("ckpt2-L1");
    hpc_container *c = test_open(dir, NULL);
    char *text = manifest_text();
    gchar **lines = g_strsplit(text, "\n", -1);
    int n = 0;
    for (gchar **l = lines; *l; l++) {
        int ck, rank, id;
        unsigned long long size;
        char sha[65], path[96];
        if (sscanf(*l, "VAR master-i64 ckpt=%d rank=%d id=%d size=%llu sha256=%64s",
                   &ck, &rank, &id, &size, sha) != 5 || ck != 2)
            continue;
        g_snprintf(path, sizeof path, "ckpt-2/rank-%06d/var-%d", rank, id);
        hpc_stat st;
        ck_assert_int_eq(hpc_container_resolve(c, path, &st), HPC_OK);
        hpc_extent ext[8];
        unsigned ne;
        ck_assert_int_eq(hpc_container_map(c, st.ino, 0, st.size + 100, ext, 8, &ne), HPC_OK);
        GChecksum *h = g_checksum_new(G_CHECKSUM_SHA256);
        uint64_t total = 0;
        for (unsigned i = 0; i < ne; i++) {
            char *buf = g_malloc(ext[i].len);
            ck_assert_int_eq(hpc_source_pread(ext[i].src, buf, ext[i].len, ext[i].off), HPC_OK);
            g_checksum_update(h, (guchar *)buf, ext[i].len);
            total += ext[i].len;
            g_free(buf);
        }
        ck_assert_uint_eq(total, size);
        ck_assert_str_eq(g_checksum_get_string(h), sha);
        g_checksum_free(h);
        if (id == 1)
            ck_assert_uint_eq(ne, 2);
        n++;
    }
    ck_assert_int_eq(n, 16);
    g_strfreev(lines);
    g_free(text);
    hpc_container_close(c);
    g_free(dir);
}
END_TEST

/* ---- older layouts, made from an i64 file ------------------------------ */

static void put(GByteArray *b, uint64_t v, unsigned w)
{
    for (unsigned i = 0; i < w; i++) {
        guint8 x = (guint8)(v >> (8 * i));
        g_byte_array_append(b, &x, 1);
    }
}

static uint64_t get(const guint8 *p, unsigned w)
{
    uint64_t v = 0;
    for (unsigned i = w; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

/* Re-encode an i64-layout file with size fields of width w, a timestamp of
 * tsw bytes and (v1.3) an idx field in every record. */
static GByteArray *relayout(const guint8 *f, gsize fs, unsigned w, unsigned tsw, int idx)
{
    const guint8 *m = f + fs - 106;
    uint64_t ds = get(m + 69, 8);
    GByteArray *b = g_byte_array_new();
    g_byte_array_append(b, f, (guint)ds);
    for (uint64_t p = ds; p < fs - 106;) {
        uint32_t nv = (uint32_t)get(f + p, 4);
        put(b, nv, 4);
        put(b, get(f + p + 4, 8), w);
        p += 12;
        for (uint32_t k = 0; k < nv; k++, p += 58) {
            const guint8 *r = f + p;
            put(b, get(r, 4), 4);
            if (idx)
                put(b, k, 4);
            put(b, get(r + 4, 4), 4);
            g_byte_array_append(b, r + 8, 2);
            put(b, get(r + 10, 8), 8);
            put(b, get(r + 18, 8), 8);
            put(b, get(r + 26, 8), w);
            put(b, get(r + 34, 8), w);
            g_byte_array_append(b, r + 42, 16);
        }
    }
    unsigned msize = 33 + 16 + 4 + 6 * w + tsw + 1;
    uint64_t nfs = b->len + msize;
    uint64_t f6[6] = { nfs, msize + (b->len - ds), ds, nfs, get(m + 85, 8), get(m + 93, 8) };
    GByteArray *meta = g_byte_array_new();
    g_byte_array_append(meta, m, 33);
    guint8 zero[16] = { 0 };
    g_byte_array_append(meta, zero, 16);           /* myHash, below */
    g_byte_array_append(meta, m + 49, 4);
    for (int i = 0; i < 6; i++)
        put(meta, f6[i], w);
    put(meta, get(m + 101, 4), tsw);
    g_byte_array_append(meta, zero, 1);
    /* myHash: checksum, timestamp, ckptSize, metaSize, dataSize, fs, ptFs, maxFs */
    GChecksum *h = g_checksum_new(G_CHECKSUM_MD5);
    const guint8 *s = meta->data + 53;
    g_checksum_update(h, meta->data, 33);
    g_checksum_update(h, s + 6 * w, tsw);
    g_checksum_update(h, s, 4 * w);
    g_checksum_update(h, s + 5 * w, w);
    g_checksum_update(h, s + 4 * w, w);
    gsize dl = 16;
    g_checksum_get_digest(h, meta->data + 33, &dl);
    g_checksum_free(h);
    g_byte_array_append(b, meta->data, meta->len);
    g_byte_array_free(meta, TRUE);
    ck_assert_uint_eq(b->len, nfs);
    return b;
}

static void layout_case(unsigned w, unsigned tsw, int idx, const char *name)
{
    char *src = fixture("ckpt3-L2/Local/node1/3efcb4be-6fd4-474b-9930-b4ae00c4502d/l2/Ckpt3-Rank1.fti");
    gchar *data;
    gsize len;
    ck_assert(g_file_get_contents(src, &data, &len, NULL));
    GByteArray *b = relayout((guint8 *)data, len, w, tsw, idx);
    char *tmpl = g_build_filename(g_get_tmp_dir(), "fti-layout-XXXXXX", NULL);
    int fd = g_mkstemp(tmpl);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, b->data, b->len) == (ssize_t)b->len);
    close(fd);
    hpc_container *c = test_open(tmpl, NULL);
    ck_assert_str_eq(hpc_container_format_name(c), "fti");
    ck_assert_int_eq(check_vars(c, 3, 1, 1, 33), 5);
    char *info = NULL;
    hpc_stat st;
    ck_assert_int_eq(hpc_container_resolve(c, ".info", &st), HPC_OK);
    info = g_malloc0(st.size + 1);
    size_t n;
    ck_assert_int_eq(hpc_container_read(c, st.ino, info, st.size, 0, &n), HPC_OK);
    ck_assert_msg(strstr(info, name) != NULL, ".info does not name layout %s", name);
    g_free(info);
    hpc_container_close(c);
    unlink(tmpl);
    g_free(tmpl);
    g_byte_array_free(b, TRUE);
    g_free(data);
    g_free(src);
}

START_TEST(layout_i32) { layout_case(4, 4, 0, "i32"); }
END_TEST
START_TEST(layout_v14) { layout_case(8, 8, 0, "v1.4"); }
END_TEST
START_TEST(layout_v13) { layout_case(8, 8, 1, "v1.3"); }
END_TEST
START_TEST(layout_i64) { layout_case(8, 4, 0, "i64"); }
END_TEST

/* ---- Reed-Solomon ------------------------------------------------------ */

START_TEST(gf_field)
{
    ck_assert_uint_eq(fti_gf_mul(1, 0x1234), 0x1234);
    ck_assert_uint_eq(fti_gf_mul(0, 0x1234), 0);
    /* x^16 = x^12 + x^3 + x + 1 under 0x1100B */
    ck_assert_uint_eq(fti_gf_mul(0x8000, 2), 0x100B);
    for (uint32_t a = 1; a < 65536; a += 97)
        ck_assert_uint_eq(fti_gf_mul((uint16_t)a, fti_gf_inv((uint16_t)a)), 1);
}
END_TEST

/* Encoding the fixture's Rank files as the spec says gives FTI's RSed bytes. */
START_TEST(rs_matches_fti)
{
    enum { G = 4 };
    gchar *d[G], *p[G];
    gsize dl[G], pl[G];
    for (int j = 0; j < G; j++) {
        char rel[128];
        g_snprintf(rel, sizeof rel, "ckpt4-L3/Local/node%d/3efcb4be-6fd4-474b-9930-b4ae00c4502d/l3/Ckpt4-Rank%d.fti", j, j);
        char *path = fixture(rel);
        ck_assert(g_file_get_contents(path, &d[j], &dl[j], NULL));
        g_free(path);
        g_snprintf(rel, sizeof rel, "ckpt4-L3/Local/node%d/3efcb4be-6fd4-474b-9930-b4ae00c4502d/l3/Ckpt4-RSed%d.fti", j, j);
        path = fixture(rel);
        ck_assert(g_file_get_contents(path, &p[j], &pl[j], NULL));
        g_free(path);
    }
    gsize maxfs = pl[0] - 106;
    guint8 *ext = g_malloc0(maxfs);
    uint16_t *acc = g_malloc0((maxfs + 1) / 2 * 2);
    for (int i = 0; i < G; i++) {
        memset(acc, 0, (maxfs + 1) / 2 * 2);
        for (int j = 0; j < G; j++) {
            memset(ext, 0, maxfs);
            memcpy(ext, d[j], dl[j]);
            for (int k = 0; k < 8; k++)
                ext[maxfs - 8 + k] = (guint8)((uint64_t)dl[j] >> (8 * k));
            fti_gf_mul_acc(acc, ext, maxfs, fti_rs_coef(G, (unsigned)i, (unsigned)j));
        }
        for (gsize x = 0; x < maxfs; x++)
            ck_assert_uint_eq((guint8)(acc[x / 2] >> (8 * (x & 1))), (guint8)p[i][x]);
    }
    g_free(ext);
    g_free(acc);
    for (int j = 0; j < G; j++) {
        g_free(d[j]);
        g_free(p[j]);
    }
}
END_TEST

/* Any g of the 2g pieces rebuild every data piece (random data, all group
 * sizes up to 8, every erasure pattern of up to g pieces for g <= 4). */
START_TEST(rs_any_g_of_2g)
{
    enum { N = 64 };
    for (unsigned g = 2; g <= 8; g++) {
        guint8 data[8][N], par[8][N];
        GRand *r = g_rand_new_with_seed(g);
        for (unsigned j = 0; j < g; j++)
            for (unsigned x = 0; x < N; x++)
                data[j][x] = (guint8)g_rand_int(r);
        g_rand_free(r);
        for (unsigned i = 0; i < g; i++) {
            uint16_t acc[N / 2] = { 0 };
            for (unsigned j = 0; j < g; j++)
                fti_gf_mul_acc(acc, data[j], N, fti_rs_coef(g, i, j));
            memcpy(par[i], acc, N);    /* little-endian host, as FTI */
        }
        unsigned patterns = g <= 4 ? 1u << (2 * g) : 200;
        for (unsigned pat = 0; pat < patterns; pat++) {
            unsigned mask = g <= 4 ? pat : (pat * 2654435761u) & ((1u << (2 * g)) - 1);
            int hd[8], hp[8], have = 0;
            for (unsigned k = 0; k < g; k++) {
                hd[k] = (mask >> k) & 1;
                hp[k] = (mask >> (g + k)) & 1;
                have += hd[k] + hp[k];
            }
            for (unsigned t = 0; t < g; t++) {
                uint16_t cd[8], cp[8];
                int rc = fti_rs_coeffs(g, hd, hp, t, cd, cp);
                if (have < (int)g && !hd[t]) {
                    ck_assert_int_eq(rc, -1);
                    continue;
                }
                ck_assert_int_eq(rc, 0);
                uint16_t acc[N / 2] = { 0 };
                for (unsigned k = 0; k < g; k++) {
                    fti_gf_mul_acc(acc, data[k], N, hd[k] ? cd[k] : 0);
                    fti_gf_mul_acc(acc, par[k], N, hp[k] ? cp[k] : 0);
                }
                ck_assert_msg(memcmp(acc, data[t], N) == 0, "g=%u mask=%x target %u", g, mask, t);
            }
        }
    }
}
END_TEST

/* Region products at every alignment and length against word-by-word
 * products: stored (fti_gf_mul_set) and accumulated (fti_gf_mul_acc). */
START_TEST(gf_regions)
{
    enum { N = 5000 };
    static const uint16_t coef[] = { 1, 2, 0x8000, 0xFFFF, 0x1234 };
    static const size_t lens[] = { 0, 1, 2, 3, 63, 64, 65, 130, 1001, 4096, N - 40 };
    guint8 *src = g_malloc(N + 64);
    uint16_t *dst = g_malloc(N + 64), *want = g_malloc(N + 64), *init = g_malloc(N + 64);
    GRand *r = g_rand_new_with_seed(7);
    for (size_t x = 0; x < N + 64; x++)
        src[x] = (guint8)g_rand_int(r);
    for (size_t w = 0; w < (N + 64) / 2; w++)
        init[w] = (uint16_t)g_rand_int(r);
    g_rand_free(r);
    for (size_t c = 0; c < G_N_ELEMENTS(coef); c++)
        for (size_t l = 0; l < G_N_ELEMENTS(lens); l++)
            for (unsigned so = 0; so < 18; so++)
                for (unsigned dw = 0; dw < 9; dw += 8) {
                    size_t n = lens[l], nw = (n + 1) / 2;
                    const guint8 *s = src + so;
                    for (size_t w = 0; w < nw; w++) {
                        uint16_t v = (uint16_t)(s[2 * w] | (2 * w + 1 < n ? s[2 * w + 1] << 8 : 0));
                        want[w] = fti_gf_mul(v, coef[c]);
                    }
                    fti_gf_mul_set(dst + dw, s, n, coef[c]);
                    ck_assert_msg(memcmp(dst + dw, want, nw * 2) == 0, "set c=%x n=%zu so=%u dw=%u",
                                  coef[c], n, so, dw);
                    memcpy(dst + dw, init, nw * 2);
                    fti_gf_mul_acc(dst + dw, s, n, coef[c]);
                    for (size_t w = 0; w < nw; w++)
                        ck_assert_uint_eq(dst[dw + w], init[w] ^ want[w]);
                }
    g_free(src);
    g_free(dst);
    g_free(want);
    g_free(init);
}
END_TEST

/* The rebuild decoder gives the lost piece's bytes for every offset and
 * several lengths, into even and odd addresses (FTI's fixture: rank 3 of
 * checkpoint 4 from Rank0-2 and the RSed files; maxFs is odd). */
START_TEST(rs_decode_ranges)
{
    enum { G = 4 };
    static const char *dir = "ckpt4-L3/Local/node%d/3efcb4be-6fd4-474b-9930-b4ae00c4502d/l3/Ckpt4-%s%d.fti";
    hpc_source src[2 * G];
    int hd[G] = { 1, 1, 1, 0 }, hp[G] = { 1, 1, 1, 1 };
    uint16_t cd[G], cp[G];
    ck_assert_int_eq(fti_rs_coeffs(G, hd, hp, 3, cd, cp), 0);
    fti_rsjob job = { 0 };
    for (int j = 0; j < 2 * G; j++) {
        char rel[160];
        g_snprintf(rel, sizeof rel, dir, j % G, j < G ? "Rank" : "RSed", j % G);
        char *path = fixture(rel);
        ck_assert_int_eq(hpc_source_open(path, &src[j], NULL), HPC_OK);
        g_free(path);
        uint16_t coef = j < G ? cd[j] : cp[j - G];
        if (coef)
            job.pieces[job.npieces++] = (fti_piece){ &src[j], src[j].size, j >= G, coef };
    }
    job.max_fs = src[G].size - 106;
    job.fs = src[3].size;
    ck_assert_uint_eq(job.max_fs & 1, 1);
    guint8 *want = g_malloc0(job.max_fs), *got = g_malloc(job.max_fs + 2);
    ck_assert_int_eq(hpc_source_pread(&src[3], want, src[3].size, 0), HPC_OK);
    for (int k = 0; k < 8; k++)
        want[job.max_fs - 8 + k] = (guint8)(src[3].size >> (8 * k));
    static const size_t lens[] = { 1, 2, 3, 8, 65, 300 };
    /* every offset, the lengths and the two address parities in turn */
    for (uint64_t off = 0; off < job.max_fs; off++) {
        size_t l = off % (G_N_ELEMENTS(lens) + 1);
        size_t n = l < G_N_ELEMENTS(lens) ? MIN(lens[l], job.max_fs - off) : job.max_fs - off;
        guint8 *o = got + (off / (G_N_ELEMENTS(lens) + 1)) % 2;
        ck_assert_int_eq(fti_rs_decode(&job, o, n, off), HPC_OK);
        ck_assert_msg(memcmp(o, want + off, n) == 0, "off %" PRIu64 " len %zu", off, n);
    }
    ck_assert_int_eq(fti_rs_decode(&job, got, 2, job.max_fs - 1), HPC_E_CORRUPT);
    g_free(want);
    g_free(got);
    for (int j = 0; j < 2 * G; j++)
        hpc_source_close(&src[j]);
}
END_TEST

/* ---- groups from the topology (generated checkpoints, bench/fti_gen.c) */

int fti_gen_run(const char *dir, unsigned ranks, unsigned nvars, uint64_t bytes,
                unsigned group, unsigned node_size, unsigned head, unsigned level);

enum { TB = 40, TNV = 2, TMAXR = 64 };

typedef struct topo_case {
    char *dir;
    unsigned n, per, head, G, level;  /* n processes, heads included; per = node_size */
    char *want[TMAXR][TNV];       /* sha256 of each variable, from the Rank files */
    GHashTable *paths;            /* file name -> path */
} topo_case;

static void index_files(GHashTable *h, const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d))) {
        char *p = g_build_filename(dir, n, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_DIR))
            index_files(h, p);
        else
            g_hash_table_insert(h, g_strdup(n), g_strdup(p));
        g_free(p);
    }
    if (d)
        g_dir_close(d);
}

/* Rank r is a head: position 0 of its node with head = 1, no files. */
static int topo_head(const topo_case *t, unsigned r)
{
    return t->head && r % t->per == 0;
}

/* The rank at group rank j of r's group: blocks of G nodes of per ranks. */
static unsigned topo_member(const topo_case *t, unsigned r, unsigned j)
{
    unsigned node = r / t->per;
    return (node / t->G * t->G + j) * t->per + r % t->per;
}

static void topo_setup(topo_case *t, unsigned S, unsigned head, unsigned G, unsigned level)
{
    memset(t, 0, sizeof *t);
    t->per = S;
    t->head = head;
    t->G = G;
    t->level = level;
    t->n = t->per * G * (t->per * G * 2 <= 24 ? 2 : 1);
    t->dir = g_dir_make_tmp("fti-topo-XXXXXX", NULL);
    ck_assert_int_eq(fti_gen_run(t->dir, t->n, TNV, TB, G, S, head, level), 0);
    t->paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    index_files(t->paths, t->dir);
    for (unsigned r = 0; r < t->n; r++) {
        char name[64], *bytes;
        gsize len;
        if (topo_head(t, r))
            continue;
        g_snprintf(name, sizeof name, "Ckpt1-Rank%u.fti", r);
        ck_assert(g_file_get_contents(g_hash_table_lookup(t->paths, name), &bytes, &len, NULL));
        for (unsigned v = 0; v < TNV; v++)
            t->want[r][v] = g_compute_checksum_for_data(G_CHECKSUM_SHA256,
                                                        (guchar *)bytes + v * (TB + 8 * r), TB + 8 * r);
        g_free(bytes);
    }
}

static void rm_tree(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d))) {
        char *p = g_build_filename(dir, n, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
            rm_tree(p);
        else
            unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    rmdir(dir);
}

static void topo_teardown(topo_case *t)
{
    for (unsigned r = 0; r < t->n; r++)
        for (unsigned v = 0; v < TNV; v++)
            g_free(t->want[r][v]);
    g_hash_table_destroy(t->paths);
    rm_tree(t->dir);
    g_free(t->dir);
}

/* Lose the pieces in mask (bit j: data piece j, bit G + i: parity i) of
 * every group, open, and check every rank's variables; with too few
 * pieces left the ranks lost must be missing, every other rank intact.
 * Returns 1 when a lost rank was served. */
static int topo_try(topo_case *t, unsigned mask)
{
    GPtrArray *moved = g_ptr_array_new_with_free_func(g_free);
    unsigned lost = 0;
    for (unsigned k = 0; k < 2 * t->G; k++)
        lost += (mask >> k) & 1;
    for (unsigned r = 0; r < t->n; r++) {
        if (topo_member(t, r, 0) != r || topo_head(t, r))
            continue;                           /* one pass per group */
        for (unsigned k = 0; k < 2 * t->G; k++) {
            if (!((mask >> k) & 1))
                continue;
            char name[64];
            unsigned m = topo_member(t, r, k % t->G);
            g_snprintf(name, sizeof name, "Ckpt1-%s%u.fti", k < t->G ? "Rank" : t->level == 2 ? "Pcof" : "RSed", m);
            const char *p = g_hash_table_lookup(t->paths, name);
            ck_assert_msg(p != NULL, "%s not generated", name);
            char *away = g_strconcat(p, ".away", NULL);
            ck_assert_int_eq(rename(p, away), 0);
            g_ptr_array_add(moved, away);
        }
    }
    hpc_options o;
    hpc_options_init(&o);
    hpc_container *c = NULL;
    GError *e = NULL;
    ck_assert_msg(hpc_container_open(t->dir, &o, &c, &e) == HPC_OK, "open: %s", e ? e->message : "?");
    int served = 0;
    for (unsigned r = 0; r < t->n; r++) {
        unsigned j = (r / t->per) % t->G;
        if (topo_head(t, r)) {
            hpc_stat st;
            char path[64];
            g_snprintf(path, sizeof path, "ckpt-1/rank-%06u", r);
            ck_assert_msg(hpc_container_resolve(c, path, &st) != HPC_OK, "head %u shown", r);
            continue;
        }
        int rank_lost = (mask >> j) & 1;
        for (unsigned v = 0; v < TNV; v++) {
            char path[64];
            hpc_stat st;
            g_snprintf(path, sizeof path, "ckpt-1/rank-%06u/var-%u", r, v);
            int rc = hpc_container_resolve(c, path, &st);
            if (rank_lost && lost > t->G) {
                ck_assert_msg(rc != HPC_OK, "G=%u mask %x: %s served from too few pieces", t->G, mask, path);
                continue;
            }
            ck_assert_msg(rc == HPC_OK, "G=%u per=%u L%u mask %x: %s missing", t->G, t->per, t->level, mask, path);
            uint64_t len;
            char *got = test_sha256_node(c, st.ino, 1000, &len);
            ck_assert_msg(got && strcmp(got, t->want[r][v]) == 0, "G=%u per=%u L%u mask %x: %s wrong bytes",
                          t->G, t->per, t->level, mask, path);
            g_free(got);
            served += rank_lost;
        }
    }
    hpc_container_close(c);
    for (guint i = 0; i < moved->len; i++) {
        char *away = g_ptr_array_index(moved, i), *orig = g_strndup(away, strlen(away) - 5);
        ck_assert_int_eq(rename(away, orig), 0);
        g_free(orig);
    }
    g_ptr_array_free(moved, TRUE);
    return served > 0;
}

static unsigned sample_mask(unsigned G, unsigned k, unsigned j)
{
    unsigned m = 0;
    for (unsigned t = 0; t < k; t++)
        m |= 1u << ((j + t) % G);
    for (unsigned t = 0; t < G - k; t++)
        m |= 1u << (G + (3 * j + t) % G);
    return m;
}

/* Every node_size 1-4, group size 2-8, head 0/1: every rank lost once (L2
 * and L3: group rank j of every group at a time); for L3 every set of lost
 * pieces that leaves G for G <= 4 (one node_size each), a sample for G > 4,
 * and one set with too few. */
/* Variables of f whose MD5 state is known, as a bit mask by index. */
static uint64_t checked_mask(const fti *f)
{
    uint64_t m = 0;
    for (guint i = 0; i < f->vars->len && i < 64; i++)
        if (g_atomic_int_get(&g_array_index(f->vars, fti_var, i).state) != FTI_V_UNKNOWN)
            m |= (uint64_t)1 << i;
    return m;
}

/* Read variable v of rank r of checkpoint 1 whole. */
static void read_var(hpc_container *c, unsigned r, unsigned v)
{
    char path[64];
    uint64_t len;
    g_snprintf(path, sizeof path, "ckpt-1/rank-%06u/var-%u", r, v);
    char *sum = test_sha256_path(c, path, &len);
    ck_assert_msg(sum != NULL, "%s unreadable", path);
    g_free(sum);
}

/* Wait (up to 30 s) until exactly the variables in want are checked, then
 * a little longer to see that no others are. */
static void expect_checked(const fti *f, uint64_t want)
{
    for (int i = 0; i < 3000 && checked_mask(f) != want; i++)
        g_usleep(10000);
    g_usleep(200000);
    ck_assert_msg(checked_mask(f) == want, "checked %" PRIx64 ", want %" PRIx64,
                  checked_mask(f), want);
}

/* MD5 checks run ahead of an in-order reader (more variable bytes than are
 * checked at mount): reading a rank's first variable has that rank's other
 * variables checked by the workers, none of the next rank's; going on from
 * a rank's last variable to the next rank's first checks ahead across the
 * ranks, 2 x CPUs variables. */
START_TEST(checks_ahead)
{
    enum { R = 8, NV = 3 };
    char *dir = g_dir_make_tmp("fti-ahead-XXXXXX", NULL);
    ck_assert(dir != NULL);
    ck_assert_int_eq(fti_gen_run(dir, R, NV, FTI_VERIFY_AT_OPEN / (R * NV) + 4096, 4, 1, 0, 1), 0);
    hpc_container *c = test_open(dir, "fti");
    ck_assert(c != NULL);
    fti *f = c->priv;
    ck_assert_uint_eq(f->vars->len, R * NV);
    ck_assert_uint_eq(f->ranks->len, R);
    unsigned ahead = 2 * CLAMP(g_get_num_processors(), 1, 8);
    /* variable index of (rank, var): ranks are in order */
#define VI(r, v) (g_array_index(f->ranks, fti_rank, (r)).first_var + (v))
    expect_checked(f, 0);
    read_var(c, 2, 0);
    uint64_t want = 0;
    for (unsigned v = 0; v < NV; v++)
        want |= (uint64_t)1 << VI(2, v);
    expect_checked(f, want);
    read_var(c, 2, 1);
    read_var(c, 2, 2);
    read_var(c, 3, 0);
    want |= (uint64_t)1 << VI(3, 0);
    for (unsigned k = 1; k <= ahead && 3 * NV + k < R * NV; k++)
        want |= (uint64_t)1 << VI(3 + k / NV, k % NV);
#undef VI
    expect_checked(f, want);
    hpc_container_close(c);
    rm_tree(dir);
    g_free(dir);
}
END_TEST

START_TEST(topology_recovery)
{
    unsigned cases = 0;
    for (unsigned S = 1; S <= 4; S++)
        for (unsigned head = 0; head <= (S > 1); head++)
            for (unsigned G = 2; G <= 8; G++)
                for (unsigned level = 2; level <= 3; level++) {
                    topo_case t;
                    topo_setup(&t, S, head, G, level);
                    for (unsigned j = 0; j < G; j++, cases++)
                        ck_assert(topo_try(&t, 1u << j));
                    if (level == 3 && S == G % 4 + 1 && head == (S > 1 ? G % 2 : 0)) {
                        unsigned all = 1u << (2 * G);
                        for (unsigned m = 1; m < all && G <= 4; m++) {
                            if ((unsigned)__builtin_popcount(m) > G || !(m & ((1u << G) - 1)))
                                continue;
                            ck_assert(topo_try(&t, m));
                            cases++;
                        }
                        /* G > 4: k data pieces from j on and G - k parity pieces */
                        for (unsigned k = 1; k <= G && G > 4; k += G / 2 - 1)
                            for (unsigned j = 0; j < G; j++, cases++)
                                ck_assert(topo_try(&t, sample_mask(G, k, j)));
                        topo_try(&t, all - 1 - 2);      /* G + G - 1 lost */
                        cases++;
                    }
                    topo_teardown(&t);
                }
    ck_assert_uint_gt(cases, 650);
}
END_TEST

/* A container without content (hascontent 0) keeps chunksize 0 when FTI
 * writes it; one that claims bytes is refused, as FTI would count them in
 * the variable but has them nowhere. */
START_TEST(empty_container_with_bytes)
{
    char *src = fixture("ckpt3-L2/Local/node0/3efcb4be-6fd4-474b-9930-b4ae00c4502d/l2/Ckpt3-Rank0.fti");
    gchar *b;
    gsize n;
    ck_assert(g_file_get_contents(src, &b, &n, NULL));
    uint64_t p = hpc_le64(b + n - 106 + 69), hit = 0;      /* dataSize */
    while (p + 12 <= n - 106 && !hit) {
        int32_t nv = (int32_t)hpc_le32(b + p);
        p += 12;
        for (int32_t k = 0; k < nv; k++, p += 58)
            if (hpc_le32(b + p) == 1 && b[p + 8] == 0 && !hit)
                hit = p;
    }
    ck_assert_uint_gt(hit, 0);
    char *dir = g_dir_make_tmp("check_fti_XXXXXX", NULL);
    char *path = g_build_filename(dir, "Ckpt3-Rank0.fti", NULL);
    for (int claim = 0; claim < 2; claim++) {
        hpc_put_le64(b + hit + 26, claim ? 800 : 0);
        ck_assert(g_file_set_contents(path, b, (gssize)n, NULL));
        hpc_options o;
        hpc_options_init(&o);
        hpc_container *c = NULL;
        GError *err = NULL;
        int rc = hpc_container_open(path, &o, &c, &err);
        ck_assert_int_eq(rc, claim ? HPC_E_CORRUPT : HPC_OK);
        if (claim)
            ck_assert_ptr_nonnull(strstr(err->message, "field hascontent"));
        g_clear_error(&err);
        if (c)
            hpc_container_close(c);
        hpc_options_clear(&o);
    }
    unlink(path);
    rmdir(dir);
    g_free(path);
    g_free(dir);
    g_free(b);
    g_free(src);
}
END_TEST

/* FTI's staging directories (<execId>/tmp beside l1..l4) are counted and
 * skipped by the walk; a directory called tmp elsewhere is walked. */
START_TEST(walk_skips_staging)
{
    char *root = g_dir_make_tmp("check_fti_XXXXXX", NULL);
    const char *files[] = { "a/l1/Ckpt1-Rank0.fti", "a/tmp/Ckpt2-Rank0.fti",
                            "a/tmp/Ckpt2-Rank1.fti", "b/tmp/Ckpt3-Rank0.fti" };
    for (unsigned i = 0; i < G_N_ELEMENTS(files); i++) {
        char *p = g_build_filename(root, files[i], NULL), *d = g_path_get_dirname(p);
        ck_assert_int_eq(g_mkdir_with_parents(d, 0755), 0);
        ck_assert(g_file_set_contents(p, "x", 1, NULL));
        g_free(d);
        g_free(p);
    }
    fti_walk_ctx w = { .found = g_array_new(FALSE, FALSE, sizeof(fti_found)) };
    fti_walk(&w, root, 0);
    ck_assert_uint_eq(w.found->len, 2);
    int32_t seen = 0;
    for (guint i = 0; i < w.found->len; i++)
        seen |= 1 << g_array_index(w.found, fti_found, i).ckpt;
    ck_assert_int_eq(seen, (1 << 1) | (1 << 3));
    ck_assert_uint_eq(w.staged, 2);
    ck_assert(g_str_has_suffix(w.staged_dir, "/a/tmp"));
    fti_walk_clear(&w);
    for (int i = (int)G_N_ELEMENTS(files) - 1; i >= 0; i--) {
        char *p = g_build_filename(root, files[i], NULL), *d = g_path_get_dirname(p);
        unlink(p);
        rmdir(d);
        g_free(d);
        g_free(p);
    }
    char *a = g_build_filename(root, "a", NULL), *b = g_build_filename(root, "b", NULL);
    rmdir(a);
    rmdir(b);
    rmdir(root);
    g_free(a);
    g_free(b);
    g_free(root);
}
END_TEST

/* Checkpoint and rank numbers of file names: up to 9 digits; longer ones
 * (which overflowed int32_t while being read) are no FTI names. */
START_TEST(name_numbers)
{
    fti_kind kind;
    int32_t ck, rk;
    ck_assert(fti_parse_name("Ckpt999999999-Rank123456789.fti", &kind, &ck, &rk));
    ck_assert_int_eq(kind, FTI_K_RANK);
    ck_assert_int_eq(ck, 999999999);
    ck_assert_int_eq(rk, 123456789);
    ck_assert(!fti_parse_name("Ckpt9999999999-Rank0.fti", &kind, &ck, &rk));
    ck_assert(!fti_parse_name("Ckpt1-Pcof9999999999.fti", &kind, &ck, &rk));
    ck_assert(!fti_parse_name("dCPFile-Rank99999999999.fti", &kind, &ck, &rk));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fti");
    TCase *tc = tcase_create("fti");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, all_checkpoints);
    tcase_add_test(tc, map_extents);
    tcase_add_test(tc, layout_i64);
    tcase_add_test(tc, layout_i32);
    tcase_add_test(tc, layout_v14);
    tcase_add_test(tc, layout_v13);
    tcase_add_test(tc, gf_field);
    tcase_add_test(tc, rs_matches_fti);
    tcase_add_test(tc, rs_any_g_of_2g);
    tcase_add_test(tc, gf_regions);
    tcase_add_test(tc, rs_decode_ranges);
    tcase_add_test(tc, empty_container_with_bytes);
    tcase_add_test(tc, walk_skips_staging);
    tcase_add_test(tc, name_numbers);
    suite_add_tcase(s, tc);
    /* ~700 mounts of generated checkpoints: slower under the sanitizers on
     * a loaded machine */
    TCase *topo = tcase_create("topology");
    tcase_set_timeout(topo, 240);
    tcase_add_test(topo, topology_recovery);
    tcase_add_test(topo, checks_ahead);
    suite_add_tcase(s, topo);
    return test_run_suite(s);
}
