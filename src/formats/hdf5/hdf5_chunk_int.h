/* hdf5_chunk_int.h - what hdf5_chunk.c (plans, the cache, reading chunks)
 * and hdf5_filter.c (undoing a chunk's filters) share. */
#ifndef HDF5_CHUNK_INT_H
#define HDF5_CHUNK_INT_H

#include "hdf5_chunk.h"

#define MAX_FILTERS 8

typedef enum { F_SHUFFLE, F_DEFLATE, F_FLETCHER, F_LZF } filt_kind;

struct hpc_h5chunk_plan {
    int rank;
    int full_from;                     /* dims after this one are whole in every chunk */
    uint64_t dims[HPC_HDF5_MAX_RANK];
    uint64_t cdims[HPC_HDF5_MAX_RANK];
    uint64_t nchunk[HPC_HDF5_MAX_RANK]; /* chunks along each dimension */
    size_t esize;
    uint64_t chunk_elems, chunk_bytes;
    unsigned nfilt;
    filt_kind filt[MAX_FILTERS];       /* in the order the writer applied them */
    size_t shuffle_size;
    int raw_edges;                     /* partial edge chunks are stored unfiltered */
    hid_t mtype;                       /* the type served, for chunks libhdf5 reads */
};

/** Decode raw (len bytes, filters with mask bits set were skipped by the
 *  writer) into out (p->chunk_bytes), undoing the filters in the reverse
 *  of the order the file lists them; raw may be overwritten, out holds
 *  garbage after a failure (*why says why). */
int hpc_h5chunk_decode(const hpc_h5chunk_plan *p, unsigned char *raw, size_t len, unsigned mask,
                       unsigned char *out, char **why);

#endif
