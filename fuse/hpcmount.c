/* hpcmount.c - mount an HPC container read-only through FUSE.
 *
 * A thin front end over the core library: each low-level handler takes the
 * container from the request, asks the core, and replies exactly once.
 * Node ids are the core's ids, so no path strings or per-entry tables
 * exist here.  Large reads of verbatim bytes are answered with extents of
 * the source files (spliced by libfuse); everything else goes through the
 * core, whose block cache serves small and unaligned reads.
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

/* Reads at least this large skip the block cache when they map to source
 * extents: the kernel's page cache (keep_cache) already holds their pages.
 * -o zerocopy_min_kb=N changes it (0: never). */
#define ZEROCOPY_MIN (128u << 10)
#define READ_AHEAD_KB 1024       /* -o read_ahead_kb */
static uint64_t zerocopy_min = ZEROCOPY_MIN;
/* The daemon's read-ahead of source extents (-o ra_*_kb, ra_threads); NULL
 * when disabled.  Set once before the worker loop starts. */
static hpc_ra *ra_engine;
#define STATIC_TIMEOUT 86400.0   /* the data never change */
#define LIVE_TIMEOUT 1.0         /* containers still being written */

static double timeout_of(hpc_mount *m, hpc_ino ino)
{
    hpc_node_meta meta;
    hpc_mount_node_meta(m, ino, &meta);
    return meta.timeout;
}

static void stat_to_fuse(hpc_mount *m, const hpc_stat *h, struct stat *st)
{
    hpc_node_meta meta;
    hpc_mount_node_meta(m, h->ino, &meta);
    memset(st, 0, sizeof *st);
    st->st_ino = h->ino;
    st->st_mode = h->mode;
    st->st_nlink = h->nlink;
    st->st_size = (off_t)h->size;
    st->st_blocks = (blkcnt_t)((h->size + 511) / 512);
    st->st_blksize = (blksize_t)meta.blksize;
    st->st_uid = meta.uid;
    st->st_gid = meta.gid;
    st->st_mtime = st->st_ctime = st->st_atime = (time_t)h->mtime;
}

static void entry_of(hpc_mount *m, const hpc_stat *h, struct fuse_entry_param *e)
{
    memset(e, 0, sizeof *e);
    e->ino = h->ino;
    e->generation = 1;
    e->attr_timeout = e->entry_timeout = timeout_of(m, h->ino);
    if (h->ino == HPC_INO_INFO || h->partial)
        e->attr_timeout = 0;    /* .info changes with the sources; partial: ask getattr */
    stat_to_fuse(m, h, &e->attr);
}

/* The mount's read-ahead (-o read_ahead_kb), written once the kernel took
 * the INIT reply: it sets the read-ahead to at most the max_readahead it
 * offered (128 KiB), undoing any value written before. */
static struct {
    char path[128];      /* /sys/class/bdi/MAJ:MIN/read_ahead_kb, or "" */
    unsigned kb;
    gint done;
} bdi_ra;

/* Best effort (needs root); called by the requests that precede reads. */
static void apply_read_ahead(void)
{
    if (g_atomic_int_get(&bdi_ra.done) || !g_atomic_int_compare_and_exchange(&bdi_ra.done, 0, 1))
        return;
    FILE *f = bdi_ra.path[0] ? fopen(bdi_ra.path, "w") : NULL;
    if (f) {
        fprintf(f, "%u\n", bdi_ra.kb);
        fclose(f);
    }
}

static void reply_err(fuse_req_t req, int rc)
{
    fuse_reply_err(req, hpc_err_to_errno(rc));
}

/* The largest READ the kernel sends (-o max_read=); hm_init must ask for the
 * same as the mount option, or libfuse refuses the INIT. */
static unsigned max_read;

static void hm_init(void *userdata, struct fuse_conn_info *conn)
{
    (void)userdata;
    conn->max_read = max_read;
    if (conn->capable & FUSE_CAP_SPLICE_WRITE)
        conn->want |= FUSE_CAP_SPLICE_WRITE;
    /* readdirplus, but let the kernel choose when: always-plus makes it
     * build an inode for each of 10^6 entries of a plain `ls` (6.3 s vs
     * 0.7 s for 10^6 tasks, see docs/PERFORMANCE.md). */
    if (conn->capable & FUSE_CAP_READDIRPLUS)
        conn->want |= FUSE_CAP_READDIRPLUS;
    if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO)
        conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
    if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
        conn->want |= FUSE_CAP_PARALLEL_DIROPS;
    conn->max_background = 64;
    conn->congestion_threshold = 48;
}

