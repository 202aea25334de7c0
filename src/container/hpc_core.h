/* hpc_core.h - the core's own state of a container, private to the core
 * (hpc_container.c and hpc_formats.c).  Readers see
 * only the pointer (hpc_format.h), front ends not even that. */
#ifndef HPC_CORE_H
#define HPC_CORE_H

#include "hpc_format.h"
#include "hpc_perm.h"

struct hpc_core {
    GMutex lock;             /* guards cache creation and info */
    hpc_cache *cache;
    GString *info;
    GString *info_json;      /* info as JSON, made when first asked for */
    const hpc_view *view;    /* hpc_container_set_view, or NULL */
    void *view_state;
    int changed;             /* a source changed since mount: reads fail */
    char *changed_path;      /* which one (set once, with changed) */
    gint64 last_check;       /* monotonic us of the last periodic check */
    int opened;              /* the reader's open is done: sources stream */
    uint32_t perm;           /* read bits every node carries over (hpc_perm.h) */
    const hpc_creds *creds;  /* the owner's, when the process has more rights */
};

#endif
