/* hm_loop.c - hpcmount's worker loop: threads started as requests wait,
 * each polling briefly (-o spin_us) before it sleeps.
 */
#define _GNU_SOURCE       /* splice, pipe2, F_SETPIPE_SZ */
#define FUSE_USE_VERSION 312
#include "config.h"

#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "hpc_log.h"
#include "hpc_mount.h"
#include "hpc_readahead.h"
#include "hm.h"

/* libfuse's multithreaded loop keeps every worker blocked in read(), and the
 * kernel wakes them in FIFO order: each request lands on the thread that has
 * been idle longest, which halves the requests per second of a single
 * stream (QD1 4 KiB reads: 50k single-threaded, 20-25k with libfuse's loop;
 * docs/PERFORMANCE.md).  Here at most one thread reads /dev/fuse, and it
 * answers what it read itself, so a single stream runs as fast as with -s.
 * When more requests are queued behind the one it read (read-ahead, several
 * readers), it first gets another thread reading, so they run in parallel. */
typedef struct hm_loop {
    struct fuse_session *se;
    GMutex lock;
    GCond idle;            /* threads waiting for the reader's place */
    int reading;           /* a thread is in fuse_session_receive_buf */
    unsigned nidle, nthreads, max_threads;
    unsigned spin_us;      /* -o spin_us */
    int left;              /* eventfd: a worker has left, the session has ended */
    GPtrArray *threads;
} hm_loop;

static gpointer hm_worker(gpointer p);

/* Requests waiting in the kernel's queue? */
static int requests_pending(hm_loop *l)
{
    struct pollfd pfd = { .fd = fuse_session_fd(l->se), .events = POLLIN };
    return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/* The reading thread polls /dev/fuse l->spin_us microseconds before it
 * sleeps in read() (-o spin_us=N): a request that arrives meanwhile costs
 * no wake-up of the daemon, one of the two cross-CPU wake-ups of every
 * request. */
static void spin_for_request(hm_loop *l)
{
    if (l->spin_us == 0)
        return;
    gint64 until = g_get_monotonic_time() + l->spin_us;
    while (!requests_pending(l) && g_get_monotonic_time() < until)
        ;
}

static gpointer hm_worker(gpointer p)
{
    hm_loop *l = p;
    struct fuse_buf buf = { .mem = NULL };
    g_mutex_lock(&l->lock);
    while (!fuse_session_exited(l->se)) {
        if (l->reading) {
            l->nidle++;
            g_cond_wait(&l->idle, &l->lock);
            l->nidle--;
            continue;
        }
        l->reading = 1;
        g_mutex_unlock(&l->lock);
        spin_for_request(l);
        int res = fuse_session_receive_buf(l->se, &buf);
        g_mutex_lock(&l->lock);
        l->reading = 0;
        if (res == -EINTR || res == 0)
            continue;
        if (res < 0) {
            fuse_session_exit(l->se);
            break;
        }
        if (requests_pending(l)) {          /* more work queued: another reader */
            if (l->nidle)
                g_cond_signal(&l->idle);
            else if (l->nthreads < l->max_threads) {
                l->nthreads++;
                g_ptr_array_add(l->threads, g_thread_new("hpcmount", hm_worker, l));
            }
        }
        g_mutex_unlock(&l->lock);
        fuse_session_process_buf(l->se, &buf);
        g_mutex_lock(&l->lock);
    }
    g_cond_broadcast(&l->idle);
    g_mutex_unlock(&l->lock);
    free(buf.mem);
    eventfd_write(l->left, 1);
    return NULL;
}

/* Run the workers until the session ends: unmounted (the reader's read
 * fails, and the worker leaving says so through l.left at once: the
 * daemon exits as soon as it is unmounted), or a signal (SIGINT, SIGTERM,
 * SIGHUP), which only this thread takes: it unmounts, so that a reader
 * blocked in read() returns. */
int hm_loop_run(struct fuse_session *se, unsigned max_threads, unsigned spin_us,
                const sigset_t *keep_blocked)
{
    int left = eventfd(0, EFD_CLOEXEC);
    if (left < 0) {
        hpc_log("cannot serve: eventfd: %s", strerror(errno));
        return -1;
    }
    hm_loop l = { .se = se, .max_threads = max_threads ? max_threads : 1, .spin_us = spin_us,
                  .left = left, .threads = g_ptr_array_new() };
    struct pollfd wait_left = { .fd = left, .events = POLLIN };
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, &old);      /* workers inherit the mask */
    g_mutex_init(&l.lock);
    g_cond_init(&l.idle);
    g_mutex_lock(&l.lock);
    l.nthreads = 1;
    g_ptr_array_add(l.threads, g_thread_new("hpcmount", hm_worker, &l));
    g_mutex_unlock(&l.lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    while (!fuse_session_exited(se))        /* a signal ends the wait too */
        ppoll(&wait_left, 1, NULL, keep_blocked);
    fuse_session_unmount(se);       /* wakes a reader blocked in read() */
    g_mutex_lock(&l.lock);
    g_cond_broadcast(&l.idle);
    g_mutex_unlock(&l.lock);
    for (guint i = 0;; i++) {       /* a worker may still add one: read under the lock */
        g_mutex_lock(&l.lock);
        GThread *t = i < l.threads->len ? g_ptr_array_index(l.threads, i) : NULL;
        g_mutex_unlock(&l.lock);
        if (!t)
            break;
        g_thread_join(t);
    }
    g_ptr_array_free(l.threads, TRUE);
    g_cond_clear(&l.idle);
    g_mutex_clear(&l.lock);
    close(left);
    return 0;
}
