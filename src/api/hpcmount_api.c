/* hpcmount_api.c - libhpcmount: the public calls of hpcmount.h over the
 * core's mount layer (hpc_mount.h).  Only the hpcmount_ symbols leave the
 * shared library (-export-symbols-regex in Makefile.am).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "hpc_bytes.h"
#include "hpc_mount.h"
#include "hpc_refs.h"
#include "hpcmount.h"

#define READ_PIECE (8u << 20)     /* bytes per core read: bounds its buffers */
#define DIRECT_MIN (1u << 20)     /* reads this large skip the block cache */
#define DIRECT_SPREAD 4u          /* read ahead a span up to 4x the bytes wanted */
#define MAP_BATCH 64u             /* extents asked of the core per call */

struct hpcmount {
    hpc_mount *m;
    hpc_options opts;
};

/* The message of this thread's last failure. */
static GPrivate last_error = G_PRIVATE_INIT(g_free);

G_STATIC_ASSERT(HPCMOUNT_REFS_INLINE_DEFAULT == HPC_REFS_INLINE_DEFAULT);
/* the public codes are the core's (hpc_error.h): calls pass them through */
#define SAME_CODE(x) G_STATIC_ASSERT((int)HPCMOUNT_##x == (int)HPC_##x)
SAME_CODE(OK);
SAME_CODE(E_IO);
SAME_CODE(E_CORRUPT);
SAME_CODE(E_NOMEM);
SAME_CODE(E_NOENT);
SAME_CODE(E_NOTDIR);
SAME_CODE(E_ISDIR);
SAME_CODE(E_INVAL);
SAME_CODE(E_UNSUPPORTED);
SAME_CODE(E_NODATA);
SAME_CODE(E_RANGE);
SAME_CODE(E_CHECKSUM);
SAME_CODE(E_NOTSUP);
SAME_CODE(E_CHANGED);
SAME_CODE(E_LOOP);

static int fail_msg(int code, char *msg)
{
    g_private_replace(&last_error, msg);
    return code;
}

/* Record "WHAT: strerror" for a failed call; returns code. */
static int fail(int code, const char *what)
{
    if (code == HPC_OK)
        return code;
    return fail_msg(code, g_strdup_printf("%s: %s", what, hpc_strerror(code)));
}

static int fail_ino(int code, uint64_t ino)
{
    if (code == HPC_OK)
        return code;
    return fail_msg(code, g_strdup_printf("node %llu: %s", (unsigned long long)ino,
                                          hpc_strerror(code)));
}

const char *hpcmount_last_error(void)
{
    const char *s = g_private_get(&last_error);
    return s ? s : "";
}

const char *hpcmount_strerror(int code)
{
    return hpc_strerror(code);
}

int hpcmount_errno(int code)
{
    return hpc_err_to_errno(code);
}

const char *hpcmount_version(void)
{
    return PACKAGE_VERSION;
}

void hpcmount_free(void *p)
{
    g_free(p);
}

static int apply_options(hpc_options *opts, const char *options)
{
    if (!options)
        return HPC_OK;
    gchar **kv = g_strsplit(options, ",", -1);
    int rc = HPC_OK;
    for (gchar **p = kv; rc == HPC_OK && *p; p++) {
        GError *err = NULL;
        if (**p == '\0')
            continue;
        rc = hpc_options_set(opts, *p, &err);
        if (rc != HPC_OK)
            fail_msg(HPC_E_INVAL, err ? g_strdup(err->message)
                                      : g_strdup_printf("unknown option '%s'", *p));
        g_clear_error(&err);
    }
    g_strfreev(kv);
    return rc == HPC_OK ? HPC_OK : HPC_E_INVAL;
}

int hpcmount_options_check(const char *options)
{
    hpc_options o;
    hpc_options_init(&o);
    int rc = apply_options(&o, options);
    hpc_options_clear(&o);
    return rc;
}

int hpcmount_open(const char *source, const char *options, hpcmount **out)
{
    *out = NULL;
    if (!source)
        return fail(HPC_E_INVAL, "(null)");
    hpcmount *h = g_new0(hpcmount, 1);
    hpc_options_init(&h->opts);
    GError *err = NULL;
    int rc = apply_options(&h->opts, options);
    if (rc != HPC_OK)
        goto out;
    rc = hpc_mount_open(source, &h->opts, &h->m, &err);
    if (rc != HPC_OK)
        fail_msg(rc, err ? g_strdup(err->message)
                         : g_strdup_printf("%s: %s", source, hpc_strerror(rc)));
out:
    g_clear_error(&err);
    if (rc != HPC_OK) {
        hpcmount_close(h);
        return rc;
    }
    *out = h;
    return HPC_OK;
}

