/* check_dhdf.c - unit tests of the distributed HDF reader: the pure
 * chunk-table logic (record decoding, bounds/overlap/hole checks, range
 * mapping against a brute-force oracle) and the container API on the
 * fixture set (values against the fixture's formula, only the pieces a
 * read touches are read, xattrs, concurrent readers).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_dhdf.h"
#include "hpc_format.h"
#include "hpc_tree.h"
#include "check_util.h"

uint64_t hpc_dhdf_file_reads(hpc_container *c, uint32_t k);

/* ---- records ---------------------------------------------------------- */

static void put_i32(unsigned char *p, int32_t v)
{
    memcpy(p, &v, 4);
}

/* A record of layout (w, 32, 32). */
static unsigned char *make_rec(const hpc_dhdf_layout *l, int32_t id, const char *name,
                               const int32_t *size, const int32_t *origin, unsigned rank)
{
    unsigned char *r = calloc(1, hpc_dhdf_record_size(l));
    put_i32(r, id);
    memcpy(r + 4, name, MIN(strlen(name), l->name_w));
    for (unsigned d = 0; d < rank; d++) {
        put_i32(r + 4 + l->name_w + 4 * d, size[d]);
        put_i32(r + 4 + l->name_w + 4 * l->dims_order + 4 * d, origin[d]);
    }
    return r;
}

START_TEST(test_decode)
{
    hpc_dhdf_layout l = { 64, 32, 32 };
    uint64_t dims[2] = { 500, 200 };
    ck_assert_uint_eq(hpc_dhdf_record_size(&l), 4 + 64 + 128 + 128);
    hpc_dhdf_layout badl = { 64, 33, 32 };
    ck_assert_uint_eq(hpc_dhdf_record_size(&badl), 0);
    int32_t fid;
    char name[HPC_DHDF_MAX_NAME + 1], why[256];
    const char *field;
    hpc_dhdf_box box;

    unsigned char *r = make_rec(&l, 2, "sds1_chunk1", (int32_t[]){ 200, 200 }, (int32_t[]){ 300, 0 }, 2);
    ck_assert_int_eq(hpc_dhdf_decode_record(r, &l, 2, dims, &fid, name, &box, &field, why, sizeof why), 0);
    ck_assert_int_eq(fid, 2);
    ck_assert_str_eq(name, "sds1_chunk1");
    ck_assert_uint_eq(box.origin[0], 300);
    ck_assert_uint_eq(box.size[1], 200);
    free(r);

    /* a name filling the whole width has no NUL */
    hpc_dhdf_layout l4 = { 4, 2, 2 };
    r = make_rec(&l4, 1, "abcd", (int32_t[]){ 1, 1 }, (int32_t[]){ 0, 0 }, 2);
    ck_assert_int_eq(hpc_dhdf_decode_record(r, &l4, 2, dims, &fid, name, &box, &field, why, sizeof why), 0);
    ck_assert_str_eq(name, "abcd");
    free(r);

    struct { int32_t id; const char *name; int32_t s0, o0; unsigned rank; const char *field; } bad[] = {
        { 0, "x", 1, 0, 2, "DHDF_FileId" },        /* the MHF holds no pieces */
        { -5, "x", 1, 0, 2, "DHDF_FileId" },
        { 1, "", 1, 0, 2, "ChunkName" },
        { 1, "a/b", 1, 0, 2, "ChunkName" },
        { 1, "..", 1, 0, 2, "ChunkName" },
        { 1, "x", 0, 0, 2, "DimSizes" },
        { 1, "x", 501, 0, 2, "DimSizes" },
        { 1, "x", 200, 301, 2, "Origins" },
        { 1, "x", 1, -1, 2, "Origins" },
        { 1, "x", 1, 0, 33, "DimSizes" },          /* rank above the order */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        r = make_rec(&l, bad[i].id, bad[i].name, (int32_t[]){ bad[i].s0, 200 }, (int32_t[]){ bad[i].o0, 0 }, 2);
        field = NULL;
        uint64_t d33[33];
        for (int k = 0; k < 33; k++)
            d33[k] = k < 2 ? dims[k] : 1;
        ck_assert_int_eq(hpc_dhdf_decode_record(r, &l, bad[i].rank, d33, &fid, name, &box, &field,
                                                why, sizeof why), HPC_E_CORRUPT);
        ck_assert_str_eq(field, bad[i].field);
        ck_assert(why[0] != '\0');
        free(r);
    }
}
END_TEST

