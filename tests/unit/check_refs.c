/* check_refs.c - unit tests of hpcmount_refs, through the public API as
 * bindings call it (hpcmount_open, hpcmount_refs): the whole document or
 * nothing, chunks on the grid of the array's extents, small chunks inline
 * only up to the threshold, one-line errors. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "check_util.h"
#include "hpcmount.h"

/* The references of path in tests/data/name (NULL when the call fails,
 * its code in *rc).  Checks the contract: a document of *len bytes, or
 * NULL and 0. */
static char *refs_of(const char *name, const char *path, uint64_t inline_max, int *rc)
{
    char *src = g_build_filename(test_data_dir(), name, NULL);
    hpcmount *m = NULL;
    char *json = (char *)"untouched";
    size_t len = 1;
    ck_assert_msg(hpcmount_open(src, NULL, &m) == HPCMOUNT_OK, "open %s: %s", src,
                  hpcmount_last_error());
    *rc = hpcmount_refs(m, path, inline_max, &json, &len);
    if (*rc == HPCMOUNT_OK) {
        ck_assert_ptr_nonnull(json);
        ck_assert_uint_eq(strlen(json), len);
    } else {
        ck_assert_ptr_null(json);
        ck_assert_uint_eq(len, 0);
    }
    hpcmount_close(m);
    g_free(src);
    return json;
}

/* A document and what it must and must not contain. */
static const struct doc_case {
    const char *source, *path;
    uint64_t inline_max;
    const char *has[4], *lacks[2];
} doc_cases[] = {
    /* the series of 20 frames: one reference per frame, none inline */
    { "gsd/hoomd_traj.gsd", "/series", 0,
      { "{\"version\": 1, \"templates\": {\"u\": ",
        "\"particles/position/19.0.0\": [\"{{u}}\", ", "\\\"chunks\\\": [1, 4, 3]" },
      { "\"particles/position/20.0.0\"", "base64:" } },
    /* 24 bytes of box: inline, as the bytes themselves */
    { "gsd/hoomd_traj.gsd", NULL, HPCMOUNT_REFS_INLINE_DEFAULT,
      { "\"frames/000000/configuration/box/0\": \"base64:AACgQAAAoEAAAKBA" }, { NULL } },
    /* one array at the root: .zarray, .zattrs and its chunks, no group */
    { "b_multichunk.sion", "/rank-000002", 0, { "\".zarray\": ", "\"0\": [\"{{u}}\", " },
      { ".zgroup" } },
};

START_TEST(test_document)
{
    const struct doc_case *c = &doc_cases[_i];
    int rc;
    char *json = refs_of(c->source, c->path, c->inline_max, &rc);
    ck_assert_int_eq(rc, HPCMOUNT_OK);
    for (size_t k = 0; k < G_N_ELEMENTS(c->has) && c->has[k]; k++)
        ck_assert_msg(strstr(json, c->has[k]), "%s: no %s", c->source, c->has[k]);
    for (size_t k = 0; k < G_N_ELEMENTS(c->lacks) && c->lacks[k]; k++)
        ck_assert_msg(!strstr(json, c->lacks[k]), "%s: has %s", c->source, c->lacks[k]);
    hpcmount_free(json);
}
END_TEST

START_TEST(test_missing_path_gives_nothing)
{
    int rc;
    ck_assert_ptr_null(refs_of("gsd/hoomd_traj.gsd", "/no/such", 500, &rc));
    ck_assert_int_eq(rc, HPCMOUNT_E_NOENT);
    const char *msg = hpcmount_last_error();
    ck_assert_ptr_nonnull(strstr(msg, "/no/such"));
    ck_assert_ptr_null(strchr(msg, '\n'));
}
END_TEST

START_TEST(test_refused_source)
{
    char *dir = g_dir_make_tmp("refsXXXXXX", NULL);
    char *p = g_build_filename(dir, "bad.gsd", NULL);
    ck_assert(g_file_set_contents(p, "GSD\1not a gsd file", -1, NULL));
    hpcmount *m = (hpcmount *)p;
    ck_assert_int_ne(hpcmount_open(p, NULL, &m), HPCMOUNT_OK);
    ck_assert_ptr_null(m);
    const char *msg = hpcmount_last_error();
    ck_assert_ptr_nonnull(strstr(msg, "bad.gsd"));
    ck_assert_ptr_null(strchr(msg, '\n'));
    g_unlink(p);
    g_rmdir(dir);
    g_free(p);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("refs");
    TCase *tc = tcase_create("refs");
    tcase_add_loop_test(tc, test_document, 0, G_N_ELEMENTS(doc_cases));
    tcase_add_test(tc, test_missing_path_gives_nothing);
    tcase_add_test(tc, test_refused_source);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
