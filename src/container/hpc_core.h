/* hpc_core.h - the core's own state of a container, private to the core
 * (hpc_container.c, hpc_formats.c and the proxy).  Readers see
 * only the pointer (hpc_format.h), front ends not even that. */
#ifndef HPC_CORE_H
#define HPC_CORE_H

#include "hpc_container.h"
#include "hpc_formats.h"
#include "hpc_perm.h"

struct hpc_core {
    GMutex lock;             /* guards cache creation and info */
    hpc_cache *cache;
    GString *info;
    GString *info_json;      /* info as JSON, made when first asked for */
    int changed;             /* a source changed since mount: reads fail */
    char *changed_path;      /* which one (set once, with changed) */
    gint64 last_check;       /* monotonic us of the last periodic check */
    int opened;              /* the reader's open is done: sources stream */
    uint32_t perm;           /* read bits every node carries over (hpc_perm.h) */
    const hpc_creds *creds;  /* the owner's, when the process has more rights */
};

/* The container's side of hpc_host (c->host), which the proxy
 * (hpc_remote.c, hpc_remote_names.c) calls by name. */
hpc_source *hpc_container_add_source(hpc_container *c, const char *path, GError **err);
hpc_cache *hpc_container_cache(hpc_container *c);
int hpc_container_read_extents(hpc_container *c, const hpc_extent *ext, unsigned n, void *buf,
                               size_t room, size_t *got);
void hpc_container_info_changed(hpc_container *c);

#endif
