/* hpcmount-helper - runs a reader built on a third-party library (libhdf5,
 * libhdf4) for one container, on behalf of hpcmount or hpcdump, which
 * start it with posix_spawn (or have its fork server fork it) and
 * supervise it (src/container/hpc_remote.h).
 *
 *   hpcmount-helper PROTO FORMAT AS_LIMIT SOURCE [OPTION=VALUE...]
 *   hpcmount-helper PROTO --fork-server
 *
 * fd 3 is a memfd (control page, then one read buffer per channel), fds
 * 4.. the channel sockets.  The helper opens SOURCE with the real reader,
 * walks its first nodes, answers on channel 0 (the reader's error line, or
 * the sources it opened), then serves requests on every channel, one
 * thread each.  It ends when the daemon closes the channels.  The second
 * form is the fork server (hpc_remote.h): fd 3 is its socket, and each
 * request forks a helper of the first form.  Not meant to be run by hand.
 */
#define _GNU_SOURCE       /* gettid */
#include "config.h"
#include "hpc_format.h"
#include "hpc_remote.h"
#include "hpc_sandbox.h"
#include "hpc_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define FS_HIGH_FD 64            /* the fork server's socket, above a helper's fds */

typedef struct server {
    hpc_container *c;
    char *map;                   /* control page, then the buffers */
    GHashTable *index;           /* hpc_source * -> index + 1 */
} server;

typedef struct chan {
    server *s;
    int idx, fd;
    GByteArray *out;             /* the answer's payload */
} chan;

/* The daemon went away: nothing more to serve. */
static G_GNUC_NORETURN void daemon_gone(void)
{
    _exit(0);
}

/* The daemon's end of every channel closes when it ends, however it ends
 * (hpcdump stopped by ^C, a daemon killed): then the helper ends too, also
 * during its open, before any thread waits for requests on the channels.
 * Needed since the helper has a session of its own, which the terminal's
 * signals do not reach (main). */
static gpointer watch_daemon(gpointer unused)
{
    (void)unused;
    struct pollfd pf[HPC_REMOTE_CHANNELS];
    for (int i = 0; i < HPC_REMOTE_CHANNELS; i++)
        pf[i] = (struct pollfd){ .fd = HPC_REMOTE_FD_CHAN + i, .events = POLLRDHUP };
    for (;;) {
        if (poll(pf, HPC_REMOTE_CHANNELS, -1) < 0)
            continue;            /* EINTR */
        for (int i = 0; i < HPC_REMOTE_CHANNELS; i++)
            if (pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))
                daemon_gone();
    }
    return NULL;
}

static void answer(chan *ch, int rc, uint64_t val)
{
    hpc_rp rp = { .rc = rc, .len = ch->out->len, .val = val };
    if (hpc_remote_io(ch->fd, &rp, sizeof rp, 0) != 0 ||
        (rp.len && hpc_remote_io(ch->fd, ch->out->data, rp.len, 0) != 0))
        daemon_gone();
    g_byte_array_set_size(ch->out, 0);
}

/* ---- the reader's calls (with the core's fall-backs to c->tree) ------------ */

static int do_stat(chan *ch, const hpc_rq *rq, const char *name)
{
    hpc_container *c = ch->s->c;
    hpc_stat st = { 0 };
    int rc;
    if (rq->op == HPC_RQ_LOOKUP)
        rc = c->format->lookup ? c->format->lookup(c, rq->ino, name, &st)
                               : hpc_tree_lookup(c->tree, rq->ino, name, &st);
    else
        rc = c->format->getattr ? c->format->getattr(c, rq->ino, &st)
                                : hpc_tree_getattr(c->tree, rq->ino, &st);
    if (rc == HPC_OK)
        g_byte_array_append(ch->out, (const guint8 *)&st, sizeof st);
    return rc;
}

static int dirent_out(void *ctx, const char *name, const hpc_stat *st, uint64_t next)
{
    chan *ch = ctx;
    if (ch->out->len >= HPC_REMOTE_DIR_BATCH)
        return 1;                /* full: the daemon asks again from here */
    hpc_wire_dirent d = { .st = *st, .next = next, .namelen = (uint32_t)strlen(name) };
    g_byte_array_append(ch->out, (const guint8 *)&d, sizeof d);
    g_byte_array_append(ch->out, (const guint8 *)name, d.namelen);
    return 0;
}

