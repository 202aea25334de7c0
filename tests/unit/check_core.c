/* check_core.c - unit tests of the block cache, the tree, rank names and
 * error messages. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>

#include "hpc_bytes.h"
#include "hpc_cache.h"
#include "hpc_format.h"
#include "hpc_perm.h"
#include "hpc_tree.h"
#include "check_util.h"

/* ---- cache ------------------------------------------------------------ */

/* A synthetic space: byte i is pattern(i); fills are counted and checked
 * for alignment. */
typedef struct space {
    uint64_t size;
    uint32_t block;
    gint fills;
    gint misaligned;
} space;

static unsigned char pattern(uint64_t i)
{
    return (unsigned char)((i * 2654435761u) >> 13);
}

static int fill_space(void *ctx, uint64_t block, void *buf, size_t *len)
{
    space *s = ctx;
    uint64_t off = block * s->block;
    g_atomic_int_inc(&s->fills);
    if (off % s->block)
        g_atomic_int_inc(&s->misaligned);
    if (off >= s->size)
        return HPC_E_CORRUPT;
    *len = (size_t)MIN((uint64_t)s->block, s->size - off);
    for (size_t i = 0; i < *len; i++)
        ((unsigned char *)buf)[i] = pattern(off + i);
    return HPC_OK;
}

START_TEST(cache_lru_order)
{
    space s = { .size = 1 << 20, .block = 4096 };
    hpc_cache *c = hpc_cache_new(3 * 4096, 4096, 1);
    uint64_t id = hpc_cache_space_new();
    char b[10];
    for (uint64_t blk = 0; blk < 3; blk++)
        ck_assert_int_eq(hpc_cache_read(c, id, b, 10, blk * 4096, fill_space, &s), HPC_OK);
    ck_assert_int_eq(s.fills, 3);
    /* touch block 0: block 1 becomes the least recently used */
    ck_assert_int_eq(hpc_cache_read(c, id, b, 10, 5, fill_space, &s), HPC_OK);
    ck_assert_int_eq(s.fills, 3);
    ck_assert_int_eq(hpc_cache_read(c, id, b, 10, 3 * 4096, fill_space, &s), HPC_OK);
    ck_assert(!hpc_cache_contains(c, id, 1));
    ck_assert(hpc_cache_contains(c, id, 0));
    ck_assert(hpc_cache_contains(c, id, 2));
    ck_assert(hpc_cache_contains(c, id, 3));
    /* next victim is block 2 */
    ck_assert_int_eq(hpc_cache_read(c, id, b, 10, 1 * 4096, fill_space, &s), HPC_OK);
    ck_assert(!hpc_cache_contains(c, id, 2));
    hpc_cache_stats st;
    hpc_cache_get_stats(c, &st);
    ck_assert_uint_eq(st.misses, 5);
    ck_assert_uint_eq(st.hits, 1);
    ck_assert_uint_eq(st.evictions, 2);
    ck_assert_uint_eq(st.blocks, 3);
    hpc_cache_free(c);
}
END_TEST

START_TEST(cache_alignment_and_bounds)
{
    space s = { .size = 10000, .block = 4096 };
    hpc_cache *c = hpc_cache_new(1 << 20, 4096, 4);
    uint64_t id = hpc_cache_space_new();
    unsigned char b[9000];
    /* an unaligned read across three blocks fills exactly blocks 1 and 2 */
    ck_assert_int_eq(hpc_cache_read(c, id, b, 5000, 4100, fill_space, &s), HPC_OK);
    ck_assert_int_eq(s.fills, 2);
    ck_assert_int_eq(s.misaligned, 0);
    for (int i = 0; i < 5000; i++)
        ck_assert_uint_eq(b[i], pattern(4100 + (uint64_t)i));
    ck_assert(hpc_cache_contains(c, id, 1) && hpc_cache_contains(c, id, 2));
    ck_assert(!hpc_cache_contains(c, id, 0));
    /* the short last block ends the space */
    ck_assert_int_eq(hpc_cache_read(c, id, b, 1808, 8192, fill_space, &s), HPC_OK);
    ck_assert_int_eq(hpc_cache_read(c, id, b, 1809, 8192, fill_space, &s), HPC_E_CORRUPT);
    ck_assert_int_eq(hpc_cache_read(c, id, b, 1, 20000, fill_space, &s), HPC_E_CORRUPT);
    hpc_cache_drop_space(c, id);
    ck_assert(!hpc_cache_contains(c, id, 1));
    hpc_cache_free(c);
}
END_TEST

