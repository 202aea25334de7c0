/* hpc_mount.c - one container, or a run directory of containers.
 *
 * The directory layer keeps three tables under one lock: its own nodes
 * (a path relative to the run directory each, with what was found there),
 * the container slots (a node that a reader claims, its open container or
 * the reason it failed, and a use count), and the translation of container
 * node ids too large for 40 bits.  Directories are read from disk on every
 * listing, so files that appear or vanish show at once; what a file is
 * (plain, or a container of which format) is probed again when its size or
 * mtime changed.  Nothing is opened at mount: a container opens on its
 * first access and closes when it is the least recently used of more than
 * max_containers open ones and nobody uses it.  A container that reports
 * its source changed is closed and opened again on its next use; one that
 * failed to open is tried again only once its file changed.
 *
 * This file routes the calls; hpc_rundir.c keeps the tables
 * (hpc_mount_int.h).
 */
#define _GNU_SOURCE       /* O_PATH */
#include "hpc_mount_int.h"
#include "hpc_infojson.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

/* ---- open / close ------------------------------------------------------- */

/* SOURCE is one container: a file, a forced format, or a directory a
 * reader claims whole (an FTI tree at any of its levels) that holds no file
 * of another format (then it is a run directory around them). */
static gboolean is_one_container(const char *source, const hpc_options *opts)
{
    struct stat st;
    if (opts->format || stat(source, &st) != 0 || !S_ISDIR(st.st_mode))
        return TRUE;
    if (opts->rundir)
        return FALSE;
    const hpc_format *f = hpc_format_best(source, NULL, 0);
    return f && !hpc_rundir_holds_other_format(source, f);
}

