/* check_mount.c - the mount layer without FUSE: a run directory built in a
 * temporary directory resolves, lists and reads every container's nodes
 * as the container opened alone does, through an LRU of one open
 * container, with large node ids translated; a damaged container is an
 * empty directory whose .info says why; an open file keeps reading the
 * container it opened after the LRU closed its slot. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hpc_file.h"
#include "hpc_mount.h"
#include "hpc_readahead.h"
#include "check_util.h"

static char *run_dir;

static void copy_file(const char *from, const char *to, gsize max)
{
    gchar *data;
    gsize len;
    ck_assert(g_file_get_contents(from, &data, &len, NULL));
    ck_assert(g_file_set_contents(to, data, (gssize)MIN(len, max), NULL));
    g_free(data);
}

static void make_run_dir(void)
{
    run_dir = g_dir_make_tmp("check_mount.XXXXXX", NULL);
    ck_assert_ptr_nonnull(run_dir);
    const char *files[] = { "a_4tasks.sion", "e_keyval.sion", "c1_multifile.sion",
                            "c1_multifile.sion.000001", "gsd/hoomd_traj.gsd", NULL };
    char *sub = g_build_filename(run_dir, "sub", "deeper", NULL);
    g_mkdir_with_parents(sub, 0755);
    for (int i = 0; files[i]; i++) {
        char *from = g_build_filename(test_data_dir(), files[i], NULL);
        char *base = g_path_get_basename(files[i]);
        char *to = g_build_filename(i == 4 ? sub : run_dir, base, NULL);
        copy_file(from, to, G_MAXSIZE);
        g_free(from);
        g_free(base);
        g_free(to);
    }
    char *from = g_build_filename(test_data_dir(), "a_4tasks.sion", NULL);
    char *bad = g_build_filename(run_dir, "bad.sion", NULL);
    copy_file(from, bad, 3000);
    char *plain = g_build_filename(run_dir, "notes.txt", NULL);
    ck_assert(g_file_set_contents(plain, "plain text\n", -1, NULL));
    g_free(from);
    g_free(bad);
    g_free(plain);
    g_free(sub);
}

static void remove_run_dir(void)
{
    char *cmd = g_strdup_printf("rm -rf '%s'", run_dir);
    ck_assert_int_eq(system(cmd), 0);
    g_free(cmd);
    g_free(run_dir);
}

static hpc_mount *open_mount(unsigned max_containers)
{
    hpc_options o;
    hpc_options_init(&o);
    o.max_containers = max_containers;
    hpc_mount *m = NULL;
    GError *err = NULL;
    ck_assert_msg(hpc_mount_open(run_dir, &o, &m, &err) == HPC_OK, "%s", err ? err->message : "");
    ck_assert(hpc_mount_is_directory(m));
    return m;
}

static char *mount_sha(hpc_mount *m, const char *path, uint64_t *len)
{
    hpc_stat st;
    if (hpc_mount_resolve(m, path, &st) != HPC_OK)
        return NULL;
    GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
    char buf[777];
    size_t n;
    *len = 0;
    while (hpc_mount_read(m, st.ino, buf, sizeof buf, *len, &n) == HPC_OK && n > 0) {
        g_checksum_update(ck, (guchar *)buf, n);
        *len += n;
    }
    char *hex = g_strdup(g_checksum_get_string(ck));
    g_checksum_free(ck);
    return hex;
}

/* every file node of container `name` (in the run directory at `inner`)
 * reads as the container alone reads it */
static void same_as_alone(hpc_mount *m, const char *rel, const char *const *files)
{
    char *path = g_build_filename(run_dir, rel, NULL);
    hpc_container *c = test_open(path, NULL);
    for (int i = 0; files[i]; i++) {
        uint64_t la = 0, lm = 0;
        char *a = test_sha256_path(c, files[i], &la);
        char *mp = g_build_filename(rel, files[i], NULL);
        char *b = mount_sha(m, mp, &lm);
        ck_assert_msg(a && b && strcmp(a, b) == 0 && la == lm && la > 0,
                      "%s differs in the run directory", mp);
        g_free(a);
        g_free(b);
        g_free(mp);
    }
    hpc_container_close(c);
    g_free(path);
}