typedef struct worker {
    hpc_cache *c;
    space *s;
    uint64_t id;
    guint32 seed;
    int bad;
} worker;

static gpointer reader_thread(gpointer p)
{
    worker *w = p;
    GRand *r = g_rand_new_with_seed(w->seed);
    unsigned char *b = g_malloc(20000);
    for (int i = 0; i < 20000; i++) {
        uint64_t off = (uint64_t)g_rand_int_range(r, 0, (gint32)(w->s->size - 20000));
        size_t len = (size_t)g_rand_int_range(r, 1, 20000);
        if (hpc_cache_read(w->c, w->id, b, len, off, fill_space, w->s) != HPC_OK) {
            w->bad++;
            continue;
        }
        for (size_t k = 0; k < len; k++)
            if (b[k] != pattern(off + k)) {
                w->bad++;
                break;
            }
    }
    g_free(b);
    g_rand_free(r);
    return NULL;
}

/* 8 threads on a cache much smaller than the data: constant eviction, and
 * every byte read must still be right. */
START_TEST(cache_concurrent)
{
    space s = { .size = 8 << 20, .block = 8192 };
    hpc_cache *c = hpc_cache_new(256 << 10, 8192, 0);
    worker w[8];
    GThread *t[8];
    uint64_t id = hpc_cache_space_new();
    for (int i = 0; i < 8; i++) {
        w[i] = (worker){ c, &s, id, (guint32)(i + 1), 0 };
        t[i] = g_thread_new("reader", reader_thread, &w[i]);
    }
    for (int i = 0; i < 8; i++) {
        g_thread_join(t[i]);
        ck_assert_int_eq(w[i].bad, 0);
    }
    hpc_cache_stats st;
    hpc_cache_get_stats(c, &st);
    ck_assert_uint_gt(st.evictions, 0);
    ck_assert_uint_le(st.blocks, 32);
    hpc_cache_free(c);
}
END_TEST

START_TEST(cache_source_file)
{
    char path[] = "/tmp/hpc-cache-XXXXXX";
    int fd = mkstemp(path);
    unsigned char data[30000];
    for (int i = 0; i < 30000; i++)
        data[i] = pattern((uint64_t)i);
    ck_assert_int_eq(write(fd, data, sizeof data), (ssize_t)sizeof data);
    close(fd);
    hpc_source src;
    ck_assert_int_eq(hpc_source_open(path, &src, NULL), HPC_OK);
    ck_assert_uint_eq(src.size, 30000);
    hpc_cache *c = hpc_cache_new(1 << 20, 4096, 2);
    unsigned char b[30000];
    ck_assert_int_eq(hpc_cache_read_source(c, &src, b, 29990, 10), HPC_OK);
    ck_assert(memcmp(b, data + 10, 29990) == 0);
    ck_assert_int_eq(hpc_cache_read_source(c, &src, b, 2, 29999), HPC_E_CORRUPT);
    ck_assert_int_eq(hpc_source_pread(&src, b, 1, UINT64_MAX), HPC_E_CORRUPT);
    GError *err = NULL;
    ck_assert_int_eq(hpc_source_pread_field(&src, b, 100, 29950, "META2", &err), HPC_E_CORRUPT);
    ck_assert(strstr(err->message, "field META2 at offset 29950") != NULL);
    ck_assert(strstr(err->message, path) != NULL);
    g_error_free(err);
    hpc_cache_free(c);
    hpc_source_close(&src);
    unlink(path);
}
END_TEST

/* A source that changes after open fails every read from then on, a short
 * file is an error even through pread_upto, and a FIFO is refused without
 * blocking. */
