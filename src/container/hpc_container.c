/* hpc_container.c - open a container and answer the front ends' calls.
 *
 * The core adds what every format shares: ".", "..", "/.info" (and, not
 * listed, "/.info.json"), default
 * attributes, reads of mapped (verbatim) files through the block cache,
 * xattr lookup by name, and path resolution for hpcdump.
 */
#include "hpc_core.h"
#include "hpc_infojson.h"
#include "hpc_remote.h"
#include "hpc_sandbox.h"
#include "hpc_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Forget .info and its JSON (under the core's lock, or when closing). */
static void drop_info(struct hpc_core *core)
{
    if (core->info)
        g_string_free(core->info, TRUE);
    if (core->info_json)
        g_string_free(core->info_json, TRUE);
    core->info = core->info_json = NULL;
}

/* Cache blocks are the container's block size, grown by whole multiples up
 * to this size, so that small reads pay one miss per 64 KiB, not per 4 KiB. */
#define CACHE_MIN_BLOCK (64u << 10)
#define CACHE_MAX_BLOCK (16u << 20)

/* Whether the first change of a source is logged (hpc_log_set_changes). */
static int log_changes = 1;

void hpc_log_set_changes(int on)
{
    log_changes = on;
}

/* ---- options and formats ---------------------------------------------- */

/* Options: hpc_options.c (one table); formats: hpc_formats.c. */

/* The reader that claims path (*out), or the error: NOENT or IO when it
 * cannot be read, INVAL for what is no file, UNSUPPORTED when none does. */
static int detect_format(const char *path, const hpc_format **out, GError **err)
{
    unsigned char head[4096];
    size_t len = 0;
    struct stat st;
    if (stat(path, &st) != 0)
        return hpc_fail(err, HPC_E_NOENT, path, NULL, 0, "cannot open: %s", g_strerror(errno));
    if (S_ISREG(st.st_mode)) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return hpc_fail(err, HPC_E_IO, path, NULL, 0, "cannot open: %s", g_strerror(errno));
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);   /* no read-ahead (hpc_source.h) */
        ssize_t n = pread(fd, head, sizeof head, 0);
        close(fd);
        len = n > 0 ? (size_t)n : 0;
    } else if (!S_ISDIR(st.st_mode)) {
        return hpc_fail(err, HPC_E_INVAL, path, NULL, 0, "not a regular file or directory");
    }
    *out = hpc_format_best(path, head, len);
    if (!*out) {
        GString *names = g_string_new(NULL);
        for (const hpc_format *const *f = hpc_formats; *f; f++)
            g_string_append_printf(names, "%s%s", names->len ? ", " : "", (*f)->name);
        hpc_fail(err, HPC_E_UNSUPPORTED, path, "magic", 0,
                 "not a container of a known format (%s)", names->str);
        g_string_free(names, TRUE);
        return HPC_E_UNSUPPORTED;
    }
    return HPC_OK;
}

/* ---- open / close ----------------------------------------------------- */

/* After open: no source changed while it was parsed, and each path still
 * names the file opened (a library opens by path, after the core did). */
static int opened_unchanged(hpc_container *c, GError **err)
{
    for (guint i = 0; !c->live && i < c->sources->len; i++) {
        const hpc_source *s = g_ptr_array_index(c->sources, i);
        if (hpc_source_check_path(s) == HPC_E_CHANGED)
            return hpc_fail(err, HPC_E_CHANGED, s->path, NULL, 0,
                            "changed while it was opened (written, truncated, replaced or "
                            "deleted); mount it again once it is complete");
    }
    return HPC_OK;
}

static int owner_refused(hpc_container *c, GError **err)
{
    return hpc_fail(err, HPC_E_IO, c->path, NULL, 0, "cannot take its owner's (uid %u) rights "
                    "to open it: %s", c->uid, g_strerror(errno));
}

/* The format: forced, or the probe's (reading SOURCE's head as its owner). */
static int pick_format(hpc_container *c, GError **err)
{
    if (c->opts.format) {
        c->format = hpc_format_by_name(c->opts.format);
        return c->format ? HPC_OK : hpc_fail(err, HPC_E_INVAL, c->path, NULL, 0,
                                             "unknown format '%s'", c->opts.format);
    }
    hpc_creds_saved saved;
    if (hpc_creds_enter(c->core->creds, &saved) != 0)
        return owner_refused(c, err);
    int rc = detect_format(c->path, &c->format, err);
    hpc_creds_leave(&saved);
    return rc;
}

