/* hpc_container.h - the container interface every format reader implements,
 * and the calls the FUSE daemon and hpcdump make on an open container.
 *
 * Nodes are addressed by 64-bit ids used directly as FUSE inode numbers:
 *   HPC_INO_ROOT (1)  the root directory
 *   HPC_INO_INFO (2)  the hidden "/.info" text file, served by the core
 *   >= HPC_INO_FIRST  the format's own nodes, encoded as the format likes
 * A format computes names, attributes and bytes from its metadata arrays;
 * nothing is kept per node unless the format wants to (see hpc_tree.h for
 * formats with small trees).
 *
 * A format is a const hpc_format.  open() parses and validates all metadata
 * against the real sizes of the files (hpc_source) and fills c->priv; the
 * tree and read operations are then called from many threads at once and
 * must not change shared state without their own locking.
 */
#ifndef HPC_CONTAINER_H
#define HPC_CONTAINER_H

#include <glib.h>
#include <stdint.h>
#include <sys/stat.h>

#include "hpc_cache.h"
#include "hpc_error.h"
#include "hpc_options.h"
#include "hpc_rankname.h"
#include "hpc_source.h"

typedef uint64_t hpc_ino;

#define HPC_INO_ROOT 1
#define HPC_INO_INFO 2
#define HPC_INO_FIRST 16

#define HPC_MODE_DIR (S_IFDIR | 0555)
#define HPC_MODE_FILE (S_IFREG | 0444)
#define HPC_MODE_LINK (S_IFLNK | 0777)

/** Attributes of a node.  mtime 0 means "the container's". */
typedef struct hpc_stat {
    hpc_ino ino;
    uint32_t mode;
    uint32_t nlink;
    uint64_t size;
    int64_t mtime;
    int partial;           /* readdir only: size not known yet, ask getattr */
} hpc_stat;

/** Options shared by hpcmount and hpcdump (-o name=value); each field has
 *  its row in hpc_option_defs (hpc_options.c), which parses and documents it. */
typedef struct hpc_options {
    uint64_t cache_size;   /* bytes of the block cache; 0: 64 MiB */
    uint32_t blocksize;    /* cache block size; 0: from the container */
    char *format;          /* force a format by name; NULL: detect */
    char *rankname;        /* printf format for rank names; NULL: rank-%06d */
    int nocheck;           /* serve data whose checksums fail */
    int allowholes;        /* serve holes in distributed arrays as zeros */
    int salvage;           /* serve files of killed writers */
    double open_timeout;   /* trial open limit, seconds; 0: default, < 0: none (hpc_sandbox.h) */
    uint32_t h5_handles;   /* HDF5: open dataset handles at most; 0: 256 */
    uint64_t h5_cache;     /* HDF5: bytes of their chunk caches; 0: 256 MiB */
    int npy;               /* show array files as NAME.npy (hpc_npyview.h) */
    uint32_t max_containers; /* run directories: containers open at once; 0: 16 */
    char *fticonfig;       /* FTI: the config.fti that gives the topology */
    int rundir;            /* a directory is a run directory even if a reader claims it */
    int noexpand;          /* run directories: recognised files shown as plain files */
} hpc_options;

/** One verbatim run of a file's bytes inside a source (see hpc_format.map). */
typedef struct hpc_extent {
    const hpc_source *src;
    uint64_t off;          /* in the source */
    uint64_t len;
} hpc_extent;

/**
 * Directory entry callback.  next_cookie is the cookie that resumes after
 * this entry.  Returns non-zero when the caller cannot take the entry (its
 * buffer is full); the format must then stop and return HPC_OK.
 */
typedef int (*hpc_dirent_fn)(void *ctx, const char *name, const hpc_stat *st,
                             uint64_t next_cookie);

/** Extended attribute callback: one call per attribute of the node. */
typedef int (*hpc_xattr_fn)(void *ctx, const char *name, const void *value, size_t len);

typedef struct hpc_container hpc_container;
typedef struct hpc_tree hpc_tree;

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

    /* Data.  A format implements read, or map, or both. */
    /** Copy [off, off+len) of file ino into buf; *nread < len only at EOF. */
    int (*read)(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                size_t *nread);
    /** Where [off, off+len) of ino (clipped to its size) lies verbatim in the
     *  sources: at most max extents, in order, *n of them; they may cover
     *  less than asked when max is reached.  HPC_E_NOTSUP for nodes that
     *  must go through read. */
    int (*map)(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
               hpc_extent *ext, unsigned max, unsigned *n);

    /** Optional: call fn for each extended attribute of ino. */
    int (*xattrs)(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx);
    /** Write the .info text: "key: value" lines, then a table. */
    int (*info)(hpc_container *c, GString *out);
} hpc_format;