START_TEST(source_changes)
{
    char path[] = "/tmp/hpc-src-XXXXXX";
    int fd = mkstemp(path);
    unsigned char data[8192], b[8192];
    memset(data, 'a', sizeof data);
    ck_assert_int_eq(write(fd, data, sizeof data), (ssize_t)sizeof data);
    hpc_source src;
    ck_assert_int_eq(hpc_source_open(path, &src, NULL), HPC_OK);
    ck_assert_int_eq(hpc_source_pread(&src, b, 100, 0), HPC_OK);
    ck_assert_int_eq(hpc_source_check_path(&src), HPC_OK);
    ck_assert_int_eq(ftruncate(fd, 4096), 0);
    size_t got = 0;
    ck_assert_int_eq(hpc_source_pread_upto(&src, b, 8192, 0, &got), HPC_E_CHANGED);
    ck_assert(hpc_source_changed(&src));
    /* sticky, even for ranges still inside the file */
    ck_assert_int_eq(hpc_source_pread(&src, b, 100, 0), HPC_E_CHANGED);
    ck_assert_int_eq(hpc_source_check(&src), HPC_E_CHANGED);
    hpc_source_set_live(&src);      /* live readers refresh instead */
    ck_assert_int_eq(hpc_source_check(&src), HPC_OK);
    ck_assert_int_eq(hpc_source_pread_upto(&src, b, 8192, 0, &got), HPC_OK);
    ck_assert_uint_eq(got, 4096);
    hpc_source_close(&src);

    /* replaced by rename: the path names another file */
    ck_assert_int_eq(hpc_source_open(path, &src, NULL), HPC_OK);
    char other[] = "/tmp/hpc-src-XXXXXX";
    int fd2 = mkstemp(other);
    ck_assert_int_eq(write(fd2, data, 4096), 4096);
    close(fd2);
    ck_assert_int_eq(rename(other, path), 0);
    ck_assert_int_eq(hpc_source_check_path(&src), HPC_E_CHANGED);
    hpc_source_close(&src);
    close(fd);
    unlink(path);

    char fifo[] = "/tmp/hpc-fifo-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(fifo));
    char *fp = g_build_filename(fifo, "f", NULL);
    ck_assert_int_eq(mkfifo(fp, 0600), 0);
    GError *err = NULL;
    ck_assert_int_eq(hpc_source_open(fp, &src, &err), HPC_E_INVAL);
    ck_assert(strstr(err->message, "not a regular file") != NULL);
    g_clear_error(&err);
    hpc_options o;
    hpc_options_init(&o);
    hpc_container *c = NULL;
    ck_assert_int_eq(hpc_formats_option_set(&o, "format=sion", NULL), HPC_OK);
    ck_assert_int_eq(hpc_container_open(fp, &o, &c, &err), HPC_E_INVAL);
    ck_assert(strstr(err->message, "not a regular file") != NULL);
    g_clear_error(&err);
    hpc_options_clear(&o);
    unlink(fp);
    rmdir(fifo);
    g_free(fp);
}
END_TEST

/* Byte-order loads and checked arithmetic. */
START_TEST(bytes_helpers)
{
    const unsigned char b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    ck_assert_uint_eq(hpc_le16(b), 0x0201);
    ck_assert_uint_eq(hpc_be16(b), 0x0102);
    ck_assert_uint_eq(hpc_le32(b + 1), 0x05040302u);
    ck_assert_uint_eq(hpc_be32(b), 0x01020304u);
    ck_assert_uint_eq(hpc_le64(b), 0x0807060504030201ull);
    ck_assert_uint_eq(hpc_be64(b), 0x0102030405060708ull);
    ck_assert_uint_eq(hpc_load_uint(b, 4, TRUE), 0x01020304u);
    ck_assert_uint_eq(hpc_load_uint(b, 3, TRUE), 0);
    unsigned char o[8];
    hpc_put_le64(o, 0x0807060504030201ull);
    ck_assert(memcmp(o, b, 8) == 0);
    uint64_t r = 7;
    ck_assert(!hpc_add_u64(UINT64_MAX, 1, &r));
    ck_assert_uint_eq(r, 7);
    ck_assert(hpc_add_u64(UINT64_MAX - 1, 1, &r) && r == UINT64_MAX);
    ck_assert(!hpc_mul_u64(1ull << 32, 1ull << 32, &r));
    ck_assert(hpc_muladd_u64(1000, 8, 16, &r) && r == 8016);
    ck_assert(!hpc_muladd_u64(1ull << 63, 1, 1ull << 63, &r));
    size_t z;
    ck_assert(!hpc_mul_size(SIZE_MAX / 2 + 1, 2, &z));
    ck_assert(!hpc_i64_to_u64(-1, &r));
    ck_assert(hpc_range_inside(10, 0, 10));
    ck_assert(!hpc_range_inside(5, UINT64_MAX, 10));
}
END_TEST