void hpcmount_close(hpcmount *h)
{
    if (!h)
        return;
    hpc_mount_close(h->m);
    hpc_options_clear(&h->opts);
    g_free(h);
}

/* The public attributes of st: the core's plus owner and block size. */
static void export_stat(hpcmount *h, const hpc_stat *st, hpcmount_stat *out)
{
    hpc_node_meta meta = { 0 };
    hpc_mount_node_meta(h->m, st->ino, &meta);
    *out = (hpcmount_stat){ .ino = st->ino, .mode = st->mode, .nlink = st->nlink,
                            .size = st->size, .mtime = st->mtime, .uid = meta.uid,
                            .gid = meta.gid, .blksize = meta.blksize };
}

int hpcmount_resolve(hpcmount *h, const char *path, hpcmount_stat *out)
{
    hpc_stat st;
    int rc = hpc_mount_resolve(h->m, path, &st);
    if (rc == HPC_OK)
        export_stat(h, &st, out);
    return fail(rc, path);
}

int hpcmount_resolve_follow(hpcmount *h, const char *path, int follow_last,
                            hpcmount_stat *out)
{
    hpc_stat st;
    int rc = hpc_mount_resolve_follow(h->m, path, follow_last != 0, &st, NULL);
    if (rc == HPC_OK)
        export_stat(h, &st, out);
    return fail(rc, path);
}

int hpcmount_lookup(hpcmount *h, uint64_t parent, const char *name, hpcmount_stat *out)
{
    hpc_stat st;
    int rc = hpc_mount_lookup(h->m, parent, name, &st);
    if (rc == HPC_OK)
        export_stat(h, &st, out);
    return fail(rc, name);
}

int hpcmount_getattr(hpcmount *h, uint64_t ino, hpcmount_stat *out)
{
    hpc_stat st;
    int rc = hpc_mount_getattr(h->m, ino, &st);
    if (rc == HPC_OK)
        export_stat(h, &st, out);
    return fail_ino(rc, ino);
}

typedef struct name_list {
    GPtrArray *names;
    GArray *stats;
} name_list;

static int collect(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    (void)next;
    name_list *l = p;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return 0;
    g_ptr_array_add(l->names, g_strdup(name));
    g_array_append_val(l->stats, *st);
    return 0;
}

int hpcmount_readdir(hpcmount *h, uint64_t dir, hpcmount_dirent_fn fn, void *ctx)
{
    name_list l = { g_ptr_array_new_with_free_func(g_free), g_array_new(FALSE, FALSE, sizeof(hpc_stat)) };
    /* collect first: fn may call back into the library */
    int rc = hpc_mount_readdir(h->m, dir, 0, collect, &l);
    for (guint i = 0; rc == HPC_OK && i < l.names->len; i++) {
        hpc_stat *st = &g_array_index(l.stats, hpc_stat, i);
        hpcmount_stat out;
        if (st->partial || st->ino == HPC_INO_INFO)   /* size not known yet */
            hpc_mount_getattr(h->m, st->ino, st);
        export_stat(h, st, &out);
        if (fn(ctx, g_ptr_array_index(l.names, i), &out))
            break;
    }
    g_ptr_array_free(l.names, TRUE);
    g_array_free(l.stats, TRUE);
    return fail_ino(rc, dir);
}

/* Are extent e's bytes the source file's own?  A growing file's extent
 * is read through a snapshot of its size: only below that size. */
static gboolean in_source(const hpc_extent *e)
{
    uint64_t end = 0;
    return e->src && (e->space == 0 ||
                      (hpc_add_u64(e->off, e->len, &end) && end <= e->space_size));
}

/* Tell the kernel the span of each source holding ext[] is wanted, when
 * the span is not much more than the extents (GSD series: one extent per
 * frame, spread over the file, which sequential read-ahead does not see). */
static void advise_extents(const hpc_extent *ext, unsigned n)
{
    for (unsigned i = 0; i < n;) {
        uint64_t lo = ext[i].off, hi = ext[i].off + ext[i].len, want = 0;
        unsigned j = i;
        for (; j < n && ext[j].src == ext[i].src; j++) {
            lo = MIN(lo, ext[j].off);
            hi = MAX(hi, ext[j].off + ext[j].len);
            want += ext[j].len;
        }
        if (hi - lo <= want * DIRECT_SPREAD)
            (void)posix_fadvise(ext[i].src->fd, (off_t)lo, (off_t)(hi - lo), POSIX_FADV_WILLNEED);
        i = j;
    }
}

/* pread one map batch of [off, off+len) of ino into buf; *got the bytes
 * (0 at the end of the file).  HPC_E_NOTSUP when the bytes are computed or
 * lie in a growing file's unsnapshotted tail: read them through the core. */
