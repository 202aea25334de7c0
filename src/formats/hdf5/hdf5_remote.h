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

/* The requests the daemon's side sends to the helper (hpc_format.h's
 * reader requests, answered by hpc_format_hdf5.request): a dataset's
 * chunk plan; where chunks a.. (at most b of them) are stored. */
enum { H5_RQ_CHUNK_PLAN = HPC_RQ_READER, H5_RQ_CHUNK_WHERE };

/** The reader's part in the daemon (hpc_format.h), the chunk state of one
 *  container: reads decode chunks here, asking the helper for plans and
 *  places; .info says how many were decoded here, came from the cache,
 *  were left to the helper. */
extern const hpc_remote_side hpc_h5remote_side;

#endif
