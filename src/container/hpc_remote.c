/* hpc_remote.c - the daemon's side of the helper process: the open and
 * the proxy format whose calls are requests; see hpc_remote.h.  The
 * process itself is hpc_helper.c, what the daemon remembers of names and
 * damaged objects hpc_remote_names.c (hpc_remote_int.h).
 *
 * A `helper` is one process: its control page and read buffers (one memfd
 * mapped by both), its channels (socket pairs), and a queue of the free
 * ones.  The container's `remote` holds the current helper (NULL once it
 * was killed: the next request starts another), the objects remembered as
 * damaged, the names seen (to name an object in the log), and the limits.
 * Nothing runs in the background: the thread that waits for an answer
 * polls with a tick and, only when the answer is late, reads the serving
 * thread's CPU time and the helper's RSS from /proc.
 */
#define _GNU_SOURCE       /* memfd_create, F_DUPFD_CLOEXEC */
#include "config.h"
#include "hpc_remote_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the open ------------------------------------------------------------ */

/* The one line of a mount-time refusal after the helper went away. */
static int refuse(hpc_container *c, const hpc_remote *r, hpc_helper *h, GError **err)
{
    char *why = NULL;
    hpc_helper_blame(h, 0, 1, &why);
    const char *member = hpc_helper_ctl(h)->member;
    char *who = member[0] && strcmp(member, c->path) != 0
                ? g_strdup_printf(", at its member %s", member) : g_strdup("");
    int rc = hpc_fail(err, HPC_E_CORRUPT, c->path, NULL, 0,
                      "%s %s opening it%s%s; not mounted", lib_of(r), why, who,
                      h->why ? "" : ": the file is damaged");
    g_free(who);
    g_free(why);
    return rc;
}

/* The sources of the open's answer: the daemon opens the same files (the
 * first time) or finds them unchanged (a restart). */
static int take_sources(hpc_container *c, const char *p, size_t len, int first, GError **err)
{
    uint32_t head[2];
    if (len < sizeof head)
        return hpc_fail(err, HPC_E_IO, c->path, NULL, 0, "the helper's answer is short");
    memcpy(head, p, sizeof head);
    c->fsblksize = head[0];
    size_t at = sizeof head;
    if (!first && head[1] != c->sources->len)
        return hpc_fail(err, HPC_E_CHANGED, c->path, NULL, 0, "changed since mount");
    for (uint32_t i = 0; i < head[1]; i++) {
        hpc_wire_source ws;
        if (len - at < sizeof ws)
            return hpc_fail(err, HPC_E_IO, c->path, NULL, 0, "the helper's answer is short");
        memcpy(&ws, p + at, sizeof ws);
        at += sizeof ws;
        if (len - at < ws.pathlen)
            return hpc_fail(err, HPC_E_IO, c->path, NULL, 0, "the helper's answer is short");
        char *path = g_strndup(p + at, ws.pathlen);
        at += ws.pathlen;
        const hpc_source *s = first ? c->host->add_source(c, path, err)
                                    : g_ptr_array_index(c->sources, i);
        int same = s && s->dev == ws.dev && s->ino == ws.ino && s->size == ws.size &&
                   s->mtime_ns == ws.mtime_ns;
        g_free(path);
        if (!s)
            return HPC_E_IO;
        if (!same)
            return hpc_fail(err, HPC_E_CHANGED, s->path, NULL, 0,
                            "changed while it was being opened (not the file the helper opened)");
    }
    return HPC_OK;
}

/* Start a helper and read its open's answer (channel 0). */
static int helper_open(hpc_container *c, hpc_remote *r, int first, hpc_helper **out, GError **err)
{
    hpc_helper *h = NULL;
    int rc = hpc_helper_start(c, r, &h, err);
    if (rc != HPC_OK)
        return rc;
    hpc_helper_waiter w = { .r = r, .h = h, .chan = 0, .open = 1, .t0 = g_get_monotonic_time(),
                            .cpu0 = -1 };
    hpc_rp rp;
    char *payload = NULL;
    if (hpc_helper_recv_all(&w, h->fd[0], &rp, sizeof rp) != 0 || rp.len > HPC_REMOTE_MAX_PAYLOAD) {
        rc = refuse(c, r, h, err);
        goto out;
    }
    payload = g_malloc(rp.len + 1);
    payload[rp.len] = '\0';
    if (hpc_helper_recv_all(&w, h->fd[0], payload, rp.len) != 0)
        rc = refuse(c, r, h, err);
    else if (rp.rc != HPC_OK) {
        rc = rp.rc < 0 ? rp.rc : HPC_E_IO;   /* the reader's own line */
        g_set_error_literal(err, HPC_ERROR, -rc, payload[0] ? payload : hpc_strerror(rc));
    } else
        rc = take_sources(c, payload, rp.len, first, err);
out:
    g_free(payload);
    if (rc != HPC_OK) {
        hpc_helper_kill(h, -1, NULL);
        hpc_helper_unref(h);
        return rc;
    }
    g_async_queue_push(h->free, GINT_TO_POINTER(1));
    *out = h;
    return HPC_OK;
}

