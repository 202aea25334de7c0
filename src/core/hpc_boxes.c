/* hpc_boxes.c - byte ranges of C-order arrays as boxes; see hpc_boxes.h. */
#include "hpc_boxes.h"

#include <string.h>

/* Elements per step of each dimension: stride[rank-1] = 1. */
static void strides_of(unsigned rank, const uint64_t *dims, uint64_t *stride)
{
    stride[rank - 1] = 1;
    for (unsigned d = rank - 1; d > 0; d--)
        stride[d - 1] = stride[d] * dims[d];
}

/* The outermost dimension k of the largest box starting at the element
 * with indices idx when `left` elements remain: every index after k must
 * be 0 (the box takes those dimensions whole) and one step of k must fit. */
static unsigned box_dim(unsigned rank, const uint64_t *idx, const uint64_t *stride,
                        uint64_t left)
{
    unsigned k = 0;
    for (unsigned j = 0; j < rank; j++)
        if (idx[j] != 0)
            k = j;
    while (stride[k] > left)
        k++;
    return k;
}

unsigned hpc_boxes_split(unsigned rank, const uint64_t *dims, uint64_t e0, uint64_t e1,
                         hpc_box *box)
{
    uint64_t stride[HPC_BOXES_MAX_RANK];
    unsigned n = 0;
    if (rank < 1 || rank > HPC_BOXES_MAX_RANK || e0 >= e1)
        return 0;
    strides_of(rank, dims, stride);
    while (e0 < e1) {
        uint64_t idx[HPC_BOXES_MAX_RANK], rest = e0;
        for (unsigned d = 0; d < rank; d++) {
            idx[d] = rest / stride[d];
            rest %= stride[d];
        }
        unsigned k = box_dim(rank, idx, stride, e1 - e0);
        uint64_t m = dims[k] - idx[k];
        if (m > (e1 - e0) / stride[k])
            m = (e1 - e0) / stride[k];
        hpc_box *b = &box[n++];
        for (unsigned d = 0; d < rank; d++) {
            b->start[d] = d <= k ? idx[d] : 0;
            b->count[d] = d < k ? 1 : d == k ? m : dims[d];
        }
        e0 += m * stride[k];
    }
    return n;
}

uint64_t hpc_box_elements(unsigned rank, const uint64_t *count)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < rank; d++)
        n *= count[d];
    return n;
}

/* Linear index (in an array of strides `stride`) of the first element of
 * row `idx` of the box: the box's start plus idx in every dimension but
 * the last. */
static uint64_t row_at(unsigned rank, const uint64_t *stride, const uint64_t *start,
                       const uint64_t *idx)
{
    uint64_t lin = start[rank - 1];
    for (unsigned d = 0; d + 1 < rank; d++)
        lin += (start[d] + idx[d]) * stride[d];
    return lin;
}

/* Next row of a box in C order; 0 after the last. */
static int next_row(unsigned rank, const uint64_t *count, uint64_t *idx)
{
    for (int d = (int)rank - 2; d >= 0; d--) {
        if (++idx[d] < count[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

void hpc_boxes_scatter(unsigned rank, const uint64_t *dims, size_t esize,
                       const uint64_t *start, const uint64_t *count,
                       const void *src, void *dst, uint64_t e0)
{
    uint64_t stride[HPC_BOXES_MAX_RANK], idx[HPC_BOXES_MAX_RANK] = { 0 };
    strides_of(rank, dims, stride);
    size_t row = (size_t)count[rank - 1] * esize;
    const char *s = src;
    if (row == 0 || hpc_box_elements(rank, count) == 0)
        return;
    do {
        memcpy((char *)dst + (row_at(rank, stride, start, idx) - e0) * esize, s, row);
        s += row;
    } while (next_row(rank, count, idx));
}

void hpc_boxes_gather(unsigned rank, const uint64_t *dims, size_t esize,
                      const uint64_t *start, const uint64_t *count,
                      const void *src, void *dst)
{
    uint64_t stride[HPC_BOXES_MAX_RANK], idx[HPC_BOXES_MAX_RANK] = { 0 };
    strides_of(rank, dims, stride);
    size_t row = (size_t)count[rank - 1] * esize;
    char *d = dst;
    if (row == 0 || hpc_box_elements(rank, count) == 0)
        return;
    do {
        memcpy(d, (const char *)src + row_at(rank, stride, start, idx) * esize, row);
        d += row;
    } while (next_row(rank, count, idx));
}