static void hm_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    hpc_mount *m = fuse_req_userdata(req);
    hpc_stat h;
    struct fuse_entry_param e;
    apply_read_ahead();
    int rc = hpc_mount_lookup(m, parent, name, &h);
    if (rc == HPC_E_NOENT && timeout_of(m, parent) > LIVE_TIMEOUT) {
        memset(&e, 0, sizeof e);      /* negative entry: cached by the kernel */
        e.entry_timeout = STATIC_TIMEOUT;
        fuse_reply_entry(req, &e);
        return;
    }
    if (rc != HPC_OK) {
        reply_err(req, rc);
        return;
    }
    entry_of(m, &h, &e);
    fuse_reply_entry(req, &e);
}

static void hm_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    hpc_mount *m = fuse_req_userdata(req);
    hpc_stat h;
    struct stat st;
    int rc = hpc_mount_getattr(m, ino, &h);
    if (rc != HPC_OK) {
        reply_err(req, rc);
        return;
    }
    stat_to_fuse(m, &h, &st);
    fuse_reply_attr(req, &st, ino == HPC_INO_INFO ? 0 : timeout_of(m, ino));
}

static void hm_readlink(fuse_req_t req, fuse_ino_t ino)
{
    hpc_mount *m = fuse_req_userdata(req);
    char *target = NULL;
    int rc = hpc_mount_readlink(m, ino, &target);
    if (rc != HPC_OK)
        reply_err(req, rc);
    else
        fuse_reply_readlink(req, target);
    g_free(target);
}

static void hm_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    hpc_mount *m = fuse_req_userdata(req);
    hpc_stat h;
    int rc = hpc_mount_getattr(m, ino, &h);
    if (rc != HPC_OK)
        reply_err(req, rc);
    else if (!S_ISDIR(h.mode))
        fuse_reply_err(req, ENOTDIR);
    else
        fuse_reply_open(req, fi);
}

typedef struct dir_fill {
    fuse_req_t req;
    hpc_mount *m;
    char *buf;
    size_t size, used;
    int plus;
} dir_fill;

static int dir_add(void *ctx, const char *name, const hpc_stat *h, uint64_t next)
{
    dir_fill *d = ctx;
    size_t n;
    if (d->plus) {
        struct fuse_entry_param e;
        entry_of(d->m, h, &e);
        n = fuse_add_direntry_plus(d->req, d->buf + d->used, d->size - d->used, name, &e, (off_t)next);
    } else {
        struct stat st = { .st_ino = h->ino, .st_mode = h->mode };
        n = fuse_add_direntry(d->req, d->buf + d->used, d->size - d->used, name, &st, (off_t)next);
    }
    if (n > d->size - d->used)
        return 1;             /* full: this entry goes into the next call */
    d->used += n;
    return 0;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus)
{
    hpc_mount *m = fuse_req_userdata(req);
    dir_fill d = { req, m, g_malloc(size), size, 0, plus };
    int rc = hpc_mount_readdir(m, ino, (uint64_t)off, dir_add, &d);
    if (rc != HPC_OK)
        reply_err(req, rc);
    else
        fuse_reply_buf(req, d.buf, d.used);
    g_free(d.buf);
}

static void hm_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    (void)fi;
    do_readdir(req, ino, size, off, 0);
}

static void hm_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                           struct fuse_file_info *fi)
{
    (void)fi;
    do_readdir(req, ino, size, off, 1);
}

static void hm_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    hpc_mount *m = fuse_req_userdata(req);
    hpc_stat h;
    apply_read_ahead();
    if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
        fuse_reply_err(req, EROFS);
        return;
    }
    int rc = hpc_mount_getattr(m, ino, &h);
    if (rc != HPC_OK) {
        reply_err(req, rc);
        return;
    }
    if (S_ISDIR(h.mode)) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    hpc_node_meta meta;
    hpc_mount_node_meta(m, ino, &meta);
    fi->direct_io = meta.direct_io;     /* .info: regenerated as things change */
    fi->keep_cache = meta.keep_cache;   /* the bytes never change */
    hpc_ra_stream *s = meta.direct_io ? NULL : hpc_ra_stream_new(ra_engine, ino);
    fi->fh = (uint64_t)(uintptr_t)s;
    if (fuse_reply_open(req, fi) != 0)
        hpc_ra_stream_free(s);     /* the open was interrupted: no release */
}