/* ---- requests: the current helper, damaged objects, names ---------------- */

/* The current helper, started when there is none, with a reference. */
static int helper_get(hpc_container *c, hpc_remote *r, hpc_helper **out)
{
    int rc = HPC_OK;
    g_mutex_lock(&r->lock);
    if (r->cur && g_atomic_int_get(&r->cur->dead)) {
        hpc_helper_unref(r->cur);
        r->cur = NULL;
    }
    if (!r->cur && !r->broken) {
        GError *e = NULL;
        if (helper_open(c, r, 0, &r->cur, &e) != HPC_OK) {
            r->broken = g_strdup(e ? e->message : "the helper could not open it again");
            hpc_log("%s: a new helper could not open it: %s; every request fails until it "
                    "is mounted again", c->path, r->broken);
            g_clear_error(&e);
            hpc_remote_info_stale(c);
        }
    }
    if (r->broken) {
        rc = HPC_E_IO;
    } else {
        hpc_helper_log_follow(r->cur);
        g_atomic_int_inc(&r->cur->refs);
        *out = r->cur;
    }
    g_mutex_unlock(&r->lock);
    return rc;
}

/* One exchange on a free channel of the current helper.  GONE_NO with *rp
 * and *payload set; else the helper went away and *why says how. */
static hpc_helper_gone try_once(hpc_container *c, const hpc_rq *rq, const char *name, hpc_rp *rp,
                     char **payload, void *rbuf, char **why, int *wall, int *rc)
{
    hpc_remote *r = c->priv;
    hpc_helper *h;
    *rc = helper_get(c, r, &h);
    if (*rc != HPC_OK)
        return GONE_NO;
    int ch = GPOINTER_TO_INT(g_async_queue_pop(h->free)) - 1;
    g_atomic_int_inc(&h->busy);
    hpc_helper_waiter w = { .r = r, .h = h, .chan = ch, .t0 = g_get_monotonic_time(), .cpu0 = -1 };
    hpc_helper_gone g = GONE_NO;
    if (hpc_helper_exchange(&w, rq, name, rp, payload) != 0)
        g = hpc_helper_blame(h, ch, g_atomic_int_get(&h->busy) == 1, why);
    else if (rq->op == HPC_RQ_READ && rp->rc == HPC_OK)
        memcpy(rbuf, h->map + HPC_REMOTE_CTL + (size_t)ch * HPC_REMOTE_SHM,
               (size_t)MIN(rp->val, rq->size));
    *wall = h->wall;
    g_atomic_int_add(&h->busy, -1);
    g_async_queue_push(h->free, GINT_TO_POINTER(ch + 1));
    hpc_helper_unref(h);
    return g;
}

/* A request to the helper: HPC_OK with *rp (rp->rc is the reader's) and
 * *payload (g_free it), or HPC_E_IO.  An object remembered as damaged
 * fails at once; a request that outlived its helper through another's
 * fault is sent once more, to a new helper. */
static int call(hpc_container *c, const hpc_rq *rq, const char *name, hpc_rp *rp,
                char **payload, void *rbuf)
{
    hpc_remote *r = c->priv;
    char *key = hpc_remote_object_key(rq, name);
    int rc = hpc_remote_is_damaged(r, key) ? HPC_E_IO : HPC_OK;
    *payload = NULL;
    for (int attempt = 0; rc == HPC_OK && attempt < 2; attempt++) {
        char *why = NULL;
        int wall = 0;
        hpc_helper_gone g = try_once(c, rq, name, rp, payload, rbuf, &why, &wall, &rc);
        if (g == GONE_CULPRIT || (g == GONE_BYSTANDER && attempt == 1))
            rc = hpc_remote_lost(c, rq, name, key, why, g == GONE_CULPRIT && !wall);
        g_free(why);
        if (g == GONE_NO)
            break;
    }
    g_free(key);
    return rc;
}

