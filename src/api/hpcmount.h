/* hpcmount.h - libhpcmount: the tree of an HPC container file (SIONlib,
 * FTI, GSD, HDF5, distributed HDF, netCDF-3) or of a run directory of them, read
 * without FUSE.  The same names, bytes and extended attributes as the
 * hpcmount(1) mount.  See libhpcmount(3).
 *
 * Conventions: every call that can fail returns HPCMOUNT_OK (0) or a
 * negative HPCMOUNT_E_* code and gives results through out-parameters.
 * After a failure, hpcmount_last_error() is the one-line message of that
 * failure on the calling thread.  Memory a call hands out is freed with
 * hpcmount_free() (hpcmount_extents_free() for extents).
 *
 * Threads: after hpcmount_open() returns, any number of threads may call
 * every function on the same handle at once (the core serves the many
 * threads of the FUSE daemon the same way); hpcmount_close() must be the
 * last call on a handle, made when no other call on it is running.
 *
 * Nodes are addressed by 64-bit ids (stable while the handle is open):
 * HPCMOUNT_INO_ROOT is the root; hpcmount_resolve() maps a path to a node.
 *
 * hpcdump uses only this header.  The FUSE daemon uses the core's internal
 * interface instead, for two things left out here to keep this one small:
 * the open source descriptors behind extents (zero-copy splice) and the
 * kernel cache hints of each node.
 */
#ifndef HPCMOUNT_H
#define HPCMOUNT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HPCMOUNT_API __attribute__((visibility("default")))
#else
#define HPCMOUNT_API
#endif

/** Version of the library's interface (the soname's major is separate). */
#define HPCMOUNT_API_VERSION 1

/** Error codes (negative), as returned by every call. */
enum {
    HPCMOUNT_OK = 0,
    HPCMOUNT_E_IO = -1,          /* a read failed or the bytes cannot be served */
    HPCMOUNT_E_CORRUPT = -2,     /* the container's metadata are inconsistent */
    HPCMOUNT_E_NOMEM = -3,
    HPCMOUNT_E_NOENT = -4,       /* no such node, name or source */
    HPCMOUNT_E_NOTDIR = -5,
    HPCMOUNT_E_ISDIR = -6,
    HPCMOUNT_E_INVAL = -7,       /* bad argument or option */
    HPCMOUNT_E_UNSUPPORTED = -8, /* a valid container this library cannot serve */
    HPCMOUNT_E_NODATA = -9,      /* no such extended attribute */
    HPCMOUNT_E_RANGE = -10,
    HPCMOUNT_E_CHECKSUM = -11,   /* a stored checksum does not match the data */
    HPCMOUNT_E_NOTSUP = -12,     /* not for this node (e.g. extents of computed bytes) */
    HPCMOUNT_E_CHANGED = -13,    /* a source file changed since it was opened */
    HPCMOUNT_E_LOOP = -14,       /* more than 40 symlinks in one path (ELOOP) */
};

#define HPCMOUNT_INO_ROOT 1

typedef struct hpcmount hpcmount;    /* an open SOURCE (opaque) */

/** Attributes of a node, as stat(2) on the mount shows them. */
typedef struct hpcmount_stat {
    uint64_t ino;
    uint32_t mode;           /* S_IFDIR|0555, S_IFREG|0444 or S_IFLNK|0777 */
    uint32_t nlink;
    uint64_t size;
    int64_t mtime;           /* seconds */
    uint32_t uid, gid;       /* the owner of SOURCE */
    uint32_t blksize;
    uint32_t reserved;
} hpcmount_stat;

/** One verbatim run of a file's bytes: [offset, offset+length) of the
 *  source file at path. */
typedef struct hpcmount_extent {
    char *path;
    uint64_t offset;
    uint64_t length;
} hpcmount_extent;

/** Called once per directory entry ("." and ".." left out); return
 *  non-zero to stop the listing early. */
