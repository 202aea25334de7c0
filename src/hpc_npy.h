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

/**
 * Append to out the NPY header of an array with the given user.dtype and
 * user.shape xattr values: dtype is a numpy type string ("<f8", "|S4") or
 * the Python literal of a structured type's descr ("[('a', '<i4'), ...]");
 * shape is "" for a scalar, else "N[,M...]" in decimal.
 * Returns 0, or HPC_E_INVAL with *err set when either value is malformed.
 */
int hpc_npy_header(const char *dtype, const char *shape, GString *out, GError **err);

#endif
