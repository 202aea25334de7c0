/* hpc_npy.h - NPY headers for arrays the readers serve raw.
 *
 * A ".npy" view of an array file is a small header followed by exactly the
 * bytes of the raw file.  The header is the one numpy's np.save writes for
 * the same dtype and shape (format 1.0, or 2.0/3.0 where 1.0 cannot hold
 * it), padded as numpy pads it, so np.load and np.load(mmap_mode='r') accept
 * it and the body starts at a 64-byte aligned offset.
 */
#ifndef HPC_NPY_H
#define HPC_NPY_H

#include <glib.h>
#include <stdint.h>

/**
 * Append to out the NPY header of an array with the given user.dtype and
 * user.shape xattr values: dtype is a numpy type string ("<f8", "|S4") or
 * a Python literal numpy.dtype() accepts for a structured type (a list of
 * fields, or a dict of names, formats, offsets and itemsize), written as
 * numpy's dtype.descr;
 * shape is "" for a scalar, else "N[,M...]" in decimal.
 * Returns 0, or HPC_E_INVAL with *err set when either value is malformed.
 */
int hpc_npy_header(const char *dtype, const char *shape, GString *out, GError **err);

/**
 * The size in bytes of one element of dtype (a user.dtype value as above,
 * or a dict literal of names, formats, offsets and itemsize).  HPC_E_INVAL
 * when it cannot be told.
 */
int hpc_npy_itemsize(const char *dtype, uint64_t *size);

#endif
