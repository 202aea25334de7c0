/* hpc_write_mpi.h - what the MPI writers share (private to mpi/). */
#ifndef HPC_WRITE_MPI_H
#define HPC_WRITE_MPI_H

#include <glib.h>
#include <mpi.h>

/**
 * Every rank learns the outcome of a collective step: the code and message
 * of the lowest failing rank, so that all ranks fail together.  rc and
 * *local are this rank's outcome (*local is consumed); returns the agreed
 * code and sets *err on every rank when any failed.
 */
int hpcw_agree(MPI_Comm comm, int rc, GError **local, GError **err);

/** Set *err to the formatted message with code; returns code. */
int hpcw_fail(GError **err, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

#endif
