/* pnetcdf_gen.c FILE - a CDF-5 file written by PnetCDF from every MPI rank
 * (tests/mount/netcdf3_pnetcdf.sh runs it on 3): each rank writes its 4
 * columns of every variable, collectively, record by record.
 *   value(v, r, i) = 1000 * v + 100 * r + i for column i of record r
 * (r = 0 for fixed variables) in the variable's type. */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define COLS 4
#define RECS 5

static void ok(int rc, const char *what)
{
    if (rc != NC_NOERR) {
        fprintf(stderr, "pnetcdf_gen: %s: %s\n", what, ncmpi_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    int rank, size, nc, dt, dn, dims[2], v[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2)
        return 2;
    ok(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc), "create");
    ok(ncmpi_def_dim(nc, "time", NC_UNLIMITED, &dt), "def_dim time");
    ok(ncmpi_def_dim(nc, "col", (MPI_Offset)size * COLS, &dn), "def_dim col");
    dims[0] = dt;
    dims[1] = dn;
    ok(ncmpi_def_var(nc, "fixed_i64", NC_INT64, 1, &dn, &v[0]), "def_var");
    ok(ncmpi_def_var(nc, "rec_u16", NC_USHORT, 2, dims, &v[1]), "def_var");
    ok(ncmpi_def_var(nc, "rec_f8", NC_DOUBLE, 2, dims, &v[2]), "def_var");
    ok(ncmpi_def_var(nc, "rec_u8", NC_UBYTE, 2, dims, &v[3]), "def_var");
    ok(ncmpi_put_att_text(nc, NC_GLOBAL, "writer", 7, "PnetCDF"), "put_att");
    ok(ncmpi_put_att_int(nc, NC_GLOBAL, "ranks", NC_INT, 1, &size), "put_att");
    ok(ncmpi_enddef(nc), "enddef");
    MPI_Offset start[2] = { 0, (MPI_Offset)rank * COLS }, count[2] = { 1, COLS };
    long long i64[COLS];
    unsigned short u16[COLS];
    double f8[COLS];
    unsigned char u8[COLS];
    for (int i = 0; i < COLS; i++)
        i64[i] = 1000LL * 0 + (long long)rank * COLS + i;
    ok(ncmpi_put_vara_longlong_all(nc, v[0], start + 1, count + 1, i64), "put fixed");
    for (int r = 0; r < RECS; r++) {
        start[0] = r;
        for (int i = 0; i < COLS; i++) {
            int col = rank * COLS + i;
            u16[i] = (unsigned short)(1000 * 1 + 100 * r + col);
            f8[i] = 1000.0 * 2 + 100 * r + col + 0.5;
            u8[i] = (unsigned char)((100 * r + col) % 256);
        }
        ok(ncmpi_put_vara_ushort_all(nc, v[1], start, count, u16), "put u16");
        ok(ncmpi_put_vara_double_all(nc, v[2], start, count, f8), "put f8");
        ok(ncmpi_put_vara_uchar_all(nc, v[3], start, count, u8), "put u8");
    }
    ok(ncmpi_close(nc), "close");
    MPI_Finalize();
    return 0;
}
