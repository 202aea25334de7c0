/* check_sion.c - the SION reader on every fixture written by SIONlib 1.7.6:
 * each task's (or key's) length and sha256 must equal the manifest's, which
 * the real library produced. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "check_util.h"
#include "hpc_bytes.h"

/* Value following `key` in a whitespace-separated manifest line. */
static char *field(gchar **words, const char *key)
{
    for (gchar **w = words; *w && w[1]; w++)
        if (strcmp(*w, key) == 0)
            return w[1];
    return NULL;
}

/* Check every task/key line of one manifest; returns how many were checked. */
static int check_manifest(const char *sion_name)
{
    char *path = g_build_filename(test_data_dir(), sion_name, NULL);
    char *mpath = g_strconcat(path, ".manifest.txt", NULL);
    char *text = NULL;
    ck_assert_msg(g_file_get_contents(mpath, &text, NULL, NULL), "no manifest %s", mpath);
    hpc_container *c = test_open(path, NULL);
    int checked = 0;
    char task_dir[64] = "";
    gchar **lines = g_strsplit(text, "\n", -1);
    for (gchar **l = lines; *l; l++) {
        gchar **w = g_strsplit_set(g_strstrip(*l), " \t", -1);
        char file[128] = "";
        if (w[0] && strcmp(w[0], "task") == 0) {
            g_snprintf(task_dir, sizeof task_dir, "rank-%06lld", atoll(field(w, "globalrank")));
            if (field(w, "length"))
                g_strlcpy(file, task_dir, sizeof file);
        } else if (w[0] && strcmp(w[0], "key") == 0 && w[1]) {
            g_snprintf(file, sizeof file, "%s/key-%s", task_dir, w[1]);
        }
        if (file[0]) {
            uint64_t len = 0;
            char *sha = test_sha256_path(c, file, &len);
            ck_assert_msg(sha != NULL, "%s: %s missing or unreadable", sion_name, file);
            ck_assert_uint_eq(len, g_ascii_strtoull(field(w, "length"), NULL, 10));
            ck_assert_str_eq(sha, field(w, "sha256"));
            hpc_stat st;
            ck_assert_int_eq(hpc_container_resolve(c, file, &st), HPC_OK);
            ck_assert_uint_eq(st.size, len);
            g_free(sha);
            checked++;
        }
        g_strfreev(w);
    }
    g_strfreev(lines);
    hpc_container_close(c);
    g_free(text);
    g_free(mpath);
    g_free(path);
    return checked;
}

START_TEST(fixture_a_4tasks) { ck_assert_int_eq(check_manifest("a_4tasks.sion"), 4); }
END_TEST
START_TEST(fixture_b_multichunk) { ck_assert_int_eq(check_manifest("b_multichunk.sion"), 3); }
END_TEST
START_TEST(fixture_c1_multifile) { ck_assert_int_eq(check_manifest("c1_multifile.sion"), 5); }
END_TEST
START_TEST(fixture_d_emptytask) { ck_assert_int_eq(check_manifest("d_emptytask.sion"), 4); }
END_TEST
START_TEST(fixture_e_keyval) { ck_assert_int_eq(check_manifest("e_keyval.sion"), 6); }
END_TEST
START_TEST(fixture_f_bigendian) { ck_assert_int_eq(check_manifest("f_bigendian.sion"), 3); }
END_TEST

/* Opening member 1 of a set shows only its own three tasks. */
START_TEST(member_file_alone)
{
    char *path = g_build_filename(test_data_dir(), "c1_multifile.sion.000001", NULL);
    hpc_container *c = test_open(path, "sion");
    hpc_stat st;
    ck_assert_int_eq(hpc_container_resolve(c, "rank-000002", &st), HPC_OK);
    ck_assert_uint_eq(st.size, 1300);
    ck_assert_int_eq(hpc_container_resolve(c, "rank-000004", &st), HPC_OK);
    ck_assert_uint_eq(st.size, 2100);
    ck_assert_int_eq(hpc_container_resolve(c, "rank-000000", &st), HPC_E_NOENT);
    hpc_container_close(c);
    g_free(path);
}
END_TEST