struct hpc_container {
    const hpc_format *format;
    char *path;              /* SOURCE as given */
    hpc_options opts;        /* strings owned by the container */
    hpc_rankname rankname;   /* compiled opts.rankname */
    GPtrArray *sources;      /* hpc_source *, opened with hpc_container_add_source */
    uint32_t fsblksize;      /* container's block size; set in open() if known */
    hpc_tree *tree;          /* optional static tree built by open() */
    void *priv;              /* the format's state */
    int64_t mtime;           /* of SOURCE, the default for nodes */
    uint32_t uid, gid;
    int live;                /* set by open(): the container may grow while
                                mounted, so the kernel must not cache names */

    /* core state */
    GMutex lock;             /* guards cache creation and info */
    hpc_cache *cache;
    GString *info;
    GHashTable *npy_headers; /* the npy view's headers, under lock */
    int changed;             /* a source changed since mount: reads fail */
    char *changed_path;      /* which one (set once, with changed) */
    gint64 last_check;       /* monotonic us of the last periodic check */
};

/** The formats the core knows, NULL-terminated. */
extern const hpc_format *const hpc_formats[];

/** Find a format by name, NULL if unknown. */
const hpc_format *hpc_format_by_name(const char *name);

/** Fill opts with defaults. */
void hpc_options_init(hpc_options *opts);

/** Free strings held by opts. */
void hpc_options_clear(hpc_options *opts);

/**
 * Apply one option "name=value" or "name" (cache_size, blocksize, format,
 * rankname, nocheck, allowholes, salvage).  Sizes take K, M, G suffixes.
 * HPC_E_NOENT for a name that is not an hpcmount option, HPC_E_INVAL with
 * *err set for a bad value.
 */
int hpc_options_set(hpc_options *opts, const char *arg, GError **err);

/**
 * Open SOURCE: detect (or take opts->format), open and validate.  On
 * failure *err holds the one-line reason.
 */
int hpc_container_open(const char *source, const hpc_options *opts,
                       hpc_container **out, GError **err);

/** Close and free everything. */
void hpc_container_close(hpc_container *c);

/** For formats: open one more physical file; the container owns it. */
hpc_source *hpc_container_add_source(hpc_container *c, const char *path, GError **err);

/** For formats: the block cache (created on first use with the block size
 *  from opts.blocksize, else c->fsblksize, else the source's st_blksize). */
hpc_cache *hpc_container_cache(hpc_container *c);

/**
 * For formats that read sources by other means than hpc_source_pread (a
 * library with its own descriptors): fstat every source of the container
 * and compare with its identity at mount.  Call it after such a read and
 * before using or returning the bytes.  HPC_OK, or HPC_E_CHANGED once any
 * source changed (then the container logs one line, .info says so, and
 * every later read fails until remount).  Live containers always get HPC_OK.
 */
int hpc_container_sources_unchanged(hpc_container *c);

/**
 * For front ends that read extents themselves (splice): the sources of the
 * extents ext[0..n) are unchanged (fstat).  Same results as above.
 */
int hpc_container_extents_unchanged(hpc_container *c, const hpc_extent *ext, unsigned n);

/** For live formats: regenerate .info on next access. */
void hpc_container_info_changed(hpc_container *c);

/** Log one line (read-time problems).  Goes to stderr or the daemon's log. */
void hpc_log(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/** Where hpc_log writes: fn(line) or stderr when fn is NULL. */
void hpc_log_set_handler(void (*fn)(const char *line));

/* The calls of the front ends.  All return 0 or a negative hpc_err. */
int hpc_container_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st);
int hpc_container_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st);
/** Cookies: 0 ".", 1 "..", then (root only) ".info", then the format's.
 *  The .info entry's size is 0 until .info was built: ask getattr. */
int hpc_container_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie,
                          hpc_dirent_fn fn, void *ctx);
int hpc_container_read(hpc_container *c, hpc_ino ino, void *buf, size_t len,
                       uint64_t off, size_t *nread);
/** Extents for zero-copy reads; HPC_E_NOTSUP if the node has none. */
int hpc_container_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                      hpc_extent *ext, unsigned max, unsigned *n);
int hpc_container_readlink(hpc_container *c, hpc_ino ino, char **target);
/** Value of xattr `name` into *value (g_free it). */
int hpc_container_getxattr(hpc_container *c, hpc_ino ino, const char *name,
                           void **value, size_t *len);
/** NUL-separated xattr names into out. */
int hpc_container_listxattr(hpc_container *c, hpc_ino ino, GString *out);
/* Accessors for front ends, instead of reading the container's fields. */
/** Whether the container may still grow (GSD): short kernel timeouts, no
 *  negative entries. */
int hpc_container_is_live(const hpc_container *c);
/** Owner of SOURCE: the uid and gid of every node. */
void hpc_container_owner(const hpc_container *c, uint32_t *uid, uint32_t *gid);
/** Bytes of all source files as of open (statfs). */
uint64_t hpc_container_source_bytes(const hpc_container *c);
/** Block size of the cache, for st_blksize and statfs. */
uint32_t hpc_container_block_size(hpc_container *c);

/** Resolve a '/'-separated path from the root. */
int hpc_container_resolve(hpc_container *c, const char *path, hpc_stat *st);

#endif
