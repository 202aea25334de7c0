/* hpc_log.h - one line per read-time problem, to stderr or to the log a
 * front end set (the daemon's).  Below every layer that logs: readers,
 * the container and the front ends all write through it.
 */
#ifndef HPC_LOG_H
#define HPC_LOG_H

#include <glib.h>

/** Log one line (read-time problems).  Goes to stderr or the daemon's log. */
void hpc_log(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/** Where hpc_log writes: fn(ctx, line), or stderr when fn is NULL. */
void hpc_log_set_handler(void (*fn)(void *ctx, const char *line), void *ctx);

/** Whether a front end set a handler (the daemon's log), not stderr. */
int hpc_log_handled(void);

#endif
