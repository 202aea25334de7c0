/* fmt_dhdf.h - the chunk-table logic of the distributed HDF reader.
 *
 * Everything here is pure (no HDF4 call, no I/O), so that the unit tests
 * and the fuzz harness can drive it with made-up tables: decoding a chunk
 * table record as VSread returns it, checking the pieces of an array for
 * bounds, overlaps and holes, and mapping a range of elements of the
 * assembled C-order array to the boxes of the pieces it touches.
 * See docs/dhdf-format.md for the convention.
 */
#ifndef FMT_DHDF_H
#define FMT_DHDF_H

#include <stddef.h>
#include <stdint.h>

#define HPC_DHDF_MAX_RANK 32     /* H4_MAX_VAR_DIMS, the seed's [32] */
#define HPC_DHDF_MAX_NAME 255    /* ChunkName bytes shown */

/** A piece: its first element and its size in each dimension. */
typedef struct hpc_dhdf_box {
    uint64_t origin[HPC_DHDF_MAX_RANK];
    uint64_t size[HPC_DHDF_MAX_RANK];
} hpc_dhdf_box;

/** Layout of one chunk table record as VSread packs it (native order):
 *  int32 DHDF_FileId, char ChunkName[name_w], int32 DimSizes[dims_order],
 *  int32 Origins[orig_order]. */
typedef struct hpc_dhdf_layout {
    uint32_t name_w;
    uint32_t dims_order;
    uint32_t orig_order;
} hpc_dhdf_layout;

/** What hpc_dhdf_check_pieces found. */
typedef enum {
    HPC_DHDF_FINE = 0,
    HPC_DHDF_OUTSIDE,       /* piece *a is empty or exceeds the array */
    HPC_DHDF_OVERLAP,       /* pieces *a and *b share elements */
} hpc_dhdf_problem;

/** Bytes of one record of layout l (0 if the orders are out of range). */
size_t hpc_dhdf_record_size(const hpc_dhdf_layout *l);

/** An int32 field of a vdata record (libhdf4 hands them in host order). */
int32_t hpc_dhdf_get_i32(const unsigned char *p);

/** A name usable as one path component. */
int hpc_dhdf_name_ok(const char *s);

/**
 * Decode and check record rec of an array of `rank` dimensions `dims`.
 * Fills *fileid, name (at least HPC_DHDF_MAX_NAME + 1 bytes, NUL-terminated)
 * and *box.  On a bad record returns HPC_E_CORRUPT and sets *field to the
 * offending field's name and why (whylen bytes) to the reason.
 */
int hpc_dhdf_decode_record(const unsigned char *rec, const hpc_dhdf_layout *l,
                           unsigned rank, const uint64_t *dims, int32_t *fileid,
                           char *name, hpc_dhdf_box *box, const char **field,
                           char *why, size_t whylen);

/**
 * Check n pieces of an array: each non-empty and inside dims, no two
 * overlapping.  *holes receives the number of elements no piece covers
 * (valid only when the result is HPC_DHDF_FINE); *a and *b name the pieces
 * of a problem.
 */
hpc_dhdf_problem hpc_dhdf_check_pieces(unsigned rank, const uint64_t *dims,
                                       const hpc_dhdf_box *p, size_t n,
                                       uint64_t *holes, size_t *a, size_t *b);

/** Called for each (piece, box) of a range: start and edge in array
 *  coordinates; non-zero return stops the walk and is returned. */
typedef int (*hpc_dhdf_box_fn)(void *ctx, size_t piece, const uint64_t *start,
                               const uint64_t *edge);

/**
 * Split elements [e0, e1) of the C-order array into at most 2*rank-1 boxes
 * and call fn for every non-empty intersection of such a box with a piece.
 * Returns 0 or fn's first non-zero result.
 */
int hpc_dhdf_map_range(unsigned rank, const uint64_t *dims, const hpc_dhdf_box *p,
                       size_t n, uint64_t e0, uint64_t e1, hpc_dhdf_box_fn fn,
                       void *ctx);

/**
 * Copy the box (start, edge), packed in C order in src (esize bytes per
 * element), into dst, which holds the array's elements from e0 on in C
 * order.  Every element of the box must lie in the range dst holds.
 */
void hpc_dhdf_scatter(unsigned rank, const uint64_t *dims, size_t esize,
                      const uint64_t *start, const uint64_t *edge,
                      const void *src, void *dst, uint64_t e0);

#endif
