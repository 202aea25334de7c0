/* fuzz_fti.c - libFuzzer harness of the FTI-FF reader.
 *
 * An input starting with 'D' is a checkpoint directory: records of
 * {u8 name code, u16 length (little-endian), bytes} become the files of
 * one directory (Rank, Pcof, RSed, dCP, Topology.fti, config.fti; see
 * fuzz_name), so that partner-copy and
 * Reed-Solomon recovery are fuzzed too.  Any other input is one .fti file.
 */
#include "fuzz_common.h"

#include <dirent.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir[256];

/* File name of record byte k: checkpoint (k >> 4) + 1, kind (k >> 2) & 3,
 * rank k & 3. */
static void fuzz_name(unsigned k, char *buf, size_t len)
{
    unsigned ck = (k >> 4) + 1, kind = (k >> 2) & 3, r = k & 3;
    static const char *const kinds[] = { "Rank", "Pcof", "RSed" };
    static const char *const special[] = { "dCPFile-Rank0.fti", "Topology.fti", "config.fti" };
    if (kind < 3)
        snprintf(buf, len, "%s/Ckpt%u-%s%u.fti", fuzz_dir, ck, kinds[kind], r);
    else if (r < 3)
        snprintf(buf, len, "%s/%s", fuzz_dir, special[r]);
    else
        snprintf(buf, len, "%s/Ckpt%u-Rank4.fti", fuzz_dir, ck);
}

static void clear_dir(void)
{
    DIR *d = opendir(fuzz_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[512];
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", fuzz_dir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
}

static void fuzz_directory(const uint8_t *d, size_t n)
{
    if (!fuzz_dir[0]) {
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/hpcfuzz-fti-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(fuzz_dir)) {
            fuzz_dir[0] = '\0';
            return;
        }
    }
    clear_dir();
    for (size_t p = 0; p + 3 <= n;) {
        char path[512];
        fuzz_name(d[p], path, sizeof path);
        size_t len = (size_t)d[p + 1] | ((size_t)d[p + 2] << 8);
        p += 3;
        len = MIN(len, n - p);
        FILE *f = fopen(path, "wb");
        if (f) {
            if (len)
                fwrite(d + p, 1, len, f);
            fclose(f);
        }
        p += len;
    }
    hpc_options opts;
    hpc_options_init(&opts);
    opts.format = (char *)"fti";
    opts.cache_size = 1 << 20;
    opts.inproc = 1;
    hpc_container *c = NULL;
    GError *err = NULL;
    if (hpc_container_open(fuzz_dir, &opts, &c, &err) == HPC_OK) {
        fuzz_walk w = { .c = c };
        w.stack[0] = HPC_INO_ROOT;
        hpc_container_readdir(c, HPC_INO_ROOT, 0, fuzz_visit, &w);
        hpc_container_close(c);
    }
    g_clear_error(&err);
    clear_dir();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0 && data[0] == 'D') {
        fuzz_directory(data + 1, size - 1);
        return 0;
    }
    return hpc_fuzz_container("fti", data, size);
}
