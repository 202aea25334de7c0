/* hpc_container.h - one open container, as the tests and the helper see
 * it: an opaque handle and the calls on it; the mount layer sees it as an
 * implementation of hpc_nodes.h (hpc_container_nodes_open).  The interface
 * a format reader implements is hpc_format.h.
 *
 * Nodes, their ids and attributes are hpc_node.h's.
 * Every call returns HPC_OK (0) or a negative hpc_err (hpc_error.h) and
 * may be made from many threads at once.
 */
#ifndef HPC_CONTAINER_H
#define HPC_CONTAINER_H

#include <glib.h>
#include <stdint.h>

#include "hpc_error.h"
#include "hpc_log.h"
#include "hpc_node.h"
#include "hpc_nodes.h"
#include "hpc_options.h"
#include "hpc_source.h"

typedef struct hpc_container hpc_container;

/**
 * Open SOURCE: detect (or take opts->format), open and validate.  On
 * failure *err holds the one-line reason "FILE: field F at offset O: why".
 */
int hpc_container_open(const char *source, const hpc_options *opts,
                       hpc_container **out, GError **err);

/** Close and free everything. */
void hpc_container_close(hpc_container *c);

int hpc_container_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st);
int hpc_container_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st);
/** Cookies: 0 ".", 1 "..", then (root only) ".info", then the format's.
 *  The .info entry's size is 0 until .info was built: ask getattr. */
int hpc_container_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie,
                          hpc_dirent_fn fn, void *ctx);
/** Copy [off, off+len) of file ino into buf; *nread < len only at EOF. */
int hpc_container_read(hpc_container *c, hpc_ino ino, void *buf, size_t len,
                       uint64_t off, size_t *nread);
/** Where [off, off+len) of ino lies verbatim in the sources, for zero-copy
 *  reads: at most max extents, *n of them, in order; HPC_E_NOTSUP if the
 *  node's bytes are computed. */
int hpc_container_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                      hpc_extent *ext, unsigned max, unsigned *n);
int hpc_container_readlink(hpc_container *c, hpc_ino ino, char **target);
/** Value of xattr `name` into *value (g_free it). */
int hpc_container_getxattr(hpc_container *c, hpc_ino ino, const char *name,
                           void **value, size_t *len);
/** NUL-separated xattr names into out. */
int hpc_container_listxattr(hpc_container *c, hpc_ino ino, GString *out);
/** Where the stored bytes of array ino lie, for references: "file PATH"
 *  then the reader's lines (hpc_format.chunks); HPC_E_NOTSUP when the
 *  reader gives none. */
int hpc_container_chunks(hpc_container *c, hpc_ino ino, GString *out);
/** Resolve a '/'-separated path from the root. */
int hpc_container_resolve(hpc_container *c, const char *path, hpc_stat *st);

typedef int (*hpc_lookup_fn)(void *ctx, hpc_ino parent, const char *name, hpc_stat *st);
/** Walk a '/'-separated path with lookup, from the directory *st (its
 *  attributes) to the node it names (into *st): the one path walk of the
 *  container and the mount. */
int hpc_path_walk(const char *path, hpc_lookup_fn lookup, void *ctx, hpc_stat *st);

/**
 * fstat every source of the container and compare with its identity at
 * mount.  HPC_OK, or HPC_E_CHANGED once any source changed (then the
 * container logs one line, .info says so, and every later read fails
 * until remount).  Live containers always get HPC_OK.
 */
int hpc_container_sources_unchanged(hpc_container *c);

/** For front ends that read extents themselves (splice): the sources of
 *  the extents ext[0..n) are unchanged (fstat).  Same results as above. */
int hpc_container_extents_unchanged(hpc_container *c, const hpc_extent *ext, unsigned n);

/**
 * Open SOURCE as hpc_container_open does, as an implementation of the node
 * interface (hpc_nodes.h): the mount layer's way in.  Its chunks are
 * hpc_container_chunks; hpc_nodes_close closes the container.
 */
int hpc_container_nodes_open(const char *source, const hpc_options *opts, hpc_nodes **out,
                             GError **err);

/* Accessors. */
/** The reader's name ("sion", "hdf5", ...). */
const char *hpc_container_format_name(const hpc_container *c);
/** Whether the container may still grow (GSD): short kernel timeouts, no
 *  negative entries. */
int hpc_container_is_live(const hpc_container *c);
/** Owner of SOURCE: the uid and gid of every node. */
void hpc_container_owner(const hpc_container *c, uint32_t *uid, uint32_t *gid);
/** Bytes of all source files as of open (statfs). */
uint64_t hpc_container_source_bytes(const hpc_container *c);
/** Block size of the cache, for st_blksize and statfs. */
uint32_t hpc_container_block_size(hpc_container *c);

/** Append "formats: sion gsd ..." and, if any, " (not built: hdf5 ...)":
 *  the line front ends print for --version. */
void hpc_formats_describe(GString *out);

/** Call fn on every -o option row in the order --help lists them: the
 *  core's (hpc_option_defs), with every reader's own (hpc_format.options,
 *  in probe order) where the core's table has its HPC_OPT_READERS row.
 *  Stops at the first call that returns nonzero, and returns that. */
int hpc_formats_options_each(hpc_option_fn fn, void *ctx);

/** Apply one option "name=value" or "name", the core's or a reader's
 *  (hpc_option_set): HPC_E_NOENT for a name that is no hpcmount option,
 *  HPC_E_INVAL with *err set for a bad value. */
int hpc_formats_option_set(hpc_options *opts, const char *arg, GError **err);

/** Append the help lines of the HPC_OPT_BASIC rows, or of every row when
 *  all is set, in the order of hpc_formats_options_each. */
void hpc_formats_options_help(GString *out, int all);

/** Whether the first change of a source is logged (default 1).  The
 *  helper process turns it off: the daemon checks the same files after
 *  every read and logs the change itself, once. */
void hpc_log_set_changes(int on);

#endif