static void hm_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    hpc_ra_stream_free((hpc_ra_stream *)(uintptr_t)fi->fh);
    fuse_reply_err(req, 0);
}

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
#define ZC_PAGE ((size_t)sysconf(_SC_PAGESIZE))

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
static int read_zerocopy(fuse_req_t req, hpc_mount *m, fuse_ino_t ino, size_t size, off_t off)
{
    hpc_extent ext[HPC_MAX_EXTENTS];
    unsigned n;
    hpc_stat h;
    if (zerocopy_min == 0 || size < zerocopy_min || hpc_mount_getattr(m, ino, &h) != HPC_OK)
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
        reply_err(req, rc);
        return 1;
    }
    struct fuse_bufvec bv = FUSE_BUFVEC_INIT((size_t)got);
    bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_RETRY;
    bv.buf[0].fd = p->fd[0];
    if (fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE) != 0)
        zc_reset();
    return 1;
}

/* The rest of read_zerocopy, while the extents' container is held.  The
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

/* The sources' lease break notices (hpc_source.h): LEASE_SIG, or SIGIO when
 * the kernel's queue of them overflowed.  Blocked in every thread (main
 * blocks them first) and taken by this one. */
#define LEASE_SIG (SIGRTMIN + 1)

static void lease_sigset(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, LEASE_SIG);
    sigaddset(set, SIGIO);
}

static gpointer lease_thread(gpointer unused)
{
    (void)unused;
    sigset_t set;
    lease_sigset(&set);
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

static void hm_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    hpc_mount *m = fuse_req_userdata(req);
    /* queued first: the threads advise while this request reads */
    hpc_ra_read((hpc_ra_stream *)(uintptr_t)fi->fh, (uint64_t)off, size);
    if (read_zerocopy(req, m, ino, size, off))
        return;
    char *buf = g_malloc(size ? size : 1);
    size_t n = 0;
    int rc = hpc_mount_read(m, ino, buf, size, (uint64_t)off, &n);
    if (rc != HPC_OK) {
        if (rc != HPC_E_CHANGED)    /* the core logged that once */
            hpc_log("read of inode %lu at %lld (+%zu) failed: %s", (unsigned long)ino,
                    (long long)off, size, hpc_strerror(rc));
        reply_err(req, rc);
    } else {
        fuse_reply_buf(req, buf, n);
    }
    g_free(buf);
}

static void hm_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    hpc_mount *m = fuse_req_userdata(req);
    void *value = NULL;
    size_t len = 0;
    int rc = hpc_mount_getxattr(m, ino, name, &value, &len);
    if (rc != HPC_OK)
        reply_err(req, rc);
    else if (size == 0)
        fuse_reply_xattr(req, len);
    else if (size < len)
        fuse_reply_err(req, ERANGE);
    else
        fuse_reply_buf(req, value, len);
    g_free(value);
}

static void hm_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    hpc_mount *m = fuse_req_userdata(req);
    GString *names = g_string_new(NULL);
    int rc = hpc_mount_listxattr(m, ino, names);
    if (rc != HPC_OK)
        reply_err(req, rc);
    else if (size == 0)
        fuse_reply_xattr(req, names->len);
    else if (size < names->len)
        fuse_reply_err(req, ERANGE);
    else
        fuse_reply_buf(req, names->str, names->len);
    g_string_free(names, TRUE);
}

static void hm_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    hpc_mount *m = fuse_req_userdata(req);
    struct statvfs sv;
    uint64_t bytes;
    uint32_t bsize;
    memset(&sv, 0, sizeof sv);
    hpc_mount_statfs(m, &bytes, &bsize);
    sv.f_bsize = sv.f_frsize = bsize;
    sv.f_blocks = bytes / sv.f_bsize + 1;
    sv.f_namemax = 255;
    sv.f_flag = ST_RDONLY;
    fuse_reply_statfs(req, &sv);
}