static int do_xattrs(chan *ch, const hpc_rq *rq);

/* "Plus" (rq->size 1): every entry also with its full attributes and its
 * xattr answer (u32 length, then the bytes), so that the daemon answers
 * the lookups and getxattrs of `ls -l` of the directory without a round
 * trip each.  Done after the reader's readdir returned: its callback must
 * not call back into the reader. */
static int dir_plus(chan *ch)
{
    hpc_container *c = ch->s->c;
    GByteArray *plain = ch->out;
    ch->out = g_byte_array_new();
    GByteArray *out = g_byte_array_new();
    for (size_t at = 0; at + sizeof(hpc_wire_dirent) <= plain->len;) {
        hpc_wire_dirent d;
        memcpy(&d, plain->data + at, sizeof d);
        const guint8 *name = plain->data + at + sizeof d;
        at += sizeof d + d.namelen;
        hpc_stat st = { 0 };
        if (d.st.partial && c->format->getattr && c->format->getattr(c, d.st.ino, &st) == HPC_OK)
            d.st = st;
        hpc_rq x = { .op = HPC_RQ_XATTRS, .ino = d.st.ino };
        g_byte_array_set_size(ch->out, 0);
        uint32_t xlen = do_xattrs(ch, &x) == HPC_OK ? ch->out->len : UINT32_MAX;
        g_byte_array_append(out, (const guint8 *)&d, sizeof d);
        g_byte_array_append(out, name, d.namelen);
        g_byte_array_append(out, (const guint8 *)&xlen, sizeof xlen);
        if (xlen != UINT32_MAX)
            g_byte_array_append(out, ch->out->data, xlen);
    }
    g_byte_array_free(ch->out, TRUE);
    g_byte_array_free(plain, TRUE);
    ch->out = out;
    return HPC_OK;
}

static int do_readdir(chan *ch, const hpc_rq *rq, uint64_t *more)
{
    hpc_container *c = ch->s->c;
    int rc = c->format->readdir ? c->format->readdir(c, rq->ino, rq->off, dirent_out, ch)
                                : hpc_tree_readdir(c->tree, rq->ino, rq->off, dirent_out, ch);
    *more = ch->out->len >= HPC_REMOTE_DIR_BATCH;
    return rc == HPC_OK && rq->size == 1 ? dir_plus(ch) : rc;
}

static int do_readlink(chan *ch, const hpc_rq *rq)
{
    hpc_container *c = ch->s->c;
    char *t = NULL;
    int rc = c->format->readlink ? c->format->readlink(c, rq->ino, &t)
           : c->tree ? hpc_tree_readlink(c->tree, rq->ino, &t) : HPC_E_INVAL;
    if (rc == HPC_OK && t)
        g_byte_array_append(ch->out, (const guint8 *)t, (guint)strlen(t));
    g_free(t);
    return rc;
}

static int do_map(chan *ch, const hpc_rq *rq)
{
    hpc_container *c = ch->s->c;
    hpc_extent ext[HPC_REMOTE_MAX_EXTENTS];
    unsigned n = 0;
    if (!c->format->map)
        return HPC_E_NOTSUP;
    int rc = c->format->map(c, rq->ino, rq->off, rq->size, ext, HPC_REMOTE_MAX_EXTENTS, &n);
    for (unsigned i = 0; rc == HPC_OK && i < n; i++) {
        guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(ch->s->index, ext[i].src));
        if (idx == 0)
            return HPC_E_IO;     /* a source the open did not report */
        hpc_wire_extent w = { .src = idx - 1, .off = ext[i].off, .len = ext[i].len,
                              .space = ext[i].space, .space_size = ext[i].space_size };
        g_byte_array_append(ch->out, (const guint8 *)&w, sizeof w);
    }
    return rc;
}

