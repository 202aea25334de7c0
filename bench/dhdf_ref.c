/* dhdf_ref.c - the benchmark's reference: libhdf4 alone reads every SDS
 * of the given HDF4 files whole (SDreaddata), as an application that
 * knows the set's layout would.  Prints the bytes read and the seconds. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mfhdf.h>

int main(int argc, char **argv)
{
    struct timespec t0, t1;
    double bytes = 0;
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
            void *buf = malloc(n);
            if (SDreaddata(id, start, NULL, dims, buf) == FAIL)
                return 1;
            bytes += (double)n;
            free(buf);
            SDendaccess(id);
        }
        SDend(sd);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.0f %.3f\n", bytes, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
