/* hpc_write.h - parallel writers for MPI programs: SIONlib multi-task
 * container files (file format 5), GSD trajectories (file layer 2.0) and
 * distributed HDF sets.
 *
 * Installed with libhpcwrite.a and hpcwrite.pc: compile MPI programs with
 *   mpicc prog.c $(pkg-config --cflags --libs hpcwrite)
 * The header needs only GLib and MPI.
 *
 * SION
 * ----
 * All ranks of a communicator open one logical file together; each rank
 * asks for a chunk size (bytes per block), which is rounded up to the file
 * system block size.  A rank's data form one stream: a write that overflows
 * the current chunk continues in the rank's chunk of the next block.  The
 * collective close writes the block table (META2) and, for sets of several
 * physical files, the mapping of global ranks to files into file 0.  The
 * output is byte-compatible with SIONlib 1.7 (file format 5): a file written
 * with the same parameters and the same sequence of writes has the same
 * metadata, block positions and bytes as one written by SIONlib itself.
 *
 * Until the close, META1 holds maxchunks 0 and start_of_varheader 0, as with
 * SIONlib: the file of a job killed before the close is recognisable, and
 * hpcmount -o salvage can serve what was written.
 *
 * Errors: every function returns 0 (HPC_OK) or a negative code (below)
 * and, for collective calls, the same code on every rank of
 * the communicator, with the same message in *err ("rank R: reason") when
 * err is not NULL.  Invalid parameters of any rank therefore fail the open on
 * all ranks instead of leaving the others waiting.  Non-collective calls
 * (write, ensure_free_space, write_key) report only to their caller.
 *
 * Thread safety: a handle must be used by one thread at a time.
 */
#ifndef HPC_WRITE_H
#define HPC_WRITE_H

#include <glib.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Return codes (the values of hpcmount.h's HPCMOUNT_E_* of the same names,
 * checked when the library is built);
 * messages come as GError in the domain HPC_WRITE_ERROR.
 */
enum {
    HPC_OK = 0,
    HPC_E_IO = -1,          /* a read or write of a file failed */
    HPC_E_CORRUPT = -2,     /* a file the writer reads is damaged */
    HPC_E_NOMEM = -3,
    HPC_E_INVAL = -7,       /* bad argument, or ranks disagree */
    HPC_E_UNSUPPORTED = -8, /* a valid file the writer cannot append to */
};

/** The GError domain of the messages set by the writers. */
#define HPC_WRITE_ERROR (hpc_write_error_quark())
GQuark hpc_write_error_quark(void);

/** A short text for a return code. */
const char *hpc_write_strerror(int code);

/** SIONlib version and file format the SION writer reproduces. */
#define HPC_SION_VERSION 1007
#define HPC_SION_PATCHLEVEL 6
#define HPC_SION_FILEFORMAT 5

/** Parameters of hpc_sion_open (per rank; nfiles, fsblksize and keyvalue
 *  must be equal on all ranks). */
typedef struct hpc_sion_params {
    int64_t chunksize;   /**< bytes this rank reserves per block, >= 0; 0: the
                              rank writes nothing */
    int32_t fsblksize;   /**< alignment unit in bytes; <= 0: the block size of
                              the file system holding the file (statvfs) */
    int32_t nfiles;      /**< physical files, 1 .. ranks; 0 means 1 */
    int keyvalue;        /**< non-zero: key-value mode "inline" (records
                              written with hpc_sion_write_key) */
    int sync;            /**< non-zero: fsync the data before the close
                              writes META2 */
} hpc_sion_params;

typedef struct hpc_sion_file hpc_sion_file;

/**
 * Collective over comm: create the SION file set at path (file k > 0 is
 * "path.%06d").  Ranks are split over the files as SIONlib does: ranks/nfiles
 * per file in rank order, the remainder in the last file.  Returns the same
 * code on every rank; *out is NULL on failure.
 */
int hpc_sion_open(const char *path, MPI_Comm comm, const hpc_sion_params *p,
                  hpc_sion_file **out, GError **err);

