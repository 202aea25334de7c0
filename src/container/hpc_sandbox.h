/* hpc_sandbox.h - what runs inside hpcmount-helper, the process that holds
 * the third-party libraries (hpc_remote.h): the reader's note of the file
 * it hands to its library and the crash report to the daemon.
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

#endif
