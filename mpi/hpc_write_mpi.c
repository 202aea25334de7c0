/* hpc_write_mpi.c - what the MPI writers share: error codes and messages,
 * the error agreement of collective calls, and whole writes. */
#include "config.h"
#include "hpc_write.h"
#include "hpc_write_mpi.h"
#include "hpcmount.h"

/* hpc_write.h stays self-contained for MPI programs, so it spells its codes
 * out; hpcmount.h holds the one definition, and a drift fails the build. */
G_STATIC_ASSERT((int)HPC_OK == (int)HPCMOUNT_OK);
G_STATIC_ASSERT((int)HPC_E_IO == (int)HPCMOUNT_E_IO);
G_STATIC_ASSERT((int)HPC_E_CORRUPT == (int)HPCMOUNT_E_CORRUPT);
G_STATIC_ASSERT((int)HPC_E_NOMEM == (int)HPCMOUNT_E_NOMEM);
G_STATIC_ASSERT((int)HPC_E_INVAL == (int)HPCMOUNT_E_INVAL);
G_STATIC_ASSERT((int)HPC_E_UNSUPPORTED == (int)HPCMOUNT_E_UNSUPPORTED);

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <unistd.h>

G_DEFINE_QUARK(hpc-write-error-quark, hpc_write_error)

const char *hpc_write_strerror(int code)
{
    switch (code) {
    case HPC_OK: return "success";
    case HPC_E_IO: return "I/O error";
    case HPC_E_CORRUPT: return "file damaged";
    case HPC_E_NOMEM: return "out of memory";
    case HPC_E_INVAL: return "invalid argument";
    case HPC_E_UNSUPPORTED: return "unsupported file";
    default: return "unknown error";
    }
}

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
                   local && *local ? (*local)->message : hpc_write_strerror(rc));
    MPI_Bcast(&code, 1, MPI_INT, first, comm);
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, first, comm);
    msg[sizeof msg - 1] = '\0';
    g_clear_error(local);
    g_set_error_literal(err, HPC_WRITE_ERROR, code, msg);
    return code;
}

int hpcw_fail(GError **err, int code, const char *fmt, ...)
{
    if (err && *err)
        return code;            /* keep the first message */
    va_list ap;
    va_start(ap, fmt);
    char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(err, HPC_WRITE_ERROR, code, m);
    g_free(m);
    return code;
}

int hpcw_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

int hpcw_pread(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;    /* the file ends before */
            return -1;
        }
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}
