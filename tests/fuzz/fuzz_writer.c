/* fuzz_writer.c - libFuzzer harness of the SION reader's salvage path (files
 * of killed writers, mounted with -o salvage). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hpc_fuzz_container_with("sion", "salvage", data, size);
}
