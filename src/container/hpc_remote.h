/* hpc_remote.h - readers built on a third-party library run in a helper
 * process the daemon supervises.
 *
 * libhdf5 and libhdf4 crash (SIGSEGV, double free), allocate without bound
 * or loop for minutes on some damaged files.  A format says it hands files
 * to such a library by setting hpc_format.sandbox_lib; unless -o inproc is
 * given, hpc_container_open then starts `hpcmount-helper` (posix_spawn,
 * never a fork of the threaded daemon; from a process's second helper on,
 * a fork of the helper's single-threaded fork server, which has opened
 * nothing), which opens the container with the
 * real reader and serves the reader's calls (lookup, getattr, readdir,
 * readlink, map, read, xattrs, info) over HPC_REMOTE_CHANNELS socket pairs,
 * one helper thread each.  The daemon's container gets a proxy format whose
 * calls are requests to the helper; node ids pass through unchanged.
 *
 * Verbatim bytes do not pass through the helper: map() answers extents as
 * (source index, offset, length), and the daemon reads (or splices) them
 * from its own descriptors of the same files (checked: same st_dev and
 * st_ino as the helper's).  Computed bytes come back through a shared
 * memory buffer per channel (HPC_REMOTE_SHM bytes).
 *
 * Supervision, by the thread that waits for an answer: a helper that
 * crashes, uses more than -o helper_cpu seconds of CPU on one request (its
 * serving thread's, from /proc), holds more than -o helper_mem bytes
 * (RLIMIT_AS in the helper, and its RSS sampled from /proc for sanitizer
 * builds), or neither computes nor answers for -o helper_wait seconds is
 * killed; the request gets HPC_E_IO, the log and .info name the object,
 * and the object is remembered as damaged (later requests for it fail at
 * once).  The next request starts a new helper.  At mount time the same
 * limits judge the helper's open and its walk of the first
 * HPC_REMOTE_WALK_NODES nodes: a refusal is one line naming the file.
 */
#ifndef HPC_REMOTE_H
#define HPC_REMOTE_H

#include <stdint.h>

#include "hpc_formats.h"

/* ---- the protocol (the daemon and hpcmount-helper of one build) ---------- */

#define HPC_REMOTE_PROTO "hpcmount-helper-proto-1"
#define HPC_REMOTE_CHANNELS 4
#define HPC_REMOTE_SHM (1u << 20)        /* a channel's buffer of read bytes */
#define HPC_REMOTE_CTL 4096u             /* the control page, before the buffers */
#define HPC_REMOTE_FD_CTL 3              /* the helper's memfd: control + buffers */
#define HPC_REMOTE_FD_CHAN 4             /* its first channel socket */
#define HPC_REMOTE_FD_LOG (HPC_REMOTE_FD_CHAN + HPC_REMOTE_CHANNELS) /* its log lines */
#define HPC_REMOTE_WALK_NODES 1000       /* nodes the open walks */
#define HPC_REMOTE_MAX_PAYLOAD (512u << 20)
#define HPC_REMOTE_MAX_EXTENTS 64
#define HPC_REMOTE_DIR_BATCH (60u << 10) /* readdir answer bytes per round trip */

/* The fork server: `hpcmount-helper PROTO HPC_REMOTE_FORK_SERVER` with its
 * socket (SOCK_SEQPACKET) on fd 3.  A request is one message: u32 argc,
 * u32 envc, then that many NUL-terminated strings (the helper's argv, then
 * the environment it runs with) and one more (its working directory), at
 * most HPC_REMOTE_FORK_MSG bytes, with
 * the helper's 2 + HPC_REMOTE_CHANNELS fds (control memfd, channels, log
 * pipe, in that order) attached.  The answer: an int32 (the helper's pid,
 * or -errno) with a pidfd of it attached. */
#define HPC_REMOTE_FORK_SERVER "--fork-server"
#define HPC_REMOTE_FORK_MSG (64u << 10)
#define HPC_REMOTE_FORK_FDS (2 + HPC_REMOTE_CHANNELS)

/* Default limits: CPU seconds of one request (or of the open and its
 * walk), wall-clock seconds of a helper that neither computes nor
 * answers, and the memory a helper may hold besides its caches. */
#define HPC_REMOTE_CPU ((double)HPC_DEFAULT_HELPER_CPU)
#define HPC_REMOTE_WAIT ((double)HPC_DEFAULT_HELPER_WAIT)
#define HPC_REMOTE_MEM_BASE ((uint64_t)HPC_DEFAULT_HELPER_MEM_MB << 20)

/* The request codes (HPC_RQ_*) are hpc_format.h's: readers send some. */

/** A request; `len` bytes of a name follow (lookup). */
typedef struct hpc_rq {
    uint32_t op, len;
    uint64_t ino, off, size;   /* node, offset or cookie, length */
} hpc_rq;

/** An answer; `len` bytes of payload follow. */
typedef struct hpc_rp {
    int32_t rc;
    uint32_t len;
    uint64_t val;              /* read: bytes in the buffer; readdir: 1 = more */
} hpc_rp;

/** The control page shared with the helper. */
typedef struct hpc_ctl {
    volatile int32_t crash_sig;            /* signal that ended the helper */
    volatile int32_t crash_tid;            /* the thread it hit */
    volatile int32_t tid[HPC_REMOTE_CHANNELS]; /* thread serving each channel */
    char member[1024];                     /* file the reader last noted */
} hpc_ctl;

/** A source as the helper opened it (the open's answer, then its path). */
typedef struct hpc_wire_source {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    uint32_t pathlen, pad;
} hpc_wire_source;

/** An extent: source index instead of a pointer. */
typedef struct hpc_wire_extent {
    uint32_t src, pad;
    uint64_t off, len, space, space_size;
} hpc_wire_extent;

/** A readdir entry; the name (namelen bytes) follows. */
typedef struct hpc_wire_dirent {
    hpc_stat st;
    uint64_t next;
    uint32_t namelen, pad;
} hpc_wire_dirent;

/** Send (in 0) or receive (in 1) exactly len bytes on a channel socket,
 *  through EINTR; -1 when the other side went away. */
int hpc_remote_io(int fd, void *buf, size_t len, int in);

/* ---- the daemon's side ---------------------------------------------------- */

/**
 * Open container c (source, options and real format set) in a new helper
 * and make c a proxy of it: c->format becomes the proxy of the real format
 * (same name), c->sources the daemon's own descriptors of the helper's
 * sources, c->priv the supervisor's state.  On failure *err holds one line
 * naming the file (the reader's own line for a file it refuses).
 */
int hpc_remote_open(hpc_container *c, GError **err);

/** Whether f is a proxy of hpc_remote (its calls go to a helper). */
int hpc_remote_is_proxy(const hpc_format *f);

#endif