int hpc_mount_open(const char *given, const hpc_options *opts, hpc_mount **out,
                   GError **err)
{
    hpc_mount *m = g_new0(hpc_mount, 1);
    struct stat st;
    int rc;
    /* absolute: the daemon runs from "/", and .info names it the same way
     * whichever front end opened it */
    char *source = g_canonicalize_filename(given, NULL);
    hpc_options_copy(&m->opts, opts);
    if (is_one_container(source, &m->opts)) {
        rc = hpc_rundir_open_nodes(source, &m->opts, &m->single, err);
        if (rc != HPC_OK)
            goto fail;
        m->source = source;
        *out = m;
        return HPC_OK;
    }
    if (stat(source, &st) != 0 || access(source, R_OK | X_OK) != 0) {
        rc = hpc_fail(err, HPC_E_NOENT, source, NULL, 0, "cannot read the directory: %s",
                      g_strerror(errno));
        goto fail;
    }
    m->root = source;
    source = NULL;
    m->mtime = st.st_mtime;
    m->uid = st.st_uid;
    m->gid = st.st_gid;
    m->mode = st.st_mode;
    m->above = hpc_perm_chain(m->root);
    m->root_fd = open(m->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (m->root_fd < 0) {
        rc = hpc_fail(err, HPC_E_NOENT, m->root, NULL, 0, "cannot open the directory: %s",
                      g_strerror(errno));
        goto fail;
    }
    m->max_open = opts->max_containers ? opts->max_containers : HPC_DEFAULT_MAX_CONTAINERS;
    /* cache_size is the whole mount's: each open container gets its share */
    m->opts.cache_size = MAX(opts->cache_size / m->max_open, MIN_CONTAINER_CACHE);
    g_mutex_init(&m->lock);
    m->nodes = g_ptr_array_new();
    m->node_of = g_hash_table_new(g_str_hash, g_str_equal);
    m->slots = g_ptr_array_new();
    g_queue_init(&m->open);
    m->big = g_array_new(FALSE, FALSE, sizeof(hpc_rundir_big_id));
    m->big_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    *out = m;
    return HPC_OK;
fail:
    hpc_options_clear(&m->opts);
    if (m->above)
        g_array_free(m->above, TRUE);
    g_free(m->root);
    g_free(source);
    g_free(m);
    return rc;
}

void hpc_mount_close(hpc_mount *m)
{
    if (!m)
        return;
    hpc_nodes_close(m->single);
    if (m->root) {
        for (guint i = 0; i < m->slots->len; i++) {
            hpc_rundir_slot *s = g_ptr_array_index(m->slots, i);
            hpc_nodes_close(s->c);
            g_mutex_clear(&s->open_lock);
            g_free(s->path);
            g_free(s->error);
            g_free(s);
        }
        for (guint i = 0; i < m->nodes->len; i++) {
            hpc_rundir_node *d = g_ptr_array_index(m->nodes, i);
            g_free(d->rel);
            g_free(d);
        }
        g_ptr_array_free(m->slots, TRUE);
        g_ptr_array_free(m->nodes, TRUE);
        g_hash_table_destroy(m->node_of);
        g_queue_clear(&m->open);
        g_array_free(m->big, TRUE);
        g_hash_table_destroy(m->big_of);
        g_mutex_clear(&m->lock);
        if (m->above)
            g_array_free(m->above, TRUE);
        close(m->root_fd);
    }
    hpc_options_clear(&m->opts);
    g_free(m->root);
    g_free(m->source);
    g_free(m);
}

gboolean hpc_mount_is_directory(const hpc_mount *m)
{
    return m->root != NULL;
}

const char *hpc_mount_source(const hpc_mount *m)
{
    return m->root ? m->root : m->source;
}

/* ---- the directory layer's .info ---------------------------------------- */

static GString *dir_info(hpc_mount *m)
{
    GString *o = g_string_new(NULL);
    g_mutex_lock(&m->lock);
    g_string_append_printf(o, "format: directory\nsource: %s\ncontainers_seen: %u\n"
                           "containers_open: %u\nmax_containers: %u\n\n",
                           m->root, m->slots->len, m->open.length, m->max_open);
    g_string_append(o, "path\tstate\tformat_or_reason\n");
    for (guint i = 0; i < m->slots->len; i++) {
        hpc_rundir_slot *s = g_ptr_array_index(m->slots, i);
        hpc_rundir_node *d = hpc_rundir_node_get(m, s->node);
        g_string_append_printf(o, "%s\t%s\t%s\n", d ? d->rel : "?",
                               s->c ? "open" : s->error ? "failed" : "closed",
                               s->c ? s->c->ops->format_name(s->c) : s->error ? s->error : "-");
    }
    g_mutex_unlock(&m->lock);
    return o;
}

/* .info of a container that failed to open: the reason, one line. */
static GString *failed_info(hpc_mount *m, hpc_rundir_slot *s)
{
    GString *o = g_string_new(NULL);
    g_mutex_lock(&m->lock);
    g_string_append_printf(o, "format: unknown\nsource: %s\nerror: %s\n", s->path,
                           s->error ? s->error : "cannot be opened");
    g_mutex_unlock(&m->lock);
    return o;
}

/* text, or (ino HPC_INO_INFO_JSON) its JSON; frees text. */
static GString *as_text(hpc_ino ino, GString *text)
{
    if (ino != HPC_INO_INFO_JSON)
        return text;
    GString *json = hpc_info_json(text->str);
    g_string_free(text, TRUE);
    return json;
}

/* The text node a root entry called name is: HPC_INO_INFO, HPC_INO_INFO_JSON
 * or 0. */
static hpc_ino text_ino(const char *name)
{
    return strcmp(name, ".info") == 0 ? HPC_INO_INFO
         : strcmp(name, ".info.json") == 0 ? HPC_INO_INFO_JSON : 0;
}

/* The read bits of the layer's node id (0 if unknown). */
static uint32_t node_bits(hpc_mount *m, uint64_t id)
{
    g_mutex_lock(&m->lock);
    hpc_rundir_node *d = hpc_rundir_node_get(m, id);
    uint32_t mode = d ? hpc_rundir_mode(m, d->uid, d->gid, d->mode) : 0;
    g_mutex_unlock(&m->lock);
    return mode & HPC_PERM_ALL;
}

/* A text node (.info) readable as its directory is: bits. */
static void text_stat(hpc_mount *m, hpc_ino ino, GString *text, uint32_t bits, hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = ino;
    st->mode = hpc_perm_mode(HPC_MODE_FILE, bits);
    st->nlink = 1;
    st->size = text->len;
    st->mtime = m->mtime;
    g_string_free(text, TRUE);
}

/* The read bits of the run directory itself (its .info's). */
static uint32_t root_bits(hpc_mount *m)
{
    return hpc_rundir_mode(m, m->uid, m->gid, m->mode) & HPC_PERM_ALL;
}

/* ---- calls into a container's slot -------------------------------------- */

/* Where a call on a mount id goes.  Three cases: SOURCE is one container
 * (c set, sn 0, no slot); the id is the run directory's own node (c NULL,
 * sn 0); or it lies in container slot sn (s taken, c NULL when the
 * container failed to open).  Every call that enters leaves. */
typedef struct route {
    hpc_nodes *c;                /* the container's nodes */
    hpc_ino inner;               /* the id inside c */
    uint32_t sn;
    hpc_rundir_slot *s;
} route;

static int enter(hpc_mount *m, hpc_ino ino, route *r)
{
    memset(r, 0, sizeof *r);
    r->inner = ino;
    if (m->single) {
        r->c = m->single;
        return HPC_OK;
    }
    int rc = hpc_rundir_decode(m, ino, &r->sn, &r->inner);
    if (rc != HPC_OK || r->sn == 0)
        return rc;
    return hpc_rundir_slot_acquire(m, r->sn, &r->s, &r->c);
}

/* The id is a node of the run directory itself. */
static gboolean in_dir(const route *r)
{
    return !r->c && !r->s;
}

static int leave(hpc_mount *m, const route *r, int rc)
{
    return r->s ? hpc_rundir_slot_release(m, r->s, rc) : rc;
}

/* Translate a container's attributes to mount ids (in place). */
static void outward(hpc_mount *m, uint32_t sn, hpc_stat *st)
{
    if (HPC_INO_IS_TEXT(st->ino))
        st->partial = 1;     /* its text changes: the kernel must ask again */
    st->ino = hpc_rundir_encode(m, sn, st->ino);
}

typedef struct fwd_dir {
    hpc_mount *m;
    uint32_t slot;
    hpc_dirent_fn fn;
    void *ctx;
} fwd_dir;

static int fwd_dirent(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    fwd_dir *f = p;
    hpc_stat s = *st;
    outward(f->m, f->slot, &s);
    return f->fn(f->ctx, name, &s, next);
}

/* A container slot's failed state: its root is an empty directory with
 * .info, the reason. */
static int failed_call(hpc_mount *m, hpc_rundir_slot *s, uint32_t sn, hpc_ino inner, hpc_stat *st)
{
    if (inner == HPC_INO_ROOT) {
        memset(st, 0, sizeof *st);
        st->ino = ((hpc_ino)sn << SLOT_SHIFT) | HPC_INO_ROOT;
        st->mode = hpc_perm_mode(HPC_MODE_DIR, node_bits(m, s->node));
        st->nlink = 2;
        st->mtime = m->mtime;
        return HPC_OK;
    }
    if (HPC_INO_IS_TEXT(inner)) {
        text_stat(m, ((hpc_ino)sn << SLOT_SHIFT) | inner, as_text(inner, failed_info(m, s)),
                  node_bits(m, s->node), st);
        return HPC_OK;
    }
    return HPC_E_NOENT;
}

/* ---- tree --------------------------------------------------------------- */

/* Look name up in a directory of the run directory. */
static int dir_lookup(hpc_mount *m, hpc_ino parent, const char *name, hpc_stat *st)
{
    hpc_ino t = parent == HPC_INO_ROOT ? text_ino(name) : 0;
    if (t) {
        text_stat(m, t, as_text(t, dir_info(m)), root_bits(m), st);
        return HPC_OK;
    }
    char *rel = hpc_rundir_node_rel(m, parent);
    if (!rel)
        return HPC_E_NOENT;
    char *child = *rel ? g_build_filename(rel, name, NULL) : g_strdup(name);
    int rc = strchr(name, '/') ? HPC_E_NOENT : hpc_rundir_node_at(m, child, st);
    g_free(child);
    g_free(rel);
    return rc;
}

/* Attributes of a node of the run directory. */
static int dir_getattr(hpc_mount *m, hpc_ino ino, hpc_stat *st)
{
    if (HPC_INO_IS_TEXT(ino)) {
        text_stat(m, ino, as_text(ino, dir_info(m)), root_bits(m), st);
        return HPC_OK;
    }
    char *rel = hpc_rundir_node_rel(m, ino);
    int rc = rel ? hpc_rundir_node_at(m, rel, st) : HPC_E_NOENT;
    g_free(rel);
    return rc;
}

int hpc_mount_lookup(hpc_mount *m, hpc_ino parent, const char *name, hpc_stat *st)
{
    route r;
    int rc = enter(m, parent, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r))
        return dir_lookup(m, parent, name, st);
    if (!r.c)
        rc = r.inner == HPC_INO_ROOT && text_ino(name)
                 ? failed_call(m, r.s, r.sn, text_ino(name), st) : HPC_E_NOENT;
    else if ((rc = r.c->ops->lookup(r.c, r.inner, name, st)) == HPC_OK && r.sn)
        outward(m, r.sn, st);
    return leave(m, &r, rc);
}

