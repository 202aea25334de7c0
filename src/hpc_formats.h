/* hpc_formats.h - the format readers, and what every reader includes. */
#ifndef HPC_FORMATS_H
#define HPC_FORMATS_H

#include "hpc_container.h"
#include "hpc_tree.h"

extern const hpc_format hpc_format_sion;
extern const hpc_format hpc_format_gsd;
extern const hpc_format hpc_format_fti;
extern const hpc_format hpc_format_hdf5;
extern const hpc_format hpc_format_dhdf;

/** 0 for the stand-in of a reader this build leaves out (it recognises
 *  the format's magic and refuses to open: "HDF5 support not built"). */
int hpc_format_built(const hpc_format *f);

/** Append "formats: sion gsd ..." and, if any, " (not built: hdf5 ...)":
 *  the line front ends print for --version. */
void hpc_formats_describe(GString *out);

#endif