/* Every operation that would change the tree or the bytes. */
static void hm_setattr(fuse_req_t req, fuse_ino_t i, struct stat *a, int s, struct fuse_file_info *f)
{ (void)i; (void)a; (void)s; (void)f; fuse_reply_err(req, EROFS); }
static void hm_mknod(fuse_req_t req, fuse_ino_t p, const char *n, mode_t m, dev_t d)
{ (void)p; (void)n; (void)m; (void)d; fuse_reply_err(req, EROFS); }
static void hm_mkdir(fuse_req_t req, fuse_ino_t p, const char *n, mode_t m)
{ (void)p; (void)n; (void)m; fuse_reply_err(req, EROFS); }
static void hm_unlink(fuse_req_t req, fuse_ino_t p, const char *n)
{ (void)p; (void)n; fuse_reply_err(req, EROFS); }
static void hm_symlink(fuse_req_t req, const char *l, fuse_ino_t p, const char *n)
{ (void)l; (void)p; (void)n; fuse_reply_err(req, EROFS); }
static void hm_rename(fuse_req_t req, fuse_ino_t p, const char *n, fuse_ino_t np, const char *nn,
                      unsigned int f)
{ (void)p; (void)n; (void)np; (void)nn; (void)f; fuse_reply_err(req, EROFS); }
static void hm_link(fuse_req_t req, fuse_ino_t i, fuse_ino_t np, const char *nn)
{ (void)i; (void)np; (void)nn; fuse_reply_err(req, EROFS); }
static void hm_write(fuse_req_t req, fuse_ino_t i, const char *b, size_t s, off_t o,
                     struct fuse_file_info *f)
{ (void)i; (void)b; (void)s; (void)o; (void)f; fuse_reply_err(req, EROFS); }
static void hm_setxattr(fuse_req_t req, fuse_ino_t i, const char *n, const char *v, size_t s, int f)
{ (void)i; (void)n; (void)v; (void)s; (void)f; fuse_reply_err(req, EROFS); }
static void hm_removexattr(fuse_req_t req, fuse_ino_t i, const char *n)
{ (void)i; (void)n; fuse_reply_err(req, EROFS); }
static void hm_create(fuse_req_t req, fuse_ino_t p, const char *n, mode_t m, struct fuse_file_info *f)
{ (void)p; (void)n; (void)m; (void)f; fuse_reply_err(req, EROFS); }
static void hm_fallocate(fuse_req_t req, fuse_ino_t i, int m, off_t o, off_t l, struct fuse_file_info *f)
{ (void)i; (void)m; (void)o; (void)l; (void)f; fuse_reply_err(req, EROFS); }

static const struct fuse_lowlevel_ops hm_ops = {
    .init = hm_init,
    .lookup = hm_lookup,
    .getattr = hm_getattr,
    .readlink = hm_readlink,
    .opendir = hm_opendir,
    .readdir = hm_readdir,
    .readdirplus = hm_readdirplus,
    .open = hm_open,
    .read = hm_read,
    .release = hm_release,
    .getxattr = hm_getxattr,
    .listxattr = hm_listxattr,
    .statfs = hm_statfs,
    .setattr = hm_setattr,
    .mknod = hm_mknod,
    .mkdir = hm_mkdir,
    .unlink = hm_unlink,
    .rmdir = hm_unlink,
    .symlink = hm_symlink,
    .rename = hm_rename,
    .link = hm_link,
    .write = hm_write,
    .setxattr = hm_setxattr,
    .removexattr = hm_removexattr,
    .create = hm_create,
    .fallocate = hm_fallocate,
};


/* ---- the worker loop -------------------------------------------------- */

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
    GPtrArray *threads;
} hm_loop;

static gpointer hm_worker(gpointer p);

