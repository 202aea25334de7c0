/* hpc_sandbox.h - what runs inside hpcmount-helper, the process that holds
 * the third-party libraries (hpc_remote.h): the reader's note of the file
 * it hands to its library, the crash report to the daemon, and the
 * bounded walk that follows the open.
 */
#ifndef HPC_SANDBOX_H
#define HPC_SANDBOX_H

#include <glib.h>

#include "hpc_container.h"
#include "hpc_remote.h"

/**
 * For readers: the library is about to open file `path` (a member of a
 * set).  A crash or a limit reached after this call names that file.  Does
 * nothing outside the helper.
 */
void hpc_sandbox_note(const char *path);

/**
 * In the helper: report to the daemon through ctl (the shared control
 * page): notes, and the signal and thread of a crash (handlers of SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE and SIGABRT on an alternate stack, which then end
 * the process with the same signal).
 */
void hpc_sandbox_enter(hpc_ctl *ctl);

/** In the helper: give the calling thread the alternate signal stack the
 *  crash report needs (a stack overflow leaves no room on its own). */
void hpc_sandbox_thread(void);

/**
 * Walk c's tree breadth-first (readdir, lookup, getattr, listxattr,
 * readlink) until max_nodes nodes were seen: the work a first `ls -lR`
 * does, bounded by nodes, not time.
 */
void hpc_sandbox_walk(hpc_container *c, unsigned max_nodes);

#endif