/* ---- piece checks ----------------------------------------------------- */

static hpc_dhdf_box mkbox(uint64_t o0, uint64_t o1, uint64_t s0, uint64_t s1)
{
    hpc_dhdf_box b;
    memset(&b, 0, sizeof b);
    b.origin[0] = o0;
    b.origin[1] = o1;
    b.size[0] = s0;
    b.size[1] = s1;
    return b;
}

START_TEST(test_check_pieces)
{
    uint64_t dims[2] = { 10, 8 }, holes = 99;
    size_t a = 99, b = 99;
    hpc_dhdf_box p[4] = { mkbox(0, 0, 5, 4), mkbox(0, 4, 5, 4), mkbox(5, 0, 5, 8), mkbox(0, 0, 1, 1) };
    ck_assert_int_eq(hpc_dhdf_check_pieces(2, dims, p, 3, &holes, &a, &b), HPC_DHDF_FINE);
    ck_assert_uint_eq(holes, 0);
    ck_assert_int_eq(hpc_dhdf_check_pieces(2, dims, p, 2, &holes, &a, &b), HPC_DHDF_FINE);
    ck_assert_uint_eq(holes, 40);
    ck_assert_int_eq(hpc_dhdf_check_pieces(2, dims, p, 0, &holes, &a, &b), HPC_DHDF_FINE);
    ck_assert_uint_eq(holes, 80);
    /* a 1x1 piece inside piece 0 */
    ck_assert_int_eq(hpc_dhdf_check_pieces(2, dims, p, 4, &holes, &a, &b), HPC_DHDF_OVERLAP);
    ck_assert_uint_eq(a, 0);
    ck_assert_uint_eq(b, 3);
    /* touching edges do not overlap; one element more does */
    hpc_dhdf_box q[2] = { mkbox(0, 0, 10, 4), mkbox(0, 3, 10, 5) };
    ck_assert_int_eq(hpc_dhdf_check_pieces(2, dims, q, 2, &holes, &a, &b), HPC_DHDF_OVERLAP);
    q[1] = mkbox(0, 4, 10, 4);
    ck_assert_int_eq(hpc_dhdf_check_pieces(2, dims, q, 2, &holes, &a, &b), HPC_DHDF_FINE);
    q[1] = mkbox(0, 4, 10, 5);
    ck_assert_int_eq(hpc_dhdf_check_pieces(2, dims, q, 2, &holes, &a, &b), HPC_DHDF_OUTSIDE);
    ck_assert_uint_eq(a, 1);
    q[1] = mkbox(0, 4, 0, 4);
    ck_assert_int_eq(hpc_dhdf_check_pieces(2, dims, q, 2, &holes, &a, &b), HPC_DHDF_OUTSIDE);
}
END_TEST

/* ---- range mapping against brute force -------------------------------- */

typedef struct oracle {
    unsigned rank;
    const uint64_t *dims;
    const hpc_dhdf_box *p;
    uint32_t *dst;
    uint64_t e0, e1;
    unsigned calls;
} oracle;

/* Fill the box from a "piece" whose element values are their linear index
 * in the whole array, packed like SDreaddata returns them. */
static int oracle_box(void *ctx, size_t piece, const uint64_t *start, const uint64_t *edge)
{
    oracle *o = ctx;
    uint64_t n = 1;
    for (unsigned d = 0; d < o->rank; d++) {
        ck_assert(start[d] >= o->p[piece].origin[d]);
        ck_assert(start[d] + edge[d] <= o->p[piece].origin[d] + o->p[piece].size[d]);
        n *= edge[d];
    }
    uint32_t *src = malloc(n * 4);
    uint64_t idx[HPC_DHDF_MAX_RANK] = { 0 };
    for (uint64_t e = 0; e < n; e++) {
        uint64_t lin = 0;
        for (unsigned d = 0; d < o->rank; d++)
            lin = lin * o->dims[d] + start[d] + idx[d];
        ck_assert(lin >= o->e0 && lin < o->e1);
        src[e] = (uint32_t)lin;
        for (int d = (int)o->rank - 1; d >= 0; d--) {
            if (++idx[d] < edge[d])
                break;
            idx[d] = 0;
        }
    }
    hpc_dhdf_scatter(o->rank, o->dims, 4, start, edge, src, o->dst, o->e0);
    free(src);
    o->calls++;
    return 0;
}

