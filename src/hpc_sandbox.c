/* hpc_sandbox.c - the trial open of untrusted files in a disposable child;
 * see hpc_sandbox.h.
 *
 * The child shares one anonymous page with the parent: the member the
 * reader last noted, and the result and error line of its open.  The
 * parent waits for the child on a pipe whose write end only the child
 * holds (it closes when the child ends, however it ends), with poll()'s
 * timeout as the time limit; a child past the limit is killed (SIGKILL).
 */
#define _GNU_SOURCE       /* pipe2 */
#include "config.h"
#include "hpc_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct trial_page {
    int opened;                  /* the child's open returned */
    int rc;                      /* what it returned */
    unsigned nodes;              /* nodes walked */
    char member[1024];           /* the file last noted by the reader */
    char msg[2048];              /* the open's error line */
} trial_page;

static trial_page *current;      /* set in the child only */

void hpc_sandbox_note(const char *path)
{
    if (!current)
        return;
    g_strlcpy(current->member, path ? path : "", sizeof current->member);
}

int hpc_sandbox_parse_timeout(const char *value, double *timeout, GError **err)
{
    char *end = NULL;
    double v = value ? g_ascii_strtod(value, &end) : -1;
    if (!value || end == value || *end != '\0' || !(v >= 0) || v > 86400)
        return hpc_fail(err, HPC_E_INVAL, "open_timeout", NULL, 0,
                        "'%s' is not a number of seconds from 0 (no trial open) to 86400",
                        value ? value : "");
    *timeout = v > 0 ? v : -1;
    return HPC_OK;
}

/* ---- the child's walk --------------------------------------------------- */

typedef struct walk {
    hpc_container *c;
    GQueue dirs;                 /* hpc_ino of directories still to list */
    GPtrArray *names;            /* entries of the directory being listed */
    unsigned nodes;
    gint64 deadline;             /* monotonic us */
} walk;

static int walk_over(const walk *w)
{
    return w->nodes >= HPC_SANDBOX_WALK_NODES || g_get_monotonic_time() >= w->deadline;
}

static int collect(void *ctx, const char *name, const hpc_stat *st, uint64_t next)
{
    walk *w = ctx;
    (void)st;
    (void)next;
    if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && strcmp(name, ".info") != 0)
        g_ptr_array_add(w->names, g_strdup(name));
    return w->names->len >= HPC_SANDBOX_WALK_NODES;
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

static void walk_tree(hpc_container *c, trial_page *page)
{
    walk w = { .c = c, .deadline = g_get_monotonic_time() +
                                   (gint64)(HPC_SANDBOX_WALK_SECONDS * G_USEC_PER_SEC) };
    g_queue_init(&w.dirs);
    g_queue_push_tail(&w.dirs, GSIZE_TO_POINTER((gsize)HPC_INO_ROOT));
    while (!g_queue_is_empty(&w.dirs) && !walk_over(&w)) {
        hpc_ino dir = (hpc_ino)GPOINTER_TO_SIZE(g_queue_pop_head(&w.dirs));
        w.names = g_ptr_array_new_with_free_func(g_free);
        hpc_container_readdir(c, dir, 0, collect, &w);
        for (guint i = 0; i < w.names->len && !walk_over(&w); i++)
            visit(&w, dir, g_ptr_array_index(w.names, i));
        g_ptr_array_free(w.names, TRUE);
        page->nodes = w.nodes;
    }
    g_queue_clear(&w.dirs);
}

/* The child: open, walk, report, end without cleaning up (the parent owns
 * everything; exit handlers and leak checks are not for this copy). */
static G_GNUC_NORETURN void child_main(hpc_container *c, trial_page *page, int quiet)
{
    current = page;
    if (quiet) {
        /* the library's own complaints (double free, error stacks) would
         * add lines to the one-line refusal */
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0)
            dup2(null, STDERR_FILENO);
    }
    GError *e = NULL;
    int rc = c->format->open(c, &e);
    page->rc = rc;
    if (rc != HPC_OK && e)
        g_strlcpy(page->msg, e->message, sizeof page->msg);
    page->opened = 1;
    if (rc == HPC_OK)
        walk_tree(c, page);
    _exit(0);
}