/* The reader's open.  Every file a container names is opened with its
 * owner's rights: a reader of ours opens them on this thread as the owner;
 * a third-party library (which may open files at any later call) runs in
 * a helper process that runs as the owner, whose sources the daemon opens
 * only as the very files the helper opened (hpc_remote.c). */
static int open_reader(hpc_container *c, GError **err)
{
    if (c->format->sandbox_lib && (!c->opts.inproc || c->core->creds))
        return hpc_remote_open(c, err);
    hpc_creds_saved saved;
    if (hpc_creds_enter(c->core->creds, &saved) != 0)
        return owner_refused(c, err);
    int rc = c->format->open(c, err);
    hpc_creds_leave(&saved);
    return rc;
}

/* The read bits of every node: SOURCE and each source file, with the
 * directories above them (a node shows no more than all of them grant). */
static uint32_t container_perm(hpc_container *c)
{
    const hpc_creds *owner = hpc_creds_of(c->uid, c->gid);
    uint32_t bits = hpc_perm_path(HPC_PERM_ALL, owner, c->uid, c->gid, c->path);
    for (guint i = 0; bits && i < c->sources->len; i++) {
        const hpc_source *s = g_ptr_array_index(c->sources, i);
        hpc_perm_ref ref = { s->uid, s->gid, s->mode };
        bits = hpc_perm_narrow(bits, owner, c->uid, c->gid, &ref, FALSE);
        bits = hpc_perm_path(bits, owner, c->uid, c->gid, s->path);
    }
    return bits;
}

/* What a reader gets of the container (defined at the end of this file). */
static const hpc_host container_host;

