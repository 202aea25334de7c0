/* hpc_readahead.h - read-ahead of the source extents behind sequential
 * streams of a mount.
 *
 * The kernel's read-ahead of a FUSE file reaches the daemon as READ
 * requests of at most max_pages, a few of them at a time; each one then
 * reads its source extents synchronously.  On a cold source, above all on
 * a parallel file system, the stream waits for one round trip after the
 * other.  So the daemon detects sequential streams per open file and keeps
 * the source ranges ahead of them in flight: posix_fadvise(WILLNEED) on
 * the extents hpc_mount_map gives, issued by a few threads of its own in
 * pieces, so that several requests are outstanding on the file system.
 *
 * The window starts at min_window and doubles, up to max_window, each time
 * the stream passes the trigger (less than half a window still ahead of
 * it).  A read that is not sequential resets the stream; a random reader
 * never gets any read-ahead.  Nodes that do not map to source extents
 * (HDF5 chunked or converted data, distributed HDF) get none either.
 */
#ifndef HPC_READAHEAD_H
#define HPC_READAHEAD_H

#include <stdint.h>

#include "hpc_mount.h"

/** The defaults of hpcmount's ra_min_kb, ra_max_kb and ra_threads. */
#define HPC_RA_MIN_DEFAULT (1u << 20)
#define HPC_RA_MAX_DEFAULT (64u << 20)
#define HPC_RA_THREADS_DEFAULT 4u
/** The size of one piece a read-ahead thread advises at a time. */
#define HPC_RA_PIECE (4u << 20)

/** Where one stream stands; all zero is a stream that read nothing yet. */
typedef struct hpc_ra_state {
    uint64_t next;       /* end of the furthest read seen */
    uint64_t ahead;      /* advised up to here (0: not sequential) */
    uint64_t window;     /* current window, 0 until the stream is sequential */
    int started;         /* a read was seen */
} hpc_ra_state;

/**
 * Account a read of [off, off + len) to st.  When the stream is sequential
 * and passed its trigger, sets [*from, *to) to the range to read ahead and
 * returns 1; else returns 0.  Sequential means: the first read starts at 0,
 * or a read starts within one request of where the stream got to (the
 * kernel's parallel read-ahead requests may arrive slightly out of order),
 * and once the stream runs, within one window of it.  Pure: no I/O.
 */
int hpc_ra_step(hpc_ra_state *st, uint64_t min_window, uint64_t max_window,
                uint64_t off, uint64_t len, uint64_t *from, uint64_t *to);

typedef struct hpc_ra hpc_ra;
typedef struct hpc_ra_stream hpc_ra_stream;

/**
 * The read-ahead of mount m: threads that advise the sources.  max_window
 * 0 or threads 0 disable it (*out is then NULL, and every call below takes
 * NULL).  m must outlive the result.
 */
int hpc_ra_new(hpc_mount *m, uint64_t min_window, uint64_t max_window,
               unsigned threads, hpc_ra **out);

/** Stop the threads (pieces not started are dropped) and free ra. */
void hpc_ra_free(hpc_ra *ra);

/** A stream of node ino (one per open file); NULL when ra is NULL. */
hpc_ra_stream *hpc_ra_stream_new(hpc_ra *ra, hpc_ino ino);

/** Free a stream; pieces it queued still run. */
void hpc_ra_stream_free(hpc_ra_stream *s);

/**
 * Account a read of [off, off + len) of the stream's file and queue the
 * read-ahead it triggers.  Thread-safe: reads of one open file may run in
 * parallel.  Returns HPC_OK, or HPC_E_NOMEM when the pieces cannot be
 * queued (the read itself goes on).
 */
int hpc_ra_read(hpc_ra_stream *s, uint64_t off, uint64_t len);

/** Bytes advised so far (WILLNEED calls that succeeded), for tests. */
uint64_t hpc_ra_advised(const hpc_ra *ra);

#endif
