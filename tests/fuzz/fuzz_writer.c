/* fuzz_writer.c - libFuzzer harness of the SION reader's salvage path (files
 * of killed writers, mounted with -o salvage). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    hpc_options opts;
    hpc_options_init(&opts);
    opts.format = (char *)"sion";
    opts.cache_size = 1 << 20;
    opts.salvage = 1;
    hpc_container *c = NULL;
    GError *err = NULL;
    if (hpc_container_open(path, &opts, &c, &err) == HPC_OK) {
        fuzz_walk w = { .c = c };
        w.stack[0] = HPC_INO_ROOT;
        hpc_container_readdir(c, HPC_INO_ROOT, 0, fuzz_visit, &w);
        hpc_container_close(c);
    }
    g_clear_error(&err);
    close(fd);
    return 0;
}