START_TEST(test_map_range_random)
{
    GRand *rnd = g_rand_new_with_seed(1234);
    for (int iter = 0; iter < 400; iter++) {
        unsigned rank = (unsigned)g_rand_int_range(rnd, 1, 5);
        uint64_t dims[HPC_DHDF_MAX_RANK], total = 1;
        unsigned cuts[HPC_DHDF_MAX_RANK];
        uint64_t cut[HPC_DHDF_MAX_RANK][5];
        for (unsigned d = 0; d < rank; d++) {
            dims[d] = (uint64_t)g_rand_int_range(rnd, 1, 12);
            total *= dims[d];
            cuts[d] = (unsigned)g_rand_int_range(rnd, 1, (gint32)MIN(dims[d], 4) + 1);
            cut[d][0] = 0;
            for (unsigned k = 1; k < cuts[d]; k++)   /* strictly increasing */
                cut[d][k] = cut[d][k - 1] + 1 +
                            (uint64_t)g_rand_int_range(rnd, 0, (gint32)(dims[d] - cut[d][k - 1] - (cuts[d] - k)));
            cut[d][cuts[d]] = dims[d];
        }
        /* a grid tiling, with some tiles left out (holes) */
        hpc_dhdf_box p[256];
        size_t n = 0;
        unsigned ntiles = 1;
        for (unsigned d = 0; d < rank; d++)
            ntiles *= cuts[d];
        for (unsigned t = 0; t < ntiles && n < 256; t++) {
            if (g_rand_int_range(rnd, 0, 5) == 0)
                continue;
            memset(&p[n], 0, sizeof p[n]);
            unsigned r = t;
            for (int d = (int)rank - 1; d >= 0; d--) {
                unsigned k = r % cuts[d];
                r /= cuts[d];
                p[n].origin[d] = cut[d][k];
                p[n].size[d] = cut[d][k + 1] - cut[d][k];
            }
            n++;
        }
        uint64_t holes;
        size_t a, b;
        ck_assert_int_eq(hpc_dhdf_check_pieces(rank, dims, p, n, &holes, &a, &b), HPC_DHDF_FINE);
        /* brute force: which elements are covered */
        uint8_t *cov = calloc(total, 1);
        uint64_t covered = 0;
        for (size_t i = 0; i < n; i++)
            for (uint64_t e = 0; e < total; e++) {
                uint64_t rest = e, in = 1;
                for (int d = (int)rank - 1; d >= 0; d--) {
                    uint64_t x = rest % dims[d];
                    rest /= dims[d];
                    in &= x >= p[i].origin[d] && x < p[i].origin[d] + p[i].size[d];
                }
                if (in) {
                    cov[e] = 1;
                    covered++;
                }
            }
        ck_assert_uint_eq(holes, total - covered);
        uint64_t e0 = (uint64_t)g_rand_int_range(rnd, 0, (gint32)total);
        uint64_t e1 = e0 + (uint64_t)g_rand_int_range(rnd, 1, (gint32)(total - e0) + 1);
        uint32_t *dst = malloc((e1 - e0) * 4);
        for (uint64_t e = 0; e < e1 - e0; e++)
            dst[e] = 0xdeadbeef;
        oracle o = { rank, dims, p, dst, e0, e1, 0 };
        ck_assert_int_eq(hpc_dhdf_map_range(rank, dims, p, n, e0, e1, oracle_box, &o), 0);
        for (uint64_t e = e0; e < e1; e++)
            ck_assert_uint_eq(dst[e - e0], cov[e] ? (uint32_t)e : 0xdeadbeef);
        ck_assert_uint_le(o.calls, (2 * rank - 1) * n);
        free(dst);
        free(cov);
    }
    g_rand_free(rnd);
}
END_TEST

