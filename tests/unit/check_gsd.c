/* check_gsd.c - the GSD reader through the core API (no FUSE, so it runs in
 * the sanitizer build too): every fixture chunk against MANIFEST.txt (written
 * by the real GSD libraries), xattrs, odd reads, a file that grows between
 * calls, and an index entry that goes bad. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"

/* numpy's dtype of a manifest type "float32(9)". */
static const char *dtype_of(const char *t)
{
    static const char *const map[][2] = {
        { "uint8", "|u1" }, { "uint16", "<u2" }, { "uint32", "<u4" }, { "uint64", "<u8" },
        { "int8", "|i1" }, { "int16", "<i2" }, { "int32", "<i4" }, { "int64", "<i8" },
        { "float32", "<f4" }, { "float64", "<f8" }, { "character", "|S1" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(map); i++)
        if (strncmp(t, map[i][0], strlen(map[i][0])) == 0 && t[strlen(map[i][0])] == '(')
            return map[i][1];
    return "?";
}

static char *xattr(hpc_container *c, hpc_ino ino, const char *name)
{
    void *v = NULL;
    size_t len = 0;
    if (hpc_container_getxattr(c, ino, name, &v, &len) != HPC_OK)
        return NULL;
    char *s = g_strndup(v, len);
    g_free(v);
    return s;
}

/* Check every manifest row of one fixture; returns how many. */
static int check_fixture(const char *name)
{
    char *mpath = g_build_filename(test_data_dir(), "gsd", "MANIFEST.txt", NULL);
    char *path = g_build_filename(test_data_dir(), "gsd", name, NULL);
    char *text = NULL;
    ck_assert(g_file_get_contents(mpath, &text, NULL, NULL));
    hpc_container *c = test_open(path, NULL);
    ck_assert_str_eq(hpc_container_format_name(c), "gsd");
    gchar **lines = g_strsplit(text, "\n", -1);
    int on = 0, checked = 0;
    for (gchar **l = lines; *l; l++) {
        if (g_str_has_prefix(*l, "## ")) {
            char *want = g_strdup_printf("## %s ", name);
            on = g_str_has_prefix(*l, want);
            g_free(want);
            continue;
        }
        gchar **w = g_strsplit(*l, "\t", -1);
        if (on && g_strv_length(w) == 10 && g_ascii_isdigit(w[0][0])) {
            char *file = g_strdup_printf("frames/%06d/%s", atoi(w[1]), w[2]);
            uint64_t len = 0;
            char *sha = test_sha256_path(c, file, &len);
            ck_assert_msg(sha != NULL, "%s: %s missing", name, file);
            ck_assert_str_eq(sha, w[9]);
            ck_assert_uint_eq(len, g_ascii_strtoull(w[8], NULL, 10));
            hpc_stat st;
            ck_assert_int_eq(hpc_container_resolve(c, file, &st), HPC_OK);
            char *shape = xattr(c, st.ino, "user.shape"), *dtype = xattr(c, st.ino, "user.dtype");
            char *want = strcmp(w[6], "1") == 0 ? g_strdup(w[5])     /* as gsd.fl shapes it */
                                                : g_strdup_printf("%s,%s", w[5], w[6]);
            ck_assert_str_eq(shape, want);
            ck_assert_str_eq(dtype, dtype_of(w[4]));
            g_free(want);
            g_free(shape);
            g_free(dtype);
            g_free(sha);
            g_free(file);
            checked++;
        }
        g_strfreev(w);
    }
    g_strfreev(lines);
    hpc_container_close(c);
    g_free(text);
    g_free(path);
    g_free(mpath);
    return checked;
}

START_TEST(fixtures)
{
    ck_assert_int_eq(check_fixture("hoomd_traj.gsd"), 129);
    ck_assert_int_eq(check_fixture("sparse_chunks.gsd"), 29);
    ck_assert_int_eq(check_fixture("character_chunk.gsd"), 17);
    ck_assert_int_eq(check_fixture("v1_format.gsd"), 14);
    ck_assert_int_eq(check_fixture("killed_py27.gsd"), 3);
}
END_TEST

static int count_entry(void *ctx, const char *name, const hpc_stat *st, uint64_t next)
{
    (void)name; (void)st; (void)next;
    (*(int *)ctx)++;
    return 0;
}

static int count_dir(hpc_container *c, const char *path)
{
    hpc_stat st;
    int n = 0;
    ck_assert_int_eq(hpc_container_resolve(c, path, &st), HPC_OK);
    ck_assert_int_eq(hpc_container_readdir(c, st.ino, 0, count_entry, &n), HPC_OK);
    return n - 2;         /* "." and ".." */
}

START_TEST(tree_shape)
{
    char *path = g_build_filename(test_data_dir(), "gsd", "sparse_chunks.gsd", NULL);
    hpc_container *c = test_open(path, NULL);
    hpc_stat st;
    ck_assert_int_eq(count_dir(c, "frames"), 10);
    ck_assert_int_eq(count_dir(c, "frames/000006"), 0);
    ck_assert_int_eq(count_dir(c, "frames/000000/types"), 11);
    ck_assert_int_eq(hpc_container_resolve(c, "frames/000010", &st), HPC_E_NOENT);
    ck_assert_int_eq(hpc_container_resolve(c, "frames/6", &st), HPC_E_NOENT);
    ck_assert_int_eq(hpc_container_resolve(c, "frames/000001/types", &st), HPC_E_NOENT);
    ck_assert_int_eq(hpc_container_resolve(c, "frames/000000/always/step/x", &st), HPC_E_NOTDIR);
    ck_assert_int_eq(hpc_container_resolve(c, "frames/000004/late/appears_at_4", &st), HPC_OK);
    /* odd reads: past the end, across the end, one byte */
    char buf[64];
    size_t n;
    ck_assert_int_eq(hpc_container_read(c, st.ino, buf, sizeof buf, 100, &n), HPC_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(hpc_container_read(c, st.ino, buf, sizeof buf, 5, &n), HPC_OK);
    ck_assert_uint_eq(n, 3);
    hpc_extent ext[2];
    unsigned ne;
    ck_assert_int_eq(hpc_container_map(c, st.ino, 2, 100, ext, 2, &ne), HPC_OK);
    ck_assert_uint_eq(ne, 1);
    ck_assert_uint_eq(ext[0].off, 5770 + 2);   /* manifest: location 5770 */
    ck_assert_uint_eq(ext[0].len, 6);
    hpc_container_close(c);
    g_free(path);
}
END_TEST

static char *copy_fixture(const char *name, gsize *len, char **data)
{
    char *src = g_build_filename(test_data_dir(), "gsd", name, NULL);
    ck_assert(g_file_get_contents(src, data, len, NULL));
    g_free(src);
    return g_strdup_printf("%s/check_gsd_%d_%s", g_get_tmp_dir(), (int)getpid(), name);
}

/* The file grows between calls: new frames appear after the re-stat. */
START_TEST(growing_file)
{
    gsize len;
    char *data;
    char *path = copy_fixture("sparse_chunks.gsd", &len, &data);
    /* as if only frames 0..3 were written: index slots 18.. empty (manifest) */
    char *early = g_memdup2(data, len);
    memset(early + 256 + 18 * 32, 0, (128 - 18) * 32);
    ck_assert(g_file_set_contents(path, early, 5762, NULL));
    hpc_container *c = test_open(path, NULL);
    ck_assert_int_eq(count_dir(c, "frames"), 4);
    ck_assert(hpc_container_is_live(c));
    FILE *f = fopen(path, "r+b");
    ck_assert(f != NULL);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
    /* the reader re-stats at most so often: wait for the frames (10 min
     * at most), not for that time */
    for (int i = 0; i < 60000 && count_dir(c, "frames") != 10; i++)
        g_usleep(10000);
    ck_assert_int_eq(count_dir(c, "frames"), 10);
    uint64_t n;
    char *sha = test_sha256_path(c, "frames/000009/always/step", &n);
    ck_assert_ptr_nonnull(sha);
    ck_assert_uint_eq(n, 8);
    g_free(sha);
    hpc_container_close(c);
    unlink(path);
    g_free(path);
    g_free(early);
    g_free(data);
}
END_TEST

/* An entry whose data lie beyond the end: the frames before it are served. */
START_TEST(bad_entry)
{
    gsize len;
    char *data;
    char *path = copy_fixture("sparse_chunks.gsd", &len, &data);
    uint64_t far = GUINT64_TO_LE(UINT64_C(1) << 40);
    memcpy(data + 256 + 18 * 32 + 16, &far, 8);   /* slot 18: frame 4 */
    ck_assert(g_file_set_contents(path, data, (gssize)len, NULL));
    hpc_container *c = test_open(path, NULL);
    ck_assert_int_eq(count_dir(c, "frames"), 4);
    hpc_stat st;
    ck_assert_int_eq(hpc_container_resolve(c, ".info", &st), HPC_OK);
    char *info = g_malloc0(st.size + 1);
    size_t n;
    ck_assert_int_eq(hpc_container_read(c, HPC_INO_INFO, info, st.size, 0, &n), HPC_OK);
    ck_assert_ptr_nonnull(strstr(info, "skipped: index entry 18 at offset 832"));
    g_free(info);
    hpc_container_close(c);
    unlink(path);
    g_free(path);
    g_free(data);
}
END_TEST

/* Bytes of file `path` of c (g_free). */
static char *read_all(hpc_container *c, const char *path, size_t *len)
{
    hpc_stat st;
    ck_assert_int_eq(hpc_container_resolve(c, path, &st), HPC_OK);
    char *buf = g_malloc(st.size + 1);
    ck_assert_int_eq(hpc_container_read(c, st.ino, buf, st.size, 0, len), HPC_OK);
    ck_assert_uint_eq(*len, st.size);
    return buf;
}

/* Hoomd frames: what frame 0 lends is a link; series of a name over all
 * frames, read, mapped and with their .frames file. */
START_TEST(hoomd_links_and_series)
{
    char *path = g_build_filename(test_data_dir(), "gsd", "hoomd_traj.gsd", NULL);
    hpc_container *c = test_open(path, NULL);
    hpc_stat st;
    char *target = NULL, buf[64];
    size_t n, len;
    ck_assert_int_eq(hpc_container_resolve(c, "frames/000012/particles/typeid", &st), HPC_OK);
    ck_assert(S_ISLNK(st.mode));
    ck_assert_int_eq(hpc_container_readlink(c, st.ino, &target), HPC_OK);
    ck_assert_str_eq(target, "../../000000/particles/typeid");
    ck_assert_uint_eq(st.size, strlen(target));
    ck_assert_int_ne(hpc_container_read(c, st.ino, buf, sizeof buf, 0, &n), HPC_OK);
    g_free(target);
    ck_assert_int_eq(hpc_container_resolve(c, "frames/000000/particles/typeid", &st), HPC_OK);
    ck_assert(S_ISREG(st.mode));
    ck_assert_int_ne(hpc_container_readlink(c, st.ino, &target), HPC_OK);

    /* series/particles/position = the 20 frames' chunks one after another */
    char *all = read_all(c, "series/particles/position", &len);
    ck_assert_uint_eq(len, 20 * 48);
    for (int f = 0; f < 20; f++) {
        char *fp = g_strdup_printf("frames/%06d/particles/position", f);
        size_t flen;
        char *one = read_all(c, fp, &flen);
        ck_assert_uint_eq(flen, 48);
        ck_assert_mem_eq(all + f * 48, one, 48);
        g_free(one);
        g_free(fp);
    }
    ck_assert_int_eq(hpc_container_resolve(c, "series/particles/position", &st), HPC_OK);
    char *v = xattr(c, st.ino, "user.shape");
    ck_assert_str_eq(v, "20,4,3");
    g_free(v);
    v = xattr(c, st.ino, "user.dtype");
    ck_assert_str_eq(v, "<f4");
    g_free(v);
    hpc_extent ext[4];
    unsigned ne;
    ck_assert_int_eq(hpc_container_map(c, st.ino, 40, 100, ext, 4, &ne), HPC_OK);
    ck_assert_uint_ge(ne, 2);
    ck_assert_uint_eq(ext[0].len, 8);              /* the rest of frame 0's chunk */
    uint64_t covered = 0;
    for (unsigned i = 0; i < ne; i++) {
        ck_assert_int_eq(hpc_source_pread(ext[i].src, buf, (size_t)ext[i].len, ext[i].off), HPC_OK);
        ck_assert_mem_eq(buf, all + 40 + covered, (size_t)ext[i].len);
        covered += ext[i].len;
    }
    ck_assert_uint_eq(covered, 100);
    ck_assert_int_eq(hpc_container_read(c, st.ino, buf, 10, len - 4, &n), HPC_OK);
    ck_assert_uint_eq(n, 4);
    g_free(all);

    char *fr = read_all(c, "series/particles/position.frames", &len);
    ck_assert_uint_eq(len, 20 * 8);
    for (uint64_t f = 0; f < 20; f++) {
        uint64_t x;
        memcpy(&x, fr + f * 8, 8);
        ck_assert_uint_eq(GUINT64_FROM_LE(x), f);
    }
    g_free(fr);
    ck_assert_int_eq(hpc_container_resolve(c, "series/particles/position.frames", &st), HPC_OK);
    ck_assert_int_eq(hpc_container_map(c, st.ino, 0, 8, ext, 4, &ne), HPC_E_NOTSUP);
    ck_assert_int_eq(hpc_container_read(c, st.ino, buf, 3, 9, &n), HPC_OK);  /* unaligned */
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq((unsigned char)buf[0], 0);
    ck_assert_int_eq(hpc_container_resolve(c, "series/particles/nothing", &st), HPC_E_NOENT);
    ck_assert_int_eq(hpc_container_resolve(c, "series/particles/position/x", &st), HPC_E_NOTDIR);
    hpc_container_close(c);
    g_free(path);

    /* a name in frames 0, 3 and 9: two runs */
    path = g_build_filename(test_data_dir(), "gsd", "sparse_chunks.gsd", NULL);
    c = test_open(path, NULL);
    fr = read_all(c, "series/sometimes/every3.frames", &len);
    ck_assert_uint_eq(len, 24);
    uint64_t want[3] = { 0, 3, 9 };
    for (int i = 0; i < 3; i++) {
        uint64_t x;
        memcpy(&x, fr + i * 8, 8);
        ck_assert_uint_eq(GUINT64_FROM_LE(x), want[i]);
    }
    g_free(fr);
    ck_assert_int_eq(count_dir(c, "series/sometimes"), 2);
    ck_assert_int_eq(hpc_container_resolve(c, "frames/000001/types", &st), HPC_E_NOENT);
    hpc_container_close(c);
    g_free(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gsd");
    TCase *tc = tcase_create("gsd");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, fixtures);
    tcase_add_test(tc, tree_shape);
    tcase_add_test(tc, growing_file);
    tcase_add_test(tc, bad_entry);
    tcase_add_test(tc, hoomd_links_and_series);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