int hpc_container_open(const char *source, const hpc_options *opts,
                       hpc_container **out, GError **err)
{
    int rc;
    struct stat st;
    *out = NULL;
    hpc_container *c = g_new0(hpc_container, 1);
    c->core = g_new0(hpc_core, 1);
    g_mutex_init(&c->core->lock);
    c->host = &container_host;
    c->path = g_strdup(source);
    c->sources = g_ptr_array_new();
    hpc_options_copy(&c->opts, opts);
    if (c->opts.cache_size == 0)
        c->opts.cache_size = HPC_DEFAULT_CACHE_SIZE;

    rc = hpc_rankname_compile(opts->rankname, &c->rankname, err);
    if (rc != HPC_OK)
        goto out;
    if (stat(source, &st) != 0) {
        rc = hpc_fail(err, HPC_E_NOENT, source, NULL, 0, "cannot open: %s", g_strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        /* a FIFO or device would block or feed the readers endless bytes */
        rc = hpc_fail(err, HPC_E_INVAL, source, NULL, 0, "not a regular file or directory");
        goto out;
    }
    c->mtime = st.st_mtime;
    c->uid = st.st_uid;
    c->gid = st.st_gid;
    if (hpc_creds_needed(c->uid))
        c->core->creds = hpc_creds_of(c->uid, c->gid);
    rc = pick_format(c, err);
    if (rc != HPC_OK)
        goto out;
    rc = open_reader(c, err);
    if (rc != HPC_OK) {
        if (err && !*err)
            hpc_fail(err, rc, source, NULL, 0, "%s reader: %s", c->format->name, hpc_strerror(rc));
        c->format = NULL;   /* open() cleaned up after itself */
        goto out;
    }
    c->core->perm = container_perm(c);
    c->core->opened = 1;
    for (guint i = 0; i < c->sources->len; i++) {
        hpc_source *s = g_ptr_array_index(c->sources, i);
        hpc_source_stream(s);
        if (c->live)        /* live readers refresh and re-parse themselves */
            hpc_source_set_live(s);
    }
    rc = opened_unchanged(c, err);
    if (rc != HPC_OK)
        goto out;
    c->core->last_check = g_get_monotonic_time();
    *out = c;
    return HPC_OK;
out:
    hpc_container_close(c);
    return rc;
}

void hpc_container_close(hpc_container *c)
{
    if (!c)
        return;
    if (c->format && c->format->close)
        c->format->close(c);
    hpc_tree_free(c->tree);
    for (guint i = 0; i < c->sources->len; i++) {
        hpc_source *s = g_ptr_array_index(c->sources, i);
        hpc_source_close(s);
        g_free(s);
    }
    g_ptr_array_free(c->sources, TRUE);
    hpc_cache_free(c->core->cache);
    drop_info(c->core);
    hpc_options_clear(&c->opts);
    g_mutex_clear(&c->core->lock);
    g_free(c->core->changed_path);
    g_free(c->core);
    g_free(c->path);
    g_free(c);
}

hpc_source *hpc_container_add_source(hpc_container *c, const char *path, GError **err)
{
    hpc_source *s = g_new0(hpc_source, 1);
    if (hpc_source_open(path, s, err) != HPC_OK) {
        g_free(s);
        return NULL;
    }
    if (c->live)
        hpc_source_set_live(s);
    if (c->core->opened)
        hpc_source_stream(s);
    g_ptr_array_add(c->sources, s);
    return s;
}

/* ---- sources that change under the mount --------------------------------
 * Every hpc_source_pread checks its file after reading (fstat), so bytes of
 * the core's own reads and of the block cache (filled only by checked
 * reads) are the bytes of open time.  A format that reads through a
 * library (sandbox_lib: its own descriptors, its own caches, files it may
 * reopen by path) gets every source checked, fstat and path, after each
 * read or map, once the bytes are in the caller's buffer; formats with few
 * sources get the fstat check too.  All readers get the path check at most
 * every CHECK_US.  The first change seen is logged once and sticks: reads
 * fail until remount. */

#define CHECK_US G_USEC_PER_SEC
#define CHECK_EVERY_READ_MAX 4   /* sources fstat'ed after every format read */

static int mark_changed(hpc_container *c, const hpc_source *s)
{
    g_mutex_lock(&c->core->lock);
    int first = !c->core->changed;
    if (first) {
        c->core->changed_path = g_strdup(s ? s->path : c->path);
        __atomic_store_n(&c->core->changed, 1, __ATOMIC_RELEASE);
        drop_info(c->core);
    }
    g_mutex_unlock(&c->core->lock);
    if (first && log_changes)
        hpc_log("%s changed since mount (written, truncated, replaced or deleted): "
                "reads fail until it is mounted again", c->core->changed_path);
    return HPC_E_CHANGED;
}

static gboolean container_changed(hpc_container *c)
{
    return __atomic_load_n(&c->core->changed, __ATOMIC_ACQUIRE);
}

/* A read failed with HPC_E_CHANGED: find the source that changed. */
static int note_changed(hpc_container *c)
{
    for (guint i = 0; i < c->sources->len; i++) {
        const hpc_source *s = g_ptr_array_index(c->sources, i);
        if (hpc_source_changed(s))
            return mark_changed(c, s);
    }
    return mark_changed(c, NULL);
}

/* fstat every source (path: also stat the path). */
static int check_all(hpc_container *c, gboolean path)
{
    if (c->live)
        return HPC_OK;
    if (container_changed(c))
        return HPC_E_CHANGED;
    for (guint i = 0; i < c->sources->len; i++) {
        const hpc_source *s = g_ptr_array_index(c->sources, i);
        if ((path ? hpc_source_check_path(s) : hpc_source_check(s)) == HPC_E_CHANGED)
            return mark_changed(c, s);
    }
    return HPC_OK;
}

/* At read entry: fails at once after a change; checks every source and its
 * path when the last such check is older than CHECK_US. */
static int check_periodic(hpc_container *c)
{
    if (c->live)
        return HPC_OK;
    if (container_changed(c))
        return HPC_E_CHANGED;
    if (!hpc_check_due(&c->core->last_check, CHECK_US))
        return HPC_OK;
    return check_all(c, TRUE);
}

/* After a format's read or map, with the bytes in the caller's buffer: its
 * result, or HPC_E_CHANGED. */
static int check_after(hpc_container *c, int rc)
{
    if (rc == HPC_E_CHANGED)
        return note_changed(c);
    if (rc != HPC_OK || c->live)
        return rc;
    if (c->format->sandbox_lib)
        return check_all(c, TRUE);
    return c->sources->len <= CHECK_EVERY_READ_MAX ? check_all(c, FALSE) : HPC_OK;
}

int hpc_container_sources_unchanged(hpc_container *c)
{
    return check_all(c, FALSE);
}

int hpc_container_extents_unchanged(hpc_container *c, const hpc_extent *ext, unsigned n)
{
    if (c->live)
        return HPC_OK;
    if (container_changed(c))
        return HPC_E_CHANGED;
    for (unsigned i = 0; i < n; i++)
        if (hpc_source_check(ext[i].src) == HPC_E_CHANGED)
            return mark_changed(c, ext[i].src);
    return HPC_OK;
}

hpc_cache *hpc_container_cache(hpc_container *c)
{
    hpc_cache *cache = g_atomic_pointer_get(&c->core->cache);
    if (cache)
        return cache;
    g_mutex_lock(&c->core->lock);
    if (!c->core->cache) {
        uint32_t bs = c->opts.blocksize;
        if (bs == 0) {
            uint32_t fs = c->fsblksize;
            if (fs == 0)
                fs = c->sources->len ? ((hpc_source *)g_ptr_array_index(c->sources, 0))->blksize : 4096;
            if (fs == 0 || fs > CACHE_MAX_BLOCK)
                fs = fs ? CACHE_MAX_BLOCK : 4096;
            bs = fs * ((CACHE_MIN_BLOCK + fs - 1) / fs);
            if (bs > CACHE_MAX_BLOCK)
                bs = fs;
        }
        g_atomic_pointer_set(&c->core->cache, hpc_cache_new(c->opts.cache_size, bs, 0));
    }
    cache = c->core->cache;
    g_mutex_unlock(&c->core->lock);
    return cache;
}

void hpc_container_info_changed(hpc_container *c)
{
    g_mutex_lock(&c->core->lock);
    drop_info(c->core);
    g_mutex_unlock(&c->core->lock);
}

/* The .info text (ino HPC_INO_INFO) or its JSON (HPC_INO_INFO_JSON),
 * generated once (or again after info_changed); returns a copy so that
 * readers never see it freed under them. */
static GBytes *info_bytes(hpc_container *c, hpc_ino ino)
{
    g_mutex_lock(&c->core->lock);
    if (!c->core->info) {
        c->core->info = g_string_new(NULL);
        g_string_append_printf(c->core->info, "format: %s\nsource: %s\n", c->format->name, c->path);
        if (container_changed(c))
            g_string_append_printf(c->core->info, "changed: %s changed since mount; reads fail until "
                                   "it is mounted again\n", c->core->changed_path);
        if (c->format->info && c->format->info(c, c->core->info) != HPC_OK)
            g_string_append(c->core->info, "warning: the format reader could not describe the container\n");
    }
    if (ino == HPC_INO_INFO_JSON && !c->core->info_json)
        c->core->info_json = hpc_info_json(c->core->info->str);
    GString *t = ino == HPC_INO_INFO_JSON ? c->core->info_json : c->core->info;
    GBytes *b = g_bytes_new(t->str, t->len);
    g_mutex_unlock(&c->core->lock);
    return b;
}

/* ---- tree ------------------------------------------------------------- */

static void stat_defaults(hpc_container *c, hpc_stat *st)
{
    st->mode = hpc_perm_mode(st->mode, c->core->perm);
    if (st->mtime == 0)
        st->mtime = c->mtime;
    if (st->nlink == 0)
        st->nlink = S_ISDIR(st->mode) ? 2 : 1;
}

static void info_stat(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    GBytes *b = info_bytes(c, ino);
    memset(st, 0, sizeof *st);
    st->ino = ino;
    st->mode = HPC_MODE_FILE;
    st->size = g_bytes_get_size(b);
    g_bytes_unref(b);
    stat_defaults(c, st);
}

int hpc_container_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    if (HPC_INO_IS_TEXT(parent))
        return HPC_E_NOTDIR;
    if (parent == HPC_INO_ROOT && strcmp(name, ".info") == 0) {
        info_stat(c, HPC_INO_INFO, st);
        return HPC_OK;
    }
    if (parent == HPC_INO_ROOT && strcmp(name, ".info.json") == 0) {
        info_stat(c, HPC_INO_INFO_JSON, st);
        return HPC_OK;
    }
    memset(st, 0, sizeof *st);
    int rc = c->format->lookup ? c->format->lookup(c, parent, name, st)
                               : hpc_tree_lookup(c->tree, parent, name, st);
    if (rc == HPC_OK)
        stat_defaults(c, st);
    return rc;
}

