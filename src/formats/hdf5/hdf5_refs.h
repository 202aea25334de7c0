/* hdf5_refs.h - where an HDF5 dataset's stored bytes lie, for references. */
#ifndef HDF5_REFS_H
#define HDF5_REFS_H

#include <glib.h>
#include <hdf5.h>

#include "hdf5_index.h"
#include "hpc_error.h"

/** Allocated chunks of a dataset described at most. */
#define HPC_H5REFS_MAX_CHUNKS (64u << 20)

/** Append the text hpc_format.chunks answers for open dataset did (the
 *  line format is described in hdf5_refs.c); ix: its chunk index as the
 *  reader read it (hdf5_index.h), or NULL: libhdf5 lists the chunks. */
int hpc_h5refs_describe(hid_t did, const hpc_h5idx *ix, GString *out);

/** Append an "attr" line for each attribute of object oid that netCDF-4
 *  shows (its name and value as JSON, hdf5_ncattr.c), and for a dataset
 *  (vtype its type, else -1) an "ncfill HEX" line for a _FillValue of its
 *  type.  types: native types of the file's committed types (enums of
 *  those are netCDF's), or NULL.  Attributes larger than limit bytes are
 *  left out. */
/** Elements and bytes of variable-length strings written as "vs" lines
 *  at most. */
#define HPC_H5REFS_VLEN_MAX (16u << 20)

/** A "vs HEX" line per element of dataset did (nelem of them) of
 *  variable-length strings: none when they are too many or too large. */
int hpc_h5refs_vstrings(hid_t did, uint64_t nelem, GString *o);

/** The same of object references from the mount's text of them (size
 *  bytes: a target path per element, empty for a null reference, each
 *  ended with eol, '\n' or NUL: docs/hdf5.md); none unless it holds
 *  nelem. */
void hpc_h5refs_vpaths(const char *text, uint64_t size, uint64_t nelem, char eol, GString *o);

int hpc_h5refs_attrs(hid_t oid, hid_t vtype, uint64_t limit, const GArray *types, GString *out);

#endif