/* ---- the proxy format ------------------------------------------------------ */

/* call() for requests without read bytes: the reader's result merged in. */
static int call_rc(hpc_container *c, const hpc_rq *rq, const char *name, hpc_rp *rp,
                   char **payload)
{
    int rc = call(c, rq, name, rp, payload, NULL);
    return rc == HPC_OK ? rp->rc : rc;
}

/* A request whose answer is one hpc_stat. */
static int stat_call(hpc_container *c, const hpc_rq *rq, const char *name, hpc_stat *st)
{
    hpc_rp rp;
    char *payload;
    int rc = call_rc(c, rq, name, &rp, &payload);
    if (rc == HPC_OK && rp.len != sizeof *st)
        rc = HPC_E_IO;
    if (rc == HPC_OK)
        memcpy(st, payload, sizeof *st);
    g_free(payload);
    return rc;
}

/* A lookup of a name of a listed directory: ask once for the attributes
 * and xattrs of the whole batch it was listed in (`ls -l` asks for all of
 * them, one round trip each otherwise). */
static int lookup_plus(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    uint64_t start;
    if (!hpc_remote_plus_start(c->priv, parent, name, &start))
        return 0;
    hpc_rq rq = { .op = HPC_RQ_READDIR, .ino = parent, .off = start, .size = 1 };
    hpc_rp rp;
    char *payload;
    int rc = call_rc(c, &rq, NULL, &rp, &payload);
    if (rc == HPC_OK)
        rc = hpc_remote_plus_take(c->priv, parent, payload, rp.len);
    g_free(payload);
    return rc == HPC_OK && hpc_remote_cached_lookup(c->priv, parent, name, st);
}

static int px_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    hpc_rq rq = { .op = HPC_RQ_LOOKUP, .len = (uint32_t)strlen(name), .ino = parent };
    if (rq.len > 4096)
        return HPC_E_NOENT;
    if (hpc_remote_cached_lookup(c->priv, parent, name, st) || lookup_plus(c, parent, name, st))
        return HPC_OK;
    int rc = stat_call(c, &rq, name, st);
    if (rc == HPC_OK)
        hpc_remote_remember(c->priv, parent, name, st);
    return rc;
}

/* The name under which a node was listed without its attributes. */
static char *listed_as(hpc_remote *r, hpc_ino ino, hpc_ino *parent)
{
    g_mutex_lock(&r->tables);
    const hpc_remote_node *rec = g_hash_table_lookup(r->nodes, &ino);
    char *name = rec && !rec->has_st ? g_strdup(rec->name) : NULL;
    if (name)
        *parent = rec->key.parent;
    g_mutex_unlock(&r->tables);
    return name;
}

static int px_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    if (hpc_remote_cached_stat(c->priv, ino, st))
        return HPC_OK;
    hpc_ino parent = 0;
    char *name = listed_as(c->priv, ino, &parent);
    int hit = name && lookup_plus(c, parent, name, st) && st->ino == ino;
    g_free(name);
    if (hit)
        return HPC_OK;
    hpc_rq rq = { .op = HPC_RQ_GETATTR, .ino = ino };
    return stat_call(c, &rq, NULL, st);
}

/* Ask the helper for the entries from cookie; keep the answer. */
static int batch_fetch(hpc_container *c, hpc_ino dir, uint64_t cookie, struct dir_batch *out)
{
    hpc_remote *r = c->priv;
    hpc_rq rq = { .op = HPC_RQ_READDIR, .ino = dir, .off = cookie };
    hpc_rp rp;
    char *payload;
    int rc = call_rc(c, &rq, NULL, &rp, &payload);
    if (rc != HPC_OK) {
        g_free(payload);
        return rc;
    }
    *out = (struct dir_batch){ .dir = dir, .start = cookie, .more = rp.val != 0,
                               .data = g_bytes_new_take(payload, rp.len) };
    g_mutex_lock(&r->tables);
    struct dir_batch *slot = &r->dirs[r->dir_next++ % G_N_ELEMENTS(r->dirs)];
    if (slot->data)
        g_bytes_unref(slot->data);
    *slot = *out;
    g_bytes_ref(slot->data);
    g_mutex_unlock(&r->tables);
    return HPC_OK;
}

/* Hand the entries of batch b after *cookie to fn; *stopped when fn took
 * no more. */