int hpc_container_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    if (HPC_INO_IS_TEXT(ino)) {
        info_stat(c, ino, st);
        return HPC_OK;
    }
    memset(st, 0, sizeof *st);
    int rc = c->format->getattr ? c->format->getattr(c, ino, st)
                                : hpc_tree_getattr(c->tree, ino, st);
    if (rc == HPC_OK)
        stat_defaults(c, st);
    return rc;
}

typedef struct readdir_ctx {
    hpc_container *c;
    hpc_dirent_fn fn;
    void *ctx;
    uint64_t shift;     /* cookies the core used before the format's */
} readdir_ctx;

static int readdir_shift(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    readdir_ctx *r = p;
    hpc_stat s = *st;
    stat_defaults(r->c, &s);
    return r->fn(r->ctx, name, &s, next + r->shift);
}

int hpc_container_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie,
                          hpc_dirent_fn fn, void *ctx)
{
    hpc_stat st;
    int rc = hpc_container_getattr(c, dir, &st);
    if (rc != HPC_OK)
        return rc;
    if (!S_ISDIR(st.mode))
        return HPC_E_NOTDIR;
    uint64_t shift = dir == HPC_INO_ROOT ? 3 : 2;
    if (cookie == 0 && fn(ctx, ".", &st, 1))
        return HPC_OK;
    if (cookie <= 1) {
        hpc_stat up = { .ino = HPC_INO_ROOT, .mode = HPC_MODE_DIR };
        stat_defaults(c, &up);
        if (fn(ctx, "..", &up, 2))
            return HPC_OK;
    }
    if (dir == HPC_INO_ROOT && cookie <= 2) {
        /* Listing the root must not build .info (a line per task of 10^6
         * tasks): its size here is 0 until it is built; getattr tells. */
        hpc_stat info = { .ino = HPC_INO_INFO, .mode = HPC_MODE_FILE };
        stat_defaults(c, &info);
        g_mutex_lock(&c->core->lock);
        info.size = c->core->info ? c->core->info->len : 0;
        g_mutex_unlock(&c->core->lock);
        if (fn(ctx, ".info", &info, 3))
            return HPC_OK;
    }
    readdir_ctx r = { c, fn, ctx, shift };
    uint64_t fc = cookie > shift ? cookie - shift : 0;
    return c->format->readdir ? c->format->readdir(c, dir, fc, readdir_shift, &r)
                              : hpc_tree_readdir(c->tree, dir, fc, readdir_shift, &r);
}

