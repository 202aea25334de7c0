/* hpc_rundir_nodes.c - a run directory as an implementation of the node
 * interface (hpc_rundir.h): each call goes to a node of the directory
 * itself (read from disk on every listing, so files that appear or vanish
 * show at once; what a file is, probed again when its size or mtime
 * changed) or into a container slot (hpc_rundir.c keeps the tables),
 * its ids translated outward.  A container that reports its source changed
 * is closed and opened again on its next use; one that failed to open is
 * an empty directory with a .info, tried again only once its file changed.
 */
#define _GNU_SOURCE       /* O_PATH */
#include "hpc_rundir_int.h"
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

static hpc_rundir *of(hpc_nodes *n)
{
    return (hpc_rundir *)n;
}

/* ---- the directory layer's .info ---------------------------------------- */

static GString *dir_info(hpc_rundir *rd)
{
    GString *o = g_string_new(NULL);
    g_mutex_lock(&rd->lock);
    g_string_append_printf(o, "format: directory\nsource: %s\ncontainers_seen: %u\n"
                           "containers_open: %u\nmax_containers: %u\n\n",
                           rd->root, rd->slots->len, rd->open.length, rd->max_open);
    g_string_append(o, "path\tstate\tformat_or_reason\n");
    for (guint i = 0; i < rd->slots->len; i++) {
        hpc_rundir_slot *s = g_ptr_array_index(rd->slots, i);
        hpc_rundir_node *d = hpc_rundir_node_get(rd, s->node);
        g_string_append_printf(o, "%s\t%s\t%s\n", d ? d->rel : "?",
                               s->c ? "open" : s->error ? "failed" : "closed",
                               s->c ? s->c->ops->format_name(s->c) : s->error ? s->error : "-");
    }
    g_mutex_unlock(&rd->lock);
    return o;
}