static int dir_serve(hpc_container *c, const struct dir_batch *b, hpc_dirent_fn fn, void *ctx,
                     uint64_t *cookie, int *stopped)
{
    gsize len;
    const char *p = g_bytes_get_data(b->data, &len), *at_name;
    size_t at = 0;
    int serving = b->start == *cookie;
    while (at < len) {
        hpc_wire_dirent d;
        if (hpc_remote_dirent_at(p, len, &at, &d, &at_name) != HPC_OK)
            return HPC_E_IO;
        if (!serving) {
            serving = d.next == *cookie;
            continue;
        }
        char small[256];         /* file names: 255 bytes at most, but no reliance on it */
        char *name = d.namelen < sizeof small ? small : g_malloc((gsize)d.namelen + 1);
        memcpy(name, at_name, d.namelen);
        name[d.namelen] = '\0';
        hpc_remote_remember_from(c->priv, b->dir, name, &d.st, &b->start);
        *stopped = fn(ctx, name, &d.st, d.next);
        if (name != small)
            g_free(name);
        if (*stopped)
            return HPC_OK;
        *cookie = d.next;
    }
    return HPC_OK;
}

/* Readdir answers come in batches of HPC_REMOTE_DIR_BATCH bytes, more than
 * the kernel takes per call: the daemon keeps the last few and serves the
 * following calls from them. */
static int px_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    for (;;) {
        struct dir_batch b;
        int stopped = 0, rc = HPC_OK;
        if (!hpc_remote_batch_find(c->priv, dir, cookie, &b))
            rc = batch_fetch(c, dir, cookie, &b);
        if (rc != HPC_OK)
            return rc;
        rc = dir_serve(c, &b, fn, ctx, &cookie, &stopped);
        g_bytes_unref(b.data);
        if (rc != HPC_OK || stopped || !b.more)
            return rc;
    }
}

static int px_readlink(hpc_container *c, hpc_ino ino, char **target)
{
    hpc_rq rq = { .op = HPC_RQ_READLINK, .ino = ino };
    hpc_rp rp;
    char *payload;
    int rc = call_rc(c, &rq, NULL, &rp, &payload);
    if (rc == HPC_OK)
        *target = g_strndup(payload, rp.len);
    g_free(payload);
    return rc;
}

/* Our block-cache space for a space of the helper's. */
static uint64_t our_space(hpc_remote *r, uint64_t theirs)
{
    if (theirs == 0)
        return 0;
    g_mutex_lock(&r->tables);
    uint64_t *ours = g_hash_table_lookup(r->spaces, &theirs);
    if (!ours) {
        ours = g_new(uint64_t, 1);
        *ours = hpc_space_new();
        g_hash_table_insert(r->spaces, g_memdup2(&theirs, sizeof theirs), ours);
    }
    uint64_t s = *ours;
    g_mutex_unlock(&r->tables);
    return s;
}

static int take_extents(hpc_container *c, const char *p, size_t len, hpc_extent *ext,
                        unsigned max, unsigned *n)
{
    size_t count = len / sizeof(hpc_wire_extent);
    if (len % sizeof(hpc_wire_extent) != 0)
        return HPC_E_IO;
    for (size_t i = 0; i < count && *n < max; i++) {
        hpc_wire_extent w;
        memcpy(&w, p + i * sizeof w, sizeof w);
        if (w.src >= c->sources->len)
            return HPC_E_IO;
        ext[*n] = (hpc_extent){ .src = g_ptr_array_index(c->sources, w.src), .off = w.off,
                                .len = w.len, .space = our_space(c->priv, w.space),
                                .space_size = w.space_size };
        (*n)++;
    }
    return HPC_OK;
}

static int px_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                  hpc_extent *ext, unsigned max, unsigned *n)
{
    hpc_remote *r = c->priv;
    *n = 0;
    g_mutex_lock(&r->tables);
    int computed = g_hash_table_contains(r->nomap, &ino);
    g_mutex_unlock(&r->tables);
    if (computed)
        return HPC_E_NOTSUP;
    hpc_rq rq = { .op = HPC_RQ_MAP, .ino = ino, .off = off, .size = len };
    hpc_rp rp;
    char *payload;
    int rc = call_rc(c, &rq, NULL, &rp, &payload);
    if (rc == HPC_OK)
        rc = take_extents(c, payload, rp.len, ext, max, n);
    g_free(payload);
    if (rc == HPC_E_NOTSUP) {
        g_mutex_lock(&r->tables);
        g_hash_table_add(r->nomap, g_memdup2(&ino, sizeof ino));
        g_mutex_unlock(&r->tables);
    }
    return rc;
}