/* Extents of a multi-block task: three blocks at the manifest's positions. */
START_TEST(map_extents)
{
    char *path = g_build_filename(test_data_dir(), "b_multichunk.sion", NULL);
    hpc_container *c = test_open(path, NULL);
    hpc_stat st;
    hpc_extent ext[8];
    unsigned n;
    ck_assert_int_eq(hpc_container_resolve(c, "rank-000000", &st), HPC_OK);
    ck_assert_int_eq(hpc_container_map(c, st.ino, 0, 1 << 20, ext, 8, &n), HPC_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(ext[0].off, 1536); ck_assert_uint_eq(ext[0].len, 900);
    ck_assert_uint_eq(ext[1].off, 4608); ck_assert_uint_eq(ext[1].len, 900);
    ck_assert_uint_eq(ext[2].off, 7680); ck_assert_uint_eq(ext[2].len, 700);
    /* a range inside block 1 */
    ck_assert_int_eq(hpc_container_map(c, st.ino, 1000, 50, ext, 8, &n), HPC_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(ext[0].off, 4608 + 100);
    ck_assert_uint_eq(ext[0].len, 50);
    hpc_container_close(c);
    g_free(path);
}
END_TEST

/* -o rankname renames, and only exact names resolve. */
START_TEST(rankname_option)
{
    char *path = g_build_filename(test_data_dir(), "a_4tasks.sion", NULL);
    hpc_options o;
    hpc_options_init(&o);
    ck_assert_int_eq(hpc_formats_option_set(&o, "rankname=restart.%04d", NULL), HPC_OK);
    hpc_container *c = NULL;
    ck_assert_int_eq(hpc_container_open(path, &o, &c, NULL), HPC_OK);
    hpc_stat st;
    ck_assert_int_eq(hpc_container_resolve(c, "restart.0003", &st), HPC_OK);
    ck_assert_uint_eq(st.size, 5000);
    ck_assert_int_eq(hpc_container_resolve(c, "restart.3", &st), HPC_E_NOENT);
    ck_assert_int_eq(hpc_container_resolve(c, "rank-000003", &st), HPC_E_NOENT);
    hpc_container_close(c);
    hpc_options_clear(&o);
    g_free(path);
}
END_TEST

/* Reads at every offset and size agree with one whole read. */
START_TEST(odd_reads)
{
    char *path = g_build_filename(test_data_dir(), "b_multichunk.sion", NULL);
    hpc_container *c = test_open(path, NULL);
    hpc_stat st;
    ck_assert_int_eq(hpc_container_resolve(c, "rank-000002", &st), HPC_OK);
    char *whole = g_malloc(st.size), piece[1500];
    size_t n;
    ck_assert_int_eq(hpc_container_read(c, st.ino, whole, st.size, 0, &n), HPC_OK);
    ck_assert_uint_eq(n, st.size);
    for (uint64_t off = 0; off < st.size + 10; off += 97)
        for (size_t len = 1; len < sizeof piece; len += 331) {
            ck_assert_int_eq(hpc_container_read(c, st.ino, piece, len, off, &n), HPC_OK);
            size_t want = off >= st.size ? 0 : MIN(len, st.size - off);
            ck_assert_uint_eq(n, want);
            ck_assert(memcmp(piece, whole + MIN(off, st.size), n) == 0);
        }
    g_free(whole);
    hpc_container_close(c);
    g_free(path);
}
END_TEST

/* ---- layouts written here: where the data start ------------------------ */

/* A one-block-per-task SION file of n tasks with chunk size cs and
 * fsblksize 1: data at sod, META2 at sov (0: right after the data),
 * block size len[i] (data byte k of task i is 7i + k).  Returns its path. */
static char *write_sion(int format, uint64_t sod, uint64_t sov, unsigned n, uint64_t cs,
                        const int64_t *len)
{
    unsigned ranks_at = format >= 3 ? 1076 : 1056;
    uint64_t size = (sov ? sov : sod + n * cs) + 16 * n;
    guint8 *b = g_malloc0(size);
    memcpy(b, "sion", 4);
    hpc_put_le32(b + 8, 1007);
    hpc_put_le32(b + 16, (uint32_t)format);
    hpc_put_le32(b + 20, 1);
    hpc_put_le32(b + 24, n);
    hpc_put_le32(b + 28, 1);
    if (format >= 5)
        hpc_put_le64(b + 36, (uint64_t)50 << 32);
    for (unsigned i = 0; i < n; i++) {
        hpc_put_le64(b + ranks_at + 8 * i, i);
        hpc_put_le64(b + ranks_at + 8 * n + 8 * i, cs);
        hpc_put_le64(b + size - 16 * n + 8 * i, 1);
        hpc_put_le64(b + size - 8 * n + 8 * i, (uint64_t)len[i]);
        for (uint64_t k = 0; len[i] > 0 && k < (uint64_t)len[i]; k++)
            b[sod + i * cs + k] = (guint8)(7 * i + k);
    }
    hpc_put_le32(b + ranks_at + 16 * n, 1);
    hpc_put_le64(b + ranks_at + 16 * n + 4, size - 16 * n);
    char *dir = g_dir_make_tmp("check_sion_XXXXXX", NULL);
    char *path = g_build_filename(dir, "w.sion", NULL);
    ck_assert(g_file_set_contents(path, (const char *)b, (gssize)size, NULL));
    g_free(b);
    g_free(dir);
    return path;
}

static void remove_sion(char *path)
{
    char *dir = g_path_get_dirname(path);
    g_unlink(path);
    g_rmdir(dir);
    g_free(dir);
    g_free(path);
}

/* Open path; the error code, and each task's bytes checked when it opens. */
static int open_check(const char *path, unsigned n, const int64_t *len)
{
    hpc_container *c = NULL;
    GError *err = NULL;
    hpc_options o;
    hpc_options_init(&o);
    int rc = hpc_container_open(path, &o, &c, &err);
    hpc_options_clear(&o);
    g_clear_error(&err);
    for (unsigned i = 0; rc == HPC_OK && i < n; i++) {
        char name[32], buf[64];
        hpc_stat st;
        size_t got;
        g_snprintf(name, sizeof name, "rank-%06u", i);
        ck_assert_int_eq(hpc_container_resolve(c, name, &st), HPC_OK);
        ck_assert_uint_eq(st.size, (uint64_t)len[i]);
        ck_assert_int_eq(hpc_container_read(c, st.ino, buf, sizeof buf, 0, &got), HPC_OK);
        ck_assert_uint_eq(got, (uint64_t)len[i]);
        for (size_t k = 0; k < got; k++)
            ck_assert_uint_eq((guint8)buf[k], (guint8)(7 * i + k));
    }
    if (c)
        hpc_container_close(c);
    return rc;
}

/* Format 2 (header 1068 + 16n bytes): its data start at the header's own
 * end or where SIONlib reads them (1088 + 16n); with fsblksize 1 the two
 * differ, and start_of_varheader tells which. */
START_TEST(format2_start_of_data)
{
    const int64_t len[3] = { 40, 0, 33 };
    uint64_t own = 1056 + 16 * 3 + 12, lib = 1076 + 16 * 3 + 12;
    char *p = write_sion(2, own, 0, 3, 40, len);
    ck_assert_int_eq(open_check(p, 3, len), HPC_OK);
    remove_sion(p);
    p = write_sion(2, lib, 0, 3, 40, len);
    ck_assert_int_eq(open_check(p, 3, len), HPC_OK);
    remove_sion(p);
    /* neither: META2 does not follow the data */
    p = write_sion(2, lib + 8, 0, 3, 40, len);
    ck_assert_int_eq(open_check(p, 3, len), HPC_E_CORRUPT);
    remove_sion(p);
}
END_TEST

/* Formats 3-5 have one rule: data placed elsewhere (a SIONlib built with a
 * large first block) or META2 moved are refused, not read at the rule's
 * offset. */
START_TEST(start_of_data_rule)
{
    const int64_t len[2] = { 50, 7 };
    uint64_t rule = 1076 + 16 * 2 + 12;
    for (int fmt = 3; fmt <= 5; fmt++) {
        char *p = write_sion(fmt, rule, 0, 2, 64, len);
        ck_assert_int_eq(open_check(p, 2, len), HPC_OK);
        remove_sion(p);
        p = write_sion(fmt, 4 << 20, 0, 2, 64, len);
        ck_assert_int_eq(open_check(p, 2, len), HPC_E_CORRUPT);
        remove_sion(p);
        p = write_sion(fmt, rule, rule + 2 * 64 + 100, 2, 64, len);
        ck_assert_int_eq(open_check(p, 2, len), HPC_E_CORRUPT);
        remove_sion(p);
    }
}
END_TEST

/* A used block of negative size is damage (only unused entries may be -1). */
START_TEST(negative_block)
{
    const int64_t len[2] = { 50, -1 };
    char *p = write_sion(5, 1076 + 16 * 2 + 12, 0, 2, 64, len);
    ck_assert_int_eq(open_check(p, 2, len), HPC_E_CORRUPT);
    remove_sion(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sion");
    TCase *tc = tcase_create("fixtures");
    tcase_add_test(tc, fixture_a_4tasks);
    tcase_add_test(tc, fixture_b_multichunk);
    tcase_add_test(tc, fixture_c1_multifile);
    tcase_add_test(tc, fixture_d_emptytask);
    tcase_add_test(tc, fixture_e_keyval);
    tcase_add_test(tc, fixture_f_bigendian);
    tcase_add_test(tc, member_file_alone);
    tcase_add_test(tc, map_extents);
    tcase_add_test(tc, rankname_option);
    tcase_add_test(tc, odd_reads);
    suite_add_tcase(s, tc);
    tc = tcase_create("layouts");
    tcase_add_test(tc, format2_start_of_data);
    tcase_add_test(tc, start_of_data_rule);
    tcase_add_test(tc, negative_block);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
