/* hdf5_refs.h - where an HDF5 dataset's stored bytes lie, for references. */
#ifndef HDF5_REFS_H
#define HDF5_REFS_H

#include <glib.h>
#include <hdf5.h>

#include "hpc_error.h"

/** Append the text hpc_format.chunks answers for open dataset did (the
 *  line format is described in hdf5_refs.c). */
int hpc_h5refs_describe(hid_t did, GString *out);

#endif
