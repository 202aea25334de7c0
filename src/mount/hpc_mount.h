/* hpc_mount.h - what the front ends (hpcmount, hpcdump) talk to: a tree of
 * containers.
 *
 * SOURCE is either one container (a file, or a directory a reader claims,
 * such as an FTI checkpoint tree) or a run directory (hpc_rundir.h).  One
 * container is served as it is: its node ids are the container's own.
 * Either is one implementation of the node interface (hpc_nodes.h), the
 * npy view over each container when -o npy; the calls below are that
 * stack's.
 */
#ifndef HPC_MOUNT_H
#define HPC_MOUNT_H

#include "hpc_container.h"

typedef struct hpc_mount hpc_mount;

/**
 * Open SOURCE with opts: one container, or a run directory when SOURCE is
 * a directory no reader claims.  SOURCE is made absolute (not resolved):
 * .info and messages name it so.  On failure *err holds the one-line reason.
 */
int hpc_mount_open(const char *source, const hpc_options *opts, hpc_mount **out,
                   GError **err);

/** Close every container and free the mount. */
void hpc_mount_close(hpc_mount *m);

/** TRUE when SOURCE was a run directory. */
gboolean hpc_mount_is_directory(const hpc_mount *m);

/** SOURCE as opened (absolute). */
const char *hpc_mount_source(const hpc_mount *m);

/* The same calls as hpc_container's, on the whole tree. */
int hpc_mount_lookup(hpc_mount *m, hpc_ino parent, const char *name, hpc_stat *st);
int hpc_mount_getattr(hpc_mount *m, hpc_ino ino, hpc_stat *st);
int hpc_mount_readdir(hpc_mount *m, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx);
int hpc_mount_readlink(hpc_mount *m, hpc_ino ino, char **target);
int hpc_mount_read(hpc_mount *m, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread);
/** Extents for zero-copy reads, valid until hpc_mount_unmap(m, ino). */
int hpc_mount_map(hpc_mount *m, hpc_ino ino, uint64_t off, uint64_t len,
                  hpc_extent *ext, unsigned max, unsigned *n);
/** The extents of a successful hpc_mount_map are no longer used. */
void hpc_mount_unmap(hpc_mount *m, hpc_ino ino);
/** HPC_OK when no source of the container holding ino changed (a run
 *  directory then reopens that container on its next use). */
int hpc_mount_sources_unchanged(hpc_mount *m, hpc_ino ino);
/** What an open file of ino reads, and ino's id there, kept open until
 *  hpc_mount_release (hpc_nodes.h, hold). */
int hpc_mount_hold(hpc_mount *m, hpc_ino ino, hpc_nodes **src, hpc_ino *inner);
void hpc_mount_release(hpc_mount *m, hpc_nodes *src);
/** For statfs: the bytes of the sources (a run directory: of the files
 *  under it as statvfs tells) and the block size to report. */
void hpc_mount_statfs(hpc_mount *m, uint64_t *bytes, uint32_t *bsize);
int hpc_mount_getxattr(hpc_mount *m, hpc_ino ino, const char *name, void **value, size_t *len);
int hpc_mount_listxattr(hpc_mount *m, hpc_ino ino, GString *out);
int hpc_mount_resolve(hpc_mount *m, const char *path, hpc_stat *st);
/** path resolved as the kernel does on the mount: symlinks in every
 *  component followed (the last one too when follow_last), relative targets
 *  from the link's directory, absolute ones from the root.  ".." above the
 *  root is HPC_E_NOENT (it leaves the tree, e.g. an external link of a file
 *  alone), more than HPC_MAX_LINKS links HPC_E_LOOP.  *real (when real is
 *  not NULL; g_free it): the node's own path, "/" for the root. */
int hpc_mount_resolve_follow(hpc_mount *m, const char *path, gboolean follow_last, hpc_stat *st,
                             char **real);
/** hpc_container_chunks of the container holding ino. */
int hpc_mount_chunks(hpc_mount *m, hpc_ino ino, GString *out);

/** How the kernel may cache node ino (hpc_node_meta, hpc_nodes.h). */
void hpc_mount_node_meta(hpc_mount *m, hpc_ino ino, hpc_node_meta *meta);

#endif
