/* fuzz_sion.c - libFuzzer harness of the SIONlib reader. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hpc_fuzz_container("sion", data, size);
}
