/* hm_zerocopy.c - READ replies that splice the source extents a read
 * maps to (a pipe per thread), and the read leases that make them safe:
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
 * file.  So each thread splices the extents into a pipe of its own first
 * and checks that every byte arrived; hpc_file_read then checks that no
 * source changed (fstat), and only then is the pipe handed to libfuse,
 * which moves its pages on to the kernel.  A short splice or a changed
 * source is an error reply, never a short one. */
typedef struct zc_pipe {
    int fd[2];
    size_t cap;             /* F_GETPIPE_SZ */
} zc_pipe;

static __thread zc_pipe zc = { { -1, -1 }, 0 };

static void zc_reset(void)
{
    if (zc.fd[0] >= 0) {
        close(zc.fd[0]);
        close(zc.fd[1]);
    }
    zc.fd[0] = zc.fd[1] = -1;
    zc.cap = 0;
}

/* This thread's empty pipe of at least size bytes; NULL if not possible. */
static zc_pipe *zc_get(size_t size)
{
    int queued = 0;
    if (zc.fd[0] >= 0 && (ioctl(zc.fd[0], FIONREAD, &queued) != 0 || queued != 0))
        zc_reset();            /* left over from a reply that failed */
    if (zc.fd[0] < 0) {
        if (pipe2(zc.fd, O_CLOEXEC) != 0) {
            zc.fd[0] = zc.fd[1] = -1;
            return NULL;
        }
        zc.cap = (size_t)fcntl(zc.fd[0], F_GETPIPE_SZ);
    }
    if (zc.cap < size) {
        int got = fcntl(zc.fd[0], F_SETPIPE_SZ, (int)MIN(size, (size_t)INT_MAX));
        if (got > 0)
            zc.cap = (size_t)got;
    }
    return zc.cap >= size ? &zc : NULL;
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

/* The splice sink's hooks (hpc_file.h); ctx is the request.  Each thread
 * stages into its own pipe. */
static int zc_stage(void *ctx, const hpc_extent *ext, unsigned n, uint64_t got)
{
    (void)ctx;
    /* a page of the pipe holds at most one page of the source: unaligned
     * extents need a page more each, and one for the first */
    zc_pipe *p = zc_get((size_t)got + ((size_t)n + 1) * ZC_PAGE);
    return p ? zc_fill(p, ext, n) : HPC_E_NOTSUP;
}

static void zc_send(void *ctx, uint64_t got)
{
    struct fuse_bufvec bv = FUSE_BUFVEC_INIT((size_t)got);
    bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_RETRY;
    bv.buf[0].fd = zc.fd[0];
    if (fuse_reply_data(ctx, &bv, FUSE_BUF_SPLICE_MOVE) != 0)
        zc_reset();
}

static void zc_drop(void *ctx)
{
    (void)ctx;
    zc_reset();
}

static void zc_send_buf(void *ctx, const void *buf, size_t n)
{
    fuse_reply_buf(ctx, buf, n);
}

const hpc_splice_ops hm_splice_ops = { zc_stage, zc_send, zc_drop, zc_send_buf };

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