int hpc_container_readlink(hpc_container *c, hpc_ino ino, char **target)
{
    if (c->format->readlink)
        return c->format->readlink(c, ino, target);
    if (c->tree)
        return hpc_tree_readlink(c->tree, ino, target);
    return HPC_E_INVAL;
}

int hpc_path_walk(const char *path, hpc_lookup_fn lookup, void *ctx, hpc_stat *st)
{
    int rc = HPC_OK;
    gchar **parts = g_strsplit(path ? path : "", "/", -1);
    for (gchar **p = parts; *p; p++) {
        if (**p == '\0' || strcmp(*p, ".") == 0)
            continue;
        if (!S_ISDIR(st->mode)) {
            rc = HPC_E_NOTDIR;
            break;
        }
        hpc_ino parent = st->ino;
        rc = lookup(ctx, parent, *p, st);
        if (rc != HPC_OK)
            break;
    }
    g_strfreev(parts);
    return rc;
}

static int lookup_in(void *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    return hpc_container_lookup(c, parent, name, st);
}

int hpc_container_resolve(hpc_container *c, const char *path, hpc_stat *st)
{
    int rc = hpc_container_getattr(c, HPC_INO_ROOT, st);
    return rc == HPC_OK ? hpc_path_walk(path, lookup_in, c, st) : rc;
}

/* ---- data ------------------------------------------------------------- */

