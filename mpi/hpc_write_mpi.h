/* hpc_write_mpi.h - what the MPI writers share (private to mpi/). */
#ifndef HPC_WRITE_MPI_H
#define HPC_WRITE_MPI_H

#include <glib.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/**
 * Every rank learns the outcome of a collective step: the code and message
 * of the lowest failing rank, so that all ranks fail together.  rc and
 * *local are this rank's outcome (*local is consumed); returns the agreed
 * code and sets *err on every rank when any failed.
 */
int hpcw_agree(MPI_Comm comm, int rc, GError **local, GError **err);

/** Set *err (unless already set) to the formatted message; returns code. */
int hpcw_fail(GError **err, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/** Write (read) all len bytes at off; 0, or -1 with errno set. */
int hpcw_pwrite(int fd, const void *buf, size_t len, uint64_t off);
int hpcw_pread(int fd, void *buf, size_t len, uint64_t off);

#endif
