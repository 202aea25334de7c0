/* fuzz_gsd.c - libFuzzer harness of the GSD reader. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hpc_fuzz_container("gsd", data, size);
}
