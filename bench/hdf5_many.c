/* hdf5_many.c FILE NGROUPS PER_GROUP - write NGROUPS groups of PER_GROUP
 * contiguous datasets of 10 floats each (the C API is ~10x faster than
 * h5py at this), for bench/hdf5_scale.sh's mount of 10^6 datasets. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: hdf5_many FILE NGROUPS PER_GROUP\n");
        return 2;
    }
    long ng = atol(argv[2]), per = atol(argv[3]);
    float v[10];
    hsize_t n = 10;
    for (int i = 0; i < 10; i++)
        v[i] = (float)i;
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t s = H5Screate_simple(1, &n, NULL);
    if (f < 0 || s < 0)
        return 1;
    for (long g = 0; g < ng; g++) {
        char name[32];
        snprintf(name, sizeof name, "g%04ld", g);
        hid_t gid = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        for (long i = 0; i < per && gid >= 0; i++) {
            snprintf(name, sizeof name, "d%06ld", i);
            hid_t d = H5Dcreate2(gid, name, H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (d < 0 || H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
                return 1;
            H5Dclose(d);
        }
        if (gid < 0)
            return 1;
        H5Gclose(gid);
    }
    H5Sclose(s);
    return H5Fclose(f) < 0;
}