/* .info of a container that failed to open: the reason, one line. */
static GString *failed_info(hpc_rundir *rd, hpc_rundir_slot *s)
{
    GString *o = g_string_new(NULL);
    g_mutex_lock(&rd->lock);
    g_string_append_printf(o, "format: unknown\nsource: %s\nerror: %s\n", s->path,
                           s->error ? s->error : "cannot be opened");
    g_mutex_unlock(&rd->lock);
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
static uint32_t node_bits(hpc_rundir *rd, uint64_t id)
{
    g_mutex_lock(&rd->lock);
    hpc_rundir_node *d = hpc_rundir_node_get(rd, id);
    uint32_t mode = d ? hpc_rundir_mode(rd, d->uid, d->gid, d->mode) : 0;
    g_mutex_unlock(&rd->lock);
    return mode & HPC_PERM_ALL;
}

/* A text node (.info) readable as its directory is: bits. */
static void text_stat(hpc_rundir *rd, hpc_ino ino, GString *text, uint32_t bits, hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = ino;
    st->mode = hpc_perm_mode(HPC_MODE_FILE, bits);
    st->nlink = 1;
    st->size = text->len;
    st->mtime = rd->mtime;
    g_string_free(text, TRUE);
}

/* The read bits of the run directory itself (its .info's). */
static uint32_t root_bits(hpc_rundir *rd)
{
    return hpc_rundir_mode(rd, rd->uid, rd->gid, rd->mode) & HPC_PERM_ALL;
}

/* ---- calls into a container's slot -------------------------------------- */

/* Where a call on an id goes.  Two cases: the id is the run directory's
 * own node (c NULL, sn 0); or it lies in container slot sn (s taken, c
 * NULL when the container failed to open).  Every call that enters
 * leaves. */
typedef struct route {
    hpc_nodes *c;                /* the container's nodes */
    hpc_ino inner;               /* the id inside c */
    uint32_t sn;
    hpc_rundir_slot *s;
} route;

static int enter(hpc_rundir *rd, hpc_ino ino, route *r)
{
    memset(r, 0, sizeof *r);
    r->inner = ino;
    int rc = hpc_rundir_decode(rd, ino, &r->sn, &r->inner);
    if (rc != HPC_OK || r->sn == 0)
        return rc;
    return hpc_rundir_slot_acquire(rd, r->sn, &r->s, &r->c);
}

/* The id is a node of the run directory itself. */
static gboolean in_dir(const route *r)
{
    return !r->c && !r->s;
}

static int leave(hpc_rundir *rd, const route *r, int rc)
{
    return r->s ? hpc_rundir_slot_release(rd, r->s, rc) : rc;
}

/* Translate a container's attributes to mount ids (in place). */
static void outward(hpc_rundir *rd, uint32_t sn, hpc_stat *st)
{
    if (HPC_INO_IS_TEXT(st->ino))
        st->partial = 1;     /* its text changes: the kernel must ask again */
    st->ino = hpc_rundir_encode(rd, sn, st->ino);
}

typedef struct fwd_dir {
    hpc_rundir *rd;
    uint32_t slot;
    hpc_dirent_fn fn;
    void *ctx;
} fwd_dir;

static int fwd_dirent(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    fwd_dir *f = p;
    hpc_stat s = *st;
    outward(f->rd, f->slot, &s);
    return f->fn(f->ctx, name, &s, next);
}

/* A container slot's failed state: its root is an empty directory with
 * .info, the reason. */
static int failed_call(hpc_rundir *rd, hpc_rundir_slot *s, uint32_t sn, hpc_ino inner, hpc_stat *st)
{
    if (inner == HPC_INO_ROOT) {
        memset(st, 0, sizeof *st);
        st->ino = ((hpc_ino)sn << SLOT_SHIFT) | HPC_INO_ROOT;
        st->mode = hpc_perm_mode(HPC_MODE_DIR, node_bits(rd, s->node));
        st->nlink = 2;
        st->mtime = rd->mtime;
        return HPC_OK;
    }
    if (HPC_INO_IS_TEXT(inner)) {
        text_stat(rd, ((hpc_ino)sn << SLOT_SHIFT) | inner, as_text(inner, failed_info(rd, s)),
                  node_bits(rd, s->node), st);
        return HPC_OK;
    }
    return HPC_E_NOENT;
}

/* ---- tree --------------------------------------------------------------- */

/* Look name up in a directory of the run directory. */
static int dir_lookup(hpc_rundir *rd, hpc_ino parent, const char *name, hpc_stat *st)
{
    hpc_ino t = parent == HPC_INO_ROOT ? text_ino(name) : 0;
    if (t) {
        text_stat(rd, t, as_text(t, dir_info(rd)), root_bits(rd), st);
        return HPC_OK;
    }
    char *rel = hpc_rundir_node_rel(rd, parent);
    if (!rel)
        return HPC_E_NOENT;
    char *child = *rel ? g_build_filename(rel, name, NULL) : g_strdup(name);
    int rc = strchr(name, '/') ? HPC_E_NOENT : hpc_rundir_node_at(rd, child, st);
    g_free(child);
    g_free(rel);
    return rc;
}

/* Attributes of a node of the run directory. */
static int dir_getattr(hpc_rundir *rd, hpc_ino ino, hpc_stat *st)
{
    if (HPC_INO_IS_TEXT(ino)) {
        text_stat(rd, ino, as_text(ino, dir_info(rd)), root_bits(rd), st);
        return HPC_OK;
    }
    char *rel = hpc_rundir_node_rel(rd, ino);
    int rc = rel ? hpc_rundir_node_at(rd, rel, st) : HPC_E_NOENT;
    g_free(rel);
    return rc;
}

static int rd_lookup(hpc_nodes *n, hpc_ino parent, const char *name, hpc_stat *st)
{
    hpc_rundir *rd = of(n);
    route r;
    int rc = enter(rd, parent, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r))
        return dir_lookup(rd, parent, name, st);
    if (!r.c)
        rc = r.inner == HPC_INO_ROOT && text_ino(name)
                 ? failed_call(rd, r.s, r.sn, text_ino(name), st) : HPC_E_NOENT;
    else if ((rc = r.c->ops->lookup(r.c, r.inner, name, st)) == HPC_OK)
        outward(rd, r.sn, st);
    return leave(rd, &r, rc);
}

static int rd_getattr(hpc_nodes *n, hpc_ino ino, hpc_stat *st)
{
    hpc_rundir *rd = of(n);
    route r;
    int rc = enter(rd, ino, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r))
        return dir_getattr(rd, ino, st);
    if (!r.c)
        rc = failed_call(rd, r.s, r.sn, r.inner, st);
    else if ((rc = r.c->ops->getattr(r.c, r.inner, st)) == HPC_OK)
        outward(rd, r.sn, st);
    return leave(rd, &r, rc);
}

static int cmp_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* List a directory of the run directory: ".", "..", (root) ".info", then
 * its entries sorted by name; cookie k resumes after the k-th. */
