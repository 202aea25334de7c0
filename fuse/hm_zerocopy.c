/* hm_zerocopy.c - READ replies that splice the source extents a read
 * maps to (through a pool of pipes), and the read leases that make them safe:
 * the thread that takes the kernel's lease break notices.
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
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "hpc_file.h"
#include "hm.h"

/* Zero-copy replies.  libfuse would splice the extents straight from the
 * sources into /dev/fuse, and send whatever arrived: a source truncated
 * meanwhile gives a short reply, which the kernel takes for the end of the
 * file.  So a READ splices the extents into a pipe of its own first and
 * checks that every byte arrived; hpc_file_read then checks that no source
 * changed (fstat), and only then is the pipe handed to libfuse, which moves
 * its pages on to the kernel.  A short splice or a changed source is an
 * error reply, never a short one.
 *
 * The pipes are the daemon's (hm_daemon.pipes): a READ takes one and gives
 * it back once its reply is sent, so there are never more pipes than READs in
 * flight, and main closes them all at exit. */
typedef struct zc_pipe {
    int fd[2];
    size_t cap;             /* F_GETPIPE_SZ */
} zc_pipe;

/* One READ's reply: its request and the pipe it staged into, if any. */
typedef struct zc_reply {
    fuse_req_t req;
    GAsyncQueue *pipes;
    zc_pipe *p;
} zc_reply;

static void zc_close(gpointer data)
{
    zc_pipe *p = data;
    close(p->fd[0]);
    close(p->fd[1]);
    g_free(p);
}

static zc_pipe *zc_new(void)
{
    zc_pipe *p = g_new(zc_pipe, 1);
    if (pipe2(p->fd, O_CLOEXEC) != 0) {
        g_free(p);
        return NULL;
    }
    p->cap = (size_t)fcntl(p->fd[0], F_GETPIPE_SZ);
    return p;
}

/* An empty pipe from the pool, or a new one; NULL if none can be made. */
static zc_pipe *zc_take(GAsyncQueue *pipes)
{
    zc_pipe *p;
    while ((p = g_async_queue_try_pop(pipes))) {
        int queued = 0;
        if (ioctl(p->fd[0], FIONREAD, &queued) == 0 && queued == 0)
            return p;
        zc_close(p);           /* left over from a reply libfuse cut short */
    }
    return zc_new();
}

/* r's empty pipe of at least size bytes; NULL if not possible. */
static zc_pipe *zc_get(zc_reply *r, size_t size)
{
    zc_pipe *p = zc_take(r->pipes);
    if (!p)
        return NULL;
    if (p->cap < size) {
        int got = fcntl(p->fd[0], F_SETPIPE_SZ, (int)MIN(size, (size_t)INT_MAX));
        if (got > 0)
            p->cap = (size_t)got;
    }
    if (p->cap >= size)
        return r->p = p;
    g_async_queue_push(r->pipes, p);
    return NULL;
}

/* Give r's pipe back to the pool (sent: libfuse took its bytes), or close it
 * (it may hold bytes of a reply that failed). */
static void zc_put(zc_reply *r, int sent)
{
    if (!r->p)
        return;
    if (sent)
        g_async_queue_push(r->pipes, r->p);
    else
        zc_close(r->p);
    r->p = NULL;
}

/* Splice ext[0..n) into p: HPC_OK only when every byte arrived. */
static int zc_fill(zc_pipe *p, const hpc_extent *ext, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        loff_t pos = (loff_t)ext[i].off;
        uint64_t left = ext[i].len;
        while (left > 0) {
            ssize_t r = splice(ext[i].src->fd, &pos, p->fd[1], NULL, (size_t)left,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0 && errno == EAGAIN)
                return HPC_E_NOTSUP;   /* the pipe is full: the copy path answers */
            if (r <= 0)
                return r == 0 ? HPC_E_CHANGED : HPC_E_IO;   /* 0: the source ended */
            left -= (uint64_t)r;
        }
    }
    return HPC_OK;
}

/* The splice sink's hooks (hpc_file.h); ctx is the zc_reply. */
static int zc_stage(void *ctx, const hpc_extent *ext, unsigned n, uint64_t got)
{
    /* a page of the pipe holds at most one page of the source: unaligned
     * extents need a page more each, and one for the first */
    zc_pipe *p = zc_get(ctx, (size_t)got + ((size_t)n + 1) * ZC_PAGE);
    return p ? zc_fill(p, ext, n) : HPC_E_NOTSUP;
}

static void zc_send(void *ctx, uint64_t got)
{
    zc_reply *r = ctx;
    struct fuse_bufvec bv = FUSE_BUFVEC_INIT((size_t)got);
    bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_RETRY;
    bv.buf[0].fd = r->p->fd[0];
    zc_put(r, fuse_reply_data(r->req, &bv, FUSE_BUF_SPLICE_MOVE) == 0);
}

static void zc_drop(void *ctx)
{
    zc_put(ctx, 0);
}

static void zc_send_buf(void *ctx, const void *buf, size_t n)
{
    zc_reply *r = ctx;
    fuse_reply_buf(r->req, buf, n);
}

static const hpc_splice_ops zc_ops = { zc_stage, zc_send, zc_drop, zc_send_buf };

GAsyncQueue *hm_pipes_new(void)
{
    return g_async_queue_new_full(zc_close);
}

void hm_pipes_free(GAsyncQueue *pipes)
{
    g_async_queue_unref(pipes);
}

int hm_read_reply(fuse_req_t req, GAsyncQueue *pipes, hpc_file *f, uint64_t off, size_t size)
{
    zc_reply r = { req, pipes, NULL };
    hpc_sink sink = { .kind = HPC_SINK_SPLICE, .splice = &zc_ops, .ctx = &r };
    return hpc_file_read(f, off, size, &sink);   /* it sends or drops what fill took */
}

void hm_lease_sigset(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, LEASE_SIG);
    sigaddset(set, SIGIO);
}

gpointer hm_lease_thread(gpointer unused)
{
    (void)unused;
    sigset_t set;
    hm_lease_sigset(&set);
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&set, &si);
        if (sig == LEASE_SIG)
            hpc_source_lease_broken(si.si_fd);
        else if (sig == SIGIO)
            hpc_source_lease_broken(-1);
    }
    return NULL;
}
