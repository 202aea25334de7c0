/* hpcmount.c - mount an HPC container read-only through FUSE.
 *
 * A thin front end over the core library: each low-level handler takes the
 * container from the request, asks the core, and replies exactly once.
 * Node ids are the core's ids, so no path strings or per-entry tables
 * exist here.  An open file is an hpc_file in fi->fh, and READ is its one
 * read call: large reads of verbatim bytes are answered with extents of
 * the source files (spliced, hm_zerocopy.c); everything else goes through
 * the core, whose block cache serves small and unaligned reads.
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

#include "hm.h"

#define STATIC_TIMEOUT 86400.0   /* the data never change */
#define LIVE_TIMEOUT 1.0         /* containers still being written */

/* The daemon's state and its mount, from the session's userdata. */
static hm_daemon *daemon_of(fuse_req_t req)
{
    return fuse_req_userdata(req);
}

static hpc_mount *mount_of(fuse_req_t req)
{
    return daemon_of(req)->mount;
}

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
    if (HPC_INO_IS_TEXT(h->ino) || h->partial)
        e->attr_timeout = 0;    /* .info changes with the sources; partial: ask getattr */
    stat_to_fuse(m, h, &e->attr);
}

/* The mount's read-ahead (-o read_ahead_kb), written once the kernel took
 * the INIT reply: it sets the read-ahead to at most the max_readahead it
 * offered (128 KiB), undoing any value written before.  Best effort (needs
 * root); called by the requests that precede reads. */
static void apply_read_ahead(fuse_req_t req)
{
    hm_bdi_ra *ra = &daemon_of(req)->bdi_ra;
    if (g_atomic_int_get(&ra->done) || !g_atomic_int_compare_and_exchange(&ra->done, 0, 1))
        return;
    FILE *f = ra->path[0] ? fopen(ra->path, "w") : NULL;
    if (f) {
        fprintf(f, "%u\n", ra->kb);
        fclose(f);
    }
}

/* hm_init must ask for the same max_read as the mount option, or libfuse
 * refuses the INIT. */
static void hm_init(void *userdata, struct fuse_conn_info *conn)
{
    const hm_daemon *d = userdata;
    conn->max_read = d->max_read;
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
    hpc_mount *m = mount_of(req);
    hpc_stat h;
    struct fuse_entry_param e;
    apply_read_ahead(req);
    int rc = hpc_mount_lookup(m, parent, name, &h);
    if (rc == HPC_E_NOENT && timeout_of(m, parent) > LIVE_TIMEOUT) {
        memset(&e, 0, sizeof e);      /* negative entry: cached by the kernel */
        e.entry_timeout = STATIC_TIMEOUT;
        fuse_reply_entry(req, &e);
        return;
    }
    if (rc != HPC_OK) {
        hm_reply_err(req, rc);
        return;
    }
    entry_of(m, &h, &e);
    fuse_reply_entry(req, &e);
}

static void hm_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    hpc_mount *m = mount_of(req);
    hpc_stat h;
    struct stat st;
    int rc = hpc_mount_getattr(m, ino, &h);
    if (rc != HPC_OK) {
        hm_reply_err(req, rc);
        return;
    }
    stat_to_fuse(m, &h, &st);
    fuse_reply_attr(req, &st, HPC_INO_IS_TEXT(ino) ? 0 : timeout_of(m, ino));
}

static void hm_readlink(fuse_req_t req, fuse_ino_t ino)
{
    hpc_mount *m = mount_of(req);
    char *target = NULL;
    int rc = hpc_mount_readlink(m, ino, &target);
    if (rc != HPC_OK)
        hm_reply_err(req, rc);
    else
        fuse_reply_readlink(req, target);
    g_free(target);
}

static void hm_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    hpc_mount *m = mount_of(req);
    hpc_stat h;
    int rc = hpc_mount_getattr(m, ino, &h);
    if (rc != HPC_OK)
        hm_reply_err(req, rc);
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
    hpc_mount *m = mount_of(req);
    dir_fill d = { req, m, g_malloc(size), size, 0, plus };
    int rc = hpc_mount_readdir(m, ino, (uint64_t)off, dir_add, &d);
    if (rc != HPC_OK)
        hm_reply_err(req, rc);
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

/* The open file (hpc_file.h) lives in fi->fh until release. */
static hpc_file *file_of(const struct fuse_file_info *fi)
{
    return (hpc_file *)(uintptr_t)fi->fh;
}