/* Fault injection for tests/mount/helper_faults.sh (HPCMOUNT_HELPER_FAULT=
 * KIND:SIZE, KIND:info or KIND:open): a read of any node of SIZE bytes
 * (or the building of .info, or the open) crashes the helper (crash),
 * loops (spin), grows without bound (grow) or sleeps (sleep), as damaged
 * files make the libraries do.  at: "info", "open", or NULL for a read of
 * node ino. */
static void fault_on(hpc_container *c, hpc_ino ino, const char *at)
{
    static const char *kind, *what;
    if (!kind) {
        const char *f = g_getenv("HPCMOUNT_HELPER_FAULT");
        const char *colon = f ? strchr(f, ':') : NULL;
        what = colon ? colon + 1 : "";
        kind = colon ? g_strndup(f, (gsize)(colon - f)) : "";
    }
    hpc_stat st = { 0 };
    if (at ? strcmp(what, at) != 0
           : !*what || !c->format->getattr || c->format->getattr(c, ino, &st) != HPC_OK ||
               st.size != g_ascii_strtoull(what, NULL, 10))
        return;
    volatile guint64 spin = 0;
    while (strcmp(kind, "spin") == 0)
        spin++;
    while (strcmp(kind, "grow") == 0) {
        char *p = malloc(16u << 20);
        if (p)
            memset(p, 1, 16u << 20);
    }
    if (strcmp(kind, "sleep") == 0)
        pause();
    if (strcmp(kind, "crash") == 0)
        raise(SIGSEGV);
}

static int do_read(chan *ch, const hpc_rq *rq, uint64_t *nread)
{
    hpc_container *c = ch->s->c;
    size_t got = 0;
    fault_on(c, rq->ino, NULL);
    if (!c->format->read)
        return HPC_E_NOTSUP;
    if (rq->size > HPC_REMOTE_SHM)
        return HPC_E_INVAL;
    char *buf = ch->s->map + HPC_REMOTE_CTL + (size_t)ch->idx * HPC_REMOTE_SHM;
    int rc = c->format->read(c, rq->ino, buf, (size_t)rq->size, rq->off, &got);
    *nread = rc == HPC_OK ? MIN(got, rq->size) : 0;
    return rc;
}

static int xattr_out(void *ctx, const char *name, const void *value, size_t len)
{
    chan *ch = ctx;
    uint32_t nl = (uint32_t)strlen(name), vl = (uint32_t)len;
    g_byte_array_append(ch->out, (const guint8 *)&nl, sizeof nl);
    g_byte_array_append(ch->out, (const guint8 *)&vl, sizeof vl);
    g_byte_array_append(ch->out, (const guint8 *)name, nl + 1);
    g_byte_array_append(ch->out, value, vl);
    return 0;
}

static int do_xattrs(chan *ch, const hpc_rq *rq)
{
    hpc_container *c = ch->s->c;
    if (c->format->xattrs)
        return c->format->xattrs(c, rq->ino, xattr_out, ch);
    return c->tree ? hpc_tree_xattrs(c->tree, rq->ino, xattr_out, ch) : HPC_OK;
}

static int do_info(chan *ch)
{
    hpc_container *c = ch->s->c;
    if (!c->format->info)
        return HPC_OK;
    fault_on(c, 0, "info");
    GString *t = g_string_new(NULL);
    int rc = c->format->info(c, t);
    g_byte_array_append(ch->out, (const guint8 *)t->str, (guint)t->len);
    g_string_free(t, TRUE);
    return rc;
}

static int do_chunks(chan *ch, const hpc_rq *rq)
{
    hpc_container *c = ch->s->c;
    if (!c->format->chunks)
        return HPC_E_NOTSUP;
    GString *t = g_string_new(NULL);
    int rc = c->format->chunks(c, rq->ino, t);
    if (rc == HPC_OK)
        g_byte_array_append(ch->out, (const guint8 *)t->str, (guint)t->len);
    g_string_free(t, TRUE);
    return rc;
}

/* A request of the reader's own (HPC_RQ_READER and up). */
static int do_reader(chan *ch, const hpc_rq *rq)
{
    hpc_container *c = ch->s->c;
    if (rq->op < HPC_RQ_READER || !c->format->request)
        return HPC_E_INVAL;
    fault_on(c, rq->ino, NULL);
    return c->format->request(c, rq->op, rq->ino, rq->off, rq->size, ch->out);
}

