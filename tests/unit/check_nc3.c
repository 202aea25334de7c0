/* check_nc3.c - the netCDF-3 header parser (nc3_parse): layouts it
 * computes, and that every count, size and offset is bounded by the
 * file's real size (each prefix of a valid file, counts and offsets too
 * large) with a one-line error naming the field.  Files libnetcdf writes
 * are compared with the library in tests/mount/netcdf3_mount.sh. */
#include <check.h>
#include <string.h>

#include "check_util.h"
#include "nc3_int.h"

/* A big-endian file image under construction. */
typedef struct img {
    GByteArray *b;
    int version;
} img;

static void put(img *m, uint64_t v, unsigned w)
{
    for (unsigned i = 0; i < w; i++) {
        guint8 x = (guint8)(v >> (8 * (w - 1 - i)));
        g_byte_array_append(m->b, &x, 1);
    }
}

static void count(img *m, uint64_t v)
{
    put(m, v, m->version == 5 ? 8 : 4);
}

static void name(img *m, const char *s)
{
    size_t n = strlen(s);
    static const guint8 zero[4];
    count(m, n);
    g_byte_array_append(m->b, (const guint8 *)s, (guint)n);
    g_byte_array_append(m->b, zero, (guint)((4 - n % 4) % 4));
}

/* A file of version v: dims t (unlimited) and x = 3; a global attribute;
 * variables a(t,x) short, c(x) char, and, when two, b(t) double; numrecs
 * records of data after the header. */
static GByteArray *build(int v, uint64_t numrecs, int two)
{
    img m = { g_byte_array_new(), v };
    unsigned ow = v == 1 ? 4 : 8;
    g_byte_array_append(m.b, (const guint8 *)"CDF", 3);
    put(&m, (uint64_t)v, 1);
    count(&m, numrecs);
    put(&m, 0x0a, 4); count(&m, 2);
    name(&m, "t"); count(&m, 0);
    name(&m, "x"); count(&m, 3);
    put(&m, 0x0c, 4); count(&m, 1);
    name(&m, "title"); put(&m, 2, 4); count(&m, 2);
    g_byte_array_append(m.b, (const guint8 *)"hi\0\0", 4);
    put(&m, 0x0b, 4); count(&m, two ? 3 : 2);
    /* header length: computed below, begins patched in */
    guint at_a, at_c, at_b = 0;
    name(&m, "a"); count(&m, 2); count(&m, 0); count(&m, 1);
    put(&m, 0, 4); count(&m, 0); put(&m, 3, 4); count(&m, 8);
    at_a = m.b->len; put(&m, 0, ow);
    name(&m, "c"); count(&m, 1); count(&m, 1);
    put(&m, 0, 4); count(&m, 0); put(&m, 2, 4); count(&m, 4);
    at_c = m.b->len; put(&m, 0, ow);
    if (two) {
        name(&m, "b"); count(&m, 1); count(&m, 0);
        put(&m, 0, 4); count(&m, 0); put(&m, 6, 4); count(&m, 8);
        at_b = m.b->len; put(&m, 0, ow);
    }
    uint64_t hl = m.b->len, c_begin = hl, a_begin = hl + 4, b_begin = a_begin + 8;
    uint64_t recsize = two ? 16 : 6;
    GByteArray *b = m.b;
    img p = { g_byte_array_new(), v };
    put(&p, a_begin, ow); memcpy(b->data + at_a, p.b->data, ow); g_byte_array_set_size(p.b, 0);
    put(&p, c_begin, ow); memcpy(b->data + at_c, p.b->data, ow); g_byte_array_set_size(p.b, 0);
    if (two) {
        put(&p, b_begin, ow);
        memcpy(b->data + at_b, p.b->data, ow);
    }
    g_byte_array_free(p.b, TRUE);
    g_byte_array_append(b, (const guint8 *)"xyz\0", 4);
    for (uint64_t r = 0; r < numrecs; r++)
        for (uint64_t k = 0; k < recsize; k++) {
            guint8 x = (guint8)(r * 16 + k);
            g_byte_array_append(b, &x, 1);
        }
    if (numrecs && !two)      /* the last record of one variable is unpadded */
        g_assert_cmpuint(b->len, ==, a_begin + numrecs * 6);
    return b;
}

static nc3_hdr *parse_ok(GByteArray *b)
{
    nc3_hdr *h = NULL;
    GError *err = NULL;
    int rc = nc3_parse(b->data, b->len, b->len, "f.nc", &h, &err);
    ck_assert_msg(rc == HPC_OK, "%s", err ? err->message : "?");
    return h;
}