int hpc_mount_getattr(hpc_mount *m, hpc_ino ino, hpc_stat *st)
{
    route r;
    int rc = enter(m, ino, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r))
        return dir_getattr(m, ino, st);
    if (!r.c)
        rc = failed_call(m, r.s, r.sn, r.inner, st);
    else if ((rc = r.c->ops->getattr(r.c, r.inner, st)) == HPC_OK && r.sn)
        outward(m, r.sn, st);
    return leave(m, &r, rc);
}

static int cmp_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* List a directory of the run directory: ".", "..", (root) ".info", then
 * its entries sorted by name; cookie k resumes after the k-th. */
static int dir_readdir(hpc_mount *m, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    hpc_stat self, st;
    char *rel = hpc_rundir_node_rel(m, dir);
    int rc = rel ? hpc_rundir_node_at(m, rel, &self) : HPC_E_NOENT;
    if (rc != HPC_OK || !S_ISDIR(self.mode) || self.ino != dir) {
        g_free(rel);
        return rc != HPC_OK ? rc : HPC_E_NOTDIR;
    }
    uint64_t k = 0;
    if (cookie <= k++ && fn(ctx, ".", &self, k))
        goto out;
    if (cookie <= k++ && fn(ctx, "..", &self, k))
        goto out;
    if (dir == HPC_INO_ROOT && cookie <= k++) {
        text_stat(m, HPC_INO_INFO, dir_info(m), root_bits(m), &st);
        if (fn(ctx, ".info", &st, k))
            goto out;
    }
    char *path = hpc_rundir_abs_path(m, rel);
    GDir *d = g_dir_open(path, 0, NULL);
    g_free(path);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while (d && (name = g_dir_read_name(d)))
        if (!(dir == HPC_INO_ROOT && strcmp(name, ".info") == 0))
            g_ptr_array_add(names, g_strdup(name));
    if (d)
        g_dir_close(d);
    g_ptr_array_sort(names, cmp_names);
    for (guint i = 0; i < names->len; i++, k++) {
        if (cookie > k)
            continue;
        const char *n = g_ptr_array_index(names, i);
        char *child = *rel ? g_build_filename(rel, n, NULL) : g_strdup(n);
        int found = hpc_rundir_node_at(m, child, &st) == HPC_OK;
        g_free(child);
        if (found && fn(ctx, n, &st, k + 1))
            break;
    }
    g_ptr_array_free(names, TRUE);
out:
    g_free(rel);
    return HPC_OK;
}

