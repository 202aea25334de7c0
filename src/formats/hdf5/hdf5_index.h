/* hdf5_index.h - the allocated chunks of a dataset read from its fixed-
 * or extensible-array chunk index without libhdf5.
 *
 * libhdf5 1.10 lists chunks (H5Dget_chunk_info, H5Dget_chunk_info_by_coord)
 * by walking the index from its start up to the chunk asked for, and an
 * array index's walk looks every element up from the array's header
 * (about 1 us each): the references of a dataset of n chunks cost n * n
 * lookups, 11 CPU s for 10000 chunks.  Read here, the index costs one pass.
 * The layouts are those of the HDF5 file format specification ("Fixed
 * Array", "Extensible Array", version 0) as libhdf5 1.10 writes them, every
 * block's checksum checked.  Anything else (another index, a version, a
 * field out of range, a failed checksum) is HPC_E_NOTSUP: the caller asks
 * libhdf5. */
#ifndef HDF5_INDEX_H
#define HDF5_INDEX_H

#include <glib.h>
#include <stdint.h>

#include "hdf5_ohdr.h"
#include "hpc_source.h"

/** One allocated chunk. */
typedef struct hpc_h5idx_chunk {
    uint64_t idx;                  /* its element of the index */
    uint64_t addr, size;           /* where it lies in the file (absolute) */
    uint32_t mask;                 /* filters skipped */
    uint32_t pad;
} hpc_h5idx_chunk;

/** A dataset's chunk index as read. */
typedef struct hpc_h5idx {
    int rank;
    int unlim;                     /* an extensible array's unlimited axis, else -1 */
    uint64_t cdims[HPC_H5OHDR_MAX_RANK];
    uint64_t max_chunks[HPC_H5OHDR_MAX_RANK]; /* chunks along each axis at the
                                                 maximum extent (unlim: unused) */
    GArray *chunks;                /* hpc_h5idx_chunk in the index's order */
} hpc_h5idx;

/**
 * Read the chunk index of the dataset whose header o was read with f, of
 * rank axes with maximum extent maxdims (UINT64_MAX unlimited), from src;
 * at most limit chunks.  HPC_OK and *out (hpc_h5idx_free it), or
 * HPC_E_NOTSUP.
 */
int hpc_h5idx_read(const hpc_h5ohdr_file *f, const hpc_h5ohdr *o, int rank,
                   const uint64_t *maxdims, const hpc_source *src, uint64_t limit,
                   hpc_h5idx **out);

/** The coordinates (in elements) of the first element of index element idx. */
void hpc_h5idx_origin(const hpc_h5idx *ix, uint64_t idx, uint64_t *off);

void hpc_h5idx_free(hpc_h5idx *ix);

#endif
