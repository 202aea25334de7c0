/* hpc_formats.c - the table of format readers, in probe order.
 * Each reader's fragment under mk/ defines HPC_WITH_<FORMAT>. */
#include "config.h"
#include "hpc_formats.h"

const hpc_format *const hpc_formats[] = {
    &hpc_format_sion,
#ifdef HPC_WITH_GSD
    &hpc_format_gsd,
#endif
#ifdef HPC_WITH_FTI
    &hpc_format_fti,
#endif
#ifdef HPC_WITH_HDF5
    &hpc_format_hdf5,
#endif
#ifdef HPC_WITH_DHDF
    &hpc_format_dhdf,
#endif
    NULL,
};