/* ---- rank names ------------------------------------------------------- */

START_TEST(rankname_default_and_custom)
{
    hpc_rankname rn;
    char buf[64];
    int64_t r;
    ck_assert_int_eq(hpc_rankname_compile(NULL, &rn, NULL), HPC_OK);
    ck_assert_int_eq(hpc_rankname_format(&rn, 17, buf, sizeof buf), HPC_OK);
    ck_assert_str_eq(buf, "rank-000017");
    ck_assert_int_eq(hpc_rankname_format(&rn, 12345678, buf, sizeof buf), HPC_OK);
    ck_assert_str_eq(buf, "rank-12345678");
    ck_assert_int_eq(hpc_rankname_parse(&rn, "rank-000017", &r), HPC_OK);
    ck_assert_int_eq(r, 17);
    ck_assert_int_eq(hpc_rankname_parse(&rn, "rank-17", &r), HPC_E_NOENT);
    ck_assert_int_eq(hpc_rankname_parse(&rn, "rank-0000017", &r), HPC_E_NOENT);
    ck_assert_int_eq(hpc_rankname_parse(&rn, "rank-00001x", &r), HPC_E_NOENT);
    ck_assert_int_eq(hpc_rankname_parse(&rn, "rank-", &r), HPC_E_NOENT);

    ck_assert_int_eq(hpc_rankname_compile("restart.%04d.dat", &rn, NULL), HPC_OK);
    ck_assert_int_eq(hpc_rankname_format(&rn, 42, buf, sizeof buf), HPC_OK);
    ck_assert_str_eq(buf, "restart.0042.dat");
    ck_assert_int_eq(hpc_rankname_parse(&rn, "restart.0042.dat", &r), HPC_OK);
    ck_assert_int_eq(r, 42);
    ck_assert_int_eq(hpc_rankname_compile("100%%_%x", &rn, NULL), HPC_OK);
    ck_assert_int_eq(hpc_rankname_format(&rn, 255, buf, sizeof buf), HPC_OK);
    ck_assert_str_eq(buf, "100%_ff");
    ck_assert_int_eq(hpc_rankname_parse(&rn, "100%_ff", &r), HPC_OK);
    ck_assert_int_eq(r, 255);
}
END_TEST

START_TEST(rankname_rejects)
{
    const char *bad[] = { "rank", "%s", "%d-%d", "a/%d", "%", "%5", "%n", "%%", "%-" };
    hpc_rankname rn;
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        GError *err = NULL;
        ck_assert_msg(hpc_rankname_compile(bad[i], &rn, &err) == HPC_E_INVAL, "%s accepted", bad[i]);
        ck_assert(strstr(err->message, "rankname") != NULL);
        g_error_free(err);
    }
}
END_TEST

/* ---- options ---------------------------------------------------------- */

