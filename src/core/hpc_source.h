/* hpc_source.h - the physical files behind a container.
 *
 * A source is one open, read-only regular file with its identity (device,
 * inode, size, mtime and ctime in nanoseconds) as of open, or of the last
 * hpc_source_refresh for containers still being written.  Every read is
 * bounds-checked against that size, so a format reader never reads past
 * what the file really holds, and every read is followed by an fstat() of
 * the file: a source that changed since it was opened (truncated, written,
 * replaced in place) fails with HPC_E_CHANGED from then on, so a reader
 * never mixes metadata parsed at open with bytes written later.  Sources of
 * live containers (marked with hpc_source_set_live) skip that check: their
 * readers refresh and re-parse instead.
 *
 * This module depends on nothing but GLib and hpc_error; the block cache
 * (hpc_cache) reads through it.
 */
#ifndef HPC_SOURCE_H
#define HPC_SOURCE_H

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct hpc_source {
    int fd;
    char *path;          /* as opened, for messages */
    uint64_t size;       /* file size in bytes */
    uint32_t blksize;    /* st_blksize */
    int64_t mtime;       /* st_mtime, seconds */
    uint32_t uid, gid;
    uint32_t mode;       /* st_mode: the read bits a node carries over (hpc_perm.h) */
    uint64_t id;         /* unique id: the block cache's space of this file */
    /* identity as of open (or refresh), compared by hpc_source_check */
    uint64_t dev, ino;
    int64_t mtime_ns, ctime_ns;
    int live;            /* the file may grow: no identity checks */
    int changed;         /* sticky: the file changed since it was opened */
    int lease;           /* read lease: 0 not tried, 1 held, -1 none (hpc_source_lease) */
} hpc_source;

/** One verbatim run of a file's bytes inside a source (a reader's map).
 *  space and space_size name the block-cache space the core reads it
 *  through: 0 for the source's own (its id and current size); a file that
 *  grows while mounted gives a snapshot's space and size instead. */
typedef struct hpc_extent {
    const hpc_source *src;
    uint64_t off;          /* in the source */
    uint64_t len;
    uint64_t space, space_size;
} hpc_extent;

/** Extents a front end asks map for at once (a request covering more is
 *  served in several rounds). */
#define HPC_MAX_EXTENTS 64

/** A new process-unique space id (never 0): the block cache's key of a
 *  source file or of any decoded object a reader caches. */
uint64_t hpc_space_new(void);

/**
 * Open path read-only and stat it.  Fills *out (caller-owned memory).
 * Anything but a regular file (a FIFO, a device, a directory) is refused
 * with HPC_E_INVAL without blocking: the file is opened O_NONBLOCK and
 * checked with fstat before anything is read.
 */
int hpc_source_open(const char *path, hpc_source *out, GError **err);

/**
 * A source opens for its reader's header reads: POSIX_FADV_RANDOM, so the
 * kernel caches only the pages those reads touch, not read-ahead running
 * on into the data, whose later cold read or map would then find small
 * pages instead of large folios.  hpc_source_stream() gives the source the
 * kernel's usual read-ahead once the reader's open is done.
 */
void hpc_source_stream(hpc_source *src);

/** Close the file and free the path. Safe on a zeroed or closed source. */
void hpc_source_close(hpc_source *src);

/**
 * Read exactly len bytes at off, looping over short reads.
 * Returns HPC_E_CORRUPT without reading if [off, off+len) is not inside the
 * file, HPC_E_CHANGED if the file changed since it was opened (checked after
 * the read), HPC_E_IO if the read fails or the file shrank.
 */
int hpc_source_pread(const hpc_source *src, void *buf, size_t len, uint64_t off);

/**
 * Like hpc_source_pread, but a file that ends early (a live file that
 * shrank) is no error: *got says how many bytes were read; HPC_E_IO only if
 * none could be.  Non-live sources that shrank fail with HPC_E_CHANGED.
 */
int hpc_source_pread_upto(const hpc_source *src, void *buf, size_t len, uint64_t off,
                          size_t *got);

/**
 * Like hpc_source_pread, but on failure also fills *err with
 * "PATH: field FIELD at offset OFF: ..." for mount-time metadata reads.
 */
int hpc_source_pread_field(const hpc_source *src, void *buf, size_t len,
                           uint64_t off, const char *field, GError **err);

