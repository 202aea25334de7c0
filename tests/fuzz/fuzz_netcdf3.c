/* fuzz_netcdf3.c - libFuzzer harness of the netCDF-3 reader. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hpc_fuzz_container("netcdf3", data, size);
}