/* The daemon's set of open files (hm_daemon.files): in at open, out at
 * release, closed at exit when the RELEASE never came. */
static void files_add(hm_daemon *d, hpc_file *f)
{
    g_mutex_lock(&d->files_lock);
    g_hash_table_add(d->files, f);
    g_mutex_unlock(&d->files_lock);
}

static void files_close(hm_daemon *d, hpc_file *f)
{
    g_mutex_lock(&d->files_lock);
    g_hash_table_steal(d->files, f);
    g_mutex_unlock(&d->files_lock);
    hpc_file_close(f);
}

static void hm_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    hm_daemon *d = daemon_of(req);
    hpc_file_conf conf = { d->ra, d->zerocopy_min };
    hpc_file *f;
    apply_read_ahead(req);
    if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
        fuse_reply_err(req, EROFS);
        return;
    }
    int rc = hpc_file_open(d->mount, ino, &conf, &f);
    if (rc != HPC_OK) {
        hm_reply_err(req, rc);
        return;
    }
    hpc_node_meta meta;
    hpc_mount_node_meta(d->mount, ino, &meta);
    fi->direct_io = meta.direct_io;     /* .info: regenerated as things change */
    fi->keep_cache = meta.keep_cache;   /* the bytes never change */
    fi->fh = (uint64_t)(uintptr_t)f;
    files_add(d, f);
    if (fuse_reply_open(req, fi) != 0)
        files_close(d, f);     /* the open was interrupted: no release */
}

static void hm_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    files_close(daemon_of(req), file_of(fi));
    fuse_reply_err(req, 0);
}

static void hm_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    int rc = hm_read_reply(req, daemon_of(req)->pipes, file_of(fi), (uint64_t)off, size);
    if (rc == HPC_OK)
        return;
    if (rc != HPC_E_CHANGED)    /* the core logged that once */
        hpc_log("read of inode %lu at %lld (+%zu) failed: %s", (unsigned long)ino,
                (long long)off, size, hpc_strerror(rc));
    hm_reply_err(req, rc);
}

static void hm_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    hpc_mount *m = mount_of(req);
    void *value = NULL;
    size_t len = 0;
    int rc = hpc_mount_getxattr(m, ino, name, &value, &len);
    if (rc != HPC_OK)
        hm_reply_err(req, rc);
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
    hpc_mount *m = mount_of(req);
    GString *names = g_string_new(NULL);
    int rc = hpc_mount_listxattr(m, ino, names);
    if (rc != HPC_OK)
        hm_reply_err(req, rc);
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
    hpc_mount *m = mount_of(req);
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

/* ---- command line ----------------------------------------------------- */

/* Answer --help and --version, refuse bad options: the exit status, or -1
 * to go on.  Exit status as hpcdump's and hpcwrite's: 2 bad command line,
 * 1 the container or the mount failed (docs/hpcmount.1). */