/* A container that failed to open lists as an empty root with .info. */
static void failed_readdir(hpc_mount *m, const route *r, uint64_t cookie, hpc_dirent_fn fn,
                           void *ctx)
{
    hpc_stat root, info;
    failed_call(m, r->s, r->sn, HPC_INO_ROOT, &root);
    failed_call(m, r->s, r->sn, HPC_INO_INFO, &info);
    if (cookie < 1 && fn(ctx, ".", &root, 1))
        return;
    if (cookie < 2 && fn(ctx, "..", &root, 2))
        return;
    if (cookie < 3)
        fn(ctx, ".info", &info, 3);
}

int hpc_mount_readdir(hpc_mount *m, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    route r;
    int rc = enter(m, dir, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r))
        return dir_readdir(m, dir, cookie, fn, ctx);
    if (r.c && !r.sn) {
        rc = r.c->ops->readdir(r.c, r.inner, cookie, fn, ctx);
    } else if (r.c) {
        fwd_dir f = { m, r.sn, fn, ctx };
        rc = r.c->ops->readdir(r.c, r.inner, cookie, fwd_dirent, &f);
    } else if (r.inner != HPC_INO_ROOT) {
        rc = HPC_E_NOENT;
    } else {
        failed_readdir(m, &r, cookie, fn, ctx);
    }
    return leave(m, &r, rc);
}

