/* hpc_cache.h - a thread-safe LRU cache of fixed-size blocks.
 *
 * The cache holds blocks of "spaces": a space is any byte sequence with a
 * stable id, usually a physical file (hpc_source.id) or a decoded object a
 * format produces (an HDF5 dataset, an FTI variable).  Block b of a space
 * covers bytes [b*block_size, (b+1)*block_size); block_size is a multiple
 * of the container's filesystem blocksize, so cached blocks are aligned to
 * the blocks the container was written in.
 *
 * The cache is split into shards, each with its own lock and LRU list; a
 * block's shard is chosen by hashing (space, block), so concurrent readers
 * rarely contend.  Misses are filled outside the lock.
 */
#ifndef HPC_CACHE_H
#define HPC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "hpc_source.h"

typedef struct hpc_cache hpc_cache;

/**
 * Fill buf (block_size bytes) with block `block` of a space.  Set *len to
 * the number of valid bytes (less than block_size only for the last block
 * of a space).  Return 0 or a negative hpc_err.
 */
typedef int (*hpc_cache_fill_fn)(void *ctx, uint64_t block, void *buf, size_t *len);

typedef struct hpc_cache_stats {
    uint64_t hits, misses, evictions;
    uint64_t blocks;          /* blocks held now */
} hpc_cache_stats;

/** A new process-unique space id (never 0). */
uint64_t hpc_cache_space_new(void);

/**
 * Create a cache of at most capacity bytes of blocks of block_size bytes in
 * nshards shards (0: choose).  Returns NULL if block_size is 0.
 */
hpc_cache *hpc_cache_new(uint64_t capacity, uint32_t block_size, unsigned nshards);

/** Free the cache and every block. */
void hpc_cache_free(hpc_cache *cache);

/** The cache's block size in bytes. */
uint32_t hpc_cache_block_size(const hpc_cache *cache);

/**
 * Copy bytes [off, off+len) of space into buf, block by block, calling fill
 * for blocks not in the cache.  A range beyond the valid end of the space's
 * last block fails with HPC_E_CORRUPT.
 */
int hpc_cache_read(hpc_cache *cache, uint64_t space, void *buf, size_t len,
                   uint64_t off, hpc_cache_fill_fn fill, void *ctx);

/** Read [off, off+len) of a source file through the cache (bounds-checked). */
int hpc_cache_read_source(hpc_cache *cache, const hpc_source *src, void *buf,
                          size_t len, uint64_t off);

/**
 * Read [off, off+len) of src through the cache as space `space`, taking the
 * file to be `size` bytes long: a snapshot of a file that grows while
 * mounted keeps its own space and size (hpc_cache_read_source is this with
 * src->id and the source's current size).
 */
int hpc_cache_read_file(hpc_cache *cache, const hpc_source *src, uint64_t space,
                        uint64_t size, void *buf, size_t len, uint64_t off);

/** True when block `block` of space is cached now (for tests). */
int hpc_cache_contains(hpc_cache *cache, uint64_t space, uint64_t block);

/** Drop every block of a space (for data that changed). */
void hpc_cache_drop_space(hpc_cache *cache, uint64_t space);

/** Counters since creation. */
void hpc_cache_get_stats(hpc_cache *cache, hpc_cache_stats *out);

#endif
