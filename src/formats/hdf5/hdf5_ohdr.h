/* hdf5_ohdr.h - what a group listing learns from an object header read
 * without libhdf5: the object's type and link count, for a dataset its
 * dataspace, the class and size of its file type, and which of a few
 * attribute names the header holds (what the netCDF-4 names need).
 *
 * Listing a group used to ask libhdf5 for each object (H5Gget_objinfo: two
 * name lookups and a header load through its metadata cache) and to open
 * each dataset for its dataspace and type size (H5Dopen2), which made a
 * find over 10^5 datasets slower than h5ls -r.  The same facts are a few
 * bytes of the object header, read here from the file.  The rules are
 * libhdf5's (1.10): its object type from the messages present (a symbol
 * table or link info message: group; else datatype and dataspace:
 * dataset; else datatype: committed datatype), the link count from the
 * version 1 prefix or the reference count message, the checksums of
 * version 2 headers.  Anything this reader is not sure of (a message type
 * or flag it does not know, a shared dataspace, a checksum that fails, a
 * chunk larger than HPC_H5OHDR_MAX_CHUNK, more than HPC_H5OHDR_MAX_CHUNKS
 * chunks, a field out of range) is HPC_E_NOTSUP: the caller asks libhdf5,
 * whose answer, damaged or not, stays the one served.  No libhdf5 call. */
#ifndef HDF5_OHDR_H
#define HDF5_OHDR_H

#include <stddef.h>
#include <stdint.h>

#define HPC_H5OHDR_MAX_RANK 32          /* H5S_MAX_RANK */
#define HPC_H5OHDR_MAX_CHUNK (64u << 10)
#define HPC_H5OHDR_MAX_CHUNKS 64

/** The object kinds of libhdf5's H5O_type_t that a header can be. */
enum { HPC_H5OBJ_GROUP = 1, HPC_H5OBJ_DATASET, HPC_H5OBJ_DATATYPE };

typedef struct hpc_h5ohdr {
    int kind;                           /* HPC_H5OBJ_* */
    uint32_t nlink;                     /* hard links to the object */
    int rank;                           /* dataset: -1 scalar, -2 null, else dims */
    uint64_t dims[HPC_H5OHDR_MAX_RANK];
    uint32_t tsize;                     /* dataset: its type's bytes, 0: not known here */
    int seq;                            /* dataset: a variable-length sequence (not a
                                           string) 1, other 0, not known here (a
                                           committed type, a compound or an array,
                                           which may hold one) -1 */
    uint32_t unlim;                     /* dataset: bit i, axis i is unlimited */
    int tclass;                         /* dataset: H5Tget_class of its type (a
                                           variable-length string is a string),
                                           -1 for a committed type */
    uint32_t attrs;                     /* bit i: an attribute named the file's
                                           attr_names[i] */
    int attrs_hidden;                   /* attributes whose names are not in the
                                           header (dense or shared storage) */
    int cindex;                         /* dataset: its chunk index type (a version
                                           4 chunked layout: H5D_chunk_index_t, 1
                                           single .. 5 v2 B-tree), 0 other */
    uint64_t cindex_addr;               /* ... the index's address (relative) */
    unsigned clayout_rank;              /* ... the layout's dims: the chunk's, then
                                           its element's size in the file */
    uint64_t clayout_dims[HPC_H5OHDR_MAX_RANK + 1];
} hpc_h5ohdr;

/** The file's addressing: base address (the superblock's offset) and the
 *  sizes of offsets and lengths (superblock fields, 2..8 bytes); the
 *  attribute names hpc_h5ohdr.attrs looks for (NULL-terminated, at most
 *  32; NULL: none). */
typedef struct hpc_h5ohdr_file {
    uint64_t base;
    unsigned sizeof_addr, sizeof_size;
    const char *const *attr_names;
} hpc_h5ohdr_file;

/**
 * Give *p the len bytes at file offset off (valid until the next call);
 * HPC_E_CORRUPT when they are not in the file, or another error code.
 */
typedef int (*hpc_h5ohdr_read_fn)(void *ctx, uint64_t off, size_t len, const uint8_t **p);

/**
 * Read the object header at address addr (relative to f->base) with rd.
 * HPC_OK and *out filled, HPC_E_NOTSUP when libhdf5 must say, or rd's
 * error.
 */
int hpc_h5ohdr_read(const hpc_h5ohdr_file *f, uint64_t addr, hpc_h5ohdr_read_fn rd, void *ctx,
                    hpc_h5ohdr *out);

/**
 * Whether a dataset of rank dims (rank <= 0: not a simple dataspace) of
 * elements of esize bytes holds more than the largest file (2^63 - 1).
 * The dimensions are taken in order and a zero ends the product, as the
 * listing always did.
 */
int hpc_h5_over_file_size(uint64_t esize, int rank, const uint64_t *dims);

/** libhdf5's metadata checksum (Bob Jenkins' lookup3 hashlittle, initval 0). */
uint32_t hpc_h5_checksum(const uint8_t *p, size_t len);

#endif
