/* writer_gsd_api.c - the GSD writer's API on 3 MPI ranks, for
 * tests/writer/writer_gsd.sh:  mpirun -np 3 writer_gsd_api OUT.gsd V1_FILE
 *
 * Frame 0: a distributed chunk of each of the 10 types (ranks hold 1, 0 and
 * 3 rows of 2 elements; element j of global row i is 2i + j), a chunk of 0
 * rows, and a local chunk from each rank ("local/r<rank>": rank + 1 uint32
 * values 10 * rank + k).  Frame 1: 40 new names of 47 bytes (the name list
 * of 1024 bytes grows), each an int64 row per rank (100 * k + rank).
 * Then calls that must fail on every rank alike: M, type or name differing
 * between ranks, a name twice in a frame, a local name passed by two ranks
 * (the whole frame is dropped).  Frame 2: "after".  Appending: frame 3
 * "appended" (uint16 row per rank: rank); a file that is not GSD and a
 * layer 1.0 file (V1_FILE) are refused.  writer_gsd.py api checks the file.
 * Exit status 0 when every call returned what it should on every rank.
 */
#include <hpc_write.h>

#include <stdio.h>
#include <string.h>

static int failures;

/* rc must be want on this rank and on all others. */
static void expect(MPI_Comm comm, const char *what, int rc, int want, GError **err)
{
    int lo, hi;
    MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, comm);
    if (lo != want || hi != want) {
        fprintf(stderr, "writer_gsd_api: %s: got %d..%d, want %d (%s)\n", what, lo, hi, want,
                *err ? (*err)->message : "no message");
        failures++;
    }
    g_clear_error(err);
}

/* element i of a row-major table of the given type, value v */
static void put(void *buf, hpc_gsd_type t, size_t i, long v)
{
    switch (t) {
    case HPC_GSD_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case HPC_GSD_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case HPC_GSD_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case HPC_GSD_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case HPC_GSD_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case HPC_GSD_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case HPC_GSD_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case HPC_GSD_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case HPC_GSD_FLOAT: ((float *)buf)[i] = (float)v; break;
    case HPC_GSD_DOUBLE: ((double *)buf)[i] = (double)v; break;
    }
}

static void frame0(hpc_gsd_file *f, MPI_Comm comm, int rank)
{
    GError *e = NULL;
    static const uint64_t rows[3] = { 1, 0, 3 }, first[3] = { 0, 1, 1 };
    for (int t = HPC_GSD_UINT8; t <= HPC_GSD_DOUBLE; t++) {
        double buf[8];
        for (uint64_t i = 0; i < rows[rank]; i++)
            for (int j = 0; j < 2; j++)
                put(buf, t, 2 * i + j, (long)(2 * (first[rank] + i) + j));
        char name[32];
        g_snprintf(name, sizeof name, "type/%d", t);
        expect(comm, name, hpc_gsd_write_chunk(f, name, t, rows[rank], 2, buf, &e), HPC_OK, &e);
    }
    expect(comm, "empty", hpc_gsd_write_chunk(f, "empty", HPC_GSD_UINT8, 0, 1, NULL, &e),
           HPC_OK, &e);
    uint32_t mine[3];
    for (int k = 0; k <= rank; k++)
        mine[k] = (uint32_t)(10 * rank + k);
    char name[32];
    g_snprintf(name, sizeof name, "local/r%d", rank);
    expect(comm, "local", hpc_gsd_write_local(f, name, HPC_GSD_UINT32, (uint64_t)rank + 1, 1,
                                              mine, &e), HPC_OK, &e);
    expect(comm, "end of frame 0", hpc_gsd_end_frame(f, &e), HPC_OK, &e);
}

static void frame1(hpc_gsd_file *f, MPI_Comm comm, int rank)
{
    GError *e = NULL;
    for (int k = 0; k < 40; k++) {
        char name[64];
        int64_t v = 100 * k + rank;
        g_snprintf(name, sizeof name, "long/name/number/%02d/padded_to_be_long_xxxxxxxxx", k);
        expect(comm, name, hpc_gsd_write_chunk(f, name, HPC_GSD_INT64, 1, 1, &v, &e), HPC_OK,
               &e);
    }
    expect(comm, "end of frame 1", hpc_gsd_end_frame(f, &e), HPC_OK, &e);
}

