/* hpc_container_nodes.c - an open container as an implementation of the
 * node interface (hpc_nodes.h): each call is the container's own. */
#include "hpc_container.h"

#include <string.h>

#define LIVE_TIMEOUT 1.0          /* a live container's nodes grow */
#define STATIC_TIMEOUT 86400.0    /* the others never change while open */

typedef struct container_nodes {
    hpc_nodes head;
    hpc_container *c;
} container_nodes;

static hpc_container *of(hpc_nodes *n)
{
    return ((container_nodes *)n)->c;
}

static int cn_lookup(hpc_nodes *n, hpc_ino parent, const char *name, hpc_stat *st)
{
    return hpc_container_lookup(of(n), parent, name, st);
}

static int cn_getattr(hpc_nodes *n, hpc_ino ino, hpc_stat *st)
{
    return hpc_container_getattr(of(n), ino, st);
}

static int cn_readdir(hpc_nodes *n, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    return hpc_container_readdir(of(n), dir, cookie, fn, ctx);
}

static int cn_readlink(hpc_nodes *n, hpc_ino ino, char **target)
{
    return hpc_container_readlink(of(n), ino, target);
}

static int cn_read(hpc_nodes *n, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread)
{
    return hpc_container_read(of(n), ino, buf, len, off, nread);
}

static int cn_map(hpc_nodes *n, hpc_ino ino, uint64_t off, uint64_t len, hpc_extent *ext,
                  unsigned max, unsigned *count)
{
    return hpc_container_map(of(n), ino, off, len, ext, max, count);
}

static int cn_getxattr(hpc_nodes *n, hpc_ino ino, const char *name, void **value, size_t *len)
{
    return hpc_container_getxattr(of(n), ino, name, value, len);
}

static int cn_listxattr(hpc_nodes *n, hpc_ino ino, GString *out)
{
    return hpc_container_listxattr(of(n), ino, out);
}

static int cn_chunks(hpc_nodes *n, hpc_ino ino, GString *out)
{
    return hpc_container_chunks(of(n), ino, out);
}

static int cn_sources_unchanged(hpc_nodes *n, hpc_ino ino)
{
    (void)ino;
    return hpc_container_sources_unchanged(of(n));
}

static int cn_extents_unchanged(hpc_nodes *n, hpc_ino ino, const hpc_extent *ext,
                                unsigned count)
{
    (void)ino;
    return hpc_container_extents_unchanged(of(n), ext, count);
}

static const char *cn_format_name(hpc_nodes *n)
{
    return hpc_container_format_name(of(n));
}

/* A container's bytes never change while it is open (a change is an
 * error): the kernel keeps them; its .info texts are made anew. */
static void cn_meta(hpc_nodes *n, hpc_ino ino, hpc_node_meta *meta)
{
    hpc_container *c = of(n);
    memset(meta, 0, sizeof *meta);
    meta->timeout = hpc_container_is_live(c) ? LIVE_TIMEOUT : STATIC_TIMEOUT;
    meta->direct_io = HPC_INO_IS_TEXT(ino);
    meta->keep_cache = !meta->direct_io;
    hpc_container_owner(c, &meta->uid, &meta->gid);
    meta->blksize = hpc_container_block_size(c);
}

static uint64_t cn_source_bytes(hpc_nodes *n)
{
    return hpc_container_source_bytes(of(n));
}

static uint32_t cn_block_size(hpc_nodes *n)
{
    return hpc_container_block_size(of(n));
}

static void cn_close(hpc_nodes *n)
{
    hpc_container_close(of(n));
    g_free(n);
}

static const hpc_nodes_ops container_ops = {
    .lookup = cn_lookup,
    .getattr = cn_getattr,
    .readdir = cn_readdir,
    .readlink = cn_readlink,
    .read = cn_read,
    .map = cn_map,
    .getxattr = cn_getxattr,
    .listxattr = cn_listxattr,
    .chunks = cn_chunks,
    .sources_unchanged = cn_sources_unchanged,
    .extents_unchanged = cn_extents_unchanged,
    .format_name = cn_format_name,
    .meta = cn_meta,
    .source_bytes = cn_source_bytes,
    .block_size = cn_block_size,
    .close = cn_close,
};

int hpc_container_nodes_open(const char *source, const hpc_options *opts, hpc_nodes **out,
                             GError **err)
{
    hpc_container *c;
    *out = NULL;
    int rc = hpc_container_open(source, opts, &c, err);
    if (rc != HPC_OK)
        return rc;
    container_nodes *n = g_new0(container_nodes, 1);
    n->head.ops = &container_ops;
    n->c = c;
    *out = &n->head;
    return HPC_OK;
}
