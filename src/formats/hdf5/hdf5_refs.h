/* hdf5_refs.h - where an HDF5 dataset's stored bytes lie, for references. */
#ifndef HDF5_REFS_H
#define HDF5_REFS_H

#include <glib.h>
#include <hdf5.h>

#include "hpc_error.h"

/** Append the text hpc_format.chunks answers for open dataset did (the
 *  line format is described in hdf5_refs.c). */
int hpc_h5refs_describe(hid_t did, GString *out);

/** Append an "attr" line for each attribute of object oid that netCDF-4
 *  shows (its name and value as JSON, hdf5_ncattr.c), and for a dataset
 *  (vtype its type, else -1) an "ncfill HEX" line for a _FillValue of its
 *  type.  types: native types of the file's committed types (enums of
 *  those are netCDF's), or NULL.  Attributes larger than limit bytes are
 *  left out. */
int hpc_h5refs_attrs(hid_t oid, hid_t vtype, uint64_t limit, const GArray *types, GString *out);

#endif
