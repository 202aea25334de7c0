/* dhdf_ref.c - the benchmark's reference: libhdf4 alone reads every SDS
 * of the given HDF4 files whole (SDreaddata), as an application that
 * knows the set's layout would, into one buffer reused for every SDS (so
 * that page faults of fresh memory do not count against libhdf4).
 * Prints the bytes read and the seconds. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mfhdf.h>

int main(int argc, char **argv)
{
    struct timespec t0, t1;
    double bytes = 0;
    size_t cap = 64u << 20;
    char *buf = malloc(cap);
    if (!buf)
        return 1;
    for (size_t i = 0; i < cap; i += 4096)
        buf[i] = 1;                    /* fault the pages in before timing */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 1; i < argc; i++) {
        int32 sd = SDstart(argv[i], DFACC_READ), nds, na;
        if (sd == FAIL || SDfileinfo(sd, &nds, &na) == FAIL)
            return 1;
        for (int32 k = 0; k < nds; k++) {
            int32 id = SDselect(sd, k), rank, dims[H4_MAX_VAR_DIMS], nt, nat, start[H4_MAX_VAR_DIMS] = { 0 };
            char name[H4_MAX_NC_NAME + 1];
            SDgetinfo(id, name, &rank, dims, &nt, &nat);
            size_t n = (size_t)DFKNTsize(nt | DFNT_NATIVE);
            for (int32 d = 0; d < rank; d++)
                n *= (size_t)dims[d];
            if (n > cap || SDreaddata(id, start, NULL, dims, buf) == FAIL)
                return 1;
            bytes += (double)n;
            SDendaccess(id);
        }
        SDend(sd);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free(buf);
    printf("%.0f %.3f\n", bytes, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
