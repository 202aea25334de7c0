/* hpc_helper.c - the helper process as the daemon sees it: start it
 * (posix_spawn with its control page, channels and log pipe, or a fork of
 * the fork server), supervise a request while its answer is late (CPU
 * time, memory and wall clock from /proc), kill it, and one request on one
 * channel.
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
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define TICK_MS 50
#define HIGH_FD 64               /* fds handed to the helper are dup'ed above this */
#define CHILD_FDS (2 + HPC_REMOTE_CHANNELS)  /* control, channels, log */

extern char **environ;

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

void hpc_helper_unref(hpc_helper *h)
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
    if (h->pidfd >= 0)
        close(h->pidfd);
    g_free(h->why);
    g_free(h);
}

/* End the process (once); *why says what the supervisor saw, or NULL. */
void hpc_helper_kill(hpc_helper *h, int culprit, const char *why)
{
    if (!g_atomic_int_compare_and_exchange(&h->dead, 0, 1))
        return;
    h->culprit = culprit;
    h->why = g_strdup(why);
    if (h->pidfd >= 0) {
        /* the fork server's child: its pidfd is readable once it ended */
        struct pollfd pf = { .fd = h->pidfd, .events = POLLIN };
        pidfd_send_signal(h->pidfd, SIGKILL, NULL, 0);
        while (poll(&pf, 1, -1) < 0 && errno == EINTR)
            ;
        return;
    }
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
    /* in the build tree: helper/ is a sibling of fuse/ and dump/, and of
     * tests/ above tests/unit/; a libtool-linked program runs from .libs/ */
    static const char *const up[] = { "..", "../..", "../../.." };
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    char *dir = exe ? g_path_get_dirname(exe) : NULL;
    for (size_t i = 0; dir && i < G_N_ELEMENTS(up); i++) {
        char *p = g_build_filename(dir, up[i], "helper", "hpcmount-helper", NULL);
        if (access(p, X_OK) == 0) {
            g_free(dir);
            g_free(exe);
            return p;
        }
        g_free(p);
    }
    g_free(dir);
    g_free(exe);
    return g_strdup(HPC_HELPER_PATH);
}

static uint64_t helper_as_limit(const hpc_remote *r)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)r;
    return 0;             /* ASan's shadow memory needs terabytes of address space */
#else
    return r->mem + (1ull << 30);   /* arenas, thread stacks, libraries */
#endif
}

static char **helper_argv(hpc_container *c, const hpc_remote *r, const char *exe)
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
static int log_pipe(hpc_helper *h, int *child)
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
void hpc_helper_log_follow(hpc_helper *h)
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
static int helper_fds(hpc_helper *h, int ctl, int mine[CHILD_FDS])
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

/* The child of spawn_as: stdio on /dev/null, the helper's fds in place,
 * then the owner's groups, gid and uid, then the helper.  Raw system
 * calls only: it is the fork of a threaded daemon. */
static void G_GNUC_NORETURN child_exec(const hpc_creds *cr, int exe_fd, int null_fd, int quiet,
                                       char **argv, const int fds[CHILD_FDS])
{
    if (dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 || (quiet && dup2(null_fd, 2) < 0))
        _exit(127);
    for (int i = 0; i < CHILD_FDS; i++)
        if (dup2(fds[i], HPC_REMOTE_FD_CTL + i) < 0)
            _exit(127);
    if (syscall(SYS_setgroups, (size_t)cr->ngroups, cr->groups) != 0 ||
        syscall(SYS_setresgid, (gid_t)cr->gid, (gid_t)cr->gid, (gid_t)cr->gid) != 0 ||
        syscall(SYS_setresuid, (uid_t)cr->uid, (uid_t)cr->uid, (uid_t)cr->uid) != 0 ||
        syscall(SYS_getuid) != (long)cr->uid)
        _exit(127);
    syscall(SYS_execveat, exe_fd, "", argv, environ, AT_EMPTY_PATH);
    _exit(127);
}

/* The helper of a container whose owner has fewer rights than this
 * process runs as that owner (docs/design.md, "Who may read what").  The
 * program is opened here, with the daemon's rights, so the owner need not
 * reach the folder it is installed or built in. */
static int spawn_as(const hpc_creds *cr, hpc_helper *h, const char *exe, char **argv,
                    const int fds[CHILD_FDS])
{
    int quiet = !g_getenv("HPC_HELPER_STDERR");
    int exe_fd = -1, null_fd = -1, rc = 0;
    int p = open(exe, O_PATH | O_CLOEXEC), n = open("/dev/null", O_RDWR | O_CLOEXEC);
    /* above the fds the child puts at 0..CHILD_FDS+2, which would close them */
    if (p >= 0)
        exe_fd = fcntl(p, F_DUPFD_CLOEXEC, HIGH_FD);
    if (n >= 0)
        null_fd = fcntl(n, F_DUPFD_CLOEXEC, HIGH_FD);
    if (exe_fd < 0 || null_fd < 0)
        rc = errno ? errno : EBADF;
    pid_t pid = rc ? -1 : fork();
    if (pid == 0)
        child_exec(cr, exe_fd, null_fd, quiet, argv, fds);
    if (!rc && pid < 0)
        rc = errno;
    h->pid = pid;
    int opened[] = { p, n, exe_fd, null_fd };
    for (size_t i = 0; i < G_N_ELEMENTS(opened); i++)
        if (opened[i] >= 0)
            close(opened[i]);
    return rc;
}