static int direct_batch(hpcmount *h, uint64_t ino, char *buf, size_t len, uint64_t off,
                        size_t *got)
{
    hpc_extent ext[MAP_BATCH];
    unsigned n = 0;
    size_t pos = 0;
    *got = 0;
    int rc = hpc_mount_map(h->m, ino, off, len, ext, MAP_BATCH, &n);
    if (rc != HPC_OK)
        return HPC_E_NOTSUP;     /* the core's read says what is wrong */
    for (unsigned i = 0; rc == HPC_OK && i < n; i++) {
        rc = ext[i].len <= len - pos && in_source(&ext[i]) ? HPC_OK : HPC_E_NOTSUP;
        pos += rc == HPC_OK ? ext[i].len : 0;
    }
    if (rc == HPC_OK)
        advise_extents(ext, n);
    pos = 0;
    for (unsigned i = 0; rc == HPC_OK && i < n; pos += ext[i].len, i++)
        rc = hpc_source_pread(ext[i].src, buf + pos, ext[i].len, ext[i].off);
    if (rc == HPC_OK)
        rc = hpc_mount_extents_unchanged(h->m, ino, ext, n);
    hpc_mount_unmap(h->m, ino);
    *got = rc == HPC_OK ? pos : 0;
    return rc;
}

/* A bulk read of verbatim bytes: from the sources straight into buf, no
 * block cache (a bulk load would only evict it) and no copy through it.
 * *done the bytes read, also when a later part must go through the core
 * (HPC_E_NOTSUP). */
static int read_direct(hpcmount *h, uint64_t ino, char *buf, size_t len, uint64_t off,
                       size_t *done)
{
    int rc = HPC_OK;
    *done = 0;
    while (rc == HPC_OK && *done < len) {
        size_t got = 0;
        rc = direct_batch(h, ino, buf + *done, len - *done, off + *done, &got);
        if (rc == HPC_OK && got == 0)
            break;
        *done += got;
    }
    return rc;
}

int hpcmount_read(hpcmount *h, uint64_t ino, void *buf, size_t len, uint64_t off, size_t *nread)
{
    size_t done = 0;
    int rc = len >= DIRECT_MIN ? read_direct(h, ino, buf, len, off, &done) : HPC_E_NOTSUP;
    if (rc == HPC_OK) {
        *nread = done;
        return HPC_OK;
    }
    rc = rc == HPC_E_NOTSUP ? HPC_OK : rc;
    while (rc == HPC_OK && done < len) {
        size_t want = MIN(len - done, (size_t)READ_PIECE), got = 0;
        rc = hpc_mount_read(h->m, ino, (char *)buf + done, want, off + done, &got);
        if (rc != HPC_OK || got == 0)
            break;
        done += got;
        if (got < want)
            break;
    }
    *nread = rc == HPC_OK ? done : 0;
    if (rc != HPC_OK)
        return fail_msg(rc, g_strdup_printf("node %llu: read at %llu: %s", (unsigned long long)ino,
                                            (unsigned long long)(off + done), hpc_strerror(rc)));
    return HPC_OK;
}

int hpcmount_readlink(hpcmount *h, uint64_t ino, char **target)
{
    *target = NULL;
    return fail_ino(hpc_mount_readlink(h->m, ino, target), ino);
}

int hpcmount_getxattr(hpcmount *h, uint64_t ino, const char *name, void **value, size_t *len)
{
    void *v = NULL;
    size_t n = 0;
    *value = NULL;
    *len = 0;
    int rc = hpc_mount_getxattr(h->m, ino, name, &v, &n);
    if (rc != HPC_OK)
        return fail(rc, name);
    *value = g_malloc(n + 1);      /* NUL after: text values are C strings */
    if (n > 0)                     /* an empty value may come as NULL */
        memcpy(*value, v, n);
    ((char *)*value)[n] = '\0';
    *len = n;
    g_free(v);
    return HPC_OK;
}

int hpcmount_listxattr(hpcmount *h, uint64_t ino, char **names, size_t *len)
{
    GString *s = g_string_new(NULL);
    int rc = hpc_mount_listxattr(h->m, ino, s);
    gboolean keep = rc == HPC_OK && s->len > 0;
    *len = keep ? s->len : 0;
    *names = g_string_free(s, !keep);      /* NULL when freed */
    return fail_ino(rc, ino);
}

