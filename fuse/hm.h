/* hm.h - what the files of the hpcmount daemon share: its state (hm_daemon,
 * the session's userdata), the zero-copy replies and leases
 * (hm_zerocopy.c), the worker loop (hm_loop.c) and the command line, log
 * and mountinfo (hm_cmdline.c).  hpcmount.c holds the FUSE operations and
 * main.
 */
#ifndef HM_H
#define HM_H

#include <fuse_lowlevel.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "hpc_file.h"

#define READ_AHEAD_KB 1024       /* -o read_ahead_kb */

#define ZC_PAGE ((size_t)sysconf(_SC_PAGESIZE))

/* The sources' lease break notices (hpc_source.h): LEASE_SIG, or SIGIO when
 * the kernel's queue of them overflowed.  Blocked in every thread (main
 * blocks them first) and taken by this one. */
#define LEASE_SIG (SIGRTMIN + 1)

/* The mount's read-ahead (-o read_ahead_kb), written once the kernel took
 * the INIT reply (hpcmount.c). */
typedef struct hm_bdi_ra {
    char path[128];      /* /sys/class/bdi/MAJ:MIN/read_ahead_kb, or "" */
    unsigned kb;
    gint done;
} hm_bdi_ra;

/* The daemon's state: set in main before the session starts, then read
 * by every handler through the session's userdata (fuse_req_userdata);
 * only bdi_ra.done (atomically), the open-file set (under its lock) and
 * the pool of pipes (a GAsyncQueue) change later. */
typedef struct hm_daemon {
    hpc_mount *mount;
    hpc_ra *ra;              /* read-ahead of source extents; NULL when disabled */
    uint64_t zerocopy_min;   /* -o zerocopy_min_kb in bytes: the open files'
                              * verbatim_min (hpc_file.h); 0: never splice */
    unsigned max_read;       /* the largest READ the kernel sends (-o max_read=) */
    FILE *log_file;          /* the log (-o log=FILE), or syslog in the */
    int log_syslog;          /* background, else stderr */
    hm_bdi_ra bdi_ra;
    GMutex files_lock;       /* guards files */
    GHashTable *files;       /* the hpc_file of every open the kernel holds:
                              * an unmount drops the RELEASEs still queued,
                              * so main closes what is left */
    GAsyncQueue *pipes;      /* the splice pipes of READs not in flight */
} hm_daemon;

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
    int help, version;     /* help: 1 --help, 2 --help-all */
} hm_args;

/** Reply an hpc_err as its errno. */
static inline void hm_reply_err(fuse_req_t req, int rc)
{
    fuse_reply_err(req, hpc_err_to_errno(rc));
}

/* ---- hm_zerocopy.c ------------------------------------------------------ */

/** The daemon's pool of splice pipes (hm_daemon.pipes); _free closes them. */
GAsyncQueue *hm_pipes_new(void);
void hm_pipes_free(GAsyncQueue *pipes);

/** Answer a READ of [off, off + size) of f: the source extents spliced
 *  through a pipe taken from pipes, or copied bytes.  HPC_OK when it
 *  replied, else the error, nothing sent (the caller replies it). */
int hm_read_reply(fuse_req_t req, GAsyncQueue *pipes, hpc_file *f, uint64_t off, size_t size);

/** The signals of lease break notices (blocked in every thread). */
void hm_lease_sigset(sigset_t *set);

/** The thread that takes the lease break notices. */
gpointer hm_lease_thread(gpointer unused);

/* ---- hm_loop.c ---------------------------------------------------------- */

/** Serve requests with up to max_threads workers until unmounted; the
 *  reading worker polls for the next request spin_us microseconds before
 *  it sleeps (-o spin_us).  The calling thread keeps the signals of
 *  keep_blocked blocked while it waits (the lease thread takes them). */
int hm_loop_run(struct fuse_session *se, unsigned max_threads, unsigned spin_us,
                const sigset_t *keep_blocked);

/* ---- hm_cmdline.c ------------------------------------------------------- */

/** The fuse_opt list: the daemon's own options and the container's. */
struct fuse_opt *hm_build_opt_spec(GPtrArray *names);

/** fuse_opt_parse's callback: options into hm_args. */
int hm_opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs);

/** --help (all 0) or --help-all (all 1): hpcmount's options, then the
 *  FUSE options that apply. */
void hm_usage(const char *prog, int all);
void hm_fuse_options_help(int all);

/** The core's log handler (ctx: the hm_daemon): the log file, syslog or
 *  stderr. */
void hm_log_line(void *ctx, const char *line);

/** Refuse a mount point that is not an empty directory we may use. */
int hm_check_mountpoint(const char *mp);

/** The largest READ a pipe of fs.pipe-max-size carries for a spliced reply. */
unsigned hm_default_max_read(void);

/** Find the mount's backing device, to raise its read-ahead to kb (into
 *  *ra, applied later). */
void hm_find_read_ahead(const char *mountpoint, unsigned kb, hm_bdi_ra *ra);

#endif