START_TEST(layout)
{
    for (int v = 1; v <= 5; v += v == 2 ? 3 : 1) {
        GByteArray *b = build(v, 3, 0);
        nc3_hdr *h = parse_ok(b);
        ck_assert_int_eq(h->version, v);
        ck_assert_uint_eq(h->numrecs, 3);
        ck_assert_int_eq(h->recdim, 0);
        ck_assert_uint_eq(h->recsize, 6);    /* one record variable: no padding */
        ck_assert_uint_eq(h->vars[0].slab, 6);
        ck_assert_uint_eq(nc3_var_bytes(h, &h->vars[0]), 18);
        ck_assert_uint_eq(nc3_var_bytes(h, &h->vars[1]), 3);
        ck_assert_str_eq(h->gatts[0].name, "title");
        GString *t = g_string_new(NULL);
        nc3_att_text(&h->gatts[0], t);
        ck_assert_str_eq(t->str, "hi");
        g_string_free(t, TRUE);
        nc3_hdr_free(h);
        g_byte_array_free(b, TRUE);
        b = build(v, 2, 1);
        h = parse_ok(b);
        ck_assert_uint_eq(h->recsize, 16);   /* 6 padded to 8, and 8 */
        ck_assert_uint_eq(h->nrecvars, 2);
        nc3_hdr_free(h);
        g_byte_array_free(b, TRUE);
    }
}
END_TEST

/* Every prefix of a valid file is refused with one line, or served with
 * fewer records only where numrecs is STREAMING. */
START_TEST(prefixes)
{
    for (int v = 1; v <= 5; v += v == 2 ? 3 : 1) {
        GByteArray *b = build(v, 4, 1);
        for (guint n = 0; n < b->len; n++) {
            nc3_hdr *h = NULL;
            GError *err = NULL;
            int rc = nc3_parse(b->data, n, n, "f.nc", &h, &err);
            ck_assert_msg(rc != HPC_OK && rc != HPC_E_RANGE, "prefix %u of CDF-%d parsed", n, v);
            ck_assert(err && g_str_has_prefix(err->message, "f.nc: "));
            ck_assert(!strchr(err->message, '\n'));
            g_error_free(err);
            /* less read than the file holds: read more, never an error */
            rc = nc3_parse(b->data, n, b->len, "f.nc", &h, NULL);
            ck_assert(rc == HPC_E_RANGE || rc == HPC_OK);
            if (rc == HPC_OK)
                nc3_hdr_free(h);
        }
        g_byte_array_free(b, TRUE);
    }
}
END_TEST

static void expect_fail(GByteArray *b, const char *field)
{
    nc3_hdr *h = NULL;
    GError *err = NULL;
    int rc = nc3_parse(b->data, b->len, b->len, "f.nc", &h, &err);
    ck_assert_int_ne(rc, HPC_OK);
    ck_assert_msg(err && strstr(err->message, field), "%s: %s", field, err ? err->message : "?");
    g_error_free(err);
}

START_TEST(bad_counts)
{
    GByteArray *b = build(1, 1, 1);
    guint8 *p = b->data;
    p[12] = 0x7f;                          /* dim_list nelems 2 -> 2^31 + 2 */
    expect_fail(b, "field dim_list at offset 12");
    p[12] = 0;
    p[7] = 9;                              /* numrecs 9: records past the end */
    expect_fail(b, "field numrecs");
    p[4] = p[5] = p[6] = p[7] = 0xff;      /* STREAMING: computed, 1 record */
    nc3_hdr *h = parse_ok(b);
    ck_assert(h->streaming);
    ck_assert_uint_eq(h->numrecs, 1);
    nc3_hdr_free(h);
    p[4] = p[5] = p[6] = 0;
    p[7] = 1;
    p[3] = 3;
    expect_fail(b, "field magic at offset 0");
    p[3] = 1;
    p[8 + 3] = 0x0b;                       /* a dim_list tagged as variables */
    expect_fail(b, "field dim_list");
    g_byte_array_free(b, TRUE);
}
END_TEST

START_TEST(bad_offsets)
{
    GByteArray *b = build(2, 1, 0);
    nc3_hdr *h = parse_ok(b);
    uint64_t at = h->vars[1].entry;        /* c's begin */
    nc3_hdr_free(h);
    for (int i = 0; i < 8; i++)
        b->data[at + i] = 0xff;            /* far past the end */
    expect_fail(b, "field begin");
    memset(b->data + at, 0, 8);            /* inside the header */
    expect_fail(b, "field begin");
    g_byte_array_free(b, TRUE);
    /* CDF-5 types in a CDF-1 file */
    b = build(1, 0, 0);
    h = parse_ok(b);
    uint64_t t = h->vars[1].entry - 8;     /* c's nc_type */
    nc3_hdr_free(h);
    b->data[t + 3] = 10;
    expect_fail(b, "variable nc_type");
    g_byte_array_free(b, TRUE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("netcdf3");
    TCase *tc = tcase_create("header");
    tcase_add_test(tc, layout);
    tcase_add_test(tc, prefixes);
    tcase_add_test(tc, bad_counts);
    tcase_add_test(tc, bad_offsets);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