/* hpc_remote_call: a request whose answer is a payload. */
static int side_call(hpc_container *c, uint32_t op, hpc_ino ino, uint64_t a, uint64_t b,
                   char **payload, size_t *len)
{
    hpc_rq rq = { .op = op, .ino = ino, .off = a, .size = b };
    hpc_rp rp;
    int rc = call_rc(c, &rq, NULL, &rp, payload);
    *len = rc == HPC_OK ? rp.len : 0;
    return rc;
}

static int px_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread)
{
    size_t done = 0;
    int rc = HPC_OK;
    hpc_remote *r = c->priv;
    if (r->side) {
        rc = r->real->remote_side->read(r->side, c, side_call, ino, buf, len, off, nread);
        if (rc != HPC_E_NOTSUP)
            return rc;
        rc = HPC_OK;
    }
    while (rc == HPC_OK && done < len) {
        hpc_rq rq = { .op = HPC_RQ_READ, .ino = ino, .off = off + done,
                      .size = MIN(len - done, (size_t)HPC_REMOTE_SHM) };
        hpc_rp rp;
        char *payload;
        rc = call(c, &rq, NULL, &rp, &payload, (char *)buf + done);
        g_free(payload);
        if (rc == HPC_OK)
            rc = rp.rc;
        if (rc != HPC_OK)
            break;
        if (rp.val > rq.size)
            rc = HPC_E_IO;
        else
            done += (size_t)rp.val;
        if (rp.val < rq.size)
            break;                   /* end of file */
    }
    *nread = rc == HPC_OK ? done : 0;
    return rc;
}

static int px_xattrs(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx)
{
    GBytes *b = hpc_remote_cached_xattrs(c->priv, ino);
    int rc = HPC_OK;
    if (!b) {
        hpc_rq rq = { .op = HPC_RQ_XATTRS, .ino = ino };
        hpc_rp rp;
        char *payload;
        rc = call_rc(c, &rq, NULL, &rp, &payload);
        if (rc != HPC_OK) {
            g_free(payload);
            return rc;
        }
        b = g_bytes_new_take(payload, rp.len);
        hpc_remote_keep_xattrs(c->priv, ino, b);
    }
    gsize len;
    const char *p = g_bytes_get_data(b, &len);
    for (size_t at = 0; at < len;) {
        uint32_t nl, vl;
        if (len - at < 2 * sizeof nl) {
            rc = HPC_E_IO;
            break;
        }
        memcpy(&nl, p + at, sizeof nl);
        memcpy(&vl, p + at + sizeof nl, sizeof vl);
        at += 2 * sizeof nl;
        if (len - at < (uint64_t)nl + 1 + vl) {
            rc = HPC_E_IO;
            break;
        }
        if (fn(ctx, p + at, p + at + nl + 1, vl))
            break;
        at += (size_t)nl + 1 + vl;
    }
    g_bytes_unref(b);
    return rc;
}

static int px_info(hpc_container *c, GString *out)
{
    hpc_remote *r = c->priv;
    g_mutex_lock(&r->lock);
    g_string_append_printf(out, "helper: %s runs in hpcmount-helper\n", lib_of(r));
    if (r->broken)
        g_string_append_printf(out, "broken: %s\n", r->broken);
    g_mutex_unlock(&r->lock);
    if (r->side)
        r->real->remote_side->info(r->side, out);
    g_mutex_lock(&r->tables);
    g_string_append(out, r->notes->str);
    g_mutex_unlock(&r->tables);
    hpc_rq rq = { .op = HPC_RQ_INFO };
    hpc_rp rp;
    char *payload;
    hpc_remote_building_info(1);
    int rc = call(c, &rq, NULL, &rp, &payload, NULL);
    hpc_remote_building_info(0);
    if (rc == HPC_OK && rp.rc == HPC_OK)
        g_string_append_len(out, payload, rp.len);
    else
        g_string_append(out, "warning: the format reader could not describe the container\n");
    g_free(payload);
    return HPC_OK;
}

/* hpc_format.chunks through the helper: its text as the payload. */
static int px_chunks(hpc_container *c, hpc_ino ino, GString *out)
{
    hpc_rq rq = { .op = HPC_RQ_CHUNKS, .ino = ino };
    hpc_rp rp;
    char *payload = NULL;
    int rc = call(c, &rq, NULL, &rp, &payload, NULL);
    if (rc == HPC_OK && (rc = rp.rc) == HPC_OK)
        g_string_append_len(out, payload, rp.len);
    g_free(payload);
    return rc;
}

