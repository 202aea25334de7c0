/* fmt_hdf5.h - what the HDF5 reader exports besides hpc_format_hdf5: the
 * mapping of a byte range to hyperslab boxes, for its unit tests. */
#ifndef FMT_HDF5_H
#define FMT_HDF5_H

#include <stdint.h>

/* libhdf5's H5S_MAX_RANK */
#define HPC_HDF5_MAX_RANK 32

/** One box of an array of rank r: start[0..r-1] and count[0..r-1]. */
typedef struct hpc_hdf5_box {
    uint64_t start[HPC_HDF5_MAX_RANK];
    uint64_t count[HPC_HDF5_MAX_RANK];
} hpc_hdf5_box;

/**
 * Split the elements [e0, e1) (C-order linear indices) of an array of
 * `rank` (1..HPC_HDF5_MAX_RANK) dimensions `dims` into boxes, in increasing
 * linear order, at most 2*rank-1 of them.  box must hold 2*rank-1 entries.
 * Returns the number of boxes (0 when e0 >= e1).  The caller guarantees
 * e1 <= the product of dims and that no dimension is 0.
 */
unsigned hpc_hdf5_boxes(int rank, const uint64_t *dims, uint64_t e0, uint64_t e1,
                        hpc_hdf5_box *box);

#endif
