/* hpcmount_api.c - libhpcmount: the public calls of hpcmount.h over the
 * core's mount layer (hpc_mount.h).  Only the hpcmount_ symbols leave the
 * shared library (-export-symbols-regex in Makefile.am).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "hpc_bytes.h"
#include "hpc_file.h"
#include "hpc_refs.h"
#include "hpcmount.h"

#define READ_PIECE (8u << 20)     /* bytes per read of .info */

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
        rc = hpc_formats_option_set(opts, *p, &err);
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

struct hpcmount_file {
    hpcmount *h;
    hpc_file *f;
};

static int read_failed(uint64_t ino, uint64_t off, int rc)
{
    return fail_msg(rc, g_strdup_printf("node %llu: read at %llu: %s", (unsigned long long)ino,
                                        (unsigned long long)off, hpc_strerror(rc)));
}

/* [off, off+len) of f into buf: the one read of hpc_file.h. */
static int file_read(hpc_file *f, void *buf, size_t len, uint64_t off, size_t *nread)
{
    hpc_sink sink = { .kind = HPC_SINK_BUFFER, .buf = buf };
    int rc = hpc_file_read(f, off, len, &sink);
    *nread = rc == HPC_OK ? sink.done : 0;
    if (rc != HPC_OK)
        return read_failed(hpc_file_stat(f)->ino, off + sink.done, rc);
    return HPC_OK;
}

int hpcmount_read(hpcmount *h, uint64_t ino, void *buf, size_t len, uint64_t off, size_t *nread)
{
    hpc_file_conf conf = HPC_FILE_CONF_DEFAULT;
    hpc_file *f;
    *nread = 0;
    int rc = hpc_file_open(h->m, ino, &conf, &f);
    if (rc != HPC_OK)
        return read_failed(ino, off, rc);
    rc = file_read(f, buf, len, off, nread);
    hpc_file_close(f);
    return rc;
}

/* The public handle of open file f (NULL when the open failed). */
static hpcmount_file *wrap(hpcmount *h, hpc_file *f)
{
    hpcmount_file *out = f ? g_new(hpcmount_file, 1) : NULL;
    if (out)
        *out = (hpcmount_file){ h, f };
    return out;
}

int hpcmount_file_open(hpcmount *h, const char *path, hpcmount_file **out)
{
    hpc_file_conf conf = HPC_FILE_CONF_DEFAULT;
    hpc_file *f = NULL;
    int rc = path ? hpc_file_open_path(h->m, path, &conf, &f) : HPC_E_INVAL;
    *out = wrap(h, f);
    return fail(rc, path ? path : "(null)");
}

int hpcmount_file_open_node(hpcmount *h, uint64_t ino, hpcmount_file **out)
{
    hpc_file_conf conf = HPC_FILE_CONF_DEFAULT;
    hpc_file *f = NULL;
    int rc = hpc_file_open(h->m, ino, &conf, &f);
    *out = wrap(h, f);
    return fail_ino(rc, ino);
}

void hpcmount_file_close(hpcmount_file *f)
{
    if (!f)
        return;
    hpc_file_close(f->f);
    g_free(f);
}

int hpcmount_file_stat(hpcmount_file *f, hpcmount_stat *st)
{
    export_stat(f->h, hpc_file_stat(f->f), st);
    return HPC_OK;
}

int hpcmount_file_read(hpcmount_file *f, void *buf, size_t len, uint64_t off, size_t *nread)
{
    return file_read(f->f, buf, len, off, nread);
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
    hpc_file_conf conf = HPC_FILE_CONF_DEFAULT;
    hpc_file *f = NULL;
    GString *s = g_string_new(NULL);
    *text = NULL;
    *len = 0;
    int rc = hpc_file_open_path(h->m, "/.info", &conf, &f);
    /* to the end as it reads now: the text may have grown since the open */
    for (uint64_t off = 0; rc == HPC_OK;) {
        hpc_sink sink = { .kind = HPC_SINK_BUFFER };
        g_string_set_size(s, off + READ_PIECE);
        sink.buf = s->str + off;
        rc = hpc_file_read(f, off, READ_PIECE, &sink);
        off += rc == HPC_OK ? sink.done : 0;
        g_string_set_size(s, off);
        if (sink.done == 0)
            break;
    }
    hpc_file_close(f);
    if (rc != HPC_OK) {
        g_string_free(s, TRUE);
        return fail(rc, "/.info");
    }
    *len = s->len;
    *text = g_string_free(s, FALSE);
    return HPC_OK;
}

/* The extent sink's callback: one public extent of e (its path made
 * absolute). */
static int add_extent(void *out, const hpc_extent *e)
{
    hpcmount_extent x = { g_canonicalize_filename(e->src->path, NULL), e->off, e->len };
    g_array_append_val((GArray *)out, x);
    return 0;
}

/* The extents of the whole file f into a. */
static int file_extents(hpc_file *f, GArray *a)
{
    hpc_sink sink = { .kind = HPC_SINK_EXTENTS, .extent = add_extent, .ctx = a };
    uint64_t size = hpc_file_stat(f)->size;
    int rc = HPC_OK;
    /* size_t may be narrower than a file: in pieces */
    for (uint64_t off = 0; rc == HPC_OK && off < size; off += MIN(size - off, (uint64_t)SIZE_MAX))
        rc = hpc_file_read(f, off, (size_t)MIN(size - off, (uint64_t)SIZE_MAX), &sink);
    return rc;
}

static int extents_out(GArray *a, int rc, hpcmount_extent **ext, size_t *n)
{
    size_t len = a->len;
    hpcmount_extent *v = (hpcmount_extent *)(void *)g_array_free(a, FALSE);
    *ext = NULL;
    *n = 0;
    if (rc != HPC_OK) {
        hpcmount_extents_free(v, len);
        return rc;
    }
    *ext = v;
    *n = len;
    return HPC_OK;
}

int hpcmount_file_extents(hpcmount_file *f, hpcmount_extent **ext, size_t *n)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(hpcmount_extent));
    int rc = extents_out(a, file_extents(f->f, a), ext, n);
    return fail_ino(rc, hpc_file_stat(f->f)->ino);
}

int hpcmount_extents(hpcmount *h, uint64_t ino, hpcmount_extent **ext, size_t *n)
{
    hpc_file_conf conf = HPC_FILE_CONF_DEFAULT;
    hpc_file *f;
    GArray *a = g_array_new(FALSE, FALSE, sizeof(hpcmount_extent));
    int rc = hpc_file_open(h->m, ino, &conf, &f);
    if (rc == HPC_OK) {
        rc = file_extents(f, a);
        hpc_file_close(f);
    }
    rc = extents_out(a, rc == HPC_E_ISDIR || rc == HPC_E_INVAL ? HPC_E_NOTSUP : rc, ext, n);
    return fail_ino(rc, ino);
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
    hpc_formats_options_help(s, 1);
    *text = g_string_free(s, FALSE);
    return HPC_OK;
}

int hpcmount_options_help_basic(char **text)
{
    GString *s = g_string_new(NULL);
    hpc_formats_options_help(s, 0);
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