START_TEST(run_dir_reads_like_alone)
{
    make_run_dir();
    hpc_mount *m = open_mount(1);        /* every switch closes the other */
    const char *sion[] = { "rank-000000", "rank-000003", ".info", NULL };
    const char *kv[] = { "rank-000000/key-1", NULL };
    const char *multi[] = { "rank-000001", "rank-000004", NULL };
    const char *gsd[] = { "frames/000000/particles/position", "frames/000019/configuration/step", NULL };
    for (int round = 0; round < 2; round++) {
        same_as_alone(m, "a_4tasks.sion", sion);
        same_as_alone(m, "e_keyval.sion", kv);
        same_as_alone(m, "c1_multifile.sion", multi);
        same_as_alone(m, "sub/deeper/hoomd_traj.gsd", gsd);
    }
    hpc_stat st;
    ck_assert_int_eq(hpc_mount_resolve(m, "e_keyval.sion/rank-000000/key-1", &st), HPC_OK);
    ck_assert_msg(st.ino >> 63, "a key file's id (2^62 + k) goes through the table");
    ck_assert_int_eq(hpc_mount_resolve(m, "c1_multifile.sion.000001", &st), HPC_OK);
    ck_assert(S_ISREG(st.mode));        /* a set member stays a plain file */
    uint64_t len;
    char *h = mount_sha(m, "notes.txt", &len);
    ck_assert_uint_eq(len, 11);
    g_free(h);
    hpc_mount_close(m);
    remove_run_dir();
}
END_TEST

static int count_entry(void *ctx, const char *name, const hpc_stat *st, uint64_t next)
{
    (void)st;
    (void)next;
    GString *s = ctx;
    g_string_append_printf(s, "%s/", name);
    return 0;
}

START_TEST(damaged_container_is_empty_dir)
{
    make_run_dir();
    hpc_mount *m = open_mount(4);
    hpc_stat st, info;
    ck_assert_int_eq(hpc_mount_resolve(m, "bad.sion", &st), HPC_OK);
    ck_assert(S_ISDIR(st.mode));
    GString *names = g_string_new(NULL);
    ck_assert_int_eq(hpc_mount_readdir(m, st.ino, 0, count_entry, names), HPC_OK);
    ck_assert_str_eq(names->str, "./../.info/");
    ck_assert_int_eq(hpc_mount_lookup(m, st.ino, ".info", &info), HPC_OK);
    char buf[512];
    size_t n;
    ck_assert_int_eq(hpc_mount_read(m, info.ino, buf, sizeof buf - 1, 0, &n), HPC_OK);
    buf[n] = 0;
    ck_assert_msg(strstr(buf, "error: ") && strstr(buf, "bad.sion"), "%s", buf);
    /* the rest works */
    g_string_truncate(names, 0);
    ck_assert_int_eq(hpc_mount_readdir(m, HPC_INO_ROOT, 0, count_entry, names), HPC_OK);
    ck_assert_msg(strstr(names->str, "/a_4tasks.sion/") && strstr(names->str, "/notes.txt/") &&
                  strstr(names->str, "/sub/"), "%s", names->str);
    g_string_free(names, TRUE);
    hpc_mount_close(m);
    remove_run_dir();
}
END_TEST

/* The 4-task SION fixture as one container. */
static hpc_mount *open_sion_fixture(void)
{
    char *path = g_build_filename(test_data_dir(), "a_4tasks.sion", NULL);
    hpc_options o;
    hpc_options_init(&o);
    hpc_mount *m = NULL;
    ck_assert_int_eq(hpc_mount_open(path, &o, &m, NULL), HPC_OK);
    g_free(path);
    return m;
}

START_TEST(single_container_unchanged)
{
    hpc_mount *m = open_sion_fixture();
    ck_assert(!hpc_mount_is_directory(m));
    hpc_stat st;
    ck_assert_int_eq(hpc_mount_resolve(m, "rank-000002", &st), HPC_OK);
    ck_assert_uint_eq(st.ino, HPC_INO_FIRST + 2);   /* the container's own id */
    hpc_mount_close(m);
}
END_TEST