static int dir_readdir(hpc_rundir *rd, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    hpc_stat self, st;
    char *rel = hpc_rundir_node_rel(rd, dir);
    int rc = rel ? hpc_rundir_node_at(rd, rel, &self) : HPC_E_NOENT;
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
        text_stat(rd, HPC_INO_INFO, dir_info(rd), root_bits(rd), &st);
        if (fn(ctx, ".info", &st, k))
            goto out;
    }
    char *path = hpc_rundir_abs_path(rd, rel);
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
        int found = hpc_rundir_node_at(rd, child, &st) == HPC_OK;
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
static void failed_readdir(hpc_rundir *rd, const route *r, uint64_t cookie, hpc_dirent_fn fn,
                           void *ctx)
{
    hpc_stat root, info;
    failed_call(rd, r->s, r->sn, HPC_INO_ROOT, &root);
    failed_call(rd, r->s, r->sn, HPC_INO_INFO, &info);
    if (cookie < 1 && fn(ctx, ".", &root, 1))
        return;
    if (cookie < 2 && fn(ctx, "..", &root, 2))
        return;
    if (cookie < 3)
        fn(ctx, ".info", &info, 3);
}

static int rd_readdir(hpc_nodes *n, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn,
                      void *ctx)
{
    hpc_rundir *rd = of(n);
    route r;
    int rc = enter(rd, dir, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r))
        return dir_readdir(rd, dir, cookie, fn, ctx);
    if (r.c) {
        fwd_dir f = { rd, r.sn, fn, ctx };
        rc = r.c->ops->readdir(r.c, r.inner, cookie, fwd_dirent, &f);
    } else if (r.inner != HPC_INO_ROOT) {
        rc = HPC_E_NOENT;
    } else {
        failed_readdir(rd, &r, cookie, fn, ctx);
    }
    return leave(rd, &r, rc);
}

static int rd_readlink(hpc_nodes *n, hpc_ino ino, char **target)
{
    hpc_rundir *rd = of(n);
    route r;
    int rc = enter(rd, ino, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r)) {
        char *rel = hpc_rundir_node_rel(rd, ino), *path = rel ? hpc_rundir_abs_path(rd, rel) : NULL;
        *target = path ? g_file_read_link(path, NULL) : NULL;
        g_free(rel);
        g_free(path);
        return *target ? HPC_OK : HPC_E_INVAL;
    }
    rc = r.c ? r.c->ops->readlink(r.c, r.inner, target) : HPC_E_INVAL;
    return leave(rd, &r, rc);
}

/* ---- data --------------------------------------------------------------- */

/* rel, opened beneath the run directory without following a symbolic
 * link on the way: one swapped in after the listing never leads the
 * daemon outside (the links it shows, the kernel follows with the
 * reader's own rights). */