static int dispatch(chan *ch, const hpc_rq *rq, const char *name, uint64_t *val)
{
    switch (rq->op) {
    case HPC_RQ_LOOKUP:
    case HPC_RQ_GETATTR: return do_stat(ch, rq, name);
    case HPC_RQ_READDIR: return do_readdir(ch, rq, val);
    case HPC_RQ_READLINK: return do_readlink(ch, rq);
    case HPC_RQ_MAP: return do_map(ch, rq);
    case HPC_RQ_READ: return do_read(ch, rq, val);
    case HPC_RQ_XATTRS: return do_xattrs(ch, rq);
    case HPC_RQ_INFO: return do_info(ch);
    case HPC_RQ_CHUNKS: return do_chunks(ch, rq);
    default: return do_reader(ch, rq);
    }
}

static gpointer serve(gpointer p)
{
    chan *ch = p;
    hpc_ctl *ctl = (hpc_ctl *)ch->s->map;
    hpc_sandbox_thread();
    ctl->tid[ch->idx] = (int32_t)syscall(SYS_gettid);
    char name[4097];
    for (;;) {
        hpc_rq rq;
        if (hpc_remote_io(ch->fd, &rq, sizeof rq, 1) != 0 || rq.len >= sizeof name ||
            hpc_remote_io(ch->fd, name, rq.len, 1) != 0)
            daemon_gone();
        name[rq.len] = '\0';
        uint64_t val = 0;
        int rc = dispatch(ch, &rq, name, &val);
        if (rc != HPC_OK)
            g_byte_array_set_size(ch->out, 0);
        answer(ch, rc, val);
    }
    return NULL;
}

/* ---- the walk after the open ---------------------------------------------- */

typedef struct walk {
    hpc_container *c;
    GQueue dirs;                 /* hpc_ino of directories still to list */
    GPtrArray *names;            /* entries of the directory being listed */
    unsigned nodes, max;
} walk;

static int collect(void *ctx, const char *name, const hpc_stat *st, uint64_t next)
{
    walk *w = ctx;
    (void)st;
    (void)next;
    if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && strcmp(name, ".info") != 0)
        g_ptr_array_add(w->names, g_strdup(name));
    return w->names->len >= w->max;
}

/* Look up, stat and list the xattrs of one entry of dir (what `ls -l`
 * and getfattr do first); directories are queued. */
static void visit(walk *w, hpc_ino dir, const char *name)
{
    hpc_stat st;
    w->nodes++;
    if (hpc_container_lookup(w->c, dir, name, &st) != HPC_OK)
        return;
    hpc_stat again;
    hpc_container_getattr(w->c, st.ino, &again);
    GString *x = g_string_new(NULL);
    hpc_container_listxattr(w->c, st.ino, x);
    g_string_free(x, TRUE);
    if (S_ISDIR(st.mode)) {
        g_queue_push_tail(&w->dirs, GSIZE_TO_POINTER((gsize)st.ino));
    } else if (S_ISLNK(st.mode)) {
        char *target = NULL;
        if (hpc_container_readlink(w->c, st.ino, &target) == HPC_OK)
            g_free(target);
    }
}

/* Walk c's tree breadth-first (readdir, lookup, getattr, listxattr,
 * readlink) until max_nodes nodes were seen: the work a first `ls -lR`
 * does, bounded by nodes, not time. */
static void walk_tree(hpc_container *c, unsigned max_nodes)
{
    walk w = { .c = c, .max = max_nodes };
    g_queue_init(&w.dirs);
    g_queue_push_tail(&w.dirs, GSIZE_TO_POINTER((gsize)HPC_INO_ROOT));
    while (!g_queue_is_empty(&w.dirs) && w.nodes < w.max) {
        hpc_ino dir = (hpc_ino)GPOINTER_TO_SIZE(g_queue_pop_head(&w.dirs));
        w.names = g_ptr_array_new_with_free_func(g_free);
        hpc_container_readdir(c, dir, 0, collect, &w);
        for (guint i = 0; i < w.names->len && w.nodes < w.max; i++)
            visit(&w, dir, g_ptr_array_index(w.names, i));
        g_ptr_array_free(w.names, TRUE);
    }
    g_queue_clear(&w.dirs);
}

