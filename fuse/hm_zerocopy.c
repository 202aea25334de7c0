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

#include "hpc_mount.h"
#include "hpc_readahead.h"
#include "hm.h"

/* Zero-copy replies.  libfuse would splice the extents straight from the
 * sources into /dev/fuse, and send whatever arrived: a source truncated
 * meanwhile gives a short reply, which the kernel takes for the end of the
 * file.  So each thread splices the extents into a pipe of its own first,
 * checks that every byte arrived and that no source changed (fstat), and
 * only then hands the pipe to libfuse, which moves its pages on to the
 * kernel.  A short splice or a changed source is an EIO. */
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

static int read_extents(fuse_req_t req, hpc_mount *m, fuse_ino_t ino, size_t size, off_t off,
                        const hpc_stat *hp, hpc_extent *ext, unsigned n);


/* Answer with source extents, spliced; 0 if not possible (then the copy
 * path answers), 1 when replied (bytes or an error). */
int hm_read_zerocopy(fuse_req_t req, const hm_daemon *d, fuse_ino_t ino, size_t size, off_t off)
{
    hpc_extent ext[HPC_MAX_EXTENTS];
    unsigned n;
    hpc_stat h;
    hpc_mount *m = d->mount;
    if (d->zerocopy_min == 0 || size < d->zerocopy_min || hpc_mount_getattr(m, ino, &h) != HPC_OK)
        return 0;
    if (hpc_mount_map(m, ino, (uint64_t)off, size, ext, HPC_MAX_EXTENTS, &n) != HPC_OK)
        return 0;
    int replied = read_extents(req, m, ino, size, off, &h, ext, n);
    hpc_mount_unmap(m, ino);     /* the extents' files may close from here on */
    return replied;
}

/* Splice ext[0..n) (got bytes) into this thread's pipe, check, and reply;
 * 0 when the copy path must answer.  Between hpc_source_replies_begin and
 * _end: a break of the sources' leases waits for this reply. */
static int reply_spliced(fuse_req_t req, hpc_mount *m, fuse_ino_t ino, size_t size, off_t off,
                         hpc_extent *ext, unsigned n, uint64_t got)
{
    /* a page of the pipe holds at most one page of the source: unaligned
     * extents need a page more each, and one for the first */
    zc_pipe *p = zc_get((size_t)got + ((size_t)n + 1) * ZC_PAGE);
    if (!p)
        return 0;
    int rc = HPC_OK;
    for (unsigned i = 0; i < n && rc == HPC_OK; i++)
        if (!hpc_source_leased(ext[i].src))   /* broken since: changed, or live */
            rc = hpc_source_changed(ext[i].src) ? HPC_E_CHANGED : HPC_E_NOTSUP;
    if (rc == HPC_OK)
        rc = zc_fill(p, ext, n);
    if (rc == HPC_E_NOTSUP) {
        zc_reset();
        return 0;
    }
    if (rc == HPC_OK)
        rc = hpc_mount_extents_unchanged(m, ino, ext, n);
    else if (rc == HPC_E_CHANGED)
        rc = hpc_mount_sources_unchanged(m, ino) == HPC_E_CHANGED ? HPC_E_CHANGED : HPC_E_IO;
    if (rc != HPC_OK) {
        zc_reset();
        if (rc != HPC_E_CHANGED)    /* the core logged that once */
            hpc_log("read of inode %lu at %lld (+%zu) failed: %s", (unsigned long)ino,
                    (long long)off, size, hpc_strerror(rc));
        hm_reply_err(req, rc);
        return 1;
    }
    struct fuse_bufvec bv = FUSE_BUFVEC_INIT((size_t)got);
    bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_RETRY;
    bv.buf[0].fd = p->fd[0];
    if (fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE) != 0)
        zc_reset();
    return 1;
}

/* The rest of hm_read_zerocopy, while the extents' container is held.  The
 * kernel copies spliced pages after every check here, so only sources
 * under a read lease are spliced: a write or truncate then waits for the
 * reply (hpc_source.h); others take the copy path. */
static int read_extents(fuse_req_t req, hpc_mount *m, fuse_ino_t ino, size_t size, off_t off,
                        const hpc_stat *hp, hpc_extent *ext, unsigned n)
{
    const hpc_stat h = *hp;
    uint64_t want = (uint64_t)off >= h.size ? 0 : MIN((uint64_t)size, h.size - (uint64_t)off), got = 0;
    for (unsigned i = 0; i < n; i++)
        got += ext[i].len;
    if (got != want || n == 0)
        return 0;         /* a short reply would read as EOF: use the copy path */
    for (unsigned i = 0; i < n; i++)
        if (!hpc_source_lease(ext[i].src))
            return 0;
    hpc_source_replies_begin();
    int replied = reply_spliced(req, m, ino, size, off, ext, n, got);
    hpc_source_replies_end();
    return replied;
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