/* The core's checks before a reader's data call: the node exists and is a
 * regular file (a directory or symlink never reaches read or map), and no
 * source changed.  *st gets the node's attributes. */
static int data_node(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    int rc = hpc_container_getattr(c, ino, st);
    if (rc != HPC_OK)
        return rc;
    if (S_ISDIR(st->mode))
        return HPC_E_ISDIR;
    if (!S_ISREG(st->mode))
        return HPC_E_INVAL;
    return check_periodic(c);
}

int hpc_container_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                      hpc_extent *ext, unsigned max, unsigned *n)
{
    hpc_stat st;
    *n = 0;
    if (HPC_INO_IS_TEXT(ino) || !c->format->map)
        return HPC_E_NOTSUP;
    int rc = data_node(c, ino, &st);
    if (rc != HPC_OK || off >= st.size)
        return rc;
    len = MIN(len, st.size - off);
    return check_after(c, c->format->map(c, ino, off, len, ext, max, n));
}

/* Extents at least this long skip the block cache: the kernel's page cache
 * holds their pages anyway, and a piece of a few KiB in the middle of a
 * large file (a GSD series) must not cost a whole cache block. */
#define DIRECT_MIN (8u << 10)

int hpc_container_read_extents(hpc_container *c, const hpc_extent *ext, unsigned n, void *buf,
                               size_t room, size_t *got)
{
    hpc_cache *cache = hpc_container_cache(c);
    char *p = buf;
    uint64_t total = 0;
    *got = 0;
    for (unsigned i = 0; i < n; i++)
        total += ext[i].len;
    if (total == 0 || total > room)
        return HPC_E_CORRUPT;   /* never loop on empty extents, never overrun */
    if (!cache)
        return HPC_E_NOMEM;
    for (unsigned i = 0; i < n; i++) {
        const hpc_extent *e = &ext[i];
        uint64_t size = e->space ? e->space_size : __atomic_load_n(&e->src->size, __ATOMIC_ACQUIRE);
        int rc;
        if (e->off > size || e->len > size - e->off)
            rc = HPC_E_CORRUPT;
        else if (e->len >= DIRECT_MIN)
            rc = hpc_source_pread(e->src, p, (size_t)e->len, e->off);
        else
            rc = hpc_cache_read_file(cache, e->src, e->space ? e->space : e->src->id, size,
                                     p, (size_t)e->len, e->off);
        if (rc != HPC_OK)
            return rc;
        p += e->len;
    }
    *got = (size_t)total;
    return HPC_OK;
}

/* The one path of verbatim bytes: the reader's extents, read through the
 * block cache.  HPC_E_NOTSUP when the reader computes this node's bytes. */
static int read_mapped(hpc_container *c, hpc_ino ino, char *buf, size_t len,
                       uint64_t off, size_t *nread)
{
    hpc_extent ext[HPC_MAX_EXTENTS];
    size_t done = 0;
    while (done < len) {
        unsigned n;
        int rc = c->format->map(c, ino, off + done, len - done, ext, HPC_MAX_EXTENTS, &n);
        if (rc != HPC_OK)
            return rc;
        if (n == 0)
            break;         /* end of file */
        size_t got;
        rc = hpc_container_read_extents(c, ext, n, buf + done, len - done, &got);
        if (rc != HPC_OK)
            return rc;
        done += got;
    }
    *nread = done;
    return HPC_OK;
}

int hpc_container_read(hpc_container *c, hpc_ino ino, void *buf, size_t len,
                       uint64_t off, size_t *nread)
{
    *nread = 0;
    if (HPC_INO_IS_TEXT(ino)) {
        GBytes *b = info_bytes(c, ino);
        gsize size;
        const char *data = g_bytes_get_data(b, &size);
        if (off < size) {
            *nread = MIN(len, size - off);
            memcpy(buf, data + off, *nread);
        }
        g_bytes_unref(b);
        return HPC_OK;
    }
    hpc_stat st;
    int rc = data_node(c, ino, &st);
    if (rc != HPC_OK || off >= st.size)
        return rc;
    len = (size_t)MIN((uint64_t)len, st.size - off);
    rc = c->format->map ? read_mapped(c, ino, buf, len, off, nread) : HPC_E_NOTSUP;
    if (rc == HPC_E_NOTSUP && c->format->read) {
        *nread = 0;
        rc = c->format->read(c, ino, buf, len, off, nread);
    }
    rc = check_after(c, rc);
    if (rc != HPC_OK)
        *nread = 0;
    return rc;
}