/* Requests waiting in the kernel's queue? */
static int requests_pending(hm_loop *l)
{
    struct pollfd pfd = { .fd = fuse_session_fd(l->se), .events = POLLIN };
    return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/* Microseconds the reading thread polls /dev/fuse before it sleeps in
 * read() (-o spin_us=N): a request that arrives meanwhile costs no wake-up
 * of the daemon, one of the two cross-CPU wake-ups of every request. */
static unsigned spin_us;

static void spin_for_request(hm_loop *l)
{
    if (spin_us == 0)
        return;
    gint64 until = g_get_monotonic_time() + spin_us;
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
    return NULL;
}

/* Run the workers until the session ends: unmounted (the reader's read
 * fails), or a signal (SIGINT, SIGTERM, SIGHUP), which only this thread
 * takes: it unmounts, so that a reader blocked in read() returns. */
static int hm_loop_run(struct fuse_session *se, unsigned max_threads)
{
    hm_loop l = { .se = se, .max_threads = max_threads ? max_threads : 1,
                  .threads = g_ptr_array_new() };
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
    while (!fuse_session_exited(se)) {
        sigset_t leases;        /* stay with the lease thread */
        lease_sigset(&leases);
        struct timespec tick = { 0, 200 * 1000 * 1000 };
        pselect(0, NULL, NULL, NULL, &tick, &leases);  /* a signal ends the wait */
    }
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
    return 0;
}

/* ---- command line ----------------------------------------------------- */

typedef struct hm_args {
    char *source;
    hpc_options opts;
    char *log;
    unsigned read_ahead_kb;
    unsigned max_read;
    unsigned zerocopy_min_kb;
    unsigned ra_min_kb, ra_max_kb, ra_threads;
    unsigned spin_us;
    GError *error;
    int help, version;
} hm_args;

enum { KEY_HPC, KEY_HELP, KEY_VERSION };

/* The daemon's own options; the container's come from hpc_option_defs. */
static const struct fuse_opt hm_own_opts[] = {
    { "log=%s", offsetof(hm_args, log), 0 },
    { "max_read=%u", offsetof(hm_args, max_read), 0 },
    { "read_ahead_kb=%u", offsetof(hm_args, read_ahead_kb), 0 },
    { "zerocopy_min_kb=%u", offsetof(hm_args, zerocopy_min_kb), 0 },
    { "ra_min_kb=%u", offsetof(hm_args, ra_min_kb), 0 },
    { "ra_max_kb=%u", offsetof(hm_args, ra_max_kb), 0 },
    { "ra_threads=%u", offsetof(hm_args, ra_threads), 0 },
    { "spin_us=%u", offsetof(hm_args, spin_us), 0 },
    FUSE_OPT_KEY("-h", KEY_HELP),
    FUSE_OPT_KEY("--help", KEY_HELP),
    FUSE_OPT_KEY("-V", KEY_VERSION),
    FUSE_OPT_KEY("--version", KEY_VERSION),
    FUSE_OPT_END
};

/* fuse_opt's list: one KEY_HPC entry per row of the options table ("name="
 * for options with a value), then hm_own_opts.  names keeps the strings. */
static struct fuse_opt *build_opt_spec(GPtrArray *names)
{
    size_t n = 0, own = G_N_ELEMENTS(hm_own_opts);
    while (hpc_option_defs[n].name)
        n++;
    struct fuse_opt *spec = g_new0(struct fuse_opt, n + own);
    for (size_t i = 0; i < n; i++) {
        const hpc_option_def *d = &hpc_option_defs[i];
        char *t = g_strconcat(d->name, d->value ? "=" : "", NULL);
        g_ptr_array_add(names, t);
        spec[i] = (struct fuse_opt)FUSE_OPT_KEY(t, KEY_HPC);
    }
    memcpy(spec + n, hm_own_opts, sizeof hm_own_opts);
    return spec;
}

static int hm_opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
    (void)outargs;
    hm_args *a = data;
    switch (key) {
    case KEY_HPC:
        if (!a->error && hpc_options_set(&a->opts, arg, &a->error) != HPC_OK && !a->error)
            g_set_error(&a->error, HPC_ERROR, EINVAL, "bad option '%s'", arg);
        return 0;
    case KEY_HELP:
        a->help = 1;
        return 0;
    case KEY_VERSION:
        a->version = 1;
        return 0;
    case FUSE_OPT_KEY_NONOPT:
        if (!a->source) {
            a->source = g_strdup(arg);
            return 0;
        }
        return 1;             /* the mount point, for fuse_parse_cmdline */
    default:
        return 1;
    }
}