static void px_close(hpc_container *c)
{
    hpc_remote *r = c->priv;
    if (!r)
        return;
    if (r->cur) {
        hpc_helper_kill(r->cur, -1, NULL);
        hpc_helper_unref(r->cur);
    }
    g_hash_table_destroy(r->damaged);
    g_hash_table_destroy(r->children);   /* before the records go */
    g_hash_table_destroy(r->nodes);
    g_hash_table_destroy(r->plussed);
    for (unsigned i = 0; i < G_N_ELEMENTS(r->dirs); i++)
        if (r->dirs[i].data)
            g_bytes_unref(r->dirs[i].data);
    g_hash_table_destroy(r->nomap);
    g_hash_table_destroy(r->spaces);
    g_string_free(r->notes, TRUE);
    g_free(r->broken);
    if (r->side)
        r->real->remote_side->state_free(r->side);
    g_mutex_clear(&r->lock);
    g_mutex_clear(&r->tables);
    g_free(r);
    c->priv = NULL;
}

/* ---- the proxies of the formats that need one ------------------------------ */

#define MAX_PROXIES 8
static hpc_format proxies[MAX_PROXIES];

static gpointer make_proxies(gpointer unused)
{
    (void)unused;
    unsigned n = 0;
    for (const hpc_format *const *f = hpc_formats; *f && n < MAX_PROXIES; f++) {
        if (!(*f)->sandbox_lib)
            continue;
        proxies[n++] = (hpc_format){
            .name = (*f)->name, .sandbox_lib = (*f)->sandbox_lib, .probe = (*f)->probe,
            .close = px_close, .lookup = px_lookup, .getattr = px_getattr,
            .readdir = px_readdir, .readlink = px_readlink, .map = px_map, .read = px_read,
            .xattrs = px_xattrs, .info = px_info,
            .chunks = (*f)->chunks ? px_chunks : NULL,
        };
    }
    return NULL;
}

static const hpc_format *proxy_of(const hpc_format *real)
{
    static GOnce once = G_ONCE_INIT;
    g_once(&once, make_proxies, NULL);
    for (unsigned i = 0; i < MAX_PROXIES && proxies[i].name; i++)
        if (strcmp(proxies[i].name, real->name) == 0)
            return &proxies[i];
    return NULL;
}

int hpc_remote_is_proxy(const hpc_format *f)
{
    return f && f->close == px_close;
}

static hpc_remote *remote_new(const hpc_container *c)
{
    hpc_remote *r = g_new0(hpc_remote, 1);
    r->real = c->format;
    g_mutex_init(&r->lock);
    g_mutex_init(&r->tables);
    r->damaged = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->nodes = hpc_remote_nodes_new();
    r->children = hpc_remote_children_new();
    r->plussed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->nomap = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    r->spaces = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    r->notes = g_string_new(NULL);
    r->cpu = c->opts.helper_cpu > 0 ? c->opts.helper_cpu : HPC_REMOTE_CPU;
    r->wait = c->opts.helper_wait > 0 ? c->opts.helper_wait : HPC_REMOTE_WAIT;
    const hpc_remote_side *side = r->real->remote_side;
    uint64_t lib = side && side->library_bytes ? side->library_bytes(&c->opts) : 0;
    r->mem = c->opts.helper_mem ? c->opts.helper_mem
                                : HPC_REMOTE_MEM_BASE + 2 * (c->opts.cache_size + lib);
    if (r->real->remote_side)
        r->side = r->real->remote_side->state_new(c->opts.cache_size ? c->opts.cache_size
                                                                      : HPC_DEFAULT_CACHE_SIZE);
    return r;
}

int hpc_remote_open(hpc_container *c, GError **err)
{
    const hpc_format *proxy = proxy_of(c->format);
    if (!proxy)
        return hpc_fail(err, HPC_E_INVAL, c->path, NULL, 0, "no helper for the %s reader",
                        c->format->name);
    hpc_remote *r = remote_new(c);
    c->priv = r;
    c->format = proxy;          /* from here on close() is px_close */
    hpc_helper *h = NULL;
    int rc = helper_open(c, r, 1, &h, err);
    if (rc != HPC_OK) {
        const hpc_format *real = r->real;
        px_close(c);
        c->format = real;        /* the caller's cleanup: nothing of ours left */
        return rc;
    }
    r->cur = h;
    return HPC_OK;
}