/* Calls that fail alike on every rank; then frame 2 with "after". */
static void errors(hpc_gsd_file *f, MPI_Comm comm, int rank)
{
    GError *e = NULL;
    float x[4] = { 0 };
    expect(comm, "M differs", hpc_gsd_write_chunk(f, "bad", HPC_GSD_FLOAT, 1,
                                                  rank == 1 ? 2 : 1, x, &e), HPC_E_INVAL, &e);
    expect(comm, "type differs", hpc_gsd_write_chunk(f, "bad", rank == 2 ? HPC_GSD_INT32 :
                                                     HPC_GSD_FLOAT, 1, 1, x, &e), HPC_E_INVAL, &e);
    expect(comm, "name differs", hpc_gsd_write_chunk(f, rank == 0 ? "bad0" : "bad", HPC_GSD_FLOAT,
                                                     1, 1, x, &e), HPC_E_INVAL, &e);
    expect(comm, "M 0", hpc_gsd_write_chunk(f, "bad", HPC_GSD_FLOAT, 1, 0, x, &e),
           HPC_E_INVAL, &e);
    expect(comm, "type 11", hpc_gsd_write_chunk(f, "bad", 11, 1, 1, x, &e), HPC_E_INVAL, &e);
    expect(comm, "dup 1", hpc_gsd_write_chunk(f, "dup", HPC_GSD_FLOAT, 1, 1, x, &e), HPC_OK, &e);
    expect(comm, "dup 2", hpc_gsd_write_chunk(f, "dup", HPC_GSD_FLOAT, 1, 1, x, &e),
           HPC_E_INVAL, &e);
    int rc = HPC_OK;
    if (rank != 1)
        rc = hpc_gsd_write_local(f, "same", HPC_GSD_FLOAT, 1, 1, x, &e);
    expect(comm, "local 'same'", rc, HPC_OK, &e);
    expect(comm, "end with 'same' twice", hpc_gsd_end_frame(f, &e), HPC_E_INVAL, &e);
    expect(comm, "frame still 2", (int)hpc_gsd_frame(f), 2, &e);
    expect(comm, "after", hpc_gsd_write_chunk(f, "after", HPC_GSD_FLOAT, 1, 1, x, &e), HPC_OK,
           &e);
    expect(comm, "end of frame 2", hpc_gsd_end_frame(f, &e), HPC_OK, &e);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    GError *e = NULL;
    hpc_gsd_file *f = NULL;
    if (size != 3 || argc != 3) {
        fprintf(stderr, "usage: mpirun -np 3 writer_gsd_api OUT.gsd V1_FILE\n");
        MPI_Abort(comm, 2);
    }
    expect(comm, "create", hpc_gsd_create(argv[1], comm, "writer_gsd_api", "test",
                                          HPC_GSD_VERSION(1, 0), &f, &e), HPC_OK, &e);
    if (f) {
        frame0(f, comm, rank);
        frame1(f, comm, rank);
        errors(f, comm, rank);
        expect(comm, "close", hpc_gsd_close(f, &e), HPC_OK, &e);
    }
    f = NULL;
    expect(comm, "append", hpc_gsd_open_append(argv[1], comm, &f, &e), HPC_OK, &e);
    if (f) {
        uint16_t v = (uint16_t)rank;
        expect(comm, "frame 3", (int)hpc_gsd_frame(f), 3, &e);
        expect(comm, "appended", hpc_gsd_write_chunk(f, "appended", HPC_GSD_UINT16, 1, 1, &v,
                                                     &e), HPC_OK, &e);
        expect(comm, "end of frame 3", hpc_gsd_end_frame(f, &e), HPC_OK, &e);
        expect(comm, "close", hpc_gsd_close(f, &e), HPC_OK, &e);
    }
    char *other = g_strconcat(argv[1], ".txt", NULL);
    if (rank == 0) {
        char text[300];
        memset(text, 'x', sizeof text);
        g_file_set_contents(other, text, sizeof text, NULL);
    }
    MPI_Barrier(comm);
    expect(comm, "append to a file that is not GSD",
           hpc_gsd_open_append(other, comm, &f, &e), HPC_E_CORRUPT, &e);
    g_free(other);
    expect(comm, "append to layer 1.0", hpc_gsd_open_append(argv[2], comm, &f, &e),
           HPC_E_UNSUPPORTED, &e);
    expect(comm, "create with a long schema", hpc_gsd_create(argv[1], comm, "a",
           "a schema name that is much longer than sixty-three bytes, so it is refused",
           0, &f, &e), HPC_E_INVAL, &e);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, comm);
    MPI_Finalize();
    return all ? 1 : 0;
}