/* stdin and stdout on /dev/null, stderr too unless HPC_HELPER_STDERR. */
static void stdio_actions(posix_spawn_file_actions_t *fa)
{
    posix_spawn_file_actions_init(fa);
    posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(fa, 1, "/dev/null", O_WRONLY, 0);
    if (!g_getenv("HPC_HELPER_STDERR"))  /* library complaints would add lines */
        posix_spawn_file_actions_addopen(fa, 2, "/dev/null", O_WRONLY, 0);
}

/* ---- the fork server ---------------------------------------------------- */

/* A process's first helper is exec'd; from its second on (a run
 * directory opens a helper per container) each is a fork of the fork
 * server (hpc_remote.h), which this process starts then: no exec, no
 * loading and relocating of the libraries per container.  The server is
 * the helper program before any work of its own (docs/design.md).  Only
 * the process that started it uses it: the fork of hpcmount into the
 * daemon (or any fork) has a copy of the socket, which it closes, and
 * starts its own.  A server that fails is not asked again. */
static struct {
    GMutex lock;
    pid_t owner;                 /* the process counting and owning the server */
    unsigned started;            /* helpers it started */
    int off;                     /* the server failed: exec every helper */
    int fd;                      /* our end of its socket, or -1 */
    pid_t pid;
    char *exe;
} fsrv = { .fd = -1 };

/* Start the server from exe (caller holds fsrv.lock). */
static int fsrv_start(const char *exe)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    int theirs = fcntl(sv[1], F_DUPFD_CLOEXEC, HIGH_FD);
    close(sv[1]);
    char *argv[] = { (char *)exe, (char *)HPC_REMOTE_PROTO, (char *)HPC_REMOTE_FORK_SERVER, NULL };
    posix_spawn_file_actions_t fa;
    stdio_actions(&fa);
    posix_spawn_file_actions_adddup2(&fa, theirs, HPC_REMOTE_FD_CTL);
    int e = theirs < 0 ? EBADF : posix_spawn(&fsrv.pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (theirs >= 0)
        close(theirs);
    if (e != 0) {
        close(sv[0]);
        return -1;
    }
    fsrv.fd = sv[0];
    fsrv.exe = g_strdup(exe);
    return 0;
}

/* Close our end: the server ends (and, if ours, is reaped); off for good. */
static void fsrv_stop(void)
{
    close(fsrv.fd);
    fsrv.fd = -1;
    while (waitpid(fsrv.pid, NULL, 0) < 0 && errno == EINTR)
        ;
    fsrv.off = 1;
}

/* The request's bytes: argc, envc, then the strings (hpc_remote.h); NULL
 * without a working directory to give. */
static GByteArray *fsrv_message(char **argv)
{
    static char *none[] = { NULL };
    char **env = environ ? environ : none;      /* after clearenv() */
    char *cwd = getcwd(NULL, 0);                /* NULL once removed (an exec keeps it) */
    if (!cwd)
        return NULL;
    GByteArray *m = g_byte_array_new();
    uint32_t n[2] = { g_strv_length(argv), g_strv_length(env) };
    g_byte_array_append(m, (const guint8 *)n, sizeof n);
    for (char **a = argv; *a; a++)
        g_byte_array_append(m, (const guint8 *)*a, (guint)strlen(*a) + 1);
    for (char **e = env; *e; e++)
        g_byte_array_append(m, (const guint8 *)*e, (guint)strlen(*e) + 1);
    g_byte_array_append(m, (const guint8 *)cwd, (guint)strlen(cwd) + 1);
    free(cwd);
    return m;
}