typedef int (*hpcmount_dirent_fn)(void *ctx, const char *name, const hpcmount_stat *st);

/**
 * Open SOURCE: one container (a file, or a directory a reader claims such
 * as an FTI checkpoint tree) or a run directory.  options: NULL or the
 * comma-separated option string of hpcmount's -o ("cache_size=64M,npy").
 * On failure the one-line reason ("FILE: field F at offset O: why") is
 * hpcmount_last_error().
 */
HPCMOUNT_API int hpcmount_open(const char *source, const char *options, hpcmount **out);

/** Close the handle and free everything it holds (NULL is a no-op). */
HPCMOUNT_API void hpcmount_close(hpcmount *m);

/** The one-line message of the last failed call of this thread ("" when
 *  none).  Valid until this thread's next call into the library. */
HPCMOUNT_API const char *hpcmount_last_error(void);

/** A short text for an HPCMOUNT_E_* code. */
HPCMOUNT_API const char *hpcmount_strerror(int code);

/** The errno value (positive) the mount replies for an HPCMOUNT_E_* code. */
HPCMOUNT_API int hpcmount_errno(int code);

/** The node at '/'-separated path from the root (symlinks not followed). */
HPCMOUNT_API int hpcmount_resolve(hpcmount *m, const char *path, hpcmount_stat *st);

/** The node at path as the kernel finds it on the mount: symlinks in every
 *  component are followed, the last one too when follow_last is non-zero.
 *  A relative target counts from the link's directory, an absolute one from
 *  the root; ".." above the root is HPCMOUNT_E_NOENT, more than 40 links
 *  HPCMOUNT_E_LOOP. */
HPCMOUNT_API int hpcmount_resolve_follow(hpcmount *m, const char *path, int follow_last,
                                         hpcmount_stat *st);

/** The entry name of directory parent. */
HPCMOUNT_API int hpcmount_lookup(hpcmount *m, uint64_t parent, const char *name,
                                 hpcmount_stat *st);

/** Attributes of node ino. */
HPCMOUNT_API int hpcmount_getattr(hpcmount *m, uint64_t ino, hpcmount_stat *st);

/** Call fn for every entry of directory dir, with full attributes. */
HPCMOUNT_API int hpcmount_readdir(hpcmount *m, uint64_t dir, hpcmount_dirent_fn fn, void *ctx);

/** Copy [off, off+len) of file ino into buf; *nread < len only at the end
 *  of the file.  Bytes that cannot be served exactly fail (HPCMOUNT_E_IO),
 *  bytes whose source changed since it was opened HPCMOUNT_E_CHANGED.  One
 *  call opens and closes ino (hpcmount_file_open keeps it open). */
HPCMOUNT_API int hpcmount_read(hpcmount *m, uint64_t ino, void *buf, size_t len, uint64_t off,
                               size_t *nread);

/** An open file of a handle (opaque): the node resolved once, read many
 *  times (the read path the mount's own open files take). */
typedef struct hpcmount_file hpcmount_file;

/** Open the file at path, symlinks followed as by hpcmount_resolve_follow
 *  (HPCMOUNT_E_ISDIR for a directory).  Close it with hpcmount_file_close
 *  before the handle; any number of threads may read it at once.  Since
 *  libhpcmount.so.0.2. */
HPCMOUNT_API int hpcmount_file_open(hpcmount *m, const char *path, hpcmount_file **out);

/** Open file node ino (e.g. of an hpcmount_readdir entry), as
 *  hpcmount_file_open. */
HPCMOUNT_API int hpcmount_file_open_node(hpcmount *m, uint64_t ino, hpcmount_file **out);

/** Close f (NULL is a no-op); the last call on f. */
HPCMOUNT_API void hpcmount_file_close(hpcmount_file *f);

/** The attributes of f's node as it was opened. */
HPCMOUNT_API int hpcmount_file_stat(hpcmount_file *f, hpcmount_stat *st);