/* [off, off + len) of f through a buffer sink (must succeed). */
static char *file_bytes(hpc_file *f, uint64_t off, size_t len, size_t *got)
{
    char *buf = g_malloc(len + 1);
    hpc_sink sink = { .kind = HPC_SINK_BUFFER, .buf = buf };
    ck_assert_int_eq(hpc_file_read(f, off, len, &sink), HPC_OK);
    *got = sink.done;
    return buf;
}

/* The state .info of the run directory gives container rel ("open"...). */
static gboolean container_is(hpc_mount *m, const char *rel, const char *state)
{
    hpc_stat st;
    char buf[4096];
    size_t n = 0;
    ck_assert_int_eq(hpc_mount_resolve(m, ".info", &st), HPC_OK);
    ck_assert_int_eq(hpc_mount_read(m, st.ino, buf, sizeof buf - 1, 0, &n), HPC_OK);
    buf[n] = 0;
    char *line = g_strdup_printf("\n%s\t%s\t", rel, state);
    gboolean is = strstr(buf, line) != NULL;
    g_free(line);
    return is;
}

/* Does f read (buffer, and verbatim from the extents) what the container
 * alone reads at path? */
static void reads_as_alone(hpc_file *f, hpc_container *alone, const char *path)
{
    hpc_stat st;
    ck_assert_int_eq(hpc_container_resolve(alone, path, &st), HPC_OK);
    char *want = g_malloc(st.size + 1);
    size_t n = 0, got = 0;
    ck_assert_int_eq(hpc_container_read(alone, st.ino, want, st.size, 0, &n), HPC_OK);
    ck_assert_uint_eq(n, st.size);
    ck_assert_uint_eq(hpc_file_stat(f)->size, st.size);
    char *buf = file_bytes(f, 0, st.size, &got);
    ck_assert_msg(got == n && memcmp(buf, want, n) == 0, "%s: other bytes", path);
    g_free(buf);
    g_free(want);
}

/* A file open in a container whose slot the LRU closes meanwhile (one
 * container open at a time) reads the same bytes from the container it
 * holds, through the core and verbatim from the extents; files opened
 * after the slot opened again read the new container; letting go in any
 * order frees all (ASan). */
START_TEST(open_file_holds_its_container)
{
    make_run_dir();
    hpc_mount *m = open_mount(1);
    char *path = g_build_filename(run_dir, "a_4tasks.sion", NULL);
    hpc_container *alone = test_open(path, NULL);
    hpc_file_conf core = { NULL, 0 }, direct = { NULL, 1 };
    hpc_file *f1, *f2, *f3;
    const char *name1 = "rank-000001";
    ck_assert_int_eq(hpc_file_open_path(m, "a_4tasks.sion/rank-000001", &core, &f1), HPC_OK);
    ck_assert_int_eq(hpc_file_open_path(m, "a_4tasks.sion/rank-000002", &direct, &f2), HPC_OK);
    size_t got;
    g_free(file_bytes(f1, 0, 7, &got));
    ck_assert(container_is(m, "a_4tasks.sion", "open"));
    for (int round = 0; round < 2; round++) {
        uint64_t len;
        g_free(mount_sha(m, "e_keyval.sion/rank-000000/key-1", &len));
        g_free(mount_sha(m, "c1_multifile.sion/rank-000001", &len));
        ck_assert_msg(container_is(m, "a_4tasks.sion", "closed"), "the LRU closed the slot");
        reads_as_alone(f1, alone, name1);
        reads_as_alone(f2, alone, "rank-000002");
        ck_assert(container_is(m, "a_4tasks.sion", "closed"));   /* read from the held one */
        if (round == 0) {   /* the slot opens again: a second container of the same file */
            ck_assert_int_eq(hpc_file_open_path(m, "a_4tasks.sion/rank-000003", &direct, &f3),
                             HPC_OK);
            ck_assert(container_is(m, "a_4tasks.sion", "open"));
            hpc_file_close(f1);     /* the first container stays open: f2 holds it */
            f1 = f3;
            name1 = "rank-000003";
            reads_as_alone(f1, alone, name1);
        }
    }
    hpc_file_close(f2);
    hpc_file_close(f1);
    hpc_container_close(alone);
    g_free(path);
    hpc_mount_close(m);
    remove_run_dir();
}
END_TEST

