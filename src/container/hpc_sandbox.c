/* hpc_sandbox.c - the helper's side of the isolation of third-party
 * libraries; see hpc_sandbox.h and hpc_remote.h. */
#define _GNU_SOURCE       /* gettid */
#include "config.h"
#include "hpc_sandbox.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static hpc_ctl *ctl;     /* set in the helper only */

void hpc_sandbox_note(const char *path)
{
    if (!ctl)
        return;
    g_strlcpy(ctl->member, path ? path : "", sizeof ctl->member);
}

/* Async-signal-safe: two stores, then the default action of the signal. */
static void on_crash(int sig)
{
    ctl->crash_tid = (int32_t)syscall(SYS_gettid);
    ctl->crash_sig = sig;
    signal(sig, SIG_DFL);
    raise(sig);
}

void hpc_sandbox_thread(void)
{
    stack_t ss = { .ss_size = 64u << 10 };
    ss.ss_sp = malloc(ss.ss_size);    /* lives as long as the thread */
    if (ss.ss_sp)
        sigaltstack(&ss, NULL);
}

void hpc_sandbox_enter(hpc_ctl *page)
{
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    ctl = page;
    hpc_sandbox_thread();
    struct sigaction sa = { .sa_handler = on_crash, .sa_flags = SA_ONSTACK };
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++)
        sigaction(sigs[i], &sa, NULL);
}

/* ---- the walk after the open ------------------------------------------- */

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

void hpc_sandbox_walk(hpc_container *c, unsigned max_nodes)
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