/* ---- start-up ---------------------------------------------------------------- */

/* The open's answer: fsblksize, the sources (identity and path). */
static void sources_out(server *s, GByteArray *out)
{
    hpc_container *c = s->c;
    uint32_t head[2] = { c->fsblksize, c->sources->len };
    g_byte_array_append(out, (const guint8 *)head, sizeof head);
    for (guint i = 0; i < c->sources->len; i++) {
        const hpc_source *src = g_ptr_array_index(c->sources, i);
        hpc_wire_source w = { .dev = src->dev, .ino = src->ino, .size = src->size,
                              .mtime_ns = src->mtime_ns, .ctime_ns = src->ctime_ns,
                              .pathlen = (uint32_t)strlen(src->path) };
        g_byte_array_append(out, (const guint8 *)&w, sizeof w);
        g_byte_array_append(out, (const guint8 *)src->path, w.pathlen);
        g_hash_table_insert(s->index, (gpointer)src, GUINT_TO_POINTER(i + 1));
    }
}

static int open_container(server *s, const char *format, const char *source, char **opts,
                          GError **err)
{
    hpc_options o;
    hpc_options_init(&o);
    int rc = HPC_OK;
    for (char **a = opts; *a && rc == HPC_OK; a++)
        rc = hpc_formats_option_set(&o, *a, err);
    o.inproc = 1;
    g_free(o.format);
    o.format = g_strdup(format);
    if (rc == HPC_OK) {
        fault_on(NULL, 0, "open");
        rc = hpc_container_open(source, &o, &s->c, err);
    }
    hpc_options_clear(&o);
    if (rc == HPC_OK && s->c->format->before_walk)
        s->c->format->before_walk(s->c);
    if (rc == HPC_OK)
        walk_tree(s->c, HPC_REMOTE_WALK_NODES);
    if (rc == HPC_OK && s->c->format->after_walk)
        s->c->format->after_walk(s->c);   /* the daemon's calls start as in -o inproc */
    hpc_sandbox_note(NULL);
    return rc;
}

static void limit_memory(const char *arg)
{
    guint64 as = g_ascii_strtoull(arg, NULL, 10);
    if (as > 0) {
        struct rlimit rl = { .rlim_cur = as, .rlim_max = as };
        setrlimit(RLIMIT_AS, &rl);
    }
}

/* hpc_log in the helper: one line on the log pipe (atomic up to PIPE_BUF),
 * which the daemon passes on to its own log. */
static void log_to_daemon(void *ctx, const char *line)
{
    (void)ctx;
    char buf[PIPE_BUF];
    int n = snprintf(buf, sizeof buf, "%s\n", line);
    if (n >= (int)sizeof buf) {
        n = (int)sizeof buf;
        buf[n - 1] = '\n';
    }
    if (n > 0 && write(HPC_REMOTE_FD_LOG, buf, (size_t)n) < 0) {
        /* the daemon is gone: nobody to tell */
    }
}

