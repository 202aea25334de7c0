/* hdf5_options.h - the HDF5 reader's -o options (hpc_format.options) and
 * their defaults.  Below everything of the reader and free of libhdf5, so
 * that a build without the reader still accepts them (hpc_formats.c).
 */
#ifndef HDF5_OPTIONS_H
#define HDF5_OPTIONS_H

#include "hpc_options.h"

#define HDF5_DEFAULT_CACHE_MB 256       /* -o h5cache */
#define HDF5_DEFAULT_HANDLES 256        /* -o h5handles */

/** The rows of hpc_hdf5_options, the reader's hpc_format.options. */
enum { HDF5_OPT_CACHE, HDF5_OPT_HANDLES, HDF5_OPT_END };
extern const hpc_option_def hpc_hdf5_options[];

/** -o h5cache: bytes of libhdf5's chunk caches of the open datasets in all. */
uint64_t hpc_hdf5_opt_cache(const hpc_options *opts);
/** -o h5handles: datasets open at once. */
uint32_t hpc_hdf5_opt_handles(const hpc_options *opts);

#endif
