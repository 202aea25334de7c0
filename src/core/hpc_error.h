/* hpc_error.h - error codes and mount-time error messages of the core library.
 *
 * Every core and format function returns 0 (HPC_OK) or a negative hpc_err.
 * Functions that can fail because of the container's contents also take a
 * GError ** and fill it with one line naming the file, the field and the
 * byte offset, e.g. "run.sion: field ntasks at offset 24: 2147483647 tasks
 * cannot fit in 24640 bytes".
 */
#ifndef HPC_ERROR_H
#define HPC_ERROR_H

#include <glib.h>
#include <stdint.h>

/* The public header (hpcmount.h) gives the same values to libhpcmount's
 * users as HPCMOUNT_E_*; hpcmount_api.c checks at build time that the two
 * agree, so the core includes nothing above it. */
typedef enum {
    HPC_OK = 0,
    HPC_E_IO = -1,          /* a read of a source file failed */
    HPC_E_CORRUPT = -2,     /* the container's metadata are inconsistent */
    HPC_E_NOMEM = -3,
    HPC_E_NOENT = -4,       /* no such node or name */
    HPC_E_NOTDIR = -5,
    HPC_E_ISDIR = -6,
    HPC_E_INVAL = -7,       /* bad argument or option */
    HPC_E_UNSUPPORTED = -8, /* a valid container this reader cannot serve */
    HPC_E_NODATA = -9,      /* no such extended attribute */
    HPC_E_RANGE = -10,      /* caller's buffer too small */
    HPC_E_CHECKSUM = -11,   /* stored checksum does not match the data */
    HPC_E_NOTSUP = -12,     /* operation not implemented for this node */
    HPC_E_CHANGED = -13,    /* a source file changed since it was opened */
    HPC_E_LOOP = -14,       /* more than HPC_MAX_LINKS symlinks in one path */
} hpc_err;

/* Symlinks followed in one path at most, as the kernel's limit. */
#define HPC_MAX_LINKS 40

#define HPC_ERROR (hpc_error_quark())
GQuark hpc_error_quark(void);

/** Translate an hpc_err into a positive errno value for FUSE replies. */
int hpc_err_to_errno(int err);

/** A short text for an hpc_err. */
const char *hpc_strerror(int err);

/**
 * Set *err (if err is not NULL) to the one-line message
 * "FILE: field FIELD at offset OFFSET: <formatted reason>" and return code.
 * field may be NULL for whole-file problems (then "FILE: <reason>").
 */
int hpc_fail(GError **err, int code, const char *file, const char *field,
             uint64_t offset, const char *fmt, ...) G_GNUC_PRINTF(6, 7);

#endif
