/* hdf5_elem.h - reads of parts of large dataset elements (an array type of
 * 100 MiB per element, say).  libhdf5 reads whole elements only, so a
 * 128 KiB read inside one would convert the whole element each time: the
 * last element read is kept in one slot per mount, so that a sequential
 * read converts every element once and the memory held is one element. */
#ifndef HDF5_ELEM_H
#define HDF5_ELEM_H

#include <stddef.h>
#include <stdint.h>

/** The element slot of a mount. */
typedef struct hpc_h5elem hpc_h5elem;

/** Fill buf with element `elem` of the dataset the read is for. */
typedef int (*hpc_h5elem_fill_fn)(void *ctx, uint64_t elem, void *buf);

/** A new, empty slot. */
hpc_h5elem *hpc_h5elem_new(void);

/** Free the slot (NULL is fine). */
void hpc_h5elem_free(hpc_h5elem *s);

/**
 * Read bytes [off, off+len) of a dataset (key: any number unique to it in
 * the mount) whose elements are esize bytes.  Whole elements inside the
 * range are filled straight into buf; the partial ones at either end go
 * through the slot, which keeps the last one.  Readers take turns on the
 * slot.  Returns HPC_OK, HPC_E_NOMEM, or what fill returned.
 */
int hpc_h5elem_read(hpc_h5elem *s, uint64_t key, size_t esize, uint64_t off, size_t len,
                    void *buf, hpc_h5elem_fill_fn fill, void *ctx);

/** Bytes held by the slot now. */
uint64_t hpc_h5elem_bytes(hpc_h5elem *s);

#endif