static void usage(const char *prog)
{
    GString *opts = g_string_new(NULL);
    hpc_options_help(opts);
    printf("usage: %s [options] SOURCE MOUNTPOINT\n\n"
           "Mount an HPC container (SIONlib, FTI, GSD, HDF5, distributed HDF) read-only.\n\n"
           "hpcmount options:\n%s"
           "    -o log=FILE            append read errors to FILE\n"
           "    -o read_ahead_kb=N     kernel read-ahead of the mount (default %u)\n"
           "    -o max_read=N          largest read request in bytes (default: the largest\n"
           "                           a pipe carries, 524288 with a 1 MiB pipe-max-size)\n"
           "    -o zerocopy_min_kb=N   reads of N KiB or more that map to the source\n"
           "                           are spliced around the cache (default %u, 0: never)\n"
           "    -o ra_max_kb=N         read-ahead of the sources behind a sequential\n"
           "                           stream: largest window (default %u, 0: none)\n"
           "    -o ra_min_kb=N         its first window (default %u)\n"
           "    -o ra_threads=N        threads advising the sources (default %u)\n"
           "    -o spin_us=N           poll for the next request N us before sleeping\n"
           "                           (default 0; costs CPU, saves a wake-up per request)\n\n",
           prog, opts->str, READ_AHEAD_KB, ZEROCOPY_MIN >> 10, HPC_RA_MAX_DEFAULT >> 10, HPC_RA_MIN_DEFAULT >> 10,
           HPC_RA_THREADS_DEFAULT);
    g_string_free(opts, TRUE);
}

/* The generic options that apply: libfuse's own help also lists clone_fd
 * and max_idle_threads, which hpcmount's worker loop does not use. */
static void fuse_options_help(void)
{
    printf("FUSE options:\n"
           "    -f                     stay in the foreground\n"
           "    -d   -o debug          print every request (implies -f)\n"
           "    -s                     one thread\n"
           "    -o max_threads=N       most worker threads (default 10)\n"
           "    -o allow_other         allow access by all users\n"
           "    -o allow_root          allow access by root\n"
           "    -o auto_unmount        unmount when hpcmount exits\n"
           "    -h   --help            this help\n"
           "    -V   --version         the version and the formats built in\n\n"
           "Exit status: 0 mounted, 1 the container cannot be read or mounted,\n"
           "2 bad command line.\n");
}

static FILE *log_file;
static int log_syslog;

static void log_line(const char *line)
{
    if (log_file) {
        time_t now = time(NULL);
        char ts[32];
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", localtime(&now));
        fprintf(log_file, "%s hpcmount[%d]: %s\n", ts, (int)getpid(), line);
        fflush(log_file);
    } else if (log_syslog) {
        syslog(LOG_ERR, "%s", line);
    } else {
        fprintf(stderr, "hpcmount: %s\n", line);
    }
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape_mountinfo(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* The newest mount on the canonical path real: its device numbers and
 * file system type (fstype, size n).  0 if found, -1 if not. */
static int find_mount(const char *real, unsigned *maj, unsigned *min, char *fstype, size_t n)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[8192];
    int found = -1;
    while (f && fgets(line, sizeof line, f)) {
        unsigned a, b;
        char mnt[4096], type[256];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*d %*d %u:%u %*s %4095s", &a, &b, mnt) != 3 ||
            sscanf(dash + 3, "%255s", type) != 1)
            continue;
        unescape_mountinfo(mnt);
        if (strcmp(mnt, real) != 0)
            continue;
        *maj = a;
        *min = b;
        g_strlcpy(fstype, type, n);
        found = 0;             /* the last match is the newest mount */
    }
    if (f)
        fclose(f);
    return found;
}

/* Refuse a mount point that is not a directory, or that already carries an
 * hpcmount mount (a second one would silently hide the first).  One line. */
static int check_mountpoint(const char *mountpoint)
{
    struct stat st;
    char fstype[256];
    unsigned maj, min;
    char *real = realpath(mountpoint, NULL);
    if (!real) {
        fprintf(stderr, "hpcmount: %s: bad mount point: %s\n", mountpoint, strerror(errno));
        return -1;
    }
    int bad = find_mount(real, &maj, &min, fstype, sizeof fstype) == 0 &&
              strcmp(fstype, "fuse.hpcmount") == 0;
    free(real);
    if (bad) {
        fprintf(stderr, "hpcmount: %s: already an hpcmount mount (unmount it first)\n", mountpoint);
        return -1;
    }
    int e = stat(mountpoint, &st) != 0 ? errno : 0;
    if (e || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "hpcmount: %s: bad mount point: %s\n", mountpoint,
                e ? strerror(e) : "not a directory");
        return -1;
    }
    return 0;
}