START_TEST(options_parse)
{
    hpc_options o;
    GError *err = NULL;
    hpc_options_init(&o);
    ck_assert_uint_eq(o.cache_size, 64u << 20);
    ck_assert_int_eq(hpc_formats_option_set(&o, "cache_size=16M", NULL), HPC_OK);
    ck_assert_uint_eq(o.cache_size, 16u << 20);
    ck_assert_int_eq(hpc_formats_option_set(&o, "blocksize=128K", NULL), HPC_OK);
    ck_assert_uint_eq(o.blocksize, 128u << 10);
    ck_assert_int_eq(hpc_formats_option_set(&o, "nocheck", NULL), HPC_OK);
    ck_assert_int_eq(o.nocheck, 1);
    ck_assert_int_eq(hpc_formats_option_set(&o, "format=sion", NULL), HPC_OK);
    ck_assert_int_eq(hpc_formats_option_set(&o, "allow_other", NULL), HPC_E_NOENT);
    ck_assert_int_eq(hpc_formats_option_set(&o, "cache_size=lots", &err), HPC_E_INVAL);
    ck_assert(strstr(err->message, "cache_size") != NULL);
    g_clear_error(&err);
    /* a format's name is the container's to check, at open */
    ck_assert_int_eq(hpc_formats_option_set(&o, "format=zip", &err), HPC_OK);
    hpc_container *c = NULL;
    ck_assert_int_eq(hpc_container_open("/", &o, &c, &err), HPC_E_INVAL);
    ck_assert(c == NULL);
    ck_assert(strstr(err->message, "unknown format 'zip'") != NULL);
    g_clear_error(&err);
    /* overflow of strtoull is refused, not clamped */
    ck_assert_int_eq(hpc_formats_option_set(&o, "cache_size=99999999999999999999", &err), HPC_E_INVAL);
    g_clear_error(&err);
    ck_assert_int_eq(hpc_formats_option_set(&o, "cache_size=17179869184G", &err), HPC_E_INVAL);
    g_clear_error(&err);
    ck_assert_uint_eq(o.cache_size, 16u << 20);
    ck_assert_int_eq(hpc_formats_option_set(&o, "rankname=%s", &err), HPC_E_INVAL);
    g_clear_error(&err);
    hpc_options_clear(&o);
}
END_TEST

/* The row of option name, found by the walk every front end uses. */
static int find_row(const hpc_option_def *d, void *ctx)
{
    const hpc_option_def **want = ctx;
    if (strcmp(d->name, (*want)->name) != 0)
        return 0;
    *want = d;
    return 1;
}

static const hpc_option_def *row_named(const char *name)
{
    hpc_option_def key = { .name = name };
    const hpc_option_def *d = &key;
    return hpc_formats_options_each(find_row, &d) ? d : NULL;
}

/* A reader's options: parsed by its own rows, kept as text the reader
 * reads back, carried through copies and to the helper (to_strv). */
START_TEST(options_readers)
{
    hpc_options o, copy, back;
    GError *err = NULL;
    const hpc_option_def *cache = row_named("h5cache"), *cfg = row_named("fticonfig");
    ck_assert(cache != NULL && cfg != NULL);
    ck_assert_uint_eq(cache->width, 0);
    hpc_options_init(&o);
    ck_assert_uint_eq(hpc_options_number(&o, cache), 0);
    ck_assert(hpc_options_text(&o, cfg) == NULL);
    ck_assert_int_eq(hpc_formats_option_set(&o, "h5cache=2M", NULL), HPC_OK);
    ck_assert_int_eq(hpc_formats_option_set(&o, "h5cache=3M", NULL), HPC_OK);
    ck_assert_int_eq(hpc_formats_option_set(&o, "h5cache=lots", &err), HPC_E_INVAL);
    ck_assert(strstr(err->message, "h5cache") != NULL);
    g_clear_error(&err);
    ck_assert_int_eq(hpc_formats_option_set(&o, "h5cache=1K", &err), HPC_E_INVAL);
    g_clear_error(&err);
    ck_assert_int_eq(hpc_formats_option_set(&o, "h5cachex=1M", NULL), HPC_E_NOENT);
    ck_assert_int_eq(hpc_formats_option_set(&o, "fticonfig", &err), HPC_E_INVAL);
    g_clear_error(&err);
    ck_assert_int_eq(hpc_formats_option_set(&o, "fticonfig=/a/config.fti", NULL), HPC_OK);
    ck_assert_uint_eq(hpc_options_number(&o, cache), 3u << 20);
    ck_assert_str_eq(hpc_options_text(&o, cfg), "/a/config.fti");
    ck_assert_uint_eq(g_strv_length(o.more), 2);

    hpc_options_copy(&copy, &o);
    hpc_options_clear(&o);
    ck_assert_uint_eq(hpc_options_number(&copy, cache), 3u << 20);
    char **strv = hpc_options_to_strv(&copy);
    hpc_options_init(&back);
    for (char **a = strv; *a; a++)
        ck_assert_int_eq(hpc_formats_option_set(&back, *a, NULL), HPC_OK);
    ck_assert_uint_eq(hpc_options_number(&back, cache), 3u << 20);
    ck_assert_str_eq(hpc_options_text(&back, cfg), "/a/config.fti");
    g_strfreev(strv);
    hpc_options_clear(&copy);
    hpc_options_clear(&back);
}
END_TEST

