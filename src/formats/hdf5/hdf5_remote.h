/* hdf5_remote.h - the daemon's side of the chunks of an HDF5 container
 * whose libhdf5 runs in the helper process (src/container/hpc_remote.h).
 *
 * The helper describes; the daemon reads and decodes.  For a dataset whose
 * chunks hdf5_chunk.c decodes, the helper sends the plan once (filters,
 * shapes) and, for runs of chunks, where each is stored (file offset,
 * stored size, filter mask, from the index lookup H5Dread makes).  The
 * daemon preads those bytes from its own descriptor of the file (bounded
 * by the file's size), decodes them with hdf5_chunk.c in the calling FUSE
 * thread and keeps them in its chunk cache.  Whatever it cannot decode
 * with certainty (a chunk never written, a place not proven, a decoding
 * that fails, a read not aligned to elements) goes back to the helper's
 * read: the same answer as -o inproc, so as h5py's.
 */
#ifndef HDF5_REMOTE_H
#define HDF5_REMOTE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "hpc_format.h"

/** The daemon's chunk state of one container. */
typedef struct hpc_h5remote hpc_h5remote;

/** A request to the helper (op, node, two arguments): HPC_OK with
 *  *payload (g_free it) of *len bytes, or the error of the helper or of
 *  the reader. */
typedef int (*hpc_h5remote_call)(hpc_container *c, uint32_t op, hpc_ino ino, uint64_t a,
                                 uint64_t b, char **payload, size_t *len);

/** New state with a chunk cache of cache_bytes. */
hpc_h5remote *hpc_h5remote_new(uint64_t cache_bytes);

/** Free it (NULL is fine; no reader may be using it). */
void hpc_h5remote_free(hpc_h5remote *hr);

/**
 * Read len bytes at off of dataset ino of c by decoding its chunks here;
 * call asks the helper for plans and places.  HPC_E_NOTSUP when the helper
 * must read it (the caller then sends the read to the helper).
 */
int hpc_h5remote_read(hpc_h5remote *hr, hpc_container *c, hpc_h5remote_call call, hpc_ino ino,
                      void *buf, size_t len, uint64_t off, size_t *nread);

/** The .info line of the chunks read so far: decoded here, from the
 *  cache, left to the helper. */
void hpc_h5remote_info(hpc_h5remote *hr, GString *out);

#endif