/* READs up to this size get zero-copy replies: the reply, its header and a
 * page per extent must fit into one pipe twice (ours, then libfuse's), and
 * without CAP_SYS_RESOURCE no pipe grows past fs.pipe-max-size (1 MiB by
 * default).  A 1 MiB READ needed a 2 MiB pipe, so every one of them was
 * copied through the block cache instead.  The largest power of two that
 * fits, at most libfuse's 1 MiB buffer, at least 128 KiB. */
static unsigned default_max_read(void)
{
    unsigned long pipe_max = 1u << 20;
    FILE *f = fopen("/proc/sys/fs/pipe-max-size", "r");
    if (f) {
        if (fscanf(f, "%lu", &pipe_max) != 1)
            pipe_max = 1u << 20;
        fclose(f);
    }
    unsigned size = 1u << 20;
    while (size > (128u << 10) && size + 4 * ZC_PAGE > pipe_max)
        size >>= 1;
    return size;
}

/* Where the read-ahead of the mount's backing device will be raised: the
 * kernel's default (128 KiB) caps sequential reads of large files far below
 * what the source can deliver.  Found through mountinfo, not stat(), which
 * would wait on this very daemon. */
static void find_read_ahead(const char *mountpoint, unsigned kb)
{
    char *real = realpath(mountpoint, NULL);
    char fstype[256];
    unsigned maj = 0, min = 0;
    int found = real && find_mount(real, &maj, &min, fstype, sizeof fstype) == 0;
    free(real);
    if (!found)
        return;
    g_snprintf(bdi_ra.path, sizeof bdi_ra.path, "/sys/class/bdi/%u:%u/read_ahead_kb", maj, min);
    bdi_ra.kb = kb;
}

/* Answer --help and --version, refuse bad options: the exit status, or -1
 * to go on.  Exit status as hpcdump's and hpcwrite's: 2 bad command line,
 * 1 the container or the mount failed (docs/hpcmount.1). */
static int early_exit(const hm_args *a, const char *prog)
{
    if (a->help) {
        usage(prog);
        fuse_options_help();
        return 0;
    }
    if (a->version) {
        GString *f = g_string_new(NULL);
        hpc_formats_describe(f);
        printf("hpcmount %s (libfuse %s)\n%s\n", PACKAGE_VERSION, fuse_pkgversion(), f->str);
        g_string_free(f, TRUE);
        return 0;
    }
    if (a->error) {
        fprintf(stderr, "hpcmount: %s (see hpcmount --help)\n", a->error->message);
        return 2;
    }
    if (a->spin_us > 10000) {
        fprintf(stderr, "hpcmount: spin_us=%u: at most 10000 (see hpcmount --help)\n", a->spin_us);
        return 2;
    }
    return -1;
}

/* Open the log and the container: 0, or 1 after saying why. */
static int open_source(const hm_args *a, hpc_mount **c)
{
    if (a->log && !(log_file = fopen(a->log, "a"))) {
        fprintf(stderr, "hpcmount: %s: cannot open log: %s\n", a->log, strerror(errno));
        return 1;
    }
    hpc_log_set_handler(log_line);
    GError *err = NULL;
    int rc = hpc_mount_open(a->source, &a->opts, c, &err);
    if (rc != HPC_OK) {
        fprintf(stderr, "hpcmount: %s\n", err ? err->message : hpc_strerror(rc));
        g_clear_error(&err);
        return 1;
    }
    return 0;
}

/* What every mount gets: read-only, kernel permission checks on our
 * modes, the source as its name, and the largest read. */
static void add_mount_options(struct fuse_args *args, const hm_args *a)
{
    GString *mo = g_string_new("-oro,default_permissions,subtype=hpcmount,fsname=");
    for (const char *p = a->source; *p; p++) {   /* escape what fuse_opt splits on */
        if (*p == ',' || *p == '\\')
            g_string_append_c(mo, '\\');
        g_string_append_c(mo, *p);
    }
    fuse_opt_add_arg(args, mo->str);
    max_read = a->max_read ? a->max_read : default_max_read();
    g_string_printf(mo, "-omax_read=%u", max_read);
    fuse_opt_add_arg(args, mo->str);
    g_string_free(mo, TRUE);
}

