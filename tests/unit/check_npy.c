/* check_npy.c - NPY headers equal what numpy's np.save writes.
 *
 * tests/gen/npy_cases.py prints, for many dtypes and shapes, the user.dtype and
 * user.shape values a reader gives and the header numpy writes; every one
 * must come out of hpc_npy_header byte for byte. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpc_npy.h"
#include "hpc_error.h"
#include "check_util.h"

static GBytes *unhex(const char *hex)
{
    size_t n = strlen(hex) / 2;
    guint8 *b = g_malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (guint8)(g_ascii_xdigit_value(hex[2 * i]) << 4 | g_ascii_xdigit_value(hex[2 * i + 1]));
    return g_bytes_new_take(b, n);
}

START_TEST(npy_headers_equal_numpy)
{
    const char *srcdir = getenv("top_srcdir");
    char *cmd = g_strdup_printf("/usr/bin/python3 %s/tests/gen/npy_cases.py", srcdir ? srcdir : ".");
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char *line = NULL;
    size_t cap = 0;
    int cases = 0;
    while (getline(&line, &cap, p) > 0) {
        g_strchomp(line);
        char **f = g_strsplit(line, "\t", 3);
        ck_assert_ptr_nonnull(f[1]);
        ck_assert_ptr_nonnull(f[2]);
        GBytes *want = unhex(f[2]);
        GString *got = g_string_new(NULL);
        ck_assert_int_eq(hpc_npy_header(f[0], f[1], got, NULL), HPC_OK);
        gsize wn;
        const void *w = g_bytes_get_data(want, &wn);
        ck_assert_msg(got->len == wn && memcmp(got->str, w, wn) == 0,
                      "header of dtype %.60s shape (%s) differs from numpy's", f[0], f[1]);
        ck_assert_int_eq(got->len % 64, 0);
        g_string_free(got, TRUE);
        g_bytes_unref(want);
        g_strfreev(f);
        cases++;
    }
    free(line);
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_int_ge(cases, 15);
    g_free(cmd);
}
END_TEST

START_TEST(npy_bad_values)
{
    const char *bad_shapes[] = { "1,", ",1", "a", "1,,2", "01", "123456789012345678901", NULL };
    GString *out = g_string_new(NULL);
    GError *err = NULL;
    for (int i = 0; bad_shapes[i]; i++) {
        ck_assert_int_eq(hpc_npy_header("<f8", bad_shapes[i], out, &err), HPC_E_INVAL);
        ck_assert_ptr_nonnull(err);
        g_clear_error(&err);
    }
    ck_assert_int_eq(hpc_npy_header("", "1", out, NULL), HPC_E_INVAL);
    ck_assert_int_eq(hpc_npy_header("<f8'", "1", out, NULL), HPC_E_INVAL);
    ck_assert_int_eq(out->len, 0);
    g_string_free(out, TRUE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("header");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, npy_headers_equal_numpy);
    tcase_add_test(tc, npy_bad_values);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