int hpc_mount_readlink(hpc_mount *m, hpc_ino ino, char **target)
{
    route r;
    int rc = enter(m, ino, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r)) {
        char *rel = hpc_rundir_node_rel(m, ino), *path = rel ? hpc_rundir_abs_path(m, rel) : NULL;
        *target = path ? g_file_read_link(path, NULL) : NULL;
        g_free(rel);
        g_free(path);
        return *target ? HPC_OK : HPC_E_INVAL;
    }
    rc = r.c ? r.c->ops->readlink(r.c, r.inner, target) : HPC_E_INVAL;
    return leave(m, &r, rc);
}

/* ---- data --------------------------------------------------------------- */

/* rel, opened beneath the run directory without following a symbolic
 * link on the way: one swapped in after the listing never leads the
 * daemon outside (the links it shows, the kernel follows with the
 * reader's own rights). */
static int open_beneath(hpc_mount *m, const char *rel)
{
    int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
#ifdef SYS_openat2
    struct open_how how = { .flags = (uint64_t)flags,
                            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
    int fd = (int)syscall(SYS_openat2, m->root_fd, rel, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS)
        return fd;
#endif
    return openat(m->root_fd, rel, flags | O_NOFOLLOW);
}

/* A plain file of the run directory: pread of the real file. */
static int plain_read(hpc_mount *m, hpc_ino ino, void *buf, size_t len, uint64_t off,
                      size_t *nread)
{
    char *rel = hpc_rundir_node_rel(m, ino);
    int rc = HPC_E_NOENT, fd = rel && *rel ? open_beneath(m, rel) : -1;
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        size_t done = 0;
        rc = HPC_OK;
        while (done < len) {
            ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                rc = HPC_E_IO;
            if (n <= 0)
                break;
            done += (size_t)n;
        }
        *nread = rc == HPC_OK ? done : 0;
    }
    if (fd >= 0)
        close(fd);
    g_free(rel);
    return rc;
}

static int text_read(GString *text, void *buf, size_t len, uint64_t off, size_t *nread)
{
    *nread = off < text->len ? MIN(len, text->len - off) : 0;
    memcpy(buf, text->str + (off < text->len ? off : 0), *nread);
    g_string_free(text, TRUE);
    return HPC_OK;
}

int hpc_mount_read(hpc_mount *m, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread)
{
    *nread = 0;
    route r;
    int rc = enter(m, ino, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r))
        return HPC_INO_IS_TEXT(ino) ? text_read(as_text(ino, dir_info(m)), buf, len, off, nread)
                                    : plain_read(m, ino, buf, len, off, nread);
    if (r.c)
        rc = r.c->ops->read(r.c, r.inner, buf, len, off, nread);
    else
        rc = HPC_INO_IS_TEXT(r.inner)
                 ? text_read(as_text(r.inner, failed_info(m, r.s)), buf, len, off, nread)
                 : HPC_E_NOENT;
    return leave(m, &r, rc);
}

int hpc_mount_map(hpc_mount *m, hpc_ino ino, uint64_t off, uint64_t len,
                  hpc_extent *ext, unsigned max, unsigned *n)
{
    *n = 0;
    route r;
    int rc = enter(m, ino, &r);
    if (rc != HPC_OK)
        return rc;
    rc = r.c ? r.c->ops->map(r.c, r.inner, off, len, ext, max, n) : HPC_E_NOTSUP;
    if (rc != HPC_OK)
        leave(m, &r, rc);   /* on success a slot stays taken until unmap */
    return rc;
}

void hpc_mount_unmap(hpc_mount *m, hpc_ino ino)
{
    uint32_t sn;
    hpc_ino inner;
    if (m->single || hpc_rundir_decode(m, ino, &sn, &inner) != HPC_OK || sn == 0)
        return;
    g_mutex_lock(&m->lock);
    hpc_rundir_slot *s = hpc_rundir_slot_get(m, sn);
    g_mutex_unlock(&m->lock);
    if (s)
        hpc_rundir_slot_release(m, s, HPC_OK);
}