/* Mounted: detach, start the lease and read-ahead threads, serve until
 * unmounted.  Returns the exit status. */
static int serve(struct fuse_session *se, const struct fuse_cmdline_opts *cmd, const hm_args *a,
                 hpc_mount *c)
{
    if (a->read_ahead_kb)
        find_read_ahead(cmd->mountpoint, a->read_ahead_kb);
    log_syslog = !cmd->foreground && !log_file;
    if (log_syslog)
        openlog("hpcmount", LOG_PID, LOG_DAEMON);
    /* the parent returns once the mount is in place */
    fuse_daemonize(cmd->foreground);
    /* the daemon takes the leases (lazily, on the first splice of a source);
     * their notices are blocked in every thread from here on (libfuse's
     * mount and daemonize calls do not keep an earlier mask) */
    sigset_t lease_sigs;
    lease_sigset(&lease_sigs);
    pthread_sigmask(SIG_BLOCK, &lease_sigs, NULL);
    if (zerocopy_min) {
        g_thread_unref(g_thread_new("hpcmount-lease", lease_thread, NULL));
        hpc_source_leases_enable(LEASE_SIG);
    }
    /* after the fork: the read-ahead threads belong to the daemon */
    if (hpc_ra_new(c, (uint64_t)a->ra_min_kb << 10, (uint64_t)a->ra_max_kb << 10,
                   a->ra_threads, &ra_engine) != HPC_OK)
        hpc_log("read-ahead disabled: no threads");
    int ret = cmd->singlethread ? fuse_session_loop(se) : hm_loop_run(se, cmd->max_threads);
    return ret != 0;
}

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts cmd = { 0 };
    struct fuse_session *se = NULL;
    hpc_mount *c = NULL;
    hm_args a = { .read_ahead_kb = READ_AHEAD_KB, .zerocopy_min_kb = ZEROCOPY_MIN >> 10,
                  .ra_min_kb = HPC_RA_MIN_DEFAULT >> 10, .ra_max_kb = HPC_RA_MAX_DEFAULT >> 10,
                  .ra_threads = HPC_RA_THREADS_DEFAULT };
    int ret = 2;
    GPtrArray *spec_names = g_ptr_array_new_with_free_func(g_free);
    struct fuse_opt *spec = build_opt_spec(spec_names);
    hpc_options_init(&a.opts);
    if (fuse_opt_parse(&args, &a, spec, hm_opt_proc) != 0 || (ret = early_exit(&a, argv[0])) >= 0)
        goto out;
    zerocopy_min = (uint64_t)a.zerocopy_min_kb << 10;
    spin_us = a.spin_us;
    ret = 2;
    if (fuse_parse_cmdline(&args, &cmd) != 0)
        goto out;
    if (!a.source || !cmd.mountpoint) {
        fprintf(stderr, "usage: %s [options] SOURCE MOUNTPOINT (see --help)\n", argv[0]);
        goto out;
    }
    ret = 1;
    if (check_mountpoint(cmd.mountpoint) != 0 || open_source(&a, &c) != 0)
        goto out;
    add_mount_options(&args, &a);
    se = fuse_session_new(&args, &hm_ops, sizeof hm_ops, c);
    if (!se) {
        ret = 2;                /* libfuse said which option it does not know */
        goto out;
    }
    if (fuse_set_signal_handlers(se) != 0)
        goto out;
    if (fuse_session_mount(se, cmd.mountpoint) != 0) {
        fprintf(stderr, "hpcmount: %s: cannot mount\n", cmd.mountpoint);
        fuse_remove_signal_handlers(se);
        goto out;
    }
    ret = serve(se, &cmd, &a, c);
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
out:
    g_free(spec);
    g_ptr_array_free(spec_names, TRUE);
    if (se)
        fuse_session_destroy(se);
    hpc_ra_free(ra_engine);      /* its threads use the mount */
    hpc_mount_close(c);
    hpc_options_clear(&a.opts);
    g_clear_error(&a.error);
    g_free(a.source);
    g_free(a.log);
    free(cmd.mountpoint);
    fuse_opt_free_args(&args);
    if (log_file)
        fclose(log_file);
    return ret;
}
