/* hpc_file.h - an open file of a mount: the one read path of every front
 * end (the FUSE daemon, libhpcmount and through it hpcdump and Python).
 *
 * Opening resolves the node once (a path: symlinks followed by
 * hpc_mount_resolve_follow) and keeps its attributes and the per-open
 * state: the read-ahead stream of the daemon.  hpc_file_read then serves
 * [off, off + len) into one of three sinks:
 *
 *   a caller's buffer  bytes copied; a read of at least verbatim_min bytes
 *                      is read from the source extents straight into the
 *                      buffer (no block cache), the rest through the core;
 *   a splice           the FUSE reply: a read of at least verbatim_min
 *                      bytes whose sources hold a read lease is handed to
 *                      the sink's hooks as extents, else copied;
 *   an extent list     where the bytes lie verbatim in the source files
 *                      (HPC_E_NOTSUP when they are computed).
 *
 * Whatever the sink, the bytes served are checked against a change of
 * their sources after they were read ("sources unchanged"): a change is
 * HPC_E_CHANGED, never a wrong byte.  Reads of one open file may run on
 * several threads at once.
 */
#ifndef HPC_FILE_H
#define HPC_FILE_H

#include "hpc_mount.h"
#include "hpc_readahead.h"

/** Reads at least this large are served from the source extents (spliced,
 *  or read straight into the buffer) instead of through the block cache:
 *  the kernel's page cache holds their pages anyway.  The daemon's
 *  -o zerocopy_min_kb sets it per mount (0: never). */
#define HPC_FILE_VERBATIM_MIN (128u << 10)

typedef struct hpc_file hpc_file;

/** How a file is opened: its read-ahead and its verbatim threshold. */
typedef struct hpc_file_conf {
    hpc_ra *ra;                  /* the daemon's read-ahead, or NULL */
    uint64_t verbatim_min;       /* see HPC_FILE_VERBATIM_MIN; 0: never */
} hpc_file_conf;

/** The conf of a front end without read-ahead (libhpcmount). */
#define HPC_FILE_CONF_DEFAULT ((hpc_file_conf){ NULL, HPC_FILE_VERBATIM_MIN })

/** Open node ino of m (HPC_E_ISDIR for a directory, HPC_E_INVAL for a
 *  symlink).  m must outlive the file. */
int hpc_file_open(hpc_mount *m, hpc_ino ino, const hpc_file_conf *conf, hpc_file **out);

/** Open the file at path of m, symlinks in every component followed as on
 *  the mount (hpc_mount_resolve_follow). */
int hpc_file_open_path(hpc_mount *m, const char *path, const hpc_file_conf *conf,
                       hpc_file **out);

/** Close f (NULL is a no-op). */
void hpc_file_close(hpc_file *f);

/** The attributes of f at open. */
const hpc_stat *hpc_file_stat(const hpc_file *f);

/** The hooks of a splice sink (the FUSE daemon's zero-copy reply).  They
 *  run between hpc_source_replies_begin and _end, every source of the
 *  extents under a read lease. */
typedef struct hpc_splice_ops {
    /** Stage ext[0..n) (got bytes in all) for the reply: HPC_OK when every
     *  byte arrived, HPC_E_NOTSUP when the copy must answer instead,
     *  HPC_E_CHANGED when a source ended early, or another error. */
    int (*fill)(void *ctx, const hpc_extent *ext, unsigned n, uint64_t got);
    /** Send what fill staged (the checks passed). */
    void (*send)(void *ctx, uint64_t got);
    /** Drop what fill staged. */
    void (*drop)(void *ctx);
    /** Send n copied bytes (the copy answers). */
    void (*send_buf)(void *ctx, const void *buf, size_t n);
} hpc_splice_ops;

/** Where hpc_file_read puts the bytes. */
typedef struct hpc_sink {
    enum { HPC_SINK_BUFFER, HPC_SINK_SPLICE, HPC_SINK_EXTENTS } kind;
    void *buf;                        /* BUFFER: room for len bytes */
    size_t done;                      /* BUFFER: the bytes read (short at the end) */
    const hpc_splice_ops *splice;     /* SPLICE */
    /** EXTENTS: one verbatim extent of a source named by path, in file
     *  order; non-zero stops with HPC_E_NOTSUP. */
    int (*extent)(void *ctx, const hpc_extent *e);
    void *ctx;                        /* SPLICE, EXTENTS */
} hpc_sink;

/**
 * Serve [off, off + len) of f into sink (see above).  HPC_OK, or the error
 * (a splice sink then sent nothing: its caller replies the error).  The
 * read-ahead stream is told of every BUFFER and SPLICE read first.
 */
int hpc_file_read(hpc_file *f, uint64_t off, size_t len, hpc_sink *sink);

#endif