/* The readers' rows are listed where the core's table puts them: after
 * the reading options, before the helper's. */
START_TEST(options_help_order)
{
    GString *all = g_string_new(NULL);
    hpc_formats_options_help(all, 1);
    const char *salvage = strstr(all->str, "-o salvage "), *fti = strstr(all->str, "-o fticonfig=");
    const char *h5 = strstr(all->str, "-o h5cache="), *inproc = strstr(all->str, "-o inproc ");
    ck_assert(salvage && fti && h5 && inproc);
    ck_assert(salvage < fti && fti < h5 && h5 < inproc);
    GString *basic = g_string_new(NULL);
    hpc_formats_options_help(basic, 0);
    ck_assert(strstr(basic->str, "-o fticonfig=") != NULL);
    ck_assert(strstr(basic->str, "-o h5cache=") == NULL);
    g_string_free(all, TRUE);
    g_string_free(basic, TRUE);
}
END_TEST

/* ---- tree ------------------------------------------------------------- */

typedef struct names {
    GPtrArray *list;
    int stop_after;
    uint64_t last_cookie;
} names;

static int add_name(void *ctx, const char *name, const hpc_stat *st, uint64_t next)
{
    (void)st;
    names *n = ctx;
    if (n->stop_after && (int)n->list->len == n->stop_after)
        return 1;
    g_ptr_array_add(n->list, g_strdup(name));
    n->last_cookie = next;
    return 0;
}

static int count_xattr(void *ctx, const char *name, const void *v, size_t len)
{
    (void)name;
    (void)v;
    *(size_t *)ctx += len;
    return 0;
}

START_TEST(tree_build_and_walk)
{
    hpc_tree *t = hpc_tree_new();
    hpc_ino a, b, l;
    ck_assert_int_eq(hpc_tree_add_path(t, HPC_INO_ROOT, "grp/sub/data", HPC_MODE_FILE, 80, 7, &a), HPC_OK);
    ck_assert_int_eq(hpc_tree_add_path(t, HPC_INO_ROOT, "grp/other", HPC_MODE_FILE, 8, 9, &b), HPC_OK);
    ck_assert_int_eq(hpc_tree_add_path(t, HPC_INO_ROOT, "grp/other", HPC_MODE_FILE, 8, 9, NULL), HPC_E_INVAL);
    ck_assert_int_eq(hpc_tree_add(t, HPC_INO_ROOT, "lnk", HPC_MODE_LINK, 0, 0, &l), HPC_OK);
    ck_assert_int_eq(hpc_tree_set_symlink(t, l, "grp/other"), HPC_OK);
    ck_assert_int_eq(hpc_tree_link(t, HPC_INO_ROOT, "hard", a), HPC_OK);
    ck_assert_int_eq(hpc_tree_add_xattr(t, a, "user.shape", "10,8", 4), HPC_OK);
    ck_assert_int_eq(hpc_tree_add(t, a, "x", HPC_MODE_FILE, 0, 0, NULL), HPC_E_NOTDIR);

    hpc_stat st;
    ck_assert_int_eq(hpc_tree_lookup(t, HPC_INO_ROOT, "hard", &st), HPC_OK);
    ck_assert_uint_eq(st.ino, a);
    ck_assert_uint_eq(st.nlink, 2);
    ck_assert_uint_eq(st.size, 80);
    hpc_stat dir;
    ck_assert_int_eq(hpc_tree_lookup(t, HPC_INO_ROOT, "grp", &dir), HPC_OK);
    ck_assert(S_ISDIR(dir.mode));
    ck_assert_uint_eq(dir.nlink, 3);      /* its entry, its ".", sub's ".." */
    ck_assert_int_eq(hpc_tree_lookup(t, HPC_INO_ROOT, "nope", &st), HPC_E_NOENT);
    uint64_t data;
    ck_assert_int_eq(hpc_tree_data(t, b, &data), HPC_OK);
    ck_assert_uint_eq(data, 9);
    char *target;
    ck_assert_int_eq(hpc_tree_readlink(t, l, &target), HPC_OK);
    ck_assert_str_eq(target, "grp/other");
    g_free(target);
    size_t xlen = 0;
    ck_assert_int_eq(hpc_tree_xattrs(t, a, count_xattr, &xlen), HPC_OK);
    ck_assert_uint_eq(xlen, 4);

    /* readdir resumes at the cookie it handed out */
    names n = { g_ptr_array_new_with_free_func(g_free), 2, 0 };
    ck_assert_int_eq(hpc_tree_readdir(t, HPC_INO_ROOT, 0, add_name, &n), HPC_OK);
    ck_assert_uint_eq(n.list->len, 2);
    ck_assert_str_eq(g_ptr_array_index(n.list, 0), "grp");
    n.stop_after = 0;
    ck_assert_int_eq(hpc_tree_readdir(t, HPC_INO_ROOT, n.last_cookie, add_name, &n), HPC_OK);
    ck_assert_uint_eq(n.list->len, 3);
    ck_assert_str_eq(g_ptr_array_index(n.list, 2), "hard");
    g_ptr_array_free(n.list, TRUE);
    hpc_tree_free(t);
}
END_TEST