static int open_beneath(hpc_rundir *rd, const char *rel)
{
    int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
#ifdef SYS_openat2
    struct open_how how = { .flags = (uint64_t)flags,
                            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
    int fd = (int)syscall(SYS_openat2, rd->root_fd, rel, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS)
        return fd;
#endif
    return openat(rd->root_fd, rel, flags | O_NOFOLLOW);
}

/* A plain file of the run directory: pread of the real file. */
static int plain_read(hpc_rundir *rd, hpc_ino ino, void *buf, size_t len, uint64_t off,
                      size_t *nread)
{
    char *rel = hpc_rundir_node_rel(rd, ino);
    int rc = HPC_E_NOENT, fd = rel && *rel ? open_beneath(rd, rel) : -1;
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

static int rd_read(hpc_nodes *n, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread)
{
    hpc_rundir *rd = of(n);
    *nread = 0;
    route r;
    int rc = enter(rd, ino, &r);
    if (rc != HPC_OK)
        return rc;
    if (in_dir(&r))
        return HPC_INO_IS_TEXT(ino) ? text_read(as_text(ino, dir_info(rd)), buf, len, off, nread)
                                    : plain_read(rd, ino, buf, len, off, nread);
    if (r.c)
        rc = r.c->ops->read(r.c, r.inner, buf, len, off, nread);
    else
        rc = HPC_INO_IS_TEXT(r.inner)
                 ? text_read(as_text(r.inner, failed_info(rd, r.s)), buf, len, off, nread)
                 : HPC_E_NOENT;
    return leave(rd, &r, rc);
}

static int rd_map(hpc_nodes *n, hpc_ino ino, uint64_t off, uint64_t len, hpc_extent *ext,
                  unsigned max, unsigned *count)
{
    hpc_rundir *rd = of(n);
    *count = 0;
    route r;
    int rc = enter(rd, ino, &r);
    if (rc != HPC_OK)
        return rc;
    rc = r.c ? r.c->ops->map(r.c, r.inner, off, len, ext, max, count) : HPC_E_NOTSUP;
    if (rc != HPC_OK)
        leave(rd, &r, rc);   /* on success a slot stays taken until unmap */
    return rc;
}

/* The slot a map took (its container cannot close while taken) is let go,
 * after the container's own unmap. */
static void rd_unmap(hpc_nodes *n, hpc_ino ino)
{
    hpc_rundir *rd = of(n);
    uint32_t sn;
    hpc_ino inner;
    if (hpc_rundir_decode(rd, ino, &sn, &inner) != HPC_OK || sn == 0)
        return;
    g_mutex_lock(&rd->lock);
    hpc_rundir_slot *s = hpc_rundir_slot_get(rd, sn);
    hpc_nodes *c = s ? s->c : NULL;
    g_mutex_unlock(&rd->lock);
    if (c)
        hpc_nodes_unmap(c, inner);
    if (s)
        hpc_rundir_slot_release(rd, s, HPC_OK);
}

/* The open container of slot sn, held by a map (no acquire), or NULL. */
static hpc_nodes *held_container(hpc_rundir *rd, uint32_t sn, hpc_rundir_slot **out)
{
    g_mutex_lock(&rd->lock);
    hpc_rundir_slot *s = hpc_rundir_slot_get(rd, sn);
    hpc_nodes *c = s ? s->c : NULL;
    g_mutex_unlock(&rd->lock);
    *out = s;
    return c;
}

static int rd_extents_unchanged(hpc_nodes *n, hpc_ino ino, const hpc_extent *ext,
                                unsigned count)
{
    hpc_rundir *rd = of(n);
    uint32_t sn;
    hpc_ino inner;
    hpc_rundir_slot *s;
    if (hpc_rundir_decode(rd, ino, &sn, &inner) != HPC_OK || sn == 0)
        return HPC_OK;
    hpc_nodes *c = held_container(rd, sn, &s);
    int rc = c ? c->ops->extents_unchanged(c, inner, ext, count) : HPC_OK;
    if (rc == HPC_E_CHANGED) {
        g_mutex_lock(&rd->lock);
        s->stale = 1;
        g_mutex_unlock(&rd->lock);
    }
    return rc;
}

static int rd_sources_unchanged(hpc_nodes *n, hpc_ino ino)
{
    hpc_rundir *rd = of(n);
    route r;
    int rc = enter(rd, ino, &r);
    if (rc != HPC_OK)
        return r.sn ? rc : HPC_OK;   /* an unknown id has no sources */
    return leave(rd, &r, r.c ? r.c->ops->sources_unchanged(r.c, r.inner) : HPC_OK);
}

/* statfs: the bytes of the files under the run directory as statvfs
 * tells (a whole file system's: the closest cheap answer). */
static uint64_t rd_source_bytes(hpc_nodes *n)
{
    struct statvfs sv;
    if (statvfs(of(n)->root, &sv) != 0)
        return 0;
    return (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
}

static uint32_t rd_block_size(hpc_nodes *n)
{
    (void)n;
    return DIR_BLOCK_SIZE;
}

static const char *rd_format_name(hpc_nodes *n)
{
    (void)n;
    return "directory";
}

/* ---- extended attributes, kernel hints ---------------------------------- */

/* The body of a call that the container holding ino answers: expr (on
 * r.c and r.inner), or none where ino is the run directory's own node or
 * its container failed to open. */
#define RD_FORWARD(n, ino, expr, none)                              \
    do {                                                            \
        hpc_rundir *rd_ = of(n);                                    \
        route r;                                                    \
        int rc_ = enter(rd_, (ino), &r);                            \
        if (rc_ == HPC_OK)                                          \
            rc_ = r.c ? (expr) : (none);                            \
        return leave(rd_, &r, rc_);                                 \
    } while (0)

static int rd_getxattr(hpc_nodes *n, hpc_ino ino, const char *name, void **value,
                       size_t *len)
{
    RD_FORWARD(n, ino, r.c->ops->getxattr(r.c, r.inner, name, value, len), HPC_E_NODATA);
}

static int rd_chunks(hpc_nodes *n, hpc_ino ino, GString *out)
{
    RD_FORWARD(n, ino, r.c->ops->chunks(r.c, r.inner, out), HPC_E_NOTSUP);
}

static int rd_listxattr(hpc_nodes *n, hpc_ino ino, GString *out)
{
    RD_FORWARD(n, ino, r.c->ops->listxattr(r.c, r.inner, out), HPC_OK);
}

/* Files and containers may change, .info texts do: short timeouts, no
 * pages kept.  Owners as on disk: an open container's, else the node's
 * own (lstat); a container not open yet shows its file's bits, so the
 * kernel asks again once it is. */
static void rd_meta(hpc_nodes *n, hpc_ino ino, hpc_node_meta *meta)
{
    hpc_rundir *rd = of(n);
    uint32_t sn;
    hpc_ino inner = 0;
    memset(meta, 0, sizeof *meta);
    meta->timeout = DIR_TIMEOUT;
    meta->uid = rd->uid;
    meta->gid = rd->gid;
    meta->blksize = DIR_BLOCK_SIZE;
    if (hpc_rundir_decode(rd, ino, &sn, &inner) != HPC_OK)
        return;
    meta->direct_io = HPC_INO_IS_TEXT(inner);
    g_mutex_lock(&rd->lock);
    hpc_rundir_slot *s = sn ? hpc_rundir_slot_get(rd, sn) : NULL;
    hpc_rundir_node *d = hpc_rundir_node_get(rd, s ? s->node : inner);
    hpc_node_meta cm;
    if (s && s->c) {
        s->c->ops->meta(s->c, inner, &cm);
        meta->uid = cm.uid;
        meta->gid = cm.gid;
    } else if (d) {
        meta->uid = d->uid;
        meta->gid = d->gid;
    }
    if (s && !s->c)
        meta->timeout = 0;
    g_mutex_unlock(&rd->lock);
}

/* ---- open files ---------------------------------------------------------- */

/* An open file of a container reads the slot's container itself, counted
 * so that the LRU's close of the slot leaves it open until the file lets
 * go; the directory's own nodes and a failed container's .info are read
 * through the directory. */
static int rd_hold(hpc_nodes *n, hpc_ino ino, hpc_nodes **src, hpc_ino *inner)
{
    hpc_rundir *rd = of(n);
    route r;
    *src = n;
    *inner = ino;
    int rc = enter(rd, ino, &r);
    if (rc != HPC_OK || !r.c)
        return leave(rd, &r, rc);
    g_mutex_lock(&rd->lock);
    hpc_rundir_hold(rd, r.c, r.sn);
    g_mutex_unlock(&rd->lock);
    *src = r.c;
    *inner = r.inner;
    return leave(rd, &r, HPC_OK);
}

static void rd_release(hpc_nodes *n, hpc_nodes *src)
{
    hpc_rundir *rd = of(n);
    g_mutex_lock(&rd->lock);
    gboolean last = hpc_rundir_unhold(rd, src);
    g_mutex_unlock(&rd->lock);
    if (last)
        hpc_nodes_close(src);
}

static void rd_close(hpc_nodes *n)
{
    hpc_rundir_free(of(n));
}

static const hpc_nodes_ops rundir_ops = {
    .lookup = rd_lookup,
    .getattr = rd_getattr,
    .readdir = rd_readdir,
    .readlink = rd_readlink,
    .read = rd_read,
    .map = rd_map,
    .unmap = rd_unmap,
    .getxattr = rd_getxattr,
    .listxattr = rd_listxattr,
    .chunks = rd_chunks,
    .sources_unchanged = rd_sources_unchanged,
    .extents_unchanged = rd_extents_unchanged,
    .hold = rd_hold,
    .release = rd_release,
    .format_name = rd_format_name,
    .meta = rd_meta,
    .source_bytes = rd_source_bytes,
    .block_size = rd_block_size,
    .close = rd_close,
};

int hpc_rundir_open(const char *root, const hpc_options *opts, hpc_nodes **out,
                    GError **err)
{
    hpc_rundir *rd = g_new0(hpc_rundir, 1);
    rd->head.ops = &rundir_ops;
    int rc = hpc_rundir_init(rd, root, opts, err);
    if (rc != HPC_OK) {
        hpc_rundir_free(rd);
        rd = NULL;
    }
    *out = rd ? &rd->head : NULL;
    return rc;
}
