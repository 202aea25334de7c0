/* hpc_log.c - read-time log lines (hpc_log.h). */
#include "hpc_log.h"

#include <stdarg.h>
#include <stdio.h>

static void (*log_handler)(void *ctx, const char *line);
static void *log_ctx;

void hpc_log_set_handler(void (*fn)(void *ctx, const char *line), void *ctx)
{
    log_handler = fn;
    log_ctx = ctx;
}

int hpc_log_handled(void)
{
    return log_handler != NULL;
}

void hpc_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (log_handler)
        log_handler(log_ctx, line);
    else
        fprintf(stderr, "hpcmount: %s\n", line);
    g_free(line);
}