/**
 * Append len bytes to this rank's stream: as much as fits in the current
 * chunk, the rest in the following blocks.  HPC_E_INVAL when len > 0 and the
 * rank's chunk size is 0, HPC_E_IO when the write fails.
 */
int hpc_sion_write(hpc_sion_file *f, const void *buf, size_t len, GError **err);

/**
 * Start a new block unless at least n bytes are left in the current chunk,
 * so that a following write of n bytes is not split (SIONlib's
 * sion_ensure_free_space).  HPC_E_INVAL when n exceeds the chunk size.
 */
int hpc_sion_ensure_free_space(hpc_sion_file *f, uint64_t n, GError **err);

/**
 * Key-value mode: append one record {int64 key; int64 len; data} to the
 * stream (header in native byte order; records cross block boundaries).
 * HPC_E_INVAL if the file was not opened with keyvalue set.
 */
int hpc_sion_write_key(hpc_sion_file *f, int64_t key, const void *buf, size_t len,
                       GError **err);

/** Bytes this rank has written so far (its logical stream length). */
uint64_t hpc_sion_bytes_written(const hpc_sion_file *f);

/** The physical file this rank writes to, its rank there, and the chunk
 *  size after rounding (for reports). */
void hpc_sion_where(const hpc_sion_file *f, int *filenumber, int *localrank,
                    int64_t *chunksize);

/**
 * Collective: write META2 (and the mapping into file 0), complete META1,
 * close and free f.  Returns the same code on every rank.  f is freed even
 * on failure.
 */
int hpc_sion_close(hpc_sion_file *f, GError **err);

/*
 * GSD (HOOMD-blue trajectories, file layer 2.0)
 * ---------------------------------------------
 * All ranks of a communicator write one GSD file together.  A frame holds
 * named chunks, each an N x M array of one type.  A distributed chunk
 * (hpc_gsd_write_chunk) is passed by every rank with its own rows: its N is
 * the sum of the ranks' rows and its bytes are the ranks' rows concatenated
 * in rank order.  Every rank writes its rows itself, at an offset agreed
 * with MPI_Exscan, so no rank ever holds more than its own rows.  A small
 * chunk that only one rank holds (configuration/step, particles/N, a box)
 * is passed by that rank alone (hpc_gsd_write_local) and written by it.
 *
 * Rank 0 keeps the index and the name list.  hpc_gsd_end_frame writes, in
 * this order, the frame's data (all ranks), the new names, the index
 * entries and, when the index or the name list had to grow (they double
 * and are copied to the end of the file, as the GSD library does), the
 * header.  A job killed at any point therefore leaves a file whose frames
 * ended before the kill are read by the GSD library and by hpcmount; data
 * of the unfinished frame stay as unused bytes.
 */

/** Chunk element types (the GSD type ids). */
typedef enum hpc_gsd_type {
    HPC_GSD_UINT8 = 1,
    HPC_GSD_UINT16 = 2,
    HPC_GSD_UINT32 = 3,
    HPC_GSD_UINT64 = 4,
    HPC_GSD_INT8 = 5,
    HPC_GSD_INT16 = 6,
    HPC_GSD_INT32 = 7,
    HPC_GSD_INT64 = 8,
    HPC_GSD_FLOAT = 9,
    HPC_GSD_DOUBLE = 10,
} hpc_gsd_type;

/** A schema version as GSD stores it: major << 16 | minor. */
#define HPC_GSD_VERSION(major, minor) (((uint32_t)(major) << 16) | (uint32_t)(minor))

/** Longest chunk name, application and schema string (bytes, no NUL). */
#define HPC_GSD_NAME_MAX 4095
#define HPC_GSD_STRING_MAX 63

typedef struct hpc_gsd_file hpc_gsd_file;

/**
 * Collective: create (or truncate) the GSD file path with the given
 * application, schema (at most 63 bytes each) and schema version, equal on
 * all ranks as rank 0 writes them.  Returns the same code on every rank;
 * *out is NULL on failure.
 */
int hpc_gsd_create(const char *path, MPI_Comm comm, const char *application,
                   const char *schema, uint32_t schema_version, hpc_gsd_file **out,
                   GError **err);

