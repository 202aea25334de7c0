/* hpc_format.h - the interface a format reader implements, and the core's
 * helpers it calls.  Front ends never include this: they see the opaque
 * container of hpc_container.h (through hpc_mount.h).
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
#include "hpc_container.h"
#include "hpc_rankname.h"
#include "hpc_tree.h"

typedef struct hpc_core hpc_core;

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
} hpc_remote_side;

typedef struct hpc_format {
    const char *name;
    /** The third-party library open() runs on the file (e.g. "libhdf5"), or
     *  NULL: when set, the core trial-opens the file in a child process
     *  first (hpc_sandbox.h). */
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
} hpc_format;

/* What a reader sees of its container: the first block is the core's and
 * read-only for the reader, the second is the reader's to fill in open(). */
struct hpc_container {
    const hpc_format *format;
    char *path;              /* SOURCE as given */
    hpc_options opts;        /* strings owned by the container */
    hpc_rankname rankname;   /* compiled opts.rankname */
    GPtrArray *sources;      /* hpc_source *, opened with hpc_container_add_source */
    int64_t mtime;           /* of SOURCE, the default for nodes */
    uint32_t uid, gid;
    hpc_core *core;          /* the core's own state (cache, .info, changes) */

    uint32_t fsblksize;      /* container's block size, if known */
    hpc_tree *tree;          /* optional static tree */
    void *priv;              /* the format's state */
    int live;                /* the container may grow while mounted, so
                                the kernel must not cache names */
};

/** The formats the core knows, in probe order, NULL-terminated. */
extern const hpc_format *const hpc_formats[];

extern const hpc_format hpc_format_sion;
extern const hpc_format hpc_format_gsd;
extern const hpc_format hpc_format_fti;
extern const hpc_format hpc_format_hdf5;
extern const hpc_format hpc_format_dhdf;
extern const hpc_format hpc_format_netcdf3;

/** Find a format by name, NULL if unknown. */
const hpc_format *hpc_format_by_name(const char *name);
/** The reader whose probe scores path highest (head: its first len bytes;
 *  len 0 for a directory), or NULL: the one probe of the container and of
 *  a run directory's members. */
const hpc_format *hpc_format_best(const char *path, const unsigned char *head, size_t len);

/** 0 for the stand-in of a reader this build leaves out (it recognises
 *  the format's magic and refuses to open: "HDF5 support not built"). */
int hpc_format_built(const hpc_format *f);

/** Open one more physical file; the container owns it. */
hpc_source *hpc_container_add_source(hpc_container *c, const char *path, GError **err);

/** The block cache (created on first use with the block size from
 *  opts.blocksize, else c->fsblksize, else the first source's st_blksize). */
hpc_cache *hpc_container_cache(hpc_container *c);

/** Read extents ext[0..n) (as map gives them) into buf, one after the
 *  other, through the block cache; *got is their total.  HPC_E_CORRUPT
 *  when they hold no byte or more than room. */
int hpc_container_read_extents(hpc_container *c, const hpc_extent *ext, unsigned n, void *buf,
                               size_t room, size_t *got);

/* Readers that read sources by other means than hpc_source_pread (a
 * library with its own descriptors) call hpc_container_sources_unchanged
 * (hpc_container.h) after such a read and before using the bytes. */

/** For live formats: regenerate .info on next access. */
void hpc_container_info_changed(hpc_container *c);

#endif