static void make_link(const char *target, const char *name)
{
    char *path = g_build_filename(run_dir, name, NULL);
    ck_assert_int_eq(symlink(target, path), 0);
    g_free(path);
}

/* Symlinks in every component are followed as the kernel follows them on
 * the mount: a link in the middle of a path, the last one on request, a
 * climb above the root is not found (never the root again), a loop ELOOP. */
START_TEST(resolve_follows_links)
{
    make_run_dir();
    make_link("sub", "to_sub");
    make_link("../../outside", "sub/up");
    make_link("loop", "loop");
    hpc_mount *m = open_mount(1);
    hpc_stat want, st;
    ck_assert_int_eq(hpc_mount_resolve(m, "sub/deeper/hoomd_traj.gsd", &want), HPC_OK);
    ck_assert_int_ne(hpc_mount_resolve(m, "to_sub/deeper/hoomd_traj.gsd", &st), HPC_OK);
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "to_sub/deeper/hoomd_traj.gsd", FALSE, &st, NULL),
                     HPC_OK);
    ck_assert_uint_eq(st.ino, want.ino);
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "to_sub", FALSE, &st, NULL), HPC_OK);
    ck_assert(S_ISLNK(st.mode));
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "to_sub/", FALSE, &st, NULL), HPC_OK);
    ck_assert(S_ISDIR(st.mode));
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "to_sub/deeper/../../notes.txt", TRUE, &st, NULL),
                     HPC_OK);
    ck_assert(S_ISREG(st.mode));
    char *real = NULL;
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "to_sub/deeper/../deeper/hoomd_traj.gsd", TRUE,
                                              &st, &real), HPC_OK);
    ck_assert_str_eq(real, "/sub/deeper/hoomd_traj.gsd");       /* the node's own path */
    g_free(real);
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "to_sub/..", TRUE, &st, &real), HPC_OK);
    ck_assert_str_eq(real, "/");
    g_free(real);
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "sub/up", FALSE, &st, NULL), HPC_OK);
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "sub/up", TRUE, &st, NULL), HPC_E_NOENT);
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "..", TRUE, &st, NULL), HPC_E_NOENT);
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "loop", TRUE, &st, NULL), HPC_E_LOOP);
    ck_assert_int_eq(hpc_mount_resolve_follow(m, "loop/x", FALSE, &st, NULL), HPC_E_LOOP);
    ck_assert_int_eq(hpc_err_to_errno(HPC_E_LOOP), ELOOP);
    hpc_mount_close(m);
    remove_run_dir();
}
END_TEST

#define MiB (1u << 20)

/* one read of the stream: 1 and [*from, *to) when it reads ahead */
static int ra(hpc_ra_state *st, uint64_t off, uint64_t len, uint64_t *from, uint64_t *to)
{
    return hpc_ra_step(st, MiB, 8 * MiB, off, len, from, to);
}

START_TEST(readahead_window_grows)
{
    hpc_ra_state st = { 0 };
    uint64_t from = 0, to = 0, pos = 0;
    ck_assert(ra(&st, 0, 128 << 10, &from, &to));   /* the start of the file */
    ck_assert_uint_eq(from, 128 << 10);
    ck_assert_uint_eq(to, (128 << 10) + MiB);
    uint64_t last = to, windows[8];
    unsigned n = 0;
    for (pos = 128 << 10; pos < 64 * MiB; pos += 128 << 10) {
        if (!ra(&st, pos, 128 << 10, &from, &to))
            continue;
        ck_assert_uint_eq(from, last);             /* never twice the same bytes */
        ck_assert_uint_gt(to, pos + (128 << 10));
        last = to;
        if (n < 8)
            windows[n++] = st.window;
    }
    ck_assert_uint_ge(n, 4);
    ck_assert_uint_eq(windows[0], 2 * MiB);        /* doubled at each trigger */
    ck_assert_uint_eq(windows[1], 4 * MiB);
    ck_assert_uint_eq(windows[2], 8 * MiB);
    ck_assert_uint_eq(windows[3], 8 * MiB);        /* up to the maximum */
    ck_assert_uint_le(last, pos + 8 * MiB);
    ck_assert_uint_ge(last, pos + 4 * MiB);        /* at least half a window ahead */
}
END_TEST

