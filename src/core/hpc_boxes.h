/* hpc_boxes.h - byte ranges of C-order arrays as boxes (hyperslabs).
 *
 * Readers of array formats (HDF5, distributed HDF4) serve an n-dimensional
 * array as one file whose bytes are its elements in C order.  A read of a
 * range of elements [e0, e1) is not a box of the array in general: it is a
 * partial row, then whole rows, then whole planes, ..., then the same down
 * again.  hpc_boxes_split cuts such a range into at most 2*rank-1 boxes
 * that the libraries can read (H5Sselect_hyperslab, SDreaddata's start and
 * edge); scatter and gather move a box's packed elements to and from their
 * places in C order.  Everything here is pure (no I/O, no library call).
 */
#ifndef HPC_BOXES_H
#define HPC_BOXES_H

#include <stddef.h>
#include <stdint.h>

#define HPC_BOXES_MAX_RANK 32
/** Most boxes one range can need (2 * rank - 1). */
#define HPC_BOXES_MAX (2 * HPC_BOXES_MAX_RANK - 1)

/** A box: first index and number of elements in each dimension. */
typedef struct hpc_box {
    uint64_t start[HPC_BOXES_MAX_RANK];
    uint64_t count[HPC_BOXES_MAX_RANK];
} hpc_box;

/**
 * Split elements [e0, e1) of a C-order array of `rank` (1..32) dimensions
 * `dims` (each >= 1; e1 at most their product) into boxes, written to
 * box[] in increasing element order.  Each box is a run of whole
 * sub-blocks: indices before some dimension k fixed, a run in k, every
 * dimension after k whole.  Returns the number of boxes (at most
 * 2*rank-1), 0 when the range is empty or rank is out of range.
 */
unsigned hpc_boxes_split(unsigned rank, const uint64_t *dims, uint64_t e0, uint64_t e1,
                         hpc_box *box);

/**
 * Copy the box (start, count), packed in C order in src (esize bytes per
 * element), to its places in dst, which holds the array's elements from
 * element e0 on.  Every element of the box must lie in what dst holds.
 */
void hpc_boxes_scatter(unsigned rank, const uint64_t *dims, size_t esize,
                       const uint64_t *start, const uint64_t *count,
                       const void *src, void *dst, uint64_t e0);

/**
 * The reverse for a whole array: copy the box (start, count) out of src,
 * which holds all elements of an array of `dims` in C order, packed into
 * dst.
 */
void hpc_boxes_gather(unsigned rank, const uint64_t *dims, size_t esize,
                      const uint64_t *start, const uint64_t *count,
                      const void *src, void *dst);

/** Number of elements of the box (product of count). */
uint64_t hpc_box_elements(unsigned rank, const uint64_t *count);

#endif