int hpcmount_info(hpcmount *h, char **text, size_t *len)
{
    hpc_stat st;
    GString *s = g_string_new(NULL);
    *text = NULL;
    *len = 0;
    int rc = hpc_mount_resolve(h->m, "/.info", &st);
    for (uint64_t off = 0; rc == HPC_OK;) {
        size_t got = 0;
        g_string_set_size(s, off + READ_PIECE);
        rc = hpc_mount_read(h->m, st.ino, s->str + off, READ_PIECE, off, &got);
        off += rc == HPC_OK ? got : 0;
        g_string_set_size(s, off);
        if (got == 0)
            break;
    }
    if (rc != HPC_OK) {
        g_string_free(s, TRUE);
        return fail(rc, "/.info");
    }
    *len = s->len;
    *text = g_string_free(s, FALSE);
    return HPC_OK;
}

/* Append the extents of [off, size) from one core map call; *done the bytes
 * they cover (NOTSUP where they are not the source's own: in_source). */
static int map_batch(hpcmount *h, uint64_t ino, uint64_t off, uint64_t size, GArray *out,
                     uint64_t *done)
{
    hpc_extent ext[MAP_BATCH];
    unsigned n = 0;
    *done = 0;
    int rc = hpc_mount_map(h->m, ino, off, size - off, ext, MAP_BATCH, &n);
    if (rc != HPC_OK)
        return rc;
    for (unsigned i = 0; rc == HPC_OK && i < n; i++) {
        if (!in_source(&ext[i]) || !ext[i].src->path) {
            rc = HPC_E_NOTSUP;
            break;
        }
        hpcmount_extent e = { g_canonicalize_filename(ext[i].src->path, NULL), ext[i].off, ext[i].len };
        g_array_append_val(out, e);
        *done += ext[i].len;
    }
    if (rc == HPC_OK)
        rc = hpc_mount_extents_unchanged(h->m, ino, ext, n);
    hpc_mount_unmap(h->m, ino);
    if (rc == HPC_OK && n == 0)
        rc = HPC_E_IO;           /* no progress: the map and the size disagree */
    return rc;
}

int hpcmount_extents(hpcmount *h, uint64_t ino, hpcmount_extent **ext, size_t *n)
{
    hpc_stat st;
    GArray *a = g_array_new(FALSE, FALSE, sizeof(hpcmount_extent));
    *ext = NULL;
    *n = 0;
    int rc = hpc_mount_getattr(h->m, ino, &st);
    if (rc == HPC_OK && !S_ISREG(st.mode))
        rc = HPC_E_NOTSUP;
    for (uint64_t off = 0, done = 0; rc == HPC_OK && off < st.size; off += done)
        rc = map_batch(h, ino, off, st.size, a, &done);
    size_t len = a->len;
    hpcmount_extent *v = (hpcmount_extent *)(void *)g_array_free(a, FALSE);
    if (rc != HPC_OK) {
        hpcmount_extents_free(v, len);
        return fail_ino(rc, ino);
    }
    *ext = v;
    *n = len;
    return HPC_OK;
}

void hpcmount_extents_free(hpcmount_extent *ext, size_t n)
{
    for (size_t i = 0; ext && i < n; i++)
        g_free(ext[i].path);
    g_free(ext);
}

int hpcmount_sources_unchanged(hpcmount *h, uint64_t ino)
{
    return fail_ino(hpc_mount_sources_unchanged(h->m, ino), ino);
}

int hpcmount_options_help(char **text)
{
    GString *s = g_string_new(NULL);
    hpc_options_help(s, 1);
    *text = g_string_free(s, FALSE);
    return HPC_OK;
}

int hpcmount_options_help_basic(char **text)
{
    GString *s = g_string_new(NULL);
    hpc_options_help(s, 0);
    *text = g_string_free(s, FALSE);
    return HPC_OK;
}

int hpcmount_formats(char **text)
{
    GString *s = g_string_new(NULL);
    hpc_formats_describe(s);
    *text = g_string_free(s, FALSE);
    return HPC_OK;
}

int hpcmount_refs(hpcmount *h, const char *path, uint64_t inline_max, char **json, size_t *len)
{
    return hpcmount_refs_progress(h, path, inline_max, NULL, NULL, json, len);
}

int hpcmount_refs_progress(hpcmount *h, const char *path, uint64_t inline_max,
                           void (*progress)(void *ctx, uint64_t nodes), void *ctx,
                           char **json, size_t *len)
{
    hpc_refs_opts o = { inline_max, progress, ctx, &h->opts };
    GString *out = g_string_new(NULL);
    GError *err = NULL;
    *json = NULL;
    *len = 0;
    int rc = hpc_refs_json(h->m, path ? path : "/", &o, out, &err);
    if (rc != HPC_OK) {
        g_string_free(out, TRUE);
        if (!err)
            return fail(rc, path ? path : "/");
        rc = fail_msg(rc, g_strdup(err->message));
        g_error_free(err);
        return rc;
    }
    *len = out->len;
    *json = g_string_free(out, FALSE);
    return HPC_OK;
}
