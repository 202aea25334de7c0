/* hpc_write_mpi.c - error agreement shared by the MPI writers. */
#include "config.h"
#include "hpc_write_mpi.h"

#include <limits.h>
#include <stdarg.h>

#include "hpc_error.h"

int hpcw_agree(MPI_Comm comm, int rc, GError **local, GError **err)
{
    int rank, key, first;
    MPI_Comm_rank(comm, &rank);
    key = rc != HPC_OK ? rank : INT_MAX;
    MPI_Allreduce(&key, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX) {
        g_clear_error(local);
        return HPC_OK;
    }
    int code = rc;
    char msg[512] = "";
    if (rank == first)
        g_snprintf(msg, sizeof msg, "rank %d: %s", rank,
                   local && *local ? (*local)->message : hpc_strerror(rc));
    MPI_Bcast(&code, 1, MPI_INT, first, comm);
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, first, comm);
    msg[sizeof msg - 1] = '\0';
    g_clear_error(local);
    g_set_error_literal(err, HPC_ERROR, code, msg);
    return code;
}

int hpcw_fail(GError **err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(err, HPC_ERROR, code, m);
    g_free(m);
    return code;
}
