/* hpc_refs.h - kerchunk-style references: a zarr v2 hierarchy of a tree,
 * whose chunks are byte ranges of the container's own files.
 *
 * The output is kerchunk's reference format version 1:
 *   {"version": 1, "templates": {"u": "/path/of/a/source"},
 *    "refs": {".zgroup": "{...}", "a/.zarray": "{...}",
 *             "a/0.0": ["{{u}}", offset, length], "b/0": "base64:..."}}
 * which fsspec's "reference" filesystem serves to zarr, xarray and Dask.
 * Directories become groups, nodes with user.dtype and user.shape (and
 * byte streams without them) arrays; what cannot be described is named
 * with the reason in the group's .zattrs ("hpcmount_not_covered").
 * docs/refs.md has the mapping of every format.
 */
#ifndef HPC_REFS_H
#define HPC_REFS_H

#include "hpc_mount.h"

#define HPC_REFS_INLINE_DEFAULT 500u

typedef struct hpc_refs_opts {
    /** Chunks (and computed arrays) of at most this many bytes are written
     *  inline as base64 instead of as a byte range. */
    uint64_t inline_max;
    /** Called after each node of the tree is described (NULL: never),
     *  with the count so far: a front end's progress. */
    void (*progress)(void *ctx, uint64_t nodes);
    void *progress_ctx;
    /** The options the mount was opened with: the files HDF5 external
     *  links lead to are opened with them (NULL: not followed). */
    const hpc_options *mount_opts;
} hpc_refs_opts;

/**
 * Describe the tree under path (a directory, or one array) of m as
 * references, appended to out only when all of it was built.  Arrays that
 * cannot be referenced are listed in .zattrs notes; a read or map that
 * fails (a damaged container) fails the whole call with *err set to one
 * line.  o may be NULL for the defaults.
 */
int hpc_refs_json(hpc_mount *m, const char *path, const hpc_refs_opts *o, GString *out,
                  GError **err);

#endif
