/* fmt_hdf5.h - what the HDF5 reader exports besides hpc_format_hdf5: the
 * mapping of a byte range to hyperslab boxes, for its unit tests. */
#ifndef FMT_HDF5_H
#define FMT_HDF5_H

#include <glib.h>
#include <stdint.h>

#include "hpc_boxes.h"
#include "hpc_format.h"

/* libhdf5's H5S_MAX_RANK */
#define HPC_HDF5_MAX_RANK HPC_BOXES_MAX_RANK

/** One box of an array of rank r: start[0..r-1] and count[0..r-1]. */
typedef hpc_box hpc_hdf5_box;

/**
 * Split the elements [e0, e1) (C-order linear indices) of an array of
 * `rank` (1..HPC_HDF5_MAX_RANK) dimensions `dims` into boxes, in increasing
 * linear order, at most 2*rank-1 of them (hpc_boxes_split, shared with the
 * distributed HDF reader).  box must hold 2*rank-1 entries.  Returns the
 * number of boxes (0 when e0 >= e1).
 */
static inline unsigned hpc_hdf5_boxes(int rank, const uint64_t *dims, uint64_t e0,
                                      uint64_t e1, hpc_hdf5_box *box)
{
    return rank < 1 ? 0 : hpc_boxes_split((unsigned)rank, dims, e0, e1, box);
}

#endif
