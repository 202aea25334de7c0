/* hpc_tree.h - an in-memory tree for formats whose trees are small.
 *
 * Formats with at most a few hundred thousand nodes (FTI, HDF5, distributed
 * HDF) build their whole tree in open() and let the core answer lookup,
 * getattr, readdir, readlink and xattrs from it; they then implement only
 * read (or map).  Formats with millions of entries (SION, GSD) compute
 * their nodes instead.  A tree is immutable once open() returns.
 *
 * Inode numbers: the root is HPC_INO_ROOT, other nodes HPC_INO_FIRST + n.
 */
#ifndef HPC_TREE_H
#define HPC_TREE_H

#include "hpc_error.h"
#include "hpc_node.h"

typedef struct hpc_tree hpc_tree;

/** A new tree holding only the root directory. */
hpc_tree *hpc_tree_new(void);

/** Free the tree. */
void hpc_tree_free(hpc_tree *t);

/**
 * Add a node named `name` (no '/') under directory parent.  data is the
 * format's own value (e.g. an index into its arrays).  *ino receives the
 * new node's id.  HPC_E_INVAL if the name exists or parent is no directory.
 */
int hpc_tree_add(hpc_tree *t, hpc_ino parent, const char *name, uint32_t mode,
                 uint64_t size, uint64_t data, hpc_ino *ino);

/** Like hpc_tree_add for a '/'-separated path below parent, creating the
 *  missing directories on the way. */
int hpc_tree_add_path(hpc_tree *t, hpc_ino parent, const char *path, uint32_t mode,
                      uint64_t size, uint64_t data, hpc_ino *ino);

/** Enter an existing node under another name (a hard link). */
int hpc_tree_link(hpc_tree *t, hpc_ino parent, const char *name, hpc_ino target);

/** Set a symlink node's target. */
int hpc_tree_set_symlink(hpc_tree *t, hpc_ino ino, const char *target);

/** Attach an extended attribute (copied). */
int hpc_tree_add_xattr(hpc_tree *t, hpc_ino ino, const char *name,
                       const void *value, size_t len);

/** Change a node's size (while building). */
int hpc_tree_set_size(hpc_tree *t, hpc_ino ino, uint64_t size);

/** The format's data of a node; HPC_E_NOENT for unknown ids. */
int hpc_tree_data(const hpc_tree *t, hpc_ino ino, uint64_t *data);

/** Number of nodes, root included. */
uint64_t hpc_tree_count(const hpc_tree *t);

int hpc_tree_lookup(const hpc_tree *t, hpc_ino parent, const char *name, hpc_stat *st);
int hpc_tree_getattr(const hpc_tree *t, hpc_ino ino, hpc_stat *st);
int hpc_tree_readdir(const hpc_tree *t, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx);
int hpc_tree_readlink(const hpc_tree *t, hpc_ino ino, char **target);
int hpc_tree_xattrs(const hpc_tree *t, hpc_ino ino, hpc_xattr_fn fn, void *ctx);

#endif