/* The open container of slot sn, held by a map (no acquire), or NULL. */
static hpc_nodes *held_container(hpc_mount *m, uint32_t sn, hpc_rundir_slot **out)
{
    g_mutex_lock(&m->lock);
    hpc_rundir_slot *s = hpc_rundir_slot_get(m, sn);
    hpc_nodes *c = s ? s->c : NULL;
    g_mutex_unlock(&m->lock);
    *out = s;
    return c;
}

int hpc_mount_extents_unchanged(hpc_mount *m, hpc_ino ino, const hpc_extent *ext, unsigned n)
{
    uint32_t sn;
    hpc_ino inner;
    hpc_rundir_slot *s;
    if (m->single)
        return m->single->ops->extents_unchanged(m->single, ext, n);
    if (hpc_rundir_decode(m, ino, &sn, &inner) != HPC_OK || sn == 0)
        return HPC_OK;
    hpc_nodes *c = held_container(m, sn, &s);
    int rc = c ? c->ops->extents_unchanged(c, ext, n) : HPC_OK;
    if (rc == HPC_E_CHANGED) {
        g_mutex_lock(&m->lock);
        s->stale = 1;
        g_mutex_unlock(&m->lock);
    }
    return rc;
}

int hpc_mount_sources_unchanged(hpc_mount *m, hpc_ino ino)
{
    route r;
    int rc = enter(m, ino, &r);
    if (rc != HPC_OK)
        return r.sn ? rc : HPC_OK;   /* an unknown id has no sources */
    return leave(m, &r, r.c ? r.c->ops->sources_unchanged(r.c) : HPC_OK);
}

void hpc_mount_statfs(hpc_mount *m, uint64_t *bytes, uint32_t *bsize)
{
    *bytes = 0;
    *bsize = 65536;
    if (m->single) {
        *bytes = m->single->ops->source_bytes(m->single);
        *bsize = m->single->ops->block_size(m->single);
        return;
    }
    struct statvfs sv;
    if (statvfs(m->root, &sv) == 0)
        *bytes = (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
}

/* ---- extended attributes, paths, kernel hints --------------------------- */

int hpc_mount_getxattr(hpc_mount *m, hpc_ino ino, const char *name, void **value, size_t *len)
{
    route r;
    int rc = enter(m, ino, &r);
    if (rc == HPC_OK)
        rc = r.c ? r.c->ops->getxattr(r.c, r.inner, name, value, len) : HPC_E_NODATA;
    return leave(m, &r, rc);
}

int hpc_mount_chunks(hpc_mount *m, hpc_ino ino, GString *out)
{
    route r;
    int rc = enter(m, ino, &r);
    if (rc == HPC_OK)
        rc = r.c ? r.c->ops->chunks(r.c, r.inner, out) : HPC_E_NOTSUP;
    return leave(m, &r, rc);
}

int hpc_mount_listxattr(hpc_mount *m, hpc_ino ino, GString *out)
{
    route r;
    int rc = enter(m, ino, &r);
    if (rc == HPC_OK)
        rc = r.c ? r.c->ops->listxattr(r.c, r.inner, out) : HPC_OK;
    return leave(m, &r, rc);
}

static int lookup_in(void *m, hpc_ino parent, const char *name, hpc_stat *st)
{
    return hpc_mount_lookup(m, parent, name, st);
}

int hpc_mount_resolve(hpc_mount *m, const char *path, hpc_stat *st)
{
    int rc = hpc_mount_getattr(m, HPC_INO_ROOT, st);
    return rc == HPC_OK ? hpc_path_walk(path, lookup_in, m, st) : rc;
}

/* Put the components of path in front of the ones still to walk. */
static void push_parts(GQueue *todo, const char *path)
{
    gchar **parts = g_strsplit(path, "/", -1);
    guint n = g_strv_length(parts);
    for (guint i = n; i-- > 0;)
        g_queue_push_head(todo, parts[i]);
    g_free(parts);              /* the strings now belong to todo */
}

/* One step of hpc_mount_resolve_follow: component name from the directory
 * on top of stack (the directories walked, the root first). */
static int follow_step(hpc_mount *m, GArray *stack, GQueue *todo, const char *name,
                       gboolean follow_last, int *hops)
{
    hpc_stat *top = &g_array_index(stack, hpc_stat, stack->len - 1), st;
    if (*name == '\0' || strcmp(name, ".") == 0)
        return HPC_OK;
    if (strcmp(name, "..") == 0) {
        if (stack->len == 1)
            return HPC_E_NOENT;
        g_array_set_size(stack, stack->len - 1);
        return HPC_OK;
    }
    if (!S_ISDIR(top->mode))
        return HPC_E_NOTDIR;
    int rc = hpc_mount_lookup(m, top->ino, name, &st);
    if (rc != HPC_OK || !S_ISLNK(st.mode) || (g_queue_is_empty(todo) && !follow_last)) {
        if (rc == HPC_OK)
            g_array_append_val(stack, st);
        return rc;
    }
    char *target = NULL;
    rc = ++*hops > HPC_MAX_LINKS ? HPC_E_LOOP : hpc_mount_readlink(m, st.ino, &target);
    if (rc != HPC_OK)
        return rc;
    rc = target[0] ? HPC_OK : HPC_E_NOENT;     /* as the kernel: "" names nothing */
    if (target[0] == '/')
        g_array_set_size(stack, 1);
    push_parts(todo, target);
    g_free(target);
    return rc;
}

int hpc_mount_resolve_follow(hpc_mount *m, const char *path, gboolean follow_last, hpc_stat *st,
                             char **real)
{
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(hpc_stat));
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);   /* of stack[1..] */
    GQueue todo = G_QUEUE_INIT;
    int hops = 0, rc = hpc_mount_getattr(m, HPC_INO_ROOT, st);
    g_array_append_val(stack, *st);
    push_parts(&todo, path ? path : "");
    char *name;
    while (rc == HPC_OK && (name = g_queue_pop_head(&todo))) {
        rc = follow_step(m, stack, &todo, name, follow_last, &hops);
        if (stack->len - 1 < names->len)        /* "..", or an absolute target */
            g_ptr_array_set_size(names, (gint)stack->len - 1);
        if (stack->len - 1 > names->len)        /* a step down */
            g_ptr_array_add(names, g_strdup(name));
        g_free(name);
    }
    if (rc == HPC_OK)
        *st = g_array_index(stack, hpc_stat, stack->len - 1);
    if (rc == HPC_OK && real) {
        g_ptr_array_add(names, NULL);
        char *j = g_strjoinv("/", (char **)names->pdata);
        *real = g_strconcat("/", j, NULL);
        g_free(j);
    }
    g_queue_clear_full(&todo, g_free);
    g_ptr_array_free(names, TRUE);
    g_array_free(stack, TRUE);
    return rc;
}

