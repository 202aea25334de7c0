/* hpc_formats.h - the one table of readers (hpc_formats.c): which readers
 * this build has, in probe order, and how the container picks one.  The
 * reader interface itself is hpc_format.h (src/core).
 */
#ifndef HPC_FORMATS_H
#define HPC_FORMATS_H

#include "hpc_format.h"

/** The formats the core knows, in probe order, NULL-terminated. */
extern const hpc_format *const hpc_formats[];

extern const hpc_format hpc_format_sion;
extern const hpc_format hpc_format_gsd;
extern const hpc_format hpc_format_fti;
extern const hpc_format hpc_format_hdf5;
extern const hpc_format hpc_format_dhdf;
extern const hpc_format hpc_format_netcdf3;
/** The HDF5 reader's -o options, which need no libhdf5: the stand-in of a
 *  build without the reader accepts them too. */
extern const hpc_option_def hpc_hdf5_options[];

/** Find a format by name, NULL if unknown. */
const hpc_format *hpc_format_by_name(const char *name);
/** The reader whose probe scores path highest (head: its first len bytes;
 *  len 0 for a directory), or NULL: the one probe of the container and of
 *  a run directory's members. */
const hpc_format *hpc_format_best(const char *path, const unsigned char *head, size_t len);

/** 0 for the stand-in of a reader this build leaves out (it recognises
 *  the format's magic and refuses to open: "HDF5 support not built"). */
int hpc_format_built(const hpc_format *f);

#endif
