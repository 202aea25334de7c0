/* hpc_error.c - error codes and messages. */
#include "hpc_error.h"

#include <errno.h>

G_DEFINE_QUARK(hpc-error-quark, hpc_error)

int hpc_err_to_errno(int err)
{
    switch (err) {
    case HPC_OK: return 0;
    case HPC_E_NOMEM: return ENOMEM;
    case HPC_E_NOENT: return ENOENT;
    case HPC_E_NOTDIR: return ENOTDIR;
    case HPC_E_ISDIR: return EISDIR;
    case HPC_E_INVAL: return EINVAL;
    case HPC_E_NODATA: return ENODATA;
    case HPC_E_RANGE: return ERANGE;
    case HPC_E_NOTSUP: return ENOTSUP;
    case HPC_E_UNSUPPORTED: return EOPNOTSUPP;
    case HPC_E_LOOP: return ELOOP;
    default: return EIO;    /* IO, CORRUPT, CHECKSUM and anything unknown */
    }
}

const char *hpc_strerror(int err)
{
    switch (err) {
    case HPC_OK: return "success";
    case HPC_E_IO: return "I/O error";
    case HPC_E_CORRUPT: return "container corrupt";
    case HPC_E_NOMEM: return "out of memory";
    case HPC_E_NOENT: return "no such entry";
    case HPC_E_NOTDIR: return "not a directory";
    case HPC_E_ISDIR: return "is a directory";
    case HPC_E_INVAL: return "invalid argument";
    case HPC_E_UNSUPPORTED: return "unsupported container";
    case HPC_E_NODATA: return "no such attribute";
    case HPC_E_RANGE: return "buffer too small";
    case HPC_E_CHECKSUM: return "checksum mismatch";
    case HPC_E_NOTSUP: return "operation not supported";
    case HPC_E_CHANGED: return "source changed since mount";
    case HPC_E_LOOP: return "too many levels of symbolic links";
    default: return "unknown error";
    }
}

int hpc_fail(GError **err, int code, const char *file, const char *field,
             uint64_t offset, const char *fmt, ...)
{
    if (err == NULL || *err != NULL)
        return code;
    va_list ap;
    va_start(ap, fmt);
    char *why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (field)
        g_set_error(err, HPC_ERROR, -code, "%s: field %s at offset %" G_GUINT64_FORMAT ": %s",
                    file, field, (guint64)offset, why);
    else
        g_set_error(err, HPC_ERROR, -code, "%s: %s", file, why);
    g_free(why);
    return code;
}