START_TEST(readahead_reordered_and_random)
{
    hpc_ra_state st = { 0 };
    uint64_t from, to;
    /* a stream that starts elsewhere: sequential from its second read */
    ck_assert(!ra(&st, 10 * MiB, MiB, &from, &to));
    ck_assert(ra(&st, 11 * MiB, MiB, &from, &to));
    ck_assert_uint_eq(from, 12 * MiB);
    /* the kernel's parallel requests, slightly out of order: still sequential */
    ck_assert(!ra(&st, 12 * MiB + MiB / 4, MiB / 4, &from, &to));
    ck_assert(!ra(&st, 12 * MiB, MiB / 4, &from, &to));
    ck_assert_uint_eq(st.window, MiB);
    ck_assert(ra(&st, 12 * MiB + MiB / 2, MiB / 4, &from, &to));   /* the trigger */
    ck_assert_uint_eq(st.window, 2 * MiB);
    ck_assert_uint_eq(from, 13 * MiB);
    ck_assert_uint_eq(to, 12 * MiB + 3 * MiB / 4 + 2 * MiB);
    /* a jump resets the stream: no read-ahead until it is sequential again */
    ck_assert(!ra(&st, 40 * MiB, 4096, &from, &to));
    ck_assert_uint_eq(st.window, 0);
    /* random 4 KiB reads never read ahead */
    uint64_t x = 12345;
    for (int i = 0; i < 10000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        ck_assert(!ra(&st, ((x >> 20) % (1ull << 30)) & ~4095ull, 4096, &from, &to));
    }
    /* 0: disabled */
    hpc_ra_state off = { 0 };
    ck_assert(!hpc_ra_step(&off, MiB, 0, 0, MiB, &from, &to));
    ck_assert(!hpc_ra_step(&off, MiB, 0, MiB, MiB, &from, &to));
}
END_TEST

/* The threads advise the extents of a mapped node; a node that does not
 * map (.info) gets nothing; disabled read-ahead is NULL everywhere. */
START_TEST(readahead_advises_sources)
{
    hpc_mount *m = open_sion_fixture();
    hpc_stat st;
    ck_assert_int_eq(hpc_mount_resolve(m, "rank-000002", &st), HPC_OK);
    hpc_ra *r = NULL;
    ck_assert_int_eq(hpc_ra_new(m, 4096, 8 * MiB, 0, &r), HPC_OK);
    ck_assert_ptr_null(r);
    ck_assert_ptr_null(hpc_ra_stream_new(r, st.ino));
    ck_assert_int_eq(hpc_ra_new(m, 4096, 8 * MiB, 2, &r), HPC_OK);
    hpc_ra_stream *info = hpc_ra_stream_new(r, HPC_INO_INFO);
    ck_assert_int_eq(hpc_ra_read(info, 0, 100), HPC_OK);
    hpc_ra_stream *s = hpc_ra_stream_new(r, st.ino);
    ck_assert_int_eq(hpc_ra_read(s, 0, 100), HPC_OK);
    for (int i = 0; i < 60000 && hpc_ra_advised(r) < st.size - 100; i++)
        g_usleep(10000);          /* the threads run in the background */
    ck_assert_uint_eq(hpc_ra_advised(r), st.size - 100);   /* the rest of the file, once */
    hpc_ra_stream_free(s);        /* info is left open: freed with r */
    hpc_ra_free(r);
    hpc_mount_close(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mount");
    TCase *tc = tcase_create("rundir");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, run_dir_reads_like_alone);
    tcase_add_test(tc, damaged_container_is_empty_dir);
    tcase_add_test(tc, single_container_unchanged);
    tcase_add_test(tc, resolve_follows_links);
    tcase_add_test(tc, open_file_holds_its_container);
    tcase_add_test(tc, readahead_window_grows);
    tcase_add_test(tc, readahead_reordered_and_random);
    tcase_add_test(tc, readahead_advises_sources);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