/* ---- the parent ---------------------------------------------------------- */

/* Wait for the child until it ends or `ms` pass: 1 if it ended (*status
 * set), 0 if it was killed for taking too long. */
static int wait_child(pid_t pid, int fd, gint64 ms, int *status)
{
    gint64 end = g_get_monotonic_time() + ms * 1000;
    for (;;) {
        gint64 left = (end - g_get_monotonic_time()) / 1000;
        if (left <= 0)
            break;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int n = poll(&p, 1, (int)MIN(left, (gint64)G_MAXINT));
        if (n < 0 && errno == EINTR)
            continue;
        if (n != 0)
            break;               /* hung up: the child ended */
    }
    if (waitpid(pid, status, WNOHANG) == pid)
        return 1;
    /* the pipe may close an instant before the child is reaped */
    for (int i = 0; i < 20; i++) {
        if (g_get_monotonic_time() < end) {
            g_usleep(1000);
            if (waitpid(pid, status, WNOHANG) == pid)
                return 1;
        }
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return 0;
}

/* The file a refusal names: the member being opened, if it is not SOURCE. */
static char *culprit(const hpc_container *c, const trial_page *page)
{
    if (!page->member[0] || strcmp(page->member, c->path) == 0)
        return g_strdup("");
    return g_strdup_printf(", at its member %s", page->member);
}

static int refuse(hpc_container *c, const trial_page *page, int ended, int status,
                  double secs, GError **err)
{
    const char *lib = c->format->sandbox_lib;
    char *who = culprit(c, page);
    int rc;
    if (!ended)
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, NULL, 0,
                      "%s took more than %g s to open it%s; damaged file? not mounted "
                      "(-o open_timeout=SECONDS allows more)", lib, secs, who);
    else if (WIFSIGNALED(status))
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, NULL, 0,
                      "%s crashed (signal %d, %s) opening it%s: the file is damaged; "
                      "not mounted", lib, WTERMSIG(status), g_strsignal(WTERMSIG(status)), who);
    else
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, NULL, 0,
                      "%s ended the process (exit status %d) opening it%s; not mounted",
                      lib, WIFEXITED(status) ? WEXITSTATUS(status) : -1, who);
    g_free(who);
    return rc;
}

int hpc_sandbox_trial_open(hpc_container *c, GError **err)
{
    if (!c->format || !c->format->sandbox_lib || c->opts.open_timeout < 0)
        return HPC_OK;
    double secs = c->opts.open_timeout > 0 ? c->opts.open_timeout : HPC_SANDBOX_TIMEOUT;
    trial_page *page = mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int fd[2] = { -1, -1 }, rc = HPC_OK;
    if (page == MAP_FAILED || pipe2(fd, O_CLOEXEC) != 0) {
        rc = hpc_fail(err, HPC_E_IO, c->path, NULL, 0, "cannot prepare the trial open: %s",
                      g_strerror(errno));
        goto out;
    }
    memset(page, 0, sizeof *page);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        rc = hpc_fail(err, HPC_E_IO, c->path, NULL, 0, "cannot fork the trial open: %s",
                      g_strerror(errno));
        goto out;
    }
    if (pid == 0) {
        close(fd[0]);
        child_main(c, page, g_getenv("HPC_SANDBOX_STDERR") == NULL);
    }
    close(fd[1]);
    fd[1] = -1;
    int status = 0;
    int ended = wait_child(pid, fd[0], (gint64)(secs * 1000), &status);
    if (ended && WIFEXITED(status) && WEXITSTATUS(status) == 0 && page->opened) {
        rc = page->rc;               /* a clean refusal: the child's line */
        if (rc != HPC_OK && err && !*err)
            g_set_error_literal(err, HPC_ERROR, -rc, page->msg[0] ? page->msg : hpc_strerror(rc));
    } else {
        rc = refuse(c, page, ended, status, secs, err);
    }
out:
    if (fd[0] >= 0)
        close(fd[0]);
    if (fd[1] >= 0)
        close(fd[1]);
    if (page != MAP_FAILED)
        munmap(page, sizeof *page);
    return rc;
}