START_TEST(error_message_format)
{
    GError *err = NULL;
    ck_assert_int_eq(hpc_fail(&err, HPC_E_CORRUPT, "run.sion", "ntasks", 24, "%d tasks", 7), HPC_E_CORRUPT);
    ck_assert_str_eq(err->message, "run.sion: field ntasks at offset 24: 7 tasks");
    g_clear_error(&err);
    ck_assert_int_eq(hpc_err_to_errno(HPC_E_CHECKSUM), 5);
    ck_assert_int_eq(hpc_err_to_errno(HPC_E_NOENT), 2);
}
END_TEST

/* Read bits narrowed class by class: a class keeps its bit only if every
 * user it may hold can read the file. */
START_TEST(perm_narrow_classes)
{
    gid_t groups[] = { 1000, 50 };
    hpc_creds owner = { 1000, 1000, 2, groups };
    hpc_perm_ref same = { 1000, 1000, S_IFREG | 0640 };
    ck_assert_uint_eq(hpc_perm_narrow(0444, &owner, 1000, 1000, &same, FALSE), 0440);
    /* another owner, a group the node's owner is in: the owner reads by
     * group; a member of the node's group may or may not be in group 50 */
    hpc_perm_ref other = { 2000, 50, S_IFREG | 0640 };
    ck_assert_uint_eq(hpc_perm_narrow(0444, &owner, 1000, 1000, &other, FALSE), 0400);
    /* 0604 of the node's group: its members are denied, others are not */
    hpc_perm_ref grp = { 2000, 1000, S_IFREG | 0604 };
    ck_assert_uint_eq(hpc_perm_narrow(0444, &owner, 1000, 1000, &grp, FALSE), 0004);
    /* an owner who cannot read their own file: others may be that owner */
    hpc_perm_ref noown = { 2000, 3000, S_IFREG | 0044 };
    ck_assert_uint_eq(hpc_perm_narrow(0444, &owner, 1000, 1000, &noown, FALSE), 0400);
    /* directories above: search bits */
    hpc_perm_ref dir = { 2000, 3000, S_IFDIR | 0711 };
    ck_assert_uint_eq(hpc_perm_narrow(0444, &owner, 1000, 1000, &dir, TRUE), 0444);
    ck_assert_uint_eq(hpc_perm_narrow(0444, &owner, 1000, 1000, &dir, FALSE), 0000);
    hpc_perm_ref home = { 1000, 1000, S_IFDIR | 0700 };
    ck_assert_uint_eq(hpc_perm_narrow(0444, &owner, 1000, 1000, &home, TRUE), 0400);
}
END_TEST

