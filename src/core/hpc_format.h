/* hpc_format.h - the interface a format reader implements, and what the
 * container hands down to it (hpc_host).  It lives in src/core, below the
 * readers, so that a reader includes nothing of the layers above it and
 * calls them only through the table it is given.  Front ends never include
 * this: they see the opaque container of hpc_container.h (through
 * hpc_mount.h); the table of readers is the container's (hpc_formats.h).
 *
 * A format is a const hpc_format.  open() parses and validates all metadata
 * against the real sizes of the files (hpc_source) and fills c->priv (or
 * builds c->tree, hpc_tree.h, for small trees); the tree and data
 * operations are then called from many threads at once and must not change
 * shared state without their own locking.  A format computes names,
 * attributes and bytes from its metadata; nothing is kept per node unless
 * it wants to.
 *
 * The core calls a reader only for what is its to answer: ".", "..",
 * "/.info" and default attributes are the core's; read and map are called
 * only for regular files, with ranges clipped to the file's size; bytes
 * that lie verbatim in a source take one path, map, which the core reads
 * through its block cache (or the front end splices), and read is called
 * only for nodes whose map says HPC_E_NOTSUP (computed bytes).
 */
#ifndef HPC_FORMAT_H
#define HPC_FORMAT_H

#include "hpc_cache.h"
#include "hpc_error.h"
#include "hpc_log.h"
#include "hpc_node.h"
#include "hpc_options.h"
#include "hpc_rankname.h"
#include "hpc_source.h"
#include "hpc_tree.h"

typedef struct hpc_container hpc_container;
typedef struct hpc_core hpc_core;

/* Requests to the helper process that runs a reader's library: the
 * proxy's (hpc_remote.c), and from HPC_RQ_READER on the reader's own,
 * which its remote_side sends through hpc_remote_call and its
 * hpc_format.request answers in the helper. */
enum {
    HPC_RQ_LOOKUP = 1, HPC_RQ_GETATTR, HPC_RQ_READDIR, HPC_RQ_READLINK,
    HPC_RQ_MAP, HPC_RQ_READ, HPC_RQ_XATTRS, HPC_RQ_INFO,
    HPC_RQ_CHUNKS,             /* hpc_format.chunks: text payload */
    HPC_RQ_READER = 64,        /* and up: the reader's */
};

/** What the container hands its reader (c->host, set before open): the
 *  calls a reader makes on the layer above, so that it calls none of that
 *  layer's functions by name.  Each may be called from many threads. */
typedef struct hpc_host {
    /** Open one more physical file; the container owns it. */
    hpc_source *(*add_source)(hpc_container *c, const char *path, GError **err);
    /** The block cache (created on first use with the block size from
     *  opts.blocksize, else c->fsblksize, else the first source's
     *  st_blksize); NULL when out of memory. */
    hpc_cache *(*cache)(hpc_container *c);
    /** Read extents ext[0..n) (as map gives them) into buf, one after
     *  the other, through the block cache; *got is their total.
     *  HPC_E_CORRUPT when they hold no byte or more than room. */
    int (*read_extents)(hpc_container *c, const hpc_extent *ext, unsigned n, void *buf,
                        size_t room, size_t *got);
    /** For readers that read sources by other means than
     *  hpc_source_pread (a library with its own descriptors): call after
     *  such a read and before using the bytes.  HPC_OK, or HPC_E_CHANGED
     *  once any source changed since mount. */
    int (*sources_unchanged)(hpc_container *c);
    /** For live formats: regenerate .info on next access. */
    void (*info_changed)(hpc_container *c);
    /** The reader's library is about to open file `path` (a member of a
     *  set): in the helper process a crash or a limit reached after this
     *  names that file; elsewhere nothing. */
    void (*note_file)(hpc_container *c, const char *path);
} hpc_host;

/** A request to the helper process that runs a reader's library
 *  (hpc_remote.h: op is an HPC_RQ_* code): HPC_OK with *payload (g_free
 *  it) of *len bytes, or the error of the helper or of the reader. */
typedef int (*hpc_remote_call)(hpc_container *c, uint32_t op, hpc_ino ino, uint64_t a,
                               uint64_t b, char **payload, size_t *len);

/** What a reader whose library runs in the helper process does in the
 *  daemon: read some nodes itself from what the helper describes (the
 *  HDF5 reader's chunks, hdf5_remote.h).  The proxy (hpc_remote.c) owns
 *  the state and calls these; it knows no reader by name. */
typedef struct hpc_remote_side {
    /** New state of one container, with a cache of cache_bytes. */
    void *(*state_new)(uint64_t cache_bytes);
    /** Free it (NULL is fine; no read may be running). */
    void (*state_free)(void *st);
    /** Read [off, off+len) of ino here, asking the helper through call;
     *  HPC_E_NOTSUP when the helper must read it. */
    int (*read)(void *st, hpc_container *c, hpc_remote_call call, hpc_ino ino, void *buf,
                size_t len, uint64_t off, size_t *nread);
    /** .info lines of what it read so far. */
    void (*info)(void *st, GString *out);
    /** Optional: the bytes the library may hold in the helper beyond
     *  the block cache (its own caches, as the options size them); the
     *  helper's memory bound counts them twice, as the block cache. */
    uint64_t (*library_bytes)(const hpc_options *opts);
} hpc_remote_side;

