/* hpc_core.h - the core's own state of a container, private to the core
 * (hpc_container.c and the layers it calls: hpc_npyview.c).  Readers see
 * only the pointer (hpc_format.h), front ends not even that. */
#ifndef HPC_CORE_H
#define HPC_CORE_H

#include "hpc_format.h"

struct hpc_core {
    GMutex lock;             /* guards cache creation, info and npy_headers */
    hpc_cache *cache;
    GString *info;
    GHashTable *npy_headers; /* the npy view's headers */
    int changed;             /* a source changed since mount: reads fail */
    char *changed_path;      /* which one (set once, with changed) */
    gint64 last_check;       /* monotonic us of the last periodic check */
};

#endif