/* ---- the fixture set through the container API ------------------------ */

static char *fixture(void)
{
    const char *top = getenv("top_srcdir");
    return g_build_filename(top ? top : "..", "tests", "data", "dhdf", "mhf.hdf", NULL);
}

static hpc_container *open_fixture(void)
{
    hpc_options o;
    hpc_options_init(&o);
    o.cache_size = 1 << 20;
    o.inproc = 1;    /* the tests look into the reader's state (hpc_dhdf_file_reads) */
    hpc_container *c = NULL;
    GError *err = NULL;
    char *p = fixture();
    int rc = hpc_container_open(p, &o, &c, &err);
    ck_assert_msg(rc == 0, "%s", err ? err->message : "?");
    ck_assert_str_eq(hpc_container_format_name(c), "dhdf");
    g_free(p);
    return c;
}

/* how the fixture set was filled: sds1 = row*1000+col */
static int32_t sds1_at(uint64_t i)
{
    return (int32_t)(i / 200 * 1000 + i % 200);
}

START_TEST(test_fixture_reads_touch_only_their_pieces)
{
    hpc_container *c = open_fixture();
    hpc_stat st;
    ck_assert_int_eq(hpc_container_resolve(c, "sds1", &st), 0);
    ck_assert_uint_eq(st.size, 400000);
    int32_t buf[2000];
    size_t got;
    /* rows 0-9: in ahf1 only */
    ck_assert_int_eq(hpc_container_read(c, st.ino, buf, 8000, 0, &got), 0);
    ck_assert_uint_eq(got, 8000);
    for (int i = 0; i < 2000; i++)
        ck_assert_int_eq(GINT32_FROM_LE(buf[i]), sds1_at((uint64_t)i));
    ck_assert_uint_gt(hpc_dhdf_file_reads(c, 1), 0);
    ck_assert_uint_eq(hpc_dhdf_file_reads(c, 2), 0);
    /* the last 3 rows: in ahf2 only */
    uint64_t before = hpc_dhdf_file_reads(c, 1);
    ck_assert_int_eq(hpc_container_read(c, st.ino, buf, 2400, 400000 - 2400, &got), 0);
    ck_assert_uint_eq(got, 2400);
    for (int i = 0; i < 600; i++)
        ck_assert_int_eq(GINT32_FROM_LE(buf[i]), sds1_at(100000 - 600 + (uint64_t)i));
    ck_assert_uint_eq(hpc_dhdf_file_reads(c, 1), before);
    ck_assert_uint_gt(hpc_dhdf_file_reads(c, 2), 0);
    /* unaligned bytes across the boundary at row 300 */
    unsigned char b[9];
    ck_assert_int_eq(hpc_container_read(c, st.ino, b, 9, 240000 - 5, &got), 0);
    ck_assert_uint_eq(got, 9);
    int32_t v;
    memcpy(&v, b + 1, 4);
    ck_assert_int_eq(GINT32_FROM_LE(v), sds1_at(59999));
    memcpy(&v, b + 5, 4);
    ck_assert_int_eq(GINT32_FROM_LE(v), sds1_at(60000));
    /* at and past the end */
    ck_assert_int_eq(hpc_container_read(c, st.ino, b, 9, 400000 - 2, &got), 0);
    ck_assert_uint_eq(got, 2);
    ck_assert_int_eq(hpc_container_read(c, st.ino, b, 9, 400000, &got), 0);
    ck_assert_uint_eq(got, 0);
    hpc_container_close(c);
}
END_TEST