/* The helper proper: argv as documented at the top, its fds in place. */
static int helper_run(char **argv)
{
    /* A session of its own, as the daemon has after fuse_daemonize: with
     * the scheduler's autogroups (Linux's default), a helper left in the
     * mounting shell's session shared one group's CPU with everything that
     * shell runs, and under load each round trip waited for its turn
     * (find over 10^5 datasets: 20 s against 8 s with -o inproc). */
    setsid();
    limit_memory(argv[3]);
    fcntl(HPC_REMOTE_FD_LOG, F_SETFL, O_NONBLOCK);   /* never wait for the daemon */
    hpc_log_set_handler(log_to_daemon, NULL);
    hpc_log_set_changes(0);      /* the daemon logs a changed source, once */
    size_t size = HPC_REMOTE_CTL + (size_t)HPC_REMOTE_CHANNELS * HPC_REMOTE_SHM;
    server s = { .index = g_hash_table_new(g_direct_hash, g_direct_equal) };
    s.map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, HPC_REMOTE_FD_CTL, 0);
    if (s.map == MAP_FAILED)
        return 2;
    hpc_ctl *ctl = (hpc_ctl *)s.map;
    hpc_sandbox_enter(ctl);
    ctl->tid[0] = (int32_t)syscall(SYS_gettid);
    g_thread_unref(g_thread_new("watch", watch_daemon, NULL));
    chan ch[HPC_REMOTE_CHANNELS];
    for (int i = 0; i < HPC_REMOTE_CHANNELS; i++)
        ch[i] = (chan){ .s = &s, .idx = i, .fd = HPC_REMOTE_FD_CHAN + i, .out = g_byte_array_new() };

    GError *err = NULL;
    int rc = open_container(&s, argv[2], argv[4], argv + 5, &err);
    if (rc == HPC_OK)
        sources_out(&s, ch[0].out);
    else if (err)
        g_byte_array_append(ch[0].out, (const guint8 *)err->message, (guint)strlen(err->message));
    answer(&ch[0], rc, 0);
    if (rc != HPC_OK)
        return 0;
    for (int i = 1; i < HPC_REMOTE_CHANNELS; i++)
        g_thread_unref(g_thread_new("serve", serve, &ch[i]));
    serve(&ch[0]);
    return 0;
}

/* ---- the fork server ------------------------------------------------------- */

/* Why: an exec of this program costs about 30 ms of CPU (130 under ASan),
 * a third of all a small container's helper costs: about 45 libraries,
 * libhdf5's with libcurl's TLS and Kerberos stacks, mapped and relocated
 * (docs/PERFORMANCE.md, "Helper start").  The
 * server is this program after the loader's work and before any of its
 * own: it never initializes libhdf5 or libhdf4 nor opens a file, and it
 * runs one thread, so each fork is a helper as fresh as an exec'd one, in
 * a process of its own (one container's damaged file still cannot reach
 * another's reads). */

static char fs_msg[HPC_REMOTE_FORK_MSG + 1];   /* the request (the child keeps its copy) */

/* One request into fs_msg and its fds: its length, or -1 (the daemon is
 * gone, or the message is not a request). */
static ssize_t fs_receive(int sock, int fds[HPC_REMOTE_FORK_FDS])
{
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int) * HPC_REMOTE_FORK_FDS)];
    } u;
    struct iovec iov = { .iov_base = fs_msg, .iov_len = HPC_REMOTE_FORK_MSG };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                        .msg_controllen = sizeof u.b };
    ssize_t n;
    while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
    if (!c || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || c->cmsg_level != SOL_SOCKET ||
        c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int) * HPC_REMOTE_FORK_FDS))
        return -1;
    memcpy(fds, CMSG_DATA(c), sizeof(int) * HPC_REMOTE_FORK_FDS);
    fs_msg[n] = '\0';
    return n;
}

/* The request's strings: argv (argc of them, NULL-terminated), the
 * environment (NULL-terminated) and the working directory, pointing into
 * msg.  -1 if malformed. */
static int fs_parse(char *msg, size_t len, char ***argv, char ***env, char **cwd)
{
    uint32_t n[2];
    if (len < sizeof n)
        return -1;
    memcpy(n, msg, sizeof n);
    if (n[0] < 5 || n[0] > len || n[1] > len)
        return -1;
    char **v = calloc((size_t)n[0] + n[1] + 2, sizeof *v);
    char *p = msg + sizeof n, *end = msg + len;
    for (uint32_t i = 0; v && i < n[0] + n[1]; i++) {
        char *z = memchr(p, '\0', (size_t)(end - p));
        if (!z) {
            free(v);
            return -1;
        }
        v[i < n[0] ? i : i + 1] = p;   /* v[n[0]] stays NULL: argv's end */
        p = z + 1;
    }
    *argv = v;
    *env = v ? v + n[0] + 1 : NULL;
    *cwd = p < end && memchr(p, '\0', (size_t)(end - p)) ? p : NULL;
    return v && *cwd && strcmp(v[1], HPC_REMOTE_PROTO) == 0 ? 0 : -1;
}