/* ---- extended attributes ---------------------------------------------- */

typedef struct xattr_find {
    const char *name;     /* NULL: list */
    GString *names;
    void *value;
    size_t len;
    int found;
} xattr_find;

static int xattr_visit(void *p, const char *name, const void *value, size_t len)
{
    xattr_find *f = p;
    if (!f->name) {
        g_string_append_len(f->names, name, (gssize)strlen(name) + 1);
        return 0;
    }
    if (strcmp(f->name, name) != 0)
        return 0;
    f->value = g_memdup2(value, len);
    f->len = len;
    f->found = 1;
    return 1;
}

static int xattrs_of(hpc_container *c, hpc_ino ino, xattr_find *f)
{
    if (HPC_INO_IS_TEXT(ino))
        return HPC_OK;
    if (c->format->xattrs)
        return c->format->xattrs(c, ino, xattr_visit, f);
    if (c->tree)
        return hpc_tree_xattrs(c->tree, ino, xattr_visit, f);
    return HPC_OK;
}

int hpc_container_getxattr(hpc_container *c, hpc_ino ino, const char *name,
                           void **value, size_t *len)
{
    xattr_find f = { .name = name };
    /* every reader's attributes are user.* (hpc_format.xattrs); ls -l asks
     * each file for security.selinux and system.posix_acl_access, which
     * made an HDF5 reader read all of a dataset's attributes twice */
    if (strncmp(name, "user.", 5) != 0)
        return HPC_E_NODATA;
    int rc = xattrs_of(c, ino, &f);
    if (rc < 0)
        return rc;
    if (!f.found)
        return HPC_E_NODATA;
    *value = f.value;
    *len = f.len;
    return HPC_OK;
}

int hpc_container_listxattr(hpc_container *c, hpc_ino ino, GString *out)
{
    xattr_find f = { .names = out };
    int rc = xattrs_of(c, ino, &f);
    return rc < 0 ? rc : HPC_OK;
}

int hpc_container_chunks(hpc_container *c, hpc_ino ino, GString *out)
{
    hpc_stat st;
    if (!c->format->chunks || c->sources->len == 0)
        return HPC_E_NOTSUP;
    int rc = data_node(c, ino, &st);
    if (rc == HPC_E_ISDIR)         /* a group: its attributes */
        rc = check_periodic(c);
    if (rc != HPC_OK)
        return rc;
    const hpc_source *src = g_ptr_array_index(c->sources, 0);
    g_string_append_printf(out, "file %s\n", src->path);
    rc = c->format->chunks(c, ino, out);
    return rc == HPC_OK ? hpc_container_sources_unchanged(c) : rc;
}

/* ---- accessors for front ends ----------------------------------------- */

const char *hpc_container_format_name(const hpc_container *c)
{
    return c->format->name;
}

int hpc_container_is_live(const hpc_container *c)
{
    return c->live;
}

void hpc_container_owner(const hpc_container *c, uint32_t *uid, uint32_t *gid)
{
    *uid = c->uid;
    *gid = c->gid;
}

uint64_t hpc_container_source_bytes(const hpc_container *c)
{
    uint64_t bytes = 0;
    for (guint i = 0; i < c->sources->len; i++)
        bytes += ((const hpc_source *)g_ptr_array_index(c->sources, i))->size;
    return bytes;
}

uint32_t hpc_container_block_size(hpc_container *c)
{
    return hpc_cache_block_size(hpc_container_cache(c));
}

/* ---- what readers call ---------------------------------------------------- */

static void note_file(hpc_container *c, const char *path)
{
    (void)c;
    hpc_sandbox_note(path);
}

static const hpc_host container_host = {
    .add_source = hpc_container_add_source,
    .cache = hpc_container_cache,
    .read_extents = hpc_container_read_extents,
    .sources_unchanged = hpc_container_sources_unchanged,
    .info_changed = hpc_container_info_changed,
    .note_file = note_file,
};
