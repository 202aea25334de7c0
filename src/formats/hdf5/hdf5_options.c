/* hdf5_options.c - the HDF5 reader's -o options and their values. */
#include "hdf5_options.h"

const hpc_option_def hpc_hdf5_options[] = {
    [HDF5_OPT_CACHE] = { "h5cache", "SIZE", "HDF5: chunk caches of open datasets in all\n"
                         "(default " G_STRINGIFY(HDF5_DEFAULT_CACHE_MB) "M)",
      HPC_OPT_SIZE, 0, 0, 1u << 20, 0, NULL, HPC_OPT_TUNING },
    [HDF5_OPT_HANDLES] = { "h5handles", "N", "HDF5: datasets open at once (default "
                           G_STRINGIFY(HDF5_DEFAULT_HANDLES) ")",
      HPC_OPT_COUNT, 0, 0, 1, 1000000, NULL, HPC_OPT_TUNING },
    [HDF5_OPT_END] = { NULL, NULL, NULL, HPC_OPT_FLAG, 0, 0, 0, 0, NULL, HPC_OPT_BASIC },
};

uint64_t hpc_hdf5_opt_cache(const hpc_options *opts)
{
    uint64_t n = hpc_options_number(opts, &hpc_hdf5_options[HDF5_OPT_CACHE]);
    return n ? n : (uint64_t)HDF5_DEFAULT_CACHE_MB << 20;
}

uint32_t hpc_hdf5_opt_handles(const hpc_options *opts)
{
    uint64_t n = hpc_options_number(opts, &hpc_hdf5_options[HDF5_OPT_HANDLES]);
    return n ? (uint32_t)n : HDF5_DEFAULT_HANDLES;    /* at most 10^6: the row's bound */
}
