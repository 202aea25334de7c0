/* hpc_remote.c - the daemon's side of the helper process: start it,
 * supervise its requests, and the proxy format whose calls are requests;
 * see hpc_remote.h.
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
#include "hpc_core.h"
#include "hpc_remote.h"
#ifdef HAVE_HDF5
#include "hdf5_remote.h"
#endif

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

extern char **environ;

#define TICK_MS 50
#define HIGH_FD 64               /* fds handed to the helper are dup'ed above this */
#define NAMES_MAX (1u << 18)     /* names remembered for messages */
#define CHILD_FDS (2 + HPC_REMOTE_CHANNELS)  /* control, channels, log */

typedef struct helper {
    gint refs;
    pid_t pid;
    int child;                   /* ours to reap (not started before a fork) */
    char *map;                   /* control page, then the buffers */
    size_t map_size;
    int fd[HPC_REMOTE_CHANNELS];
    GAsyncQueue *free;           /* channel index + 1 */
    gint dead;                   /* killed or seen gone */
    gint busy;                   /* channels taken */
    int culprit;                 /* channel whose request the supervisor blamed, or -1 */
    int wall;                    /* killed by the wall-clock limit, not for the file */
    char *why;                   /* what the supervisor saw */
    int log_fd;                  /* our end of the helper's log pipe, or -1 */
    pid_t log_pid;               /* the process whose thread forwards it */
} helper;

typedef struct remote {
    const hpc_format *real;
    GMutex lock;                 /* cur, broken */
    helper *cur;
    char *broken;                /* a restart failed: every request fails */
    GMutex tables;               /* the tables below */
    GHashTable *damaged;         /* key -> why */
    gint ndamaged;
    GHashTable *nodes;           /* ino -> node_rec: names for messages, attributes */
    GHashTable *children;        /* "parent/name" -> ino, of the nodes above */
    GHashTable *plussed;         /* "dir/cookie" of batches asked for in full */
    struct dir_batch {           /* readdir answers, for the calls that follow */
        hpc_ino dir;
        uint64_t start;          /* the cookie asked */
        int more;                /* the helper stopped because the batch was full */
        GBytes *data;
    } dirs[16];
    unsigned dir_next;
    GString *notes;              /* .info lines of what the helper could not serve */
    GHashTable *nomap;           /* inos whose map says HPC_E_NOTSUP */
    GHashTable *spaces;          /* helper's cache space -> ours */
    double cpu, wait;
    uint64_t mem;
#ifdef HAVE_HDF5
    hpc_h5remote *h5;            /* HDF5 chunks decoded here, or NULL */
#endif
} remote;

/* What went wrong with a request: nothing, or the helper went away. */
typedef enum { GONE_NO, GONE_CULPRIT, GONE_BYSTANDER } gone;

static const char *lib_of(const remote *r)
{
    return r->real->sandbox_lib ? r->real->sandbox_lib : r->real->name;
}

/* ---- /proc ----------------------------------------------------------------- */

/* CPU seconds of thread tid of pid (tid 0: the whole process). */
/* The text of a small /proc file into buf (NUL-terminated); 0 if none. */
static size_t proc_read(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

/* CPU seconds of thread tid of pid (tid 0: the whole process). */
static double proc_cpu(pid_t pid, int tid)
{
    char path[64], buf[1024];
    if (tid > 0)
        g_snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, tid);
    else
        g_snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    const char *p = proc_read(path, buf, sizeof buf) ? strrchr(buf, ')') : NULL;
    unsigned long long ut = 0, st = 0;   /* the name before ')' may hold spaces */
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static uint64_t proc_rss(pid_t pid)
{
    char path[64], buf[128];
    unsigned long long size = 0, rss = 0;
    g_snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    if (!proc_read(path, buf, sizeof buf) || sscanf(buf, "%llu %llu", &size, &rss) != 2)
        return 0;
    return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* ---- the helper process ---------------------------------------------------- */

static void helper_unref(helper *h)
{
    if (!h || !g_atomic_int_dec_and_test(&h->refs))
        return;
    for (int i = 0; i < HPC_REMOTE_CHANNELS; i++)
        if (h->fd[i] >= 0)
            close(h->fd[i]);
    if (h->map && h->map != MAP_FAILED)
        munmap(h->map, h->map_size);
    if (h->free)
        g_async_queue_unref(h->free);
    if (h->log_fd >= 0 && h->log_pid != getpid())
        close(h->log_fd);        /* no forwarding thread of ours owns it */
    g_free(h->why);
    g_free(h);
}

/* End the process (once); *why says what the supervisor saw, or NULL. */
static void helper_kill(helper *h, int culprit, const char *why)
{
    if (!g_atomic_int_compare_and_exchange(&h->dead, 0, 1))
        return;
    h->culprit = culprit;
    h->why = g_strdup(why);
    kill(h->pid, SIGKILL);
    int status;
    if (h->child)
        while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR)
            ;
}

static char *helper_path(void)
{
    const char *env = g_getenv("HPCMOUNT_HELPER");
    if (env && *env)
        return g_strdup(env);
    /* in the build tree: fuse/, dump/ and tests/ are siblings of helper/ */
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe) {
        char *dir = g_path_get_dirname(exe);
        /* a libtool-linked program runs from its .libs/ */
        int libs = g_str_has_suffix(dir, "/.libs");
        char *p = g_build_filename(dir, libs ? "../.." : "..", "helper", "hpcmount-helper", NULL);
        g_free(dir);
        g_free(exe);
        if (access(p, X_OK) == 0)
            return p;
        g_free(p);
    }
    return g_strdup(HPC_HELPER_PATH);
}

