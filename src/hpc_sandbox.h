/* hpc_sandbox.h - the trial open of untrusted files in a disposable child.
 *
 * Readers built on a third-party library (libhdf5, libhdf4) hand the
 * library a file hpcmount has not checked itself, and on some damaged
 * files the library crashes (SIGSEGV, a double free) or runs for minutes
 * before the reader gets control back.  So before such a reader opens a
 * file for real, the core forks: the child opens the container with the
 * reader and walks its tree for a bounded time (readdir, lookup,
 * listxattr, readlink of at most HPC_SANDBOX_WALK_NODES nodes or
 * HPC_SANDBOX_WALK_SECONDS of walking), then exits.  Only when the child
 * got through within the time limit does the parent open the file; a crash
 * or a timeout is a one-line refusal naming the file (the member of a set
 * the library was opening, when the reader said so with hpc_sandbox_note).
 * A clean error of the child's open is returned as the error of the open.
 *
 * A format asks for this by setting hpc_format.sandbox_lib to the name of
 * its library; -o open_timeout=SECONDS sets the limit (0: no trial open).
 */
#ifndef HPC_SANDBOX_H
#define HPC_SANDBOX_H

#include <glib.h>

#include "hpc_format.h"

/** Seconds the trial open (open and bounded walk) may take by default. */
#define HPC_SANDBOX_TIMEOUT 5.0
/** The walk accepts the file after this many nodes without error... */
#define HPC_SANDBOX_WALK_NODES 1000
/** ...or after this many seconds of walking without error. */
#define HPC_SANDBOX_WALK_SECONDS 0.15

/**
 * Trial-open container c (source, options and format set, not opened) in
 * a child process when c->format->sandbox_lib is set and the trial is not
 * turned off.  HPC_OK when the child opened and walked it in time (or no
 * trial was needed); else the error, with *err set to one line.
 */
int hpc_sandbox_trial_open(hpc_container *c, GError **err);

/**
 * For readers: the library is about to open file `path` (a member of a
 * set).  A crash or timeout after this call names that file.  Does nothing
 * outside a trial open.
 */
void hpc_sandbox_note(const char *path);

/**
 * Parse the value of -o open_timeout=SECONDS into *timeout: seconds > 0,
 * or -1 for "0" (no trial open).  HPC_E_INVAL with *err set otherwise.
 */
int hpc_sandbox_parse_timeout(const char *value, double *timeout, GError **err);

#endif