static int early_exit(const hm_args *a, const char *prog)
{
    if (a->help) {
        hm_usage(prog, a->help == 2);
        hm_fuse_options_help(a->help == 2);
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
static int open_source(const hm_args *a, hm_daemon *d)
{
    if (a->log && !(d->log_file = fopen(a->log, "a"))) {
        fprintf(stderr, "hpcmount: %s: cannot open log: %s\n", a->log, strerror(errno));
        return 1;
    }
    hpc_log_set_handler(hm_log_line, d);
    GError *err = NULL;
    int rc = hpc_mount_open(a->source, &a->opts, &d->mount, &err);
    if (rc != HPC_OK) {
        fprintf(stderr, "hpcmount: %s\n", err ? err->message : hpc_strerror(rc));
        g_clear_error(&err);
        return 1;
    }
    return 0;
}

/* What every mount gets: read-only, kernel permission checks on our
 * modes, the source as its name, and the largest read. */
static void add_mount_options(struct fuse_args *args, const hm_args *a, hm_daemon *d)
{
    GString *mo = g_string_new("-oro,default_permissions,subtype=hpcmount,fsname=");
    for (const char *p = a->source; *p; p++) {   /* escape what fuse_opt splits on */
        if (*p == ',' || *p == '\\')
            g_string_append_c(mo, '\\');
        g_string_append_c(mo, *p);
    }
    fuse_opt_add_arg(args, mo->str);
    d->max_read = a->max_read ? a->max_read : hm_default_max_read();
    g_string_printf(mo, "-omax_read=%u", d->max_read);
    fuse_opt_add_arg(args, mo->str);
    g_string_free(mo, TRUE);
}

/* Mounted: detach, start the lease and read-ahead threads, serve until
 * unmounted.  Returns the exit status. */
static int serve(struct fuse_session *se, const struct fuse_cmdline_opts *cmd, const hm_args *a,
                 hm_daemon *d)
{
    if (a->read_ahead_kb)
        hm_find_read_ahead(cmd->mountpoint, a->read_ahead_kb, &d->bdi_ra);
    d->log_syslog = !cmd->foreground && !d->log_file;
    if (d->log_syslog)
        openlog("hpcmount", LOG_PID, LOG_DAEMON);
    /* the parent returns once the mount is in place */
    fuse_daemonize(cmd->foreground);
    /* the daemon takes the leases (lazily, on the first splice of a source);
     * their notices are blocked in every thread from here on (libfuse's
     * mount and daemonize calls do not keep an earlier mask) */
    sigset_t lease_sigs;
    hm_lease_sigset(&lease_sigs);
    pthread_sigmask(SIG_BLOCK, &lease_sigs, NULL);
    if (d->zerocopy_min) {
        g_thread_unref(g_thread_new("hpcmount-lease", hm_lease_thread, NULL));
        hpc_source_leases_enable(LEASE_SIG);
    }
    /* after the fork: the read-ahead threads belong to the daemon */
    if (hpc_ra_new(d->mount, (uint64_t)a->ra_min_kb << 10, (uint64_t)a->ra_max_kb << 10,
                   a->ra_threads, &d->ra) != HPC_OK)
        hpc_log("read-ahead disabled: no threads");
    int ret = cmd->singlethread ? fuse_session_loop(se)
                                : hm_loop_run(se, cmd->max_threads, a->spin_us, &lease_sigs);
    return ret != 0;
}

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts cmd = { 0 };
    struct fuse_session *se = NULL;
    hm_daemon d = { .files = g_hash_table_new_full(NULL, NULL,
                                                  (GDestroyNotify)hpc_file_close, NULL),
                    .pipes = hm_pipes_new() };
    hm_args a = { .read_ahead_kb = READ_AHEAD_KB, .zerocopy_min_kb = HPC_FILE_VERBATIM_MIN >> 10,
                  .ra_min_kb = HPC_RA_MIN_DEFAULT >> 10, .ra_max_kb = HPC_RA_MAX_DEFAULT >> 10,
                  .ra_threads = HPC_RA_THREADS_DEFAULT };
    int ret = 2;
    GPtrArray *spec_names = g_ptr_array_new_with_free_func(g_free);
    struct fuse_opt *spec = hm_build_opt_spec(spec_names);
    hpc_options_init(&a.opts);
    g_mutex_init(&d.files_lock);
    if (fuse_opt_parse(&args, &a, spec, hm_opt_proc) != 0 || (ret = early_exit(&a, argv[0])) >= 0)
        goto out;
    d.zerocopy_min = (uint64_t)a.zerocopy_min_kb << 10;
    ret = 2;
    if (fuse_parse_cmdline(&args, &cmd) != 0)
        goto out;
    if (!a.source || !cmd.mountpoint) {
        fprintf(stderr, "usage: %s [options] SOURCE MOUNTPOINT (see --help)\n", argv[0]);
        goto out;
    }
    ret = 1;
    if (hm_check_mountpoint(cmd.mountpoint) != 0 || open_source(&a, &d) != 0)
        goto out;
    add_mount_options(&args, &a, &d);
    se = fuse_session_new(&args, &hm_ops, sizeof hm_ops, &d);
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
    ret = serve(se, &cmd, &a, &d);
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
out:
    g_free(spec);
    g_ptr_array_free(spec_names, TRUE);
    if (se)
        fuse_session_destroy(se);
    g_hash_table_destroy(d.files);   /* the files whose RELEASE never came */
    hm_pipes_free(d.pipes);
    hpc_ra_free(d.ra);           /* its threads use the mount */
    g_mutex_clear(&d.files_lock);
    hpc_mount_close(d.mount);
    hpc_options_clear(&a.opts);
    g_clear_error(&a.error);
    g_free(a.source);
    g_free(a.log);
    free(cmd.mountpoint);
    fuse_opt_free_args(&args);
    hpc_log_set_handler(NULL, NULL);   /* d ends with main */
    if (d.log_file)
        fclose(d.log_file);
    return ret;
}