static uint64_t helper_as_limit(const remote *r)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)r;
    return 0;             /* ASan's shadow memory needs terabytes of address space */
#else
    return r->mem + (1ull << 30);   /* arenas, thread stacks, libraries */
#endif
}

static char **helper_argv(hpc_container *c, const remote *r, const char *exe)
{
    GPtrArray *a = g_ptr_array_new();
    g_ptr_array_add(a, g_strdup(exe));
    g_ptr_array_add(a, g_strdup(HPC_REMOTE_PROTO));
    g_ptr_array_add(a, g_strdup(r->real->name));
    g_ptr_array_add(a, g_strdup_printf("%" G_GUINT64_FORMAT, (guint64)helper_as_limit(r)));
    g_ptr_array_add(a, g_strdup(c->path));
    char **opts = hpc_options_to_strv(&c->opts);
    for (char **o = opts; *o; o++)
        g_ptr_array_add(a, g_strdup(*o));
    g_strfreev(opts);
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

/* Lines the helper logs (hpc_log in the helper: chunks handed to the
 * library, damaged objects) arrive on a pipe; a thread of ours passes each
 * to hpc_log, so they reach the daemon's log.  It ends when the helper
 * does (EOF). */
static gpointer log_forward(gpointer p)
{
    FILE *in = fdopen(GPOINTER_TO_INT(p), "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while (in && (n = getline(&line, &cap, in)) > 0) {
        if (line[n - 1] == '\n')
            line[n - 1] = '\0';
        hpc_log("%s", line);
    }
    free(line);
    if (in)
        fclose(in);
    return NULL;
}

/* A new log pipe: the helper's end into *child (above HIGH_FD), ours into
 * h->log_fd, read by a thread that log_follow starts. */
static int log_pipe(helper *h, int *child)
{
    int lp[2];
    if (pipe2(lp, O_CLOEXEC) != 0)
        return -1;
    *child = fcntl(lp[1], F_DUPFD_CLOEXEC, HIGH_FD);
    close(lp[1]);
    if (*child < 0) {
        close(lp[0]);
        return -1;
    }
    h->log_fd = lp[0];
    return 0;
}

/* Forward h's log lines to the daemon's log from this process (caller
 * holds r->lock).  The
 * thread is started on first use in each process: hpcmount opens the
 * container before it forks into the daemon, and threads do not cross a
 * fork (the helper writes without blocking, so lines are only ever
 * dropped, never waited for). */
static void log_follow(helper *h)
{
    /* without a daemon's log (hpcdump) the lines stay unread, as a
     * reader's complaints on stderr would add lines to a one-line error */
    if (h->log_fd < 0 || h->log_pid == getpid() || !hpc_log_handled())
        return;
    h->log_pid = getpid();
    g_thread_unref(g_thread_new("helper-log", log_forward, GINT_TO_POINTER(h->log_fd)));
}

/* The fds the helper gets (control memfd, channel sockets, log pipe), duplicated
 * above HIGH_FD so that dup2 onto 3, 4, ... never hits one of them. */
static int helper_fds(helper *h, int ctl, int mine[CHILD_FDS])
{
    mine[0] = fcntl(ctl, F_DUPFD_CLOEXEC, HIGH_FD);
    if (mine[0] < 0)
        return -1;
    for (int i = 0; i < HPC_REMOTE_CHANNELS; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
            return -1;
        h->fd[i] = sv[0];
        mine[1 + i] = fcntl(sv[1], F_DUPFD_CLOEXEC, HIGH_FD);
        close(sv[1]);
        if (mine[1 + i] < 0)
            return -1;
    }
    return log_pipe(h, &mine[CHILD_FDS - 1]);
}

static int spawn(hpc_container *c, const remote *r, helper *h, int fds[CHILD_FDS])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (!g_getenv("HPC_HELPER_STDERR"))  /* library complaints would add lines */
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    for (int i = 0; i < CHILD_FDS; i++)
        posix_spawn_file_actions_adddup2(&fa, fds[i], HPC_REMOTE_FD_CTL + i);
    char *exe = helper_path();
    char **argv = helper_argv(c, r, exe);
    int rc = posix_spawn(&h->pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    g_strfreev(argv);
    g_free(exe);
    h->child = 1;
    return rc;
}

/* Start a helper process for c; the open's answer is read by the caller. */
static int helper_start(hpc_container *c, const remote *r, helper **out, GError **err)
{
    helper *h = g_new0(helper, 1);
    int fds[CHILD_FDS], rc = HPC_OK;
    h->refs = 1;
    h->culprit = -1;
    h->log_fd = -1;
    for (int i = 0; i < HPC_REMOTE_CHANNELS; i++)
        h->fd[i] = -1;
    for (int i = 0; i < CHILD_FDS; i++)
        fds[i] = -1;
    h->map_size = HPC_REMOTE_CTL + (size_t)HPC_REMOTE_CHANNELS * HPC_REMOTE_SHM;
    int ctl = memfd_create("hpcmount-helper", MFD_CLOEXEC);
    if (ctl < 0 || ftruncate(ctl, (off_t)h->map_size) != 0 || helper_fds(h, ctl, fds) != 0) {
        rc = hpc_fail(err, HPC_E_IO, c->path, NULL, 0, "cannot prepare the helper: %s",
                      g_strerror(errno));
        goto out;
    }
    h->map = mmap(NULL, h->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, ctl, 0);
    int e = h->map == MAP_FAILED ? errno : spawn(c, r, h, fds);
    if (e != 0) {
        h->child = 0;
        rc = hpc_fail(err, HPC_E_IO, c->path, NULL, 0, "cannot start the helper %s: %s",
                      "hpcmount-helper (HPCMOUNT_HELPER overrides where)", g_strerror(e));
        goto out;
    }
    h->free = g_async_queue_new();
    for (int i = 1; i < HPC_REMOTE_CHANNELS; i++)
        g_async_queue_push(h->free, GINT_TO_POINTER(i + 1));
out:
    for (int i = 0; i < CHILD_FDS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (ctl >= 0)
        close(ctl);
    if (rc != HPC_OK)
        helper_unref(h);
    else
        *out = h;
    return rc;
}

static hpc_ctl *ctl_of(const helper *h)
{
    return (hpc_ctl *)h->map;
}

/* ---- one request on one channel ------------------------------------------ */

typedef struct waiter {
    const remote *r;
    helper *h;
    int chan;
    int open;                    /* the open: the main thread, CPU from the start */
    gint64 t0;                   /* monotonic us of the request */
    double cpu0;                 /* thread's CPU at the first late tick, or < 0 */
} waiter;

/* The answer is late: kill the helper over a limit.  0 to go on waiting. */
static int late(waiter *w)
{
    const remote *r = w->r;
    int tid = w->open ? 0 : ctl_of(w->h)->tid[w->chan];
    double cpu = proc_cpu(w->h->pid, tid);
    char *why = NULL;
    if (w->cpu0 < 0)
        w->cpu0 = w->open ? 0 : cpu;  /* the open counts from the start */
    uint64_t rss = proc_rss(w->h->pid);
    gint64 waited = g_get_monotonic_time() - w->t0;
    if (cpu - w->cpu0 > r->cpu)
        why = g_strdup_printf("used more than %g s of CPU (-o helper_cpu=SECS allows more)", r->cpu);
    else if (rss > r->mem)
        why = g_strdup_printf("grew past %" G_GUINT64_FORMAT " MiB of memory "
                              "(-o helper_mem=SIZE allows more)", (guint64)(r->mem >> 20));
    else if ((double)waited / G_USEC_PER_SEC > r->wait)
        why = g_strdup_printf("did not answer in %g s (-o helper_wait=SECS allows more)", r->wait);
    if (!why)
        return 0;
    w->h->wall = cpu - w->cpu0 <= r->cpu && rss <= r->mem;
    helper_kill(w->h, w->chan, why);
    g_free(why);
    return -1;
}

/* Receive exactly len bytes, supervising the helper while it is late. */
static int recv_all(waiter *w, int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            return -1;
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        int k = poll(&pf, 1, TICK_MS);
        if (k == 0 && late(w) != 0)
            return -1;
    }
    return 0;
}

int hpc_remote_io(int fd, void *buf, size_t len, int in)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = in ? recv(fd, p, len, 0) : send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_all(int fd, const void *buf, size_t len)
{
    return hpc_remote_io(fd, (void *)buf, len, 0);
}

/* Send rq (and name) on channel w->chan and receive the answer: *rp and
 * its payload (g_free it).  -1 when the helper went away. */
static int exchange(waiter *w, const hpc_rq *rq, const char *name, hpc_rp *rp, char **payload)
{
    int fd = w->h->fd[w->chan];
    *payload = NULL;
    if (send_all(fd, rq, sizeof *rq) != 0 || (rq->len && send_all(fd, name, rq->len) != 0))
        return -1;
    if (recv_all(w, fd, rp, sizeof *rp) != 0 || rp->len > HPC_REMOTE_MAX_PAYLOAD)
        return -1;
    *payload = g_malloc(rp->len + 1);
    (*payload)[rp->len] = '\0';
    if (recv_all(w, fd, *payload, rp->len) != 0) {
        g_free(*payload);
        *payload = NULL;
        return -1;
    }
    return 0;
}

/* The helper went away during a request on channel chan: was the request
 * the cause?  The supervisor's verdict, else the crash report's thread. */
static gone blame(helper *h, int chan, int alone, char **why)
{
    helper_kill(h, -1, NULL);     /* ends it and reaps it, if not yet done */
    const hpc_ctl *ctl = ctl_of(h);
    if (h->why) {
        *why = g_strdup(h->why);
        return h->culprit == chan ? GONE_CULPRIT : GONE_BYSTANDER;
    }
    if (ctl->crash_sig)
        *why = g_strdup_printf("crashed (signal %d, %s)", ctl->crash_sig,
                               g_strsignal(ctl->crash_sig));
    else
        *why = g_strdup("ended without answering");
    if (ctl->crash_tid && ctl->crash_tid != ctl->tid[chan])
        return GONE_BYSTANDER;
    return ctl->crash_tid || alone ? GONE_CULPRIT : GONE_BYSTANDER;
}

/* ---- the open ------------------------------------------------------------ */

/* The one line of a mount-time refusal after the helper went away. */
static int refuse(hpc_container *c, const remote *r, helper *h, GError **err)
{
    char *why = NULL;
    blame(h, 0, 1, &why);
    const char *member = ctl_of(h)->member;
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
        const hpc_source *s = first ? hpc_container_add_source(c, path, err)
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
static int helper_open(hpc_container *c, remote *r, int first, helper **out, GError **err)
{
    helper *h = NULL;
    int rc = helper_start(c, r, &h, err);
    if (rc != HPC_OK)
        return rc;
    waiter w = { .r = r, .h = h, .chan = 0, .open = 1, .t0 = g_get_monotonic_time(), .cpu0 = -1 };
    hpc_rp rp;
    char *payload = NULL;
    if (recv_all(&w, h->fd[0], &rp, sizeof rp) != 0 || rp.len > HPC_REMOTE_MAX_PAYLOAD) {
        rc = refuse(c, r, h, err);
        goto out;
    }
    payload = g_malloc(rp.len + 1);
    payload[rp.len] = '\0';
    if (recv_all(&w, h->fd[0], payload, rp.len) != 0)
        rc = refuse(c, r, h, err);
    else if (rp.rc != HPC_OK) {
        rc = rp.rc < 0 ? rp.rc : HPC_E_IO;   /* the reader's own line */
        g_set_error_literal(err, HPC_ERROR, -rc, payload[0] ? payload : hpc_strerror(rc));
    } else
        rc = take_sources(c, payload, rp.len, first, err);
out:
    g_free(payload);
    if (rc != HPC_OK) {
        helper_kill(h, -1, NULL);
        helper_unref(h);
        return rc;
    }
    g_async_queue_push(h->free, GINT_TO_POINTER(1));
    *out = h;
    return HPC_OK;
}

/* ---- requests: the current helper, damaged objects, names ---------------- */

/* What the daemon learnt of a node: its name under its parent (for
 * messages and lookups), its attributes and its extended attributes (they
 * never change: no live formats here). */
typedef struct node_rec {
    hpc_ino parent;
    hpc_stat st;
    int has_st;
    GBytes *xattrs;              /* the helper's answer, or NULL */
    int listed;                  /* seen in a readdir batch ... */
    uint64_t listed_from;        /* ... that started at this cookie */
    char name[];
} node_rec;

static void rec_free(gpointer p)
{
    node_rec *rec = p;
    if (rec->xattrs)
        g_bytes_unref(rec->xattrs);
    g_free(rec);
}

static char *child_key(hpc_ino parent, const char *name)
{
    return g_strdup_printf("%" G_GUINT64_FORMAT "/%s", (guint64)parent, name);
}

/* Note a node (from: the cookie of the readdir batch it came in, or NULL). */
static void remember_from(remote *r, hpc_ino parent, const char *name, const hpc_stat *st,
                          const uint64_t *from)
{
    size_t n = strlen(name);
    g_mutex_lock(&r->tables);
    const node_rec *old = g_hash_table_lookup(r->nodes, &st->ino);
    if (old && (old->has_st || st->partial) && old->parent == parent && strcmp(old->name, name) == 0) {
        g_mutex_unlock(&r->tables);
        return;                  /* known already, as well or better */
    }
    if (g_hash_table_size(r->nodes) >= NAMES_MAX) {
        g_hash_table_remove_all(r->nodes);
        g_hash_table_remove_all(r->children);
        g_hash_table_remove_all(r->plussed);
    }
    node_rec *rec = g_malloc(sizeof *rec + n + 1);
    rec->parent = parent;
    rec->st = *st;
    rec->has_st = !st->partial;
    rec->xattrs = NULL;
    rec->listed = from != NULL;
    rec->listed_from = from ? *from : 0;
    memcpy(rec->name, name, n + 1);
    g_hash_table_replace(r->nodes, g_memdup2(&st->ino, sizeof st->ino), rec);
    g_hash_table_replace(r->children, child_key(parent, name), g_memdup2(&st->ino, sizeof st->ino));
    g_mutex_unlock(&r->tables);
}

static void remember(remote *r, hpc_ino parent, const char *name, const hpc_stat *st)
{
    remember_from(r, parent, name, st, NULL);
}

static int cached_stat(remote *r, hpc_ino ino, hpc_stat *st)
{
    g_mutex_lock(&r->tables);
    const node_rec *rec = g_hash_table_lookup(r->nodes, &ino);
    int hit = rec && rec->has_st;
    if (hit)
        *st = rec->st;
    g_mutex_unlock(&r->tables);
    return hit;
}

/* The record of name under parent, or NULL (r->tables held). */
static node_rec *child_rec(remote *r, hpc_ino parent, const char *name)
{
    char *key = child_key(parent, name);
    const hpc_ino *ino = g_hash_table_lookup(r->children, key);
    g_free(key);
    return ino ? g_hash_table_lookup(r->nodes, ino) : NULL;
}

/* A lookup the daemon can answer from names and attributes it saw. */
static int cached_lookup(remote *r, hpc_ino parent, const char *name, hpc_stat *st)
{
    g_mutex_lock(&r->tables);
    const node_rec *rec = child_rec(r, parent, name);
    int hit = rec && rec->has_st;
    if (hit)
        *st = rec->st;
    g_mutex_unlock(&r->tables);
    return hit;
}

static GBytes *cached_xattrs(remote *r, hpc_ino ino)
{
    g_mutex_lock(&r->tables);
    const node_rec *rec = g_hash_table_lookup(r->nodes, &ino);
    GBytes *b = rec && rec->xattrs ? g_bytes_ref(rec->xattrs) : NULL;
    g_mutex_unlock(&r->tables);
    return b;
}

static void keep_xattrs(remote *r, hpc_ino ino, GBytes *b)
{
    g_mutex_lock(&r->tables);
    node_rec *rec = g_hash_table_lookup(r->nodes, &ino);
    if (rec && !rec->xattrs)
        rec->xattrs = g_bytes_ref(b);
    g_mutex_unlock(&r->tables);
}

/* "/a/b" of ino as far as the daemon saw its names, else "node N". */
static char *path_of(remote *r, hpc_ino ino)
{
    GString *p = g_string_new(NULL);
    g_mutex_lock(&r->tables);
    for (int depth = 0; ino != HPC_INO_ROOT && depth < 256; depth++) {
        const node_rec *rec = g_hash_table_lookup(r->nodes, &ino);
        if (!rec) {
            char num[40];
            g_snprintf(num, sizeof num, "node %" G_GUINT64_FORMAT, (guint64)ino);
            g_string_prepend(p, num);
            break;
        }
        g_string_prepend(p, rec->name);
        g_string_prepend_c(p, '/');
        ino = rec->parent;
    }
    g_mutex_unlock(&r->tables);
    if (p->len == 0)
        g_string_assign(p, "/");
    return g_string_free(p, FALSE);
}

/* The object a request is about: the key of the damaged table, and the
 * name the log and .info give it. */
static char *object_key(const hpc_rq *rq, const char *name)
{
    if (rq->op == HPC_RQ_INFO)
        return g_strdup(".info");
    if (rq->op == HPC_RQ_LOOKUP)
        return g_strdup_printf("%" G_GUINT64_FORMAT "/%s", (guint64)rq->ino, name);
    return g_strdup_printf("%" G_GUINT64_FORMAT, (guint64)rq->ino);
}

static char *object_name(remote *r, const hpc_rq *rq, const char *name)
{
    if (rq->op == HPC_RQ_INFO)
        return g_strdup(".info");
    char *p = path_of(r, rq->ino);
    if (rq->op != HPC_RQ_LOOKUP)
        return p;
    char *full = g_strdup_printf("%s%s%s", p, strcmp(p, "/") == 0 ? "" : "/", name);
    g_free(p);
    return full;
}

/* Set while this thread builds .info (under the core's lock, which
 * hpc_container_info_changed takes too). */
static __thread int building_info;

static void info_stale(hpc_container *c)
{
    if (!building_info)
        hpc_container_info_changed(c);
}

static int is_damaged(remote *r, const char *key)
{
    if (g_atomic_int_get(&r->ndamaged) == 0)
        return 0;
    g_mutex_lock(&r->tables);
    int hit = g_hash_table_contains(r->damaged, key);
    g_mutex_unlock(&r->tables);
    return hit;
}

/* The helper went away serving this request: log, .info, and (unless
 * only the wall clock ran out) remember the object as damaged. */
static int lost(hpc_container *c, const hpc_rq *rq, const char *name, const char *key,
                const char *why, int remember_it)
{
    remote *r = c->priv;
    char *obj = object_name(r, rq, name);
    hpc_log("%s: %s: %s %s serving it; %s", c->path, obj, lib_of(r), why,
            remember_it ? "damaged: EIO for it from now on, the rest is served"
                        : "EIO for this request (the helper was restarted)");
    g_mutex_lock(&r->tables);
    g_string_append_printf(r->notes, "%s: %s: %s %s\n", remember_it ? "damaged" : "unanswered",
                           obj, lib_of(r), why);
    if (remember_it && !g_hash_table_contains(r->damaged, key)) {
        g_hash_table_add(r->damaged, g_strdup(key));
        g_atomic_int_inc(&r->ndamaged);
    }
    g_mutex_unlock(&r->tables);
    info_stale(c);
    g_free(obj);
    return HPC_E_IO;
}

/* The current helper, started when there is none, with a reference. */
static int helper_get(hpc_container *c, remote *r, helper **out)
{
    int rc = HPC_OK;
    g_mutex_lock(&r->lock);
    if (r->cur && g_atomic_int_get(&r->cur->dead)) {
        helper_unref(r->cur);
        r->cur = NULL;
    }
    if (!r->cur && !r->broken) {
        GError *e = NULL;
        if (helper_open(c, r, 0, &r->cur, &e) != HPC_OK) {
            r->broken = g_strdup(e ? e->message : "the helper could not open it again");
            hpc_log("%s: a new helper could not open it: %s; every request fails until it "
                    "is mounted again", c->path, r->broken);
            g_clear_error(&e);
            info_stale(c);
        }
    }
    if (r->broken) {
        rc = HPC_E_IO;
    } else {
        log_follow(r->cur);
        g_atomic_int_inc(&r->cur->refs);
        *out = r->cur;
    }
    g_mutex_unlock(&r->lock);
    return rc;
}

/* One exchange on a free channel of the current helper.  GONE_NO with *rp
 * and *payload set; else the helper went away and *why says how. */
static gone try_once(hpc_container *c, const hpc_rq *rq, const char *name, hpc_rp *rp,
                     char **payload, void *rbuf, char **why, int *wall, int *rc)
{
    remote *r = c->priv;
    helper *h;
    *rc = helper_get(c, r, &h);
    if (*rc != HPC_OK)
        return GONE_NO;
    int ch = GPOINTER_TO_INT(g_async_queue_pop(h->free)) - 1;
    g_atomic_int_inc(&h->busy);
    waiter w = { .r = r, .h = h, .chan = ch, .t0 = g_get_monotonic_time(), .cpu0 = -1 };
    gone g = GONE_NO;
    if (exchange(&w, rq, name, rp, payload) != 0)
        g = blame(h, ch, g_atomic_int_get(&h->busy) == 1, why);
    else if (rq->op == HPC_RQ_READ && rp->rc == HPC_OK)
        memcpy(rbuf, h->map + HPC_REMOTE_CTL + (size_t)ch * HPC_REMOTE_SHM,
               (size_t)MIN(rp->val, rq->size));
    *wall = h->wall;
    g_atomic_int_add(&h->busy, -1);
    g_async_queue_push(h->free, GINT_TO_POINTER(ch + 1));
    helper_unref(h);
    return g;
}

/* A request to the helper: HPC_OK with *rp (rp->rc is the reader's) and
 * *payload (g_free it), or HPC_E_IO.  An object remembered as damaged
 * fails at once; a request that outlived its helper through another's
 * fault is sent once more, to a new helper. */
static int call(hpc_container *c, const hpc_rq *rq, const char *name, hpc_rp *rp,
                char **payload, void *rbuf)
{
    remote *r = c->priv;
    char *key = object_key(rq, name);
    int rc = is_damaged(r, key) ? HPC_E_IO : HPC_OK;
    *payload = NULL;
    for (int attempt = 0; rc == HPC_OK && attempt < 2; attempt++) {
        char *why = NULL;
        int wall = 0;
        gone g = try_once(c, rq, name, rp, payload, rbuf, &why, &wall, &rc);
        if (g == GONE_CULPRIT || (g == GONE_BYSTANDER && attempt == 1))
            rc = lost(c, rq, name, key, why, g == GONE_CULPRIT && !wall);
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

/* The next entry of a readdir batch at *at: its header and name. */
static int dirent_at(const char *p, size_t len, size_t *at, hpc_wire_dirent *d, const char **name)
{
    if (len - *at < sizeof *d)
        return HPC_E_IO;
    memcpy(d, p + *at, sizeof *d);
    *at += sizeof *d;
    if (len - *at < d->namelen)
        return HPC_E_IO;
    *name = p + *at;
    *at += d->namelen;
    return HPC_OK;
}

/* The cookie of the readdir batch that listed name of dir without its
 * attributes, if that batch was not yet asked for in full (marked now). */
static int plus_start(remote *r, hpc_ino dir, const char *name, uint64_t *start)
{
    g_mutex_lock(&r->tables);
    const node_rec *rec = child_rec(r, dir, name);
    char *batch = rec && rec->listed && !rec->has_st
                  ? g_strdup_printf("%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, (guint64)dir,
                                    (guint64)rec->listed_from) : NULL;
    int hit = batch && !g_hash_table_contains(r->plussed, batch);
    if (hit) {
        *start = rec->listed_from;
        g_hash_table_add(r->plussed, batch);
    } else {
        g_free(batch);
    }
    g_mutex_unlock(&r->tables);
    return hit;
}

/* Take a "plus" batch: entries with full attributes and xattrs. */
static int plus_take(remote *r, hpc_ino dir, const char *p, size_t len)
{
    for (size_t at = 0; at < len;) {
        hpc_wire_dirent d;
        const char *at_name;
        uint32_t xlen;
        if (dirent_at(p, len, &at, &d, &at_name) != HPC_OK || len - at < sizeof xlen)
            return HPC_E_IO;
        char *name = g_strndup(at_name, d.namelen);
        remember(r, dir, name, &d.st);
        g_free(name);
        memcpy(&xlen, p + at, sizeof xlen);
        at += sizeof xlen;
        if (xlen == UINT32_MAX)
            continue;
        if (len - at < xlen)
            return HPC_E_IO;
        GBytes *x = g_bytes_new(p + at, xlen);
        keep_xattrs(r, d.st.ino, x);
        g_bytes_unref(x);
        at += xlen;
    }
    return HPC_OK;
}

/* A lookup of a name of a listed directory: ask once for the attributes
 * and xattrs of the whole batch it was listed in (`ls -l` asks for all of
 * them, one round trip each otherwise). */
static int lookup_plus(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    uint64_t start;
    if (!plus_start(c->priv, parent, name, &start))
        return 0;
    hpc_rq rq = { .op = HPC_RQ_READDIR, .ino = parent, .off = start, .size = 1 };
    hpc_rp rp;
    char *payload;
    int rc = call_rc(c, &rq, NULL, &rp, &payload);
    if (rc == HPC_OK)
        rc = plus_take(c->priv, parent, payload, rp.len);
    g_free(payload);
    return rc == HPC_OK && cached_lookup(c->priv, parent, name, st);
}

static int px_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    hpc_rq rq = { .op = HPC_RQ_LOOKUP, .len = (uint32_t)strlen(name), .ino = parent };
    if (rq.len > 4096)
        return HPC_E_NOENT;
    if (cached_lookup(c->priv, parent, name, st) || lookup_plus(c, parent, name, st))
        return HPC_OK;
    int rc = stat_call(c, &rq, name, st);
    if (rc == HPC_OK)
        remember(c->priv, parent, name, st);
    return rc;
}

/* The name under which a node was listed without its attributes. */
static char *listed_as(remote *r, hpc_ino ino, hpc_ino *parent)
{
    g_mutex_lock(&r->tables);
    const node_rec *rec = g_hash_table_lookup(r->nodes, &ino);
    char *name = rec && !rec->has_st ? g_strdup(rec->name) : NULL;
    if (name)
        *parent = rec->parent;
    g_mutex_unlock(&r->tables);
    return name;
}

static int px_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    if (cached_stat(c->priv, ino, st))
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

/* Whether batch b continues from cookie: it starts there, or one of its
 * entries but the last of a full batch leads there. */
static int batch_has(const struct dir_batch *b, uint64_t cookie)
{
    gsize len;
    const char *p = g_bytes_get_data(b->data, &len), *name;
    size_t at = 0;
    hpc_wire_dirent d;
    if (b->start == cookie)
        return 1;
    while (at < len && dirent_at(p, len, &at, &d, &name) == HPC_OK)
        if (d.next == cookie)
            return at < len || !b->more;
    return 0;
}

static int batch_find(remote *r, hpc_ino dir, uint64_t cookie, struct dir_batch *out)
{
    int hit = 0;
    g_mutex_lock(&r->tables);
    for (unsigned i = 0; i < G_N_ELEMENTS(r->dirs) && !hit; i++) {
        const struct dir_batch *b = &r->dirs[i];
        hit = b->data && b->dir == dir && batch_has(b, cookie);
        if (hit) {
            *out = *b;
            g_bytes_ref(out->data);
        }
    }
    g_mutex_unlock(&r->tables);
    return hit;
}

/* Ask the helper for the entries from cookie; keep the answer. */
static int batch_fetch(hpc_container *c, hpc_ino dir, uint64_t cookie, struct dir_batch *out)
{
    remote *r = c->priv;
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
        if (dirent_at(p, len, &at, &d, &at_name) != HPC_OK)
            return HPC_E_IO;
        if (!serving) {
            serving = d.next == *cookie;
            continue;
        }
        char *name = g_strndup(at_name, d.namelen);
        remember_from(c->priv, b->dir, name, &d.st, &b->start);
        *stopped = fn(ctx, name, &d.st, d.next);
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
        if (!batch_find(c->priv, dir, cookie, &b))
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
static uint64_t our_space(remote *r, uint64_t theirs)
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
    remote *r = c->priv;
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

#ifdef HAVE_HDF5
/* hpc_h5remote_call: a request whose answer is a payload. */
static int h5_call(hpc_container *c, uint32_t op, hpc_ino ino, uint64_t a, uint64_t b,
                   char **payload, size_t *len)
{
    hpc_rq rq = { .op = op, .ino = ino, .off = a, .size = b };
    hpc_rp rp;
    int rc = call_rc(c, &rq, NULL, &rp, payload);
    *len = rc == HPC_OK ? rp.len : 0;
    return rc;
}
#endif

static int px_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread)
{
    size_t done = 0;
    int rc = HPC_OK;
#ifdef HAVE_HDF5
    remote *r = c->priv;
    if (r->h5) {
        rc = hpc_h5remote_read(r->h5, c, h5_call, ino, buf, len, off, nread);
        if (rc != HPC_E_NOTSUP)
            return rc;
        rc = HPC_OK;
    }
#endif
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
    GBytes *b = cached_xattrs(c->priv, ino);
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
        keep_xattrs(c->priv, ino, b);
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
    remote *r = c->priv;
    g_mutex_lock(&r->lock);
    g_string_append_printf(out, "helper: %s runs in hpcmount-helper\n", lib_of(r));
    if (r->broken)
        g_string_append_printf(out, "broken: %s\n", r->broken);
    g_mutex_unlock(&r->lock);
#ifdef HAVE_HDF5
    if (r->h5)
        hpc_h5remote_info(r->h5, out);
#endif
    g_mutex_lock(&r->tables);
    g_string_append(out, r->notes->str);
    g_mutex_unlock(&r->tables);
    hpc_rq rq = { .op = HPC_RQ_INFO };
    hpc_rp rp;
    char *payload;
    building_info = 1;
    int rc = call(c, &rq, NULL, &rp, &payload, NULL);
    building_info = 0;
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
    remote *r = c->priv;
    if (!r)
        return;
    if (r->cur) {
        helper_kill(r->cur, -1, NULL);
        helper_unref(r->cur);
    }
    g_hash_table_destroy(r->damaged);
    g_hash_table_destroy(r->nodes);
    g_hash_table_destroy(r->children);
    g_hash_table_destroy(r->plussed);
    for (unsigned i = 0; i < G_N_ELEMENTS(r->dirs); i++)
        if (r->dirs[i].data)
            g_bytes_unref(r->dirs[i].data);
    g_hash_table_destroy(r->nomap);
    g_hash_table_destroy(r->spaces);
    g_string_free(r->notes, TRUE);
    g_free(r->broken);
#ifdef HAVE_HDF5
    hpc_h5remote_free(r->h5);
#endif
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

static remote *remote_new(const hpc_container *c)
{
    remote *r = g_new0(remote, 1);
    r->real = c->format;
    g_mutex_init(&r->lock);
    g_mutex_init(&r->tables);
    r->damaged = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->nodes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, rec_free);
    r->children = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    r->plussed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->nomap = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    r->spaces = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    r->notes = g_string_new(NULL);
    r->cpu = c->opts.helper_cpu > 0 ? c->opts.helper_cpu : HPC_REMOTE_CPU;
    r->wait = c->opts.helper_wait > 0 ? c->opts.helper_wait : HPC_REMOTE_WAIT;
    uint64_t h5 = c->opts.h5_cache ? c->opts.h5_cache : (256ull << 20);
    r->mem = c->opts.helper_mem ? c->opts.helper_mem
                                : HPC_REMOTE_MEM_BASE + 2 * (c->opts.cache_size + h5);
#ifdef HAVE_HDF5
    if (c->format == &hpc_format_hdf5)
        r->h5 = hpc_h5remote_new(c->opts.cache_size ? c->opts.cache_size : (64u << 20));
#endif
    return r;
}

int hpc_remote_open(hpc_container *c, GError **err)
{
    const hpc_format *proxy = proxy_of(c->format);
    if (!proxy)
        return hpc_fail(err, HPC_E_INVAL, c->path, NULL, 0, "no helper for the %s reader",
                        c->format->name);
    remote *r = remote_new(c);
    c->priv = r;
    c->format = proxy;          /* from here on close() is px_close */
    helper *h = NULL;
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