static int fsrv_send(GByteArray *m, const int fds[CHILD_FDS])
{
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int) * CHILD_FDS)];
    } u = { 0 };
    struct iovec iov = { .iov_base = m->data, .iov_len = m->len };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                          .msg_controllen = sizeof u.b };
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    *c = (struct cmsghdr){ .cmsg_len = CMSG_LEN(sizeof(int) * CHILD_FDS),
                           .cmsg_level = SOL_SOCKET, .cmsg_type = SCM_RIGHTS };
    memcpy(CMSG_DATA(c), fds, sizeof(int) * CHILD_FDS);
    ssize_t n;
    while ((n = sendmsg(fsrv.fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)m->len ? 0 : -1;
}

/* The answer: the helper's pid and its pidfd into h.  -1 without them. */
static int fsrv_answer(hpc_helper *h)
{
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } u;
    int32_t v = 0;
    struct iovec iov = { .iov_base = &v, .iov_len = sizeof v };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                          .msg_controllen = sizeof u.b };
    ssize_t n;
    while ((n = recvmsg(fsrv.fd, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    struct cmsghdr *c = n == (ssize_t)sizeof v ? CMSG_FIRSTHDR(&msg) : NULL;
    if (v <= 0 || !c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
        return -1;               /* a failed fork: -errno, no pidfd */
    memcpy(&h->pidfd, CMSG_DATA(c), sizeof h->pidfd);
    h->pid = v;
    return 0;
}

/* Fork the helper of argv from the server (caller holds fsrv.lock). */
static int fsrv_fork(const char *exe, char **argv, const int fds[CHILD_FDS], hpc_helper *h)
{
    if (fsrv.fd < 0 && fsrv_start(exe) != 0) {
        fsrv.off = 1;
        return -1;
    }
    if (strcmp(exe, fsrv.exe) != 0)
        return -1;               /* HPCMOUNT_HELPER changed: exec that one */
    GByteArray *m = fsrv_message(argv);
    int rc = m && m->len <= HPC_REMOTE_FORK_MSG ? fsrv_send(m, fds) : 1;
    if (m)
        g_byte_array_free(m, TRUE);
    if (rc == 0)
        rc = fsrv_answer(h);
    if (rc < 0)
        fsrv_stop();
    return rc == 0 ? 0 : -1;
}

/* A helper forked by the fork server, if this is not the process's first
 * (and the server works): 0 with h->pid and h->pidfd, else -1. */
static int fork_helper(const char *exe, char **argv, const int fds[CHILD_FDS], hpc_helper *h)
{
    g_mutex_lock(&fsrv.lock);
    if (fsrv.owner != getpid()) {
        if (fsrv.fd >= 0)
            close(fsrv.fd);      /* our parent's server */
        g_free(fsrv.exe);
        fsrv.exe = NULL;
        fsrv.fd = -1;
        fsrv.off = 0;
        fsrv.started = 0;
        fsrv.owner = getpid();
    }
    int rc = !fsrv.off && fsrv.started++ > 0 ? fsrv_fork(exe, argv, fds, h) : -1;
    g_mutex_unlock(&fsrv.lock);
    return rc;
}

static int spawn(hpc_container *c, const hpc_remote *r, hpc_helper *h, int fds[CHILD_FDS])
{
    char *exe = helper_path();
    char **argv = helper_argv(c, r, exe);
    int rc = 0;
    if (c->core->creds) {
        rc = spawn_as(c->core->creds, h, exe, argv, fds);
        h->child = 1;
    } else if (fork_helper(exe, argv, fds, h) != 0) {
        posix_spawn_file_actions_t fa;
        stdio_actions(&fa);
        for (int i = 0; i < CHILD_FDS; i++)
            posix_spawn_file_actions_adddup2(&fa, fds[i], HPC_REMOTE_FD_CTL + i);
        rc = posix_spawn(&h->pid, exe, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        h->child = 1;
    }
    g_strfreev(argv);
    g_free(exe);
    return rc;
}

/* Start a helper process for c; the open's answer is read by the caller. */
int hpc_helper_start(hpc_container *c, const hpc_remote *r, hpc_helper **out, GError **err)
{
    hpc_helper *h = g_new0(hpc_helper, 1);
    int fds[CHILD_FDS], rc = HPC_OK;
    h->refs = 1;
    h->culprit = -1;
    h->log_fd = -1;
    h->pidfd = -1;
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
        hpc_helper_unref(h);
    else
        *out = h;
    return rc;
}

/* The answer is late: kill the helper over a limit.  0 to go on waiting. */
static int late(hpc_helper_waiter *w)
{
    const hpc_remote *r = w->r;
    int tid = w->open ? 0 : hpc_helper_ctl(w->h)->tid[w->chan];
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
    hpc_helper_kill(w->h, w->chan, why);
    g_free(why);
    return -1;
}

/* Receive exactly len bytes, supervising the helper while it is late. */
int hpc_helper_recv_all(hpc_helper_waiter *w, int fd, void *buf, size_t len)
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
int hpc_helper_exchange(hpc_helper_waiter *w, const hpc_rq *rq, const char *name, hpc_rp *rp,
                        char **payload)
{
    int fd = w->h->fd[w->chan];
    *payload = NULL;
    if (send_all(fd, rq, sizeof *rq) != 0 || (rq->len && send_all(fd, name, rq->len) != 0))
        return -1;
    if (hpc_helper_recv_all(w, fd, rp, sizeof *rp) != 0 || rp->len > HPC_REMOTE_MAX_PAYLOAD)
        return -1;
    *payload = g_malloc(rp->len + 1);
    (*payload)[rp->len] = '\0';
    if (hpc_helper_recv_all(w, fd, *payload, rp->len) != 0) {
        g_free(*payload);
        *payload = NULL;
        return -1;
    }
    return 0;
}

/* The helper went away during a request on channel chan: was the request
 * the cause?  The supervisor's verdict, else the crash report's thread. */
hpc_helper_gone hpc_helper_blame(hpc_helper *h, int chan, int alone, char **why)
{
    hpc_helper_kill(h, -1, NULL);     /* ends it and reaps it, if not yet done */
    const hpc_ctl *ctl = hpc_helper_ctl(h);
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