/** True when [off, off+len) lies inside the file (no overflow). */
gboolean hpc_source_contains(const hpc_source *src, uint64_t off, uint64_t len);

/**
 * Re-stat the file (for containers still being written).  Sets *changed to
 * TRUE when the size or mtime differ from what the source held.
 */
int hpc_source_refresh(hpc_source *src, gboolean *changed);

/**
 * A rate gate for periodic checks: TRUE for the one caller that finds
 * *last (monotonic microseconds) at least period_us old, and sets it to
 * now; FALSE for every other caller.  Lock-free.
 */
gboolean hpc_check_due(gint64 *last, gint64 period_us);

/** A live file is re-stat'ed at most this often (microseconds). */
#define HPC_REFRESH_US 500000

/**
 * The refresh of a live container's snapshot: one caller per
 * HPC_REFRESH_US re-stats the source, the others go on with the snapshot
 * they have.  Readers keep their own snapshots, so nothing waits.
 */
typedef struct hpc_refresh {
    GMutex lock;           /* one rebuild at a time */
    gint64 last_check;     /* monotonic us, atomic */
    int pending;           /* a rebuild failed: retry even if unchanged */
} hpc_refresh;

void hpc_refresh_init(hpc_refresh *r);
void hpc_refresh_clear(hpc_refresh *r);

/**
 * TRUE when the caller should build a new snapshot: the check was due and
 * the source changed, or the last rebuild failed.  The caller then holds
 * r->lock and ends with hpc_refresh_end(r, built).
 */
gboolean hpc_refresh_begin(hpc_refresh *r, hpc_source *src);
void hpc_refresh_end(hpc_refresh *r, gboolean built);

/**
 * Compare the open file with its identity (fstat: size, mtime, ctime).
 * HPC_OK when unchanged or live, HPC_E_CHANGED (sticky) otherwise.
 * Costs one fstat(); call it after reading the file by other means (a
 * library with its own descriptor, a splice) and before using the bytes.
 */
int hpc_source_check(const hpc_source *src);

/**
 * hpc_source_check, and also whether the path still names the same file
 * (stat: device and inode): a file replaced by rename or deleted counts as
 * changed.  Costs a path lookup: for periodic checks.
 */
int hpc_source_check_path(const hpc_source *src);

/** Mark the source live (no identity checks) and forget a change seen. */
void hpc_source_set_live(hpc_source *src);

/** Whether the source was seen changed (by any check). */
gboolean hpc_source_changed(const hpc_source *src);

/*
 * Read leases, for replies that hand the kernel page references (splice)
 * instead of copies: such bytes are read when the kernel copies them, after
 * any check the daemon made.  While the daemon holds a read lease on a
 * source, the kernel makes whoever opens it for writing or truncates it
 * wait until the daemon gave the lease up; the daemon first marks the
 * source changed (sticky) and waits for the replies in flight
 * (hpc_source_replies_begin/end), so a reply carries the old bytes or is
 * never sent.  Only a process that calls hpc_source_leases_enable takes
 * leases; the signal must be blocked in every thread and fed to
 * hpc_source_lease_broken by one of them (sigwaitinfo).
 */

/** Take leases from now on, with break notices as signal signo. */
void hpc_source_leases_enable(int signo);

/** TRUE when the process holds a read lease on src (taken on first call;
 *  FALSE when leases are not enabled or the kernel refuses one, e.g. the
 *  file is open for writing somewhere, or another user's without
 *  CAP_LEASE).  Never call it between hpc_source_replies_begin and _end. */
gboolean hpc_source_lease(const hpc_source *src);

/** TRUE while the lease of src is held and no break was noticed: checked
 *  between hpc_source_replies_begin and _end. */
gboolean hpc_source_leased(const hpc_source *src);

/** A break notice for descriptor fd (siginfo si_fd), or fd -1 when the
 *  kernel sent SIGIO instead (its queue of notices overflowed): mark the
 *  source(s) changed, wait for the replies in flight, give the lease up. */
void hpc_source_lease_broken(int fd);

/** Bracket a reply whose bytes the kernel copies later (a splice from
 *  leased sources): a lease break waits until hpc_source_replies_end. */
void hpc_source_replies_begin(void);
void hpc_source_replies_end(void);

#endif
