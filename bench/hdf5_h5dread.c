/* hdf5_h5dread.c - hdf5_h5dread FILE DATASET: the reference of
 * bench/hdf5_bench.sh.  One H5Dread of the whole dataset into memory (its
 * file type, so no conversion), in one process; prints the seconds taken
 * and a checksum-ish byte sum so that nothing is optimised away. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: hdf5_h5dread FILE DATASET\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, argv[2], H5P_DEFAULT) : -1;
    if (d < 0)
        return 1;
    hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    size_t n = (size_t)H5Sget_simple_extent_npoints(s) * H5Tget_size(t);
    unsigned char *buf = malloc(n);
    if (!buf || H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i += 4096)
        sum += buf[i];
    printf("%.3f %zu %llu\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, n,
           (unsigned long long)sum);
    free(buf);
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    return 0;
}
