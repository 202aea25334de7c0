/* hdf5_chunk.h - chunks of HDF5 datasets decoded by the daemon's threads.
 *
 * For a chunked dataset whose filters are only shuffle, deflate, fletcher32
 * and LZF (any of them, in the order the file lists them) and whose file
 * type already is the type served, the reader does not go through H5Dread:
 * libhdf5 finds a chunk and hands over its raw bytes and filter mask
 * (H5Dget_chunk_storage_size, H5Dread_chunk: the index lookup H5Dread
 * itself makes, short calls under its global lock), and the chunk is
 * checked, decompressed (libdeflate or zlib, liblzf) and unshuffled in the
 * calling thread, outside libhdf5's lock.  So FUSE worker threads decode
 * chunks in parallel.  Chunks never written, and any chunk the reader cannot
 * decode with certainty, are read by H5Dread (its answer is h5py's).
 *
 * Decoded chunks are kept in a chunk cache (sharded LRU, bounded in bytes)
 * shared by all datasets of a mount.  A chunk being decoded by one thread
 * is waited for by the others, so that the kernel's parallel read-ahead
 * requests of one chunk decode it once.
 */
#ifndef HDF5_CHUNK_H
#define HDF5_CHUNK_H

#include <hdf5.h>
#include <stdint.h>

#include "fmt_hdf5.h"
#include "hpc_source.h"

/** How to decode the chunks of one dataset (made by hpc_h5chunk_plan_new). */
typedef struct hpc_h5chunk_plan hpc_h5chunk_plan;

/** Decoded chunks of a mount. */
typedef struct hpc_h5chunk_cache hpc_h5chunk_cache;

/** Chunks larger than this go through H5Dread. */
#define HPC_H5CHUNK_MAX_BYTES (64u << 20)

/**
 * Plan the decoding of a chunked dataset (creation properties dcpl, file
 * type ftype, served as mtype of esize bytes, rank 1..HPC_HDF5_MAX_RANK,
 * dimensions dims).  HPC_E_NOTSUP when the dataset must go through H5Dread
 * (not chunked, external storage, a conversion, other filters, chunks over
 * HPC_H5CHUNK_MAX_BYTES).  Calls libhdf5.
 */
int hpc_h5chunk_plan_new(hid_t dcpl, hid_t ftype, hid_t mtype, size_t esize, int rank,
                         const uint64_t *dims, hpc_h5chunk_plan **out);

/** h5py's and PyTables' LZF filter, decoded with liblzf when built with it. */
#define HPC_H5CHUNK_FILTER_LZF 32000

/** Free a plan (NULL is fine). */
void hpc_h5chunk_plan_free(hpc_h5chunk_plan *p);

/** Bytes of one element of the plan's dataset. */
uint64_t hpc_h5chunk_plan_esize(const hpc_h5chunk_plan *p);

/** Bytes of one decoded chunk of the plan. */
uint64_t hpc_h5chunk_plan_chunk_bytes(const hpc_h5chunk_plan *p);

/** A chunk cache of at most capacity bytes of decoded chunks (plus those
 *  being copied from at the moment). */
hpc_h5chunk_cache *hpc_h5chunk_cache_new(uint64_t capacity);

/** Free the cache (no reader may be using it). */
void hpc_h5chunk_cache_free(hpc_h5chunk_cache *cc);

/** Counters: chunks decoded by the reader, chunks served from the cache,
 *  chunks read by libhdf5 (never written, or not decodable with certainty). */
void hpc_h5chunk_cache_stats(hpc_h5chunk_cache *cc, uint64_t *decoded, uint64_t *hits,
                             uint64_t *library);

/**
 * Copy the elements [e0, e1) (C order) of a dataset into buf.  key
 * identifies the dataset in the cache for the life of the mount; did is an
 * open handle of it (libhdf5 finds and reads the raw chunks through it);
 * src the .h5 file (its size bounds the raw chunks).
 * HPC_E_IO with *why (g_free it) for a chunk neither the reader nor
 * H5Dread can read (bad checksum, inflate error, unavailable filter).
 * HPC_OK with *why set: a chunk the reader could not decode was read by
 * libhdf5 (worth a log line).
 */
int hpc_h5chunk_read(hpc_h5chunk_cache *cc, const hpc_h5chunk_plan *p, uint64_t key,
                     hid_t did, const hpc_source *src, uint64_t e0, uint64_t e1, void *buf,
                     char **why);

/** How a reader finds the raw bytes of chunks (hpc_h5chunk_read_io). */
typedef struct hpc_h5chunk_io {
    /** The raw bytes of chunk number `chunk` (first element at off), a
     *  g_malloc'd buffer, and its filter mask; *raw NULL: not stored, or
     *  to be left to the library. */
    int (*raw)(void *ctx, uint64_t chunk, const hsize_t *off, unsigned char **raw,
               size_t *len, unsigned *mask);
    /** The chunk at off read by libhdf5 into out (all of it); NULL: none
     *  here, and hpc_h5chunk_read_io returns HPC_E_NOTSUP instead. */
    int (*library)(void *ctx, const hsize_t *off, unsigned char *out, char **why);
    void *ctx;
} hpc_h5chunk_io;

/** hpc_h5chunk_read with the raw chunks from io.  HPC_E_NOTSUP (*why NULL)
 *  when a chunk needs the library and io has none. */
int hpc_h5chunk_read_io(hpc_h5chunk_cache *cc, const hpc_h5chunk_plan *p, uint64_t key,
                        const hpc_h5chunk_io *io, uint64_t e0, uint64_t e1, void *buf,
                        char **why);

/** The first element of chunk number `chunk` (C order over the chunk grid). */
void hpc_h5chunk_origin(const hpc_h5chunk_plan *p, uint64_t chunk, hsize_t *off);

/** Chunks of the plan's dataset. */
uint64_t hpc_h5chunk_plan_nchunks(const hpc_h5chunk_plan *p);

/** Whether every stored chunk carries a check of its bytes (deflate's
 *  Adler-32 or Fletcher-32): a chunk read from a wrong place fails. */
int hpc_h5chunk_plan_checked(const hpc_h5chunk_plan *p);

/** A plan as the helper process sends it to the daemon (hpc_remote.h). */
typedef struct hpc_h5chunk_wire_plan {
    uint32_t rank, nfilt, raw_edges, pad;
    uint64_t esize, shuffle_size;
    uint64_t dims[HPC_HDF5_MAX_RANK], cdims[HPC_HDF5_MAX_RANK];
    uint32_t filt[8];
} hpc_h5chunk_wire_plan;

/** Where a chunk is stored, as the helper describes it. */
typedef struct hpc_h5chunk_where {
    uint64_t addr, size;       /* in the .h5 file; size 0: not stored here */
    uint32_t mask, pad;
} hpc_h5chunk_where;

/** Pack p for the wire. */
void hpc_h5chunk_plan_pack(const hpc_h5chunk_plan *p, hpc_h5chunk_wire_plan *w);

/** A plan from the wire, checked (HPC_E_IO when inconsistent); it decodes
 *  only (no library reads). */
int hpc_h5chunk_plan_unpack(const hpc_h5chunk_wire_plan *w, hpc_h5chunk_plan **out);

/** HDF5's Fletcher-32 of len bytes (exported for the unit tests). */
uint32_t hpc_h5chunk_fletcher32(const unsigned char *data, size_t len);

/** Undo HDF5's shuffle of n bytes in elements of esize bytes: src to dst. */
void hpc_h5chunk_unshuffle(const unsigned char *src, unsigned char *dst, size_t n, size_t esize);

#endif
