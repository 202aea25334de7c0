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

#endif