/** Copy [off, off+len) of f into buf, as hpcmount_read. */
HPCMOUNT_API int hpcmount_file_read(hpcmount_file *f, void *buf, size_t len, uint64_t off,
                                    size_t *nread);

/** The extents of f, as hpcmount_extents. */
HPCMOUNT_API int hpcmount_file_extents(hpcmount_file *f, hpcmount_extent **ext, size_t *n);

/** The target of symlink ino (hpcmount_free it). */
HPCMOUNT_API int hpcmount_readlink(hpcmount *m, uint64_t ino, char **target);

/** Value of extended attribute name of ino into *value, *len bytes (with a
 *  NUL after them that *len does not count; hpcmount_free it). */
HPCMOUNT_API int hpcmount_getxattr(hpcmount *m, uint64_t ino, const char *name, void **value,
                                   size_t *len);

/** The attribute names of ino, each ended by a NUL, *len bytes in all
 *  (hpcmount_free it; NULL and 0 when there are none). */
HPCMOUNT_API int hpcmount_listxattr(hpcmount *m, uint64_t ino, char **names, size_t *len);

/** The text of /.info (hpcmount_free it). */
HPCMOUNT_API int hpcmount_info(hpcmount *m, char **text, size_t *len);

/** hpcmount_refs: the inline threshold hpcdump refs uses by default. */
#define HPCMOUNT_REFS_INLINE_DEFAULT 500

/**
 * kerchunk references (version 1 JSON, a zarr v2 hierarchy) of the tree
 * under path: chunks of at most inline_max bytes inline, the others as
 * byte ranges of the source files (docs/refs.md).  *json (hpcmount_free
 * it) is the whole document, or NULL on failure.
 */
HPCMOUNT_API int hpcmount_refs(hpcmount *m, const char *path, uint64_t inline_max, char **json,
                               size_t *len);

/** hpcmount_refs, calling progress(ctx, nodes) after each node of the tree
 *  is described (nodes: how many so far; the nodes of a recursive
 *  hpcmount_readdir are the total); since libhpcmount.so.0.1. */
HPCMOUNT_API int hpcmount_refs_progress(hpcmount *m, const char *path, uint64_t inline_max,
                                        void (*progress)(void *ctx, uint64_t nodes), void *ctx,
                                        char **json, size_t *len);

/**
 * Where the bytes of file ino lie verbatim in the source files: *n extents
 * in file order covering the whole file (hpcmount_extents_free them).
 * HPCMOUNT_E_NOTSUP when the bytes are computed (decompressed, recovered,
 * converted) and must be read with hpcmount_read.
 * The extents are right while the source files do not change.
 */
HPCMOUNT_API int hpcmount_extents(hpcmount *m, uint64_t ino, hpcmount_extent **ext, size_t *n);

/** HPCMOUNT_OK while no source file of the container holding ino changed. */
HPCMOUNT_API int hpcmount_sources_unchanged(hpcmount *m, uint64_t ino);

HPCMOUNT_API void hpcmount_extents_free(hpcmount_extent *ext, size_t n);
HPCMOUNT_API void hpcmount_free(void *p);

/** HPCMOUNT_OK when options (as for hpcmount_open) are all known and
 *  well-formed, else HPCMOUNT_E_INVAL with the message of the first bad one. */
HPCMOUNT_API int hpcmount_options_check(const char *options);

/** The help text of every option (hpcmount_free it). */
HPCMOUNT_API int hpcmount_options_help(char **text);

/** The help text of the options a first use may need, without the tuning
 *  knobs (hpcmount_free it); since libhpcmount.so.0.1. */
HPCMOUNT_API int hpcmount_options_help_basic(char **text);

/** "formats: sion gsd ..." as --version prints it (hpcmount_free it). */
HPCMOUNT_API int hpcmount_formats(char **text);

/** The package version, e.g. "0.1.0". */
HPCMOUNT_API const char *hpcmount_version(void);

#ifdef __cplusplus
}
#endif

#endif
