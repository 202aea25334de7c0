/* hpc_log.c - read-time log lines (hpc_log.h). */
#include "hpc_log.h"

#include <stdarg.h>
#include <stdio.h>

static void (*log_handler)(const char *line);

void hpc_log_set_handler(void (*fn)(const char *line))
{
    log_handler = fn;
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
        log_handler(line);
    else
        fprintf(stderr, "hpcmount: %s\n", line);
    g_free(line);
}