START_TEST(perm_mode_bits)
{
    ck_assert_uint_eq(hpc_perm_mode(S_IFDIR | 0555, 0440), S_IFDIR | 0550);
    ck_assert_uint_eq(hpc_perm_mode(S_IFREG | 0444, 0400), S_IFREG | 0400);
    ck_assert_uint_eq(hpc_perm_mode(S_IFREG | 0755, 0444), S_IFREG | 0555);
    ck_assert_uint_eq(hpc_perm_mode(S_IFREG | 06777, 0004), S_IFREG | 0005);
    ck_assert_uint_eq(hpc_perm_mode(S_IFLNK | 0777, 0), S_IFLNK | 0777);
}
END_TEST

/* A file in a 0700 directory: only its owner could reach it. */
START_TEST(perm_path_directories)
{
    char dir[] = "/tmp/check_perm.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *f = g_build_filename(dir, "f", NULL);
    ck_assert(g_file_set_contents(f, "x", 1, NULL));
    chmod(f, 0644);
    chmod(dir, 0755);
    uint32_t uid = (uint32_t)getuid(), gid = (uint32_t)getgid();
    const hpc_creds *me = hpc_creds_of(uid, gid);
    ck_assert_uint_eq(hpc_perm_path(0444, me, uid, gid, f), 0444);
    chmod(dir, 0700);
    ck_assert_uint_eq(hpc_perm_path(0444, me, uid, gid, f), 0400);
    chmod(f, 0);
    ck_assert_uint_eq(hpc_perm_path(0444, me, uid, gid, f) & 0044, 0);
    char *missing = g_build_filename(dir, "none", NULL);
    ck_assert_uint_eq(hpc_perm_path(0444, me, uid, gid, missing), 0);
    unlink(f);
    rmdir(dir);
    g_free(missing);
    g_free(f);
}
END_TEST

/* A thread started before another takes the owner's rights: opens each
 * path it is given, answers whether it could. */
static gpointer open_elsewhere(gpointer q)
{
    GAsyncQueue **qs = q;
    char *path = g_async_queue_pop(qs[0]);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        close(fd);
    g_async_queue_push(qs[1], GINT_TO_POINTER(fd >= 0 ? 1 : 2));
    return NULL;
}

/* The owner's rights on this thread only, and back. */
START_TEST(creds_per_thread)
{
    if (geteuid() != 0)
        return;                  /* only root takes another user's rights */
    char path[] = "/tmp/check_creds.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    chmod(path, 0600);
    ck_assert(hpc_creds_needed(65534));
    ck_assert(!hpc_creds_needed(0));
    GAsyncQueue *qs[2] = { g_async_queue_new(), g_async_queue_new() };
    GThread *t = g_thread_new("other", open_elsewhere, qs);
    hpc_creds_saved saved;
    ck_assert_int_eq(hpc_creds_enter(hpc_creds_of(65534, 65534), &saved), 0);
    errno = 0;
    ck_assert_int_lt(open(path, O_RDONLY), 0);
    ck_assert_int_eq(errno, EACCES);
    g_async_queue_push(qs[0], path);       /* the other thread keeps root's rights */
    ck_assert_int_eq(GPOINTER_TO_INT(g_async_queue_pop(qs[1])), 1);
    g_thread_join(t);
    hpc_creds_leave(&saved);
    g_async_queue_unref(qs[0]);
    g_async_queue_unref(qs[1]);
    fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
}
END_TEST


int main(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cache_lru_order);
    tcase_add_test(tc, cache_alignment_and_bounds);
    tcase_add_test(tc, cache_concurrent);
    tcase_add_test(tc, cache_source_file);
    tcase_add_test(tc, source_changes);
    tcase_add_test(tc, bytes_helpers);
    tcase_add_test(tc, rankname_default_and_custom);
    tcase_add_test(tc, rankname_rejects);
    tcase_add_test(tc, options_parse);
    tcase_add_test(tc, options_readers);
    tcase_add_test(tc, options_help_order);
    tcase_add_test(tc, tree_build_and_walk);
    tcase_add_test(tc, error_message_format);
    tcase_add_test(tc, perm_narrow_classes);
    tcase_add_test(tc, perm_mode_bits);
    tcase_add_test(tc, perm_path_directories);
    tcase_add_test(tc, creds_per_thread);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