typedef struct hpc_format {
    const char *name;
    /** The third-party library open() runs on the file (e.g. "libhdf5"), or
     *  NULL: when set, the reader runs in the helper process (hpc_remote.h)
     *  unless -o inproc. */
    const char *sandbox_lib;
    /** Score 0..100 how surely `path` (head = its first len bytes; len 0 and
     *  head NULL for a directory) is of this format. */
    int (*probe)(const char *path, const unsigned char *head, size_t len);
    /** Parse and validate; fill c->priv and/or c->tree.  On failure set *err
     *  to one line "FILE: field F at offset O: reason" and free what it made. */
    int (*open)(hpc_container *c, GError **err);
    /** Free c->priv (not c->tree, which the core frees). */
    void (*close)(hpc_container *c);

    /* Tree.  May be NULL when open() built c->tree. */
    int (*lookup)(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st);
    int (*getattr)(hpc_container *c, hpc_ino ino, hpc_stat *st);
    /** List dir from cookie (0 = first entry; the core adds ".", ".." and
     *  ".info" itself). */
    int (*readdir)(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx);
    /** Optional; NULL when open() built c->tree. */
    int (*readlink)(hpc_container *c, hpc_ino ino, char **target);

    /* Data.  A format implements map, or read, or both (map for verbatim
     * nodes, read for the others). */
    /** Where [off, off+len) of ino (clipped to its size) lies verbatim in the
     *  sources: at most max extents, in order, *n of them; they may cover
     *  less than asked when max is reached.  HPC_E_NOTSUP for nodes that
     *  must go through read. */
    int (*map)(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
               hpc_extent *ext, unsigned max, unsigned *n);
    /** Compute [off, off+len) of file ino into buf; *nread < len only at
     *  EOF.  Called only for nodes map does not serve. */
    int (*read)(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                size_t *nread);

    /** Optional: call fn for each extended attribute of ino (names in the
     *  user. namespace only: the core answers others without asking). */
    int (*xattrs)(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx);
    /** Write the .info text: "key: value" lines, then a table. */
    int (*info)(hpc_container *c, GString *out);
    /** Optional: what the references need of node ino, as text lines
     *  that hpc_refs_chunks.c reads: of an array where its stored bytes
     *  lie (layout, codecs, fill value, one line per stored chunk), of an
     *  array or a directory its typed attributes and dimension names;
     *  HPC_E_NOTSUP for nodes without such a description (a directory of
     *  a reader that describes arrays only).  The HDF5 reader's:
     *  src/formats/hdf5/hdf5_refs.c. */
    int (*chunks)(hpc_container *c, hpc_ino ino, GString *out);
    /** Optional, for a reader with sandbox_lib: its part in the daemon
     *  when its library runs in the helper process. */
    const hpc_remote_side *remote_side;
    /** Optional, in the helper process: answer the reader's own request
     *  op (HPC_RQ_READER and up, sent by its remote_side) about ino with
     *  arguments a and b, the payload appended to out. */
    int (*request)(hpc_container *c, uint32_t op, hpc_ino ino, uint64_t a, uint64_t b,
                   GByteArray *out);
    /** Optional, in the helper process, before the walk that follows the
     *  open: that walk is bounded by nodes, so whole-file work a node's
     *  answer would start waits for after_walk. */
    void (*before_walk)(hpc_container *c);
    /** Optional, in the helper process, after that walk: let go of what
     *  it left open. */
    void (*after_walk)(hpc_container *c);
    /** Optional: the reader's own -o options, ended by a row whose name is
     *  NULL.  Their rows have no field (offset and width 0): the reader
     *  reads what was set with hpc_options_number / hpc_options_text on
     *  c->opts and applies its defaults itself. */
    const hpc_option_def *options;
} hpc_format;

/* What a reader sees of its container: the first block is the core's and
 * read-only for the reader, the second is the reader's to fill in open(). */
struct hpc_container {
    const hpc_format *format;
    char *path;              /* SOURCE as given */
    hpc_options opts;        /* strings owned by the container */
    hpc_rankname rankname;   /* compiled opts.rankname */
    GPtrArray *sources;      /* hpc_source *, opened with host->add_source */
    int64_t mtime;           /* of SOURCE, the default for nodes */
    uint32_t uid, gid;
    hpc_core *core;          /* the core's own state (cache, .info, changes) */
    const hpc_host *host;    /* the calls a reader makes on the container */

    uint32_t fsblksize;      /* container's block size, if known */
    hpc_tree *tree;          /* optional static tree */
    void *priv;              /* the format's state */
    int live;                /* the container may grow while mounted, so
                                the kernel must not cache names */
};

#endif