/* In the fork: the fds onto 3, 4, ... (where an exec'd helper finds
 * them), moved above them all first so that none is overwritten. */
static void fs_place(const int fds[HPC_REMOTE_FORK_FDS])
{
    int high[HPC_REMOTE_FORK_FDS];
    for (int i = 0; i < HPC_REMOTE_FORK_FDS; i++) {
        high[i] = fcntl(fds[i], F_DUPFD, FS_HIGH_FD);
        close(fds[i]);
    }
    for (int i = 0; i < HPC_REMOTE_FORK_FDS; i++) {
        if (high[i] < 0 || dup2(high[i], HPC_REMOTE_FD_CTL + i) < 0)
            _exit(127);
        close(high[i]);
    }
}

/* The daemon's answer: the helper's pid and a pidfd of it, with which it
 * signals and awaits the helper that is not its child (no pid reuse). */
static void fs_answer(int sock, pid_t pid, int err)
{
    int pfd = pid > 0 ? pidfd_open(pid, 0) : -1;
    int32_t v = pid > 0 ? (int32_t)pid : -err;
    if (pid > 0 && pfd < 0) {
        v = -errno;
        kill(pid, SIGKILL);      /* unsupervisable: the daemon execs one instead */
    }
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } u = { 0 };
    struct iovec iov = { .iov_base = &v, .iov_len = sizeof v };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (pfd >= 0) {
        m.msg_control = u.b;
        m.msg_controllen = sizeof u.b;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        *c = (struct cmsghdr){ .cmsg_len = CMSG_LEN(sizeof(int)), .cmsg_level = SOL_SOCKET,
                               .cmsg_type = SCM_RIGHTS };
        memcpy(CMSG_DATA(c), &pfd, sizeof pfd);
    }
    if (sendmsg(sock, &m, MSG_NOSIGNAL) != (ssize_t)sizeof v)
        _exit(0);                /* the daemon is gone */
    if (pfd >= 0)
        close(pfd);
}

/* Fork a helper per request until the daemon closes the socket (fd 3).
 * The helpers are its children; it reaps those that ended before each
 * fork (the daemon awaits them through their pidfds). */
static int fork_server(void)
{
    int sock = fcntl(HPC_REMOTE_FD_CTL, F_DUPFD_CLOEXEC, FS_HIGH_FD);
    close(HPC_REMOTE_FD_CTL);
    setsid();                    /* as a helper: no terminal signal, an autogroup of its own */
    for (;;) {
        int fds[HPC_REMOTE_FORK_FDS];
        char **argv = NULL, **env = NULL, *cwd = NULL;
        ssize_t n = sock < 0 ? -1 : fs_receive(sock, fds);
        if (n < 0 || fs_parse(fs_msg, (size_t)n, &argv, &env, &cwd) != 0)
            _exit(0);            /* gone, or not our daemon: it execs its helpers */
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        pid_t pid = fork();
        if (pid == 0) {
            close(sock);
            fs_place(fds);
            if (chdir(cwd) != 0)
                _exit(127);      /* the caller's directory went away: the open fails */
            environ = env;       /* the daemon's now, not the one it started us with */
            /* _exit, as every other end of a helper: the daemon kills one
             * whose open failed as soon as it has the answer, which an exit
             * scan of LeakSanitizer would race (and in a fork its thread
             * registry still names the server's thread, whose stack it
             * would then not scan) */
            _exit(helper_run(argv));
        }
        fs_answer(sock, pid, errno);
        for (int i = 0; i < HPC_REMOTE_FORK_FDS; i++)
            close(fds[i]);
        free(argv);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], HPC_REMOTE_PROTO) == 0 &&
        strcmp(argv[2], HPC_REMOTE_FORK_SERVER) == 0)
        return fork_server();
    if (argc < 5 || strcmp(argv[1], HPC_REMOTE_PROTO) != 0) {
        fprintf(stderr, "hpcmount-helper: started by hpcmount and hpcdump only "
                        "(protocol %s)\n", HPC_REMOTE_PROTO);
        return 2;
    }
    return helper_run(argv);
}