void hpc_mount_node_meta(hpc_mount *m, hpc_ino ino, hpc_node_meta *meta)
{
    hpc_nodes *c = m->single;
    uint32_t sn;
    hpc_ino inner = 0;
    memset(meta, 0, sizeof *meta);
    meta->timeout = DIR_TIMEOUT;
    meta->uid = m->uid;
    meta->gid = m->gid;
    meta->blksize = 65536;
    if (c) {
        meta->timeout = c->ops->is_live(c) ? DIR_TIMEOUT : SINGLE_STATIC_TIMEOUT;
        meta->direct_io = HPC_INO_IS_TEXT(ino);  /* regenerated when things change */
        meta->keep_cache = !meta->direct_io;   /* the bytes never change */
        c->ops->owner(c, &meta->uid, &meta->gid);
        meta->blksize = c->ops->block_size(c);
        return;
    }
    /* a run directory: files and containers may change, .info texts do */
    if (hpc_rundir_decode(m, ino, &sn, &inner) != HPC_OK)
        return;
    meta->direct_io = HPC_INO_IS_TEXT(inner);
    g_mutex_lock(&m->lock);
    hpc_rundir_slot *s = sn ? hpc_rundir_slot_get(m, sn) : NULL;
    /* owners as on disk: the container's, else the node's own (lstat) */
    hpc_rundir_node *d = hpc_rundir_node_get(m, s ? s->node : inner);
    if (s && s->c) {
        s->c->ops->owner(s->c, &meta->uid, &meta->gid);
    } else if (d) {
        meta->uid = d->uid;
        meta->gid = d->gid;
    }
    /* a container not open yet shows its file's bits: ask again once open */
    if (s && !s->c)
        meta->timeout = 0;
    g_mutex_unlock(&m->lock);
}
