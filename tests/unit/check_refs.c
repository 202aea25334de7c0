/* check_refs.c - unit tests of the reference writer's C entry points
 * (hpc_refs.h): the whole document or nothing, JSON that GLib parses,
 * chunks on the grid of the array's extents. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "check_util.h"
#include "hpc_refs.h"

static char *data(const char *name)
{
    return g_build_filename(test_data_dir(), name, NULL);
}

START_TEST(test_gsd_series_document)
{
    char *p = data("gsd/hoomd_traj.gsd"), *json = NULL;
    GError *err = NULL;
    ck_assert_int_eq(hpc_refs_source(p, NULL, "/series", 0, &json, &err), HPC_OK);
    ck_assert_ptr_nonnull(json);
    ck_assert(g_str_has_prefix(json, "{\"version\": 1, \"templates\": {\"u\": "));
    /* the series of 20 frames: one reference per frame, none inline */
    ck_assert_ptr_nonnull(strstr(json, "\"particles/position/19.0.0\": [\"{{u}}\", "));
    ck_assert_ptr_null(strstr(json, "\"particles/position/20.0.0\""));
    ck_assert_ptr_nonnull(strstr(json, "\\\"chunks\\\": [1, 4, 3]"));
    g_free(json);
    g_free(p);
}
END_TEST

START_TEST(test_sion_stream_chunks)
{
    char *p = data("b_multichunk.sion"), *json = NULL;
    GError *err = NULL;
    ck_assert_int_eq(hpc_refs_source(p, NULL, "/rank-000002", 0, &json, &err), HPC_OK);
    /* one array at the root: .zarray, .zattrs and its chunks */
    ck_assert_ptr_nonnull(strstr(json, "\".zarray\": "));
    ck_assert_ptr_nonnull(strstr(json, "\"0\": [\"{{u}}\", "));
    ck_assert_ptr_null(strstr(json, ".zgroup"));
    g_free(json);
    g_free(p);
}
END_TEST

START_TEST(test_refused_gives_nothing)
{
    char *dir = g_dir_make_tmp("refsXXXXXX", NULL);
    char *p = g_build_filename(dir, "bad.gsd", NULL);
    ck_assert(g_file_set_contents(p, "GSD\1not a gsd file", -1, NULL));
    char *json = (char *)"untouched";
    GError *err = NULL;
    ck_assert_int_ne(hpc_refs_source(p, NULL, NULL, 500, &json, &err), HPC_OK);
    ck_assert_ptr_null(json);
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_null(strchr(err->message, '\n'));
    g_clear_error(&err);
    char *gsd = data("gsd/hoomd_traj.gsd");
    json = (char *)"untouched";
    ck_assert_int_eq(hpc_refs_source(gsd, NULL, "/no/such", 500, &json, &err), HPC_E_NOENT);
    ck_assert_ptr_null(json);
    g_clear_error(&err);
    g_unlink(p);
    g_rmdir(dir);
    g_free(gsd);
    g_free(p);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("refs");
    TCase *tc = tcase_create("refs");
    tcase_add_test(tc, test_gsd_series_document);
    tcase_add_test(tc, test_sion_stream_chunks);
    tcase_add_test(tc, test_refused_gives_nothing);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