START_TEST(test_fixture_xattrs)
{
    hpc_container *c = open_fixture();
    hpc_stat st;
    void *v;
    size_t len;
    ck_assert_int_eq(hpc_container_resolve(c, "sds2", &st), 0);
    ck_assert_int_eq(hpc_container_getxattr(c, st.ino, "user.shape", &v, &len), 0);
    ck_assert_int_eq(len, 7);
    ck_assert(memcmp(v, "100,100", 7) == 0);
    g_free(v);
    ck_assert_int_eq(hpc_container_getxattr(c, st.ino, "user.dtype", &v, &len), 0);
    ck_assert(len == 3 && memcmp(v, "<f4", 3) == 0);
    g_free(v);
    ck_assert_int_eq(hpc_container_getxattr(c, st.ino, "user.attr.units", &v, &len), 0);
    ck_assert(len == 1 && memcmp(v, "K", 1) == 0);
    g_free(v);
    ck_assert_int_eq(hpc_container_resolve(c, "sds1.pieces/sds1_chunk1", &st), 0);
    ck_assert_uint_eq(st.size, 160000);
    ck_assert_int_eq(hpc_container_getxattr(c, st.ino, "user.file", &v, &len), 0);
    ck_assert(len == 8 && memcmp(v, "ahf2.hdf", 8) == 0);
    g_free(v);
    ck_assert_int_eq(hpc_container_getxattr(c, st.ino, "user.nothing", &v, &len), HPC_E_NODATA);
    ck_assert_int_eq(hpc_container_resolve(c, "sds3", &st), HPC_E_NOENT);
    hpc_container_close(c);
}
END_TEST

typedef struct reader_arg {
    hpc_container *c;
    hpc_ino ino;
    unsigned seed;
    int bad;
} reader_arg;

static gpointer reader(gpointer p)
{
    reader_arg *r = p;
    GRand *rnd = g_rand_new_with_seed(r->seed);
    unsigned char buf[70000];
    for (int i = 0; i < 200; i++) {
        uint64_t off = (uint64_t)g_rand_int_range(rnd, 0, 400000);
        size_t len = (size_t)g_rand_int_range(rnd, 1, sizeof buf), got;
        if (hpc_container_read(r->c, r->ino, buf, len, off, &got) != 0) {
            r->bad++;
            continue;
        }
        for (size_t k = 0; k < got; k++) {
            uint64_t at = off + k;
            int32_t v = GINT32_TO_LE(sds1_at(at / 4));
            if (buf[k] != ((unsigned char *)&v)[at % 4])
                r->bad++;
        }
    }
    g_rand_free(rnd);
    return NULL;
}

START_TEST(test_fixture_concurrent)
{
    hpc_container *c = open_fixture();
    hpc_stat st;
    ck_assert_int_eq(hpc_container_resolve(c, "sds1", &st), 0);
    reader_arg args[4];
    GThread *t[4];
    for (unsigned i = 0; i < 4; i++) {
        args[i] = (reader_arg){ c, st.ino, 17 + i, 0 };
        t[i] = g_thread_new("reader", reader, &args[i]);
    }
    for (unsigned i = 0; i < 4; i++) {
        g_thread_join(t[i]);
        ck_assert_int_eq(args[i].bad, 0);
    }
    hpc_container_close(c);
}
END_TEST

START_TEST(test_info)
{
    hpc_container *c = open_fixture();
    char buf[8192];
    size_t got;
    ck_assert_int_eq(hpc_container_read(c, HPC_INO_INFO, buf, sizeof buf - 1, 0, &got), 0);
    buf[got] = '\0';
    ck_assert_ptr_nonnull(strstr(buf, "\nrole: main file\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\nholes: none\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\n1\tahf1.hdf\tlocalhost\t"));
    ck_assert_ptr_nonnull(strstr(buf, "\n0\t1\tsds1_chunk0\t300,200\t0,0\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\nsds2\tdistributed\t<f4\t100,100\t40000\t1\t0\n"));
    hpc_container_close(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dhdf");
    TCase *t = tcase_create("logic");
    tcase_add_test(t, test_decode);
    tcase_add_test(t, test_check_pieces);
    tcase_add_test(t, test_map_range_random);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    t = tcase_create("fixture");
    tcase_add_test(t, test_fixture_reads_touch_only_their_pieces);
    tcase_add_test(t, test_fixture_xattrs);
    tcase_add_test(t, test_fixture_concurrent);
    tcase_add_test(t, test_info);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
