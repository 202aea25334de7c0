/* hpc_formats.c - the table of format readers, in probe order.  Readers
 * built on optional libraries join when configure found them. */
#include "config.h"
#include "hpc_formats.h"

const hpc_format *const hpc_formats[] = {
    &hpc_format_sion,
    &hpc_format_gsd,
    &hpc_format_fti,
#ifdef HAVE_HDF5
    &hpc_format_hdf5,
#endif
#ifdef HAVE_HDF4
    &hpc_format_dhdf,
#endif
    NULL,
};
