/* gsd_write_int.h - what the two files of the parallel GSD writer share.
 * gsd_write.c is the MPI side (create, open, chunks, the collectives that
 * end a frame, close); gsd_write_tables.c is rank 0's tables (the header,
 * the name list and the index: read, grown and written).
 */
#ifndef GSD_WRITE_INT_H
#define GSD_WRITE_INT_H

#include "gsd_layout.h"
#include "hpc_bytes.h"
#include "hpc_write.h"
#include "hpc_write_mpi.h"

/* One chunk of the frame being written. */
typedef struct gsd_rec {
    char *name;
    uint8_t type;
    uint32_t m;
    uint64_t n;
    uint64_t location;
    void *data;                 /* local chunks: a copy until the frame ends */
    uint16_t id;                /* rank 0, while indexing */
} gsd_rec;

struct hpc_gsd_file {
    MPI_Comm comm;
    int rank, size;
    int fd;
    char *path;
    uint64_t end;               /* end of the file: the same on all ranks */
    uint64_t frame;             /* the frame being written */
    GHashTable *frame_names;    /* names this rank passed in the frame */
    GArray *chunks;             /* rank 0: distributed chunks of the frame */
    GArray *local;              /* this rank's local chunks of the frame */
    GError *write_err;          /* a data write of this frame failed here */
    int broken;                 /* an index write failed: no more frames */
    /* rank 0: the tables on disk */
    unsigned char header[GSD_HEADER_SIZE];
    uint64_t index_loc, index_alloc, index_count;
    uint64_t names_loc, names_units;
    GByteArray *names;          /* the name list's bytes in use */
    GHashTable *ids;            /* name -> id + 1 */
    guint nids;                 /* names in the list (ids given) */
};

/* Abort the job at a step of the frame's end (tests of killed writers):
 * HPC_GSD_TEST_ABORT=STEP:FRAME, STEP data, names or index. */
void gsdw_test_abort(const hpc_gsd_file *f, const char *step);

/* Rank 0: a new file as the GSD library starts one. */
int gsdw_create_file(hpc_gsd_file *f, const char *application, const char *schema,
                     uint32_t schema_version, GError **err);

/* Rank 0: the header, name list and index end of an existing file. */
int gsdw_read_tables(hpc_gsd_file *f, GError **err);

/* Rank 0: names, entries and header of the frame; locals from all ranks. */
int gsdw_index_frame(hpc_gsd_file *f, GArray *locals, GError **err);

#endif
