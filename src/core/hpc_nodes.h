/* hpc_nodes.h - the one interface of a tree of nodes: a table of calls
 * (hpc_nodes_ops) over an object whose first member is hpc_nodes.
 *
 * An open container implements it (hpc_container_nodes_open,
 * hpc_container.h); the -o npy view implements it by wrapping any other
 * implementation (hpc_npyview.h); a run directory implements it over its
 * container slots (hpc_rundir.h).  The mount layer holds one stack of
 * them and calls only through this table.  A layer that wraps another
 * passes down what it does not change.
 *
 * Node ids, attributes and callbacks are hpc_node.h's; every call returns
 * HPC_OK (0) or a negative hpc_err (hpc_error.h) unless it says otherwise,
 * and may be made from many threads at once.
 */
#ifndef HPC_NODES_H
#define HPC_NODES_H

#include <glib.h>
#include <stdint.h>

#include "hpc_error.h"
#include "hpc_node.h"
#include "hpc_source.h"

typedef struct hpc_nodes hpc_nodes;

/** How the kernel may cache a node: seconds for names and attributes,
 *  whether file pages may outlive an open, whether its text is made anew
 *  on every read (.info), its owner and the block size to report. */
typedef struct hpc_node_meta {
    double timeout;
    int keep_cache;
    int direct_io;
    uint32_t uid, gid, blksize;
} hpc_node_meta;

typedef struct hpc_nodes_ops {
    int (*lookup)(hpc_nodes *n, hpc_ino parent, const char *name, hpc_stat *st);
    int (*getattr)(hpc_nodes *n, hpc_ino ino, hpc_stat *st);
    /** Cookies: 0 ".", 1 "..", then (root only) ".info", then the rest. */
    int (*readdir)(hpc_nodes *n, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx);
    int (*readlink)(hpc_nodes *n, hpc_ino ino, char **target);
    /** Copy [off, off+len) of file ino into buf; *nread < len only at EOF. */
    int (*read)(hpc_nodes *n, hpc_ino ino, void *buf, size_t len, uint64_t off,
                size_t *nread);
    /** Where [off, off+len) of ino lies verbatim in the sources (zero-copy
     *  reads): at most max extents, *count of them; HPC_E_NOTSUP if the
     *  bytes are computed.  The extents stay valid until unmap(n, ino). */
    int (*map)(hpc_nodes *n, hpc_ino ino, uint64_t off, uint64_t len, hpc_extent *ext,
               unsigned max, unsigned *count);
    /** The extents of a successful map of ino are no longer used (a run
     *  directory holds the container open until then).  NULL: the
     *  extents live as long as n. */
    void (*unmap)(hpc_nodes *n, hpc_ino ino);
    /** Value of xattr `name` into *value (g_free it). */
    int (*getxattr)(hpc_nodes *n, hpc_ino ino, const char *name, void **value, size_t *len);
    /** NUL-separated xattr names into out. */
    int (*listxattr)(hpc_nodes *n, hpc_ino ino, GString *out);
    /** Where the stored bytes of array ino lie, for references
     *  (hpc_container_chunks); HPC_E_NOTSUP when there are none. */
    int (*chunks)(hpc_nodes *n, hpc_ino ino, GString *out);
    /** HPC_OK, or HPC_E_CHANGED once a source that ino's bytes come from
     *  changed since it was opened (a container: any of its sources).  A
     *  run directory then reopens that container on its next use. */
    int (*sources_unchanged)(hpc_nodes *n, hpc_ino ino);
    /** The same for the sources of extents a map of ino gave, after they
     *  were read (a splice): called before unmap. */
    int (*extents_unchanged)(hpc_nodes *n, hpc_ino ino, const hpc_extent *ext,
                             unsigned count);
    /** What reads ino for as long as it is held: *src and ino's id there
     *  (*inner), until release(n, *src).  Calls to *src on *inner are
     *  what n's on ino would be, and *src stays open while held even when
     *  n closes what it came from (a run directory's least recently used
     *  container: the open file keeps reading the container it opened).
     *  NULL: n itself, *inner = ino, nothing to release. */
    int (*hold)(hpc_nodes *n, hpc_ino ino, hpc_nodes **src, hpc_ino *inner);
    /** Let go of a *src that hold gave. */
    void (*release)(hpc_nodes *n, hpc_nodes *src);
    /** The reader's name ("sion", "hdf5", ...; "directory"). */
    const char *(*format_name)(hpc_nodes *n);
    /** How the kernel may cache node ino (hpc_node_meta). */
    void (*meta)(hpc_nodes *n, hpc_ino ino, hpc_node_meta *meta);
    /** Bytes of all sources as of open (statfs). */
    uint64_t (*source_bytes)(hpc_nodes *n);
    /** Block size for st_blksize and statfs. */
    uint32_t (*block_size)(hpc_nodes *n);
    /** Close and free n, and what it wraps. */
    void (*close)(hpc_nodes *n);
} hpc_nodes_ops;

/** The head of every implementation's object. */
struct hpc_nodes {
    const hpc_nodes_ops *ops;
};

/** Close n (NULL: nothing). */
static inline void hpc_nodes_close(hpc_nodes *n)
{
    if (n)
        n->ops->close(n);
}

/** n's unmap of ino, when it has one. */
static inline void hpc_nodes_unmap(hpc_nodes *n, hpc_ino ino)
{
    if (n->ops->unmap)
        n->ops->unmap(n, ino);
}

/** n's hold of ino (see hold); pair with hpc_nodes_release. */
static inline int hpc_nodes_hold(hpc_nodes *n, hpc_ino ino, hpc_nodes **src, hpc_ino *inner)
{
    if (n->ops->hold)
        return n->ops->hold(n, ino, src, inner);
    *src = n;
    *inner = ino;
    return HPC_OK;
}

/** Let go of src, held from n (src n itself: nothing). */
static inline void hpc_nodes_release(hpc_nodes *n, hpc_nodes *src)
{
    if (src != n && n->ops->release)
        n->ops->release(n, src);
}

#endif