/**
 * Collective: open an existing GSD file (layer 2.0 or 2.1, written by this
 * library or by the GSD library) to append frames after its last one.  New
 * data go to the end of the file; bytes a killed writer left after the
 * last frame stay unused.  HPC_E_UNSUPPORTED for other layers,
 * HPC_E_CORRUPT for a damaged header or name list.
 */
int hpc_gsd_open_append(const char *path, MPI_Comm comm, hpc_gsd_file **out, GError **err);

/**
 * Collective: write this rank's n_local rows of the chunk name in the
 * current frame.  name, type and m (>= 1) must be equal on all ranks (else
 * HPC_E_INVAL everywhere); n_local may differ and be 0 (data may then be
 * NULL); data holds n_local * m elements in C order, native byte order.
 * Parameter errors are returned on every rank; a failed write of this
 * rank's rows (HPC_E_IO) only here, and the frame then fails at
 * hpc_gsd_end_frame on every rank.
 */
int hpc_gsd_write_chunk(hpc_gsd_file *f, const char *name, hpc_gsd_type type,
                        uint64_t n_local, uint32_t m, const void *data, GError **err);

/**
 * Not collective: a chunk of the current frame that only this rank holds
 * (N rows of m elements).  The data are copied and written by this rank at
 * hpc_gsd_end_frame.  A name passed twice in a frame (by one rank or by
 * two) fails the call or the frame's end with HPC_E_INVAL.
 */
int hpc_gsd_write_local(hpc_gsd_file *f, const char *name, hpc_gsd_type type, uint64_t n,
                        uint32_t m, const void *data, GError **err);

/**
 * Collective: end the current frame.  The local chunks are written, then
 * rank 0 writes the names, the index entries and, if needed, the header.
 * On failure the frame is dropped on every rank (its data stay as unused
 * bytes) and the same code is returned everywhere.
 */
int hpc_gsd_end_frame(hpc_gsd_file *f, GError **err);

/** The number of the frame being written (frames in the file so far). */
uint64_t hpc_gsd_frame(const hpc_gsd_file *f);

/**
 * Collective: close and free f (also on failure).  Chunks of a frame that
 * was not ended are dropped, as the GSD library drops them.
 */
int hpc_gsd_close(hpc_gsd_file *f, GError **err);

/*
 * Distributed HDF (docs/dhdf-format.md; built when libhdf4 is found)
 * ------------------------------------------------------------------
 * A set is a main file (MHF) and associated files (AHFs), all HDF4.  Each
 * rank writes its piece of every global array into the AHF of its group of
 * ranks_per_file consecutive ranks ("run_1.hdf", "run_2.hdf", ... next to the
 * main file "run.hdf"); rank 0 writes the main file at the close, with
 * File_Info and each array's chunk table.  Pieces must not overlap; pieces
 * that leave parts of an array uncovered make a set that hpcmount mounts
 * only with -o allowholes.
 */
typedef struct hpc_dhdf_file hpc_dhdf_file;

/**
 * Collective: start a set whose main file is path; ranks_per_file ranks
 * share an AHF (<= 0: one AHF per rank).  Returns the same code on every
 * rank; *out is NULL on failure.
 */
int hpc_dhdf_open(const char *path, MPI_Comm comm, int ranks_per_file, hpc_dhdf_file **out,
                  GError **err);

/**
 * Collective: write this rank's piece of the array name (1 to 64 bytes).
 * nt is the HDF4 number type (DFNT_INT32 = 24, DFNT_FLOAT64 = 6, ...; see
 * the convention's section 6), rank 1..32 and dims the whole array's (equal
 * on all ranks); origin and size the piece's, data its elements in C order
 * and native byte order.  A rank whose size has a 0 (or is NULL) holds no
 * piece.  Pieces are named "<name>_chunk<k>", k counting the ranks with a
 * piece in rank order.
 */
int hpc_dhdf_write(hpc_dhdf_file *f, const char *name, int32_t nt, int rank,
                   const int32_t *dims, const int32_t *origin, const int32_t *size,
                   const void *data, GError **err);

/** Collective: write File_Info into the AHFs, then the main file; free f. */
int hpc_dhdf_close(hpc_dhdf_file *f, GError **err);

#endif
