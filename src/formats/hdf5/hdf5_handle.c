/* hdf5_handle.c - open dataset handles in an LRU bounded in number and
 * in the bytes of their chunk caches and rendered text (-o h5handles,
 * -o h5cache). */
#include "hdf5_int.h"

/* ---- dataset handles -------------------------------------------------- */

void h5_handle_close(h5 *h, h5_handle *hd)
{
    h->nhandles--;
    h->handle_bytes -= hd->bytes;
    g_hash_table_remove(h->handles, GUINT_TO_POINTER(hd->node));
    hpc_h5chunk_plan_free(hd->plan);
    h5_dset_free(hd->d);
    g_free(hd);
}

/* Close unused handles, least recently used first, while over max
 * handles or the bound of their bytes. */
static void handles_trim_to(h5 *h, unsigned max)
{
    GList *l = h->lru.tail;
    while (l && (h->nhandles > max || h->handle_bytes > h->max_handle_bytes)) {
        GList *prev = l->prev;
        h5_handle *hd = l->data;
        if (hd->refs == 0) {
            g_queue_unlink(&h->lru, l);
            h5_handle_close(h, hd);
        }
        l = prev;
    }
}

static void handles_trim(h5 *h)
{
    handles_trim_to(h, h->max_handles);
}

/* The dimension names (user.dims) are a pass over the whole file: asked
 * for by the walk's first listxattr of a dataset, they made the mount of
 * a file of 10^5 datasets cost that pass (2.4 s instead of 0.05 s).  They
 * wait for the first xattr asked after the walk. */
void hpc_hdf5_walk_begins(hpc_container *c)
{
    h5 *h = c->priv;
    g_mutex_lock(&h->lock);
    h->walking = TRUE;
    g_mutex_unlock(&h->lock);
}

/* Every open dataset is an id and an open object that libhdf5 searches
 * (skip lists) on each later open: the helper's walk at mount leaves up
 * to h5handles of them, which made the listings of a `find` over 10^5
 * datasets cost 8 % more CPU than with no dataset open. */
void hpc_hdf5_walk_ends(hpc_container *c)
{
    h5 *h = c->priv;
    g_mutex_lock(&h->lock);
    handles_trim_to(h, 0);
    h->walking = FALSE;
    g_mutex_unlock(&h->lock);
}

/* Can the chunks of d be decoded by hdf5_chunk.c?  Sets hd->plan. */
static void plan_chunks(h5_handle *hd)
{
    h5_dset *d = hd->d;
    if (d->kind != DS_DATA || d->rank < 1 || d->size == 0 || d->pad || d->rtype >= 0)
        return;
    hid_t ftype = H5Dget_type(d->id), dcpl = H5Dget_create_plist(d->id);
    if (ftype >= 0 && dcpl >= 0)
        hpc_h5chunk_plan_new(dcpl, ftype, d->mtype, d->esize, d->rank, d->dims, &hd->plan);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (dcpl >= 0)
        H5Pclose(dcpl);
}

/* Give a dataset read by H5Dread a chunk cache for one row of chunks (so
 * that a sequential read decompresses each chunk once). */
static void size_chunk_cache(h5 *h, uint32_t id, h5_dset *d, hid_t g, const char *name,
                             uint64_t band, uint64_t cbytes, uint64_t nchunks)
{
    uint64_t all = hpc_mul_u64_sat(cbytes, nchunks);
    /* libhdf5's default cache (1 MiB) holds all chunks of small datasets */
    if (!band || all <= CHUNK_CACHE_DEFAULT)
        return;
    uint64_t want = MIN(MIN(MAX(band + cbytes, CHUNK_CACHE_MIN), CHUNK_CACHE_MAX), all);
    want = MIN(want, MAX(h->max_handle_bytes / 4, CHUNK_CACHE_DEFAULT));
    /* close first: while a handle is open, libhdf5 shares its dataset
     * object, chunk cache included, with every new open */
    hid_t dapl = h5_dset_access(want, cbytes, nchunks);
    H5Dclose(d->id);
    d->id = dapl >= 0 ? h5_dset_open(h, id, g, name, dapl) : H5I_INVALID_HID;
    if (dapl >= 0)
        H5Pclose(dapl);
    if (d->id < 0)
        d->id = h5_dset_open(h, id, g, name, h->dapl);
    else
        d->cache_bytes = want;
}

/* Open and describe dataset node id.  Lock held. */
static int handle_open(h5 *h, uint32_t id, h5_handle **out)
{
    h5_dset *d = g_new0(h5_dset, 1);
    uint64_t band = 0, cbytes = 0, nchunks = 0;
    const char *name = h5_node_name(h, id);
    int rc = HPC_E_IO;
    d->id = d->mtype = d->rtype = H5I_INVALID_HID;
    d->path = h5_node_path(h, id);
    hid_t g = h5_group_open(h, NODE(h, id)->parent);
    if (g >= 0)
        d->id = h5_dset_open(h, id, g, name, h->dapl);
    if (d->id < 0 || h5_dset_describe(h, d, &band, &cbytes, &nchunks) != HPC_OK ||
        (d->external && h5_dset_reopen_external(h, id, d, g, name) != HPC_OK)) {
        char *why = h5_errtext();
        h5_note_damaged(h, id, "cannot open the dataset", why);
        g_free(why);
        NODE(h, id)->state = S_BAD;
        goto out;
    }
    char **fields[] = { &d->shape, &d->dtype, &d->layout, &d->filters, &d->chunks };
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
        if (!*fields[i])
            *fields[i] = g_strdup("?");
    h5_handle *hd = g_new0(h5_handle, 1);
    hd->node = id;
    hd->d = d;
    hd->link.data = hd;
    plan_chunks(hd);
    if (!hd->plan)
        size_chunk_cache(h, id, d, g, name, band, cbytes, nchunks);
    d = NULL;
    if (hd->d->id < 0) {
        char *why = h5_errtext();
        h5_note_damaged(h, id, "cannot open the dataset", why);
        g_free(why);
        NODE(h, id)->state = S_BAD;
        hpc_h5chunk_plan_free(hd->plan);
        h5_dset_free(hd->d);
        g_free(hd);
        goto out;
    }
    hd->bytes = hd->d->cache_bytes + (hd->d->text ? hd->d->size : 0) + hd->d->parts_bytes;
    NODE(h, id)->size = hd->d->size;
    NODE(h, id)->state = S_OK;
    if (hd->d->perm != HPC_PERM_ALL)
        g_hash_table_insert(h->narrowed, GUINT_TO_POINTER(id), GUINT_TO_POINTER(hd->d->perm | NARROWED));
    g_hash_table_insert(h->handles, GUINT_TO_POINTER(id), hd);
    h->nhandles++;
    h->handle_bytes += hd->bytes;
    *out = hd;
    rc = HPC_OK;
out:
    if (g >= 0)
        H5Oclose(g);
    h5_dset_free(d);
    return rc;
}

/* A referenced handle of dataset node id (opened if need be).  Lock held. */
int h5_handle_get(h5 *h, uint32_t id, h5_handle **out)
{
    h5_handle *hd = g_hash_table_lookup(h->handles, GUINT_TO_POINTER(id));
    if (hd) {
        g_queue_unlink(&h->lru, &hd->link);
    } else {
        if (NODE(h, id)->state == S_BAD)
            return h5_damaged_read(h, id);
        int rc = handle_open(h, id, &hd);
        if (rc != HPC_OK)
            return h5_damaged_read(h, id);
    }
    hd->refs++;
    g_queue_push_head_link(&h->lru, &hd->link);
    *out = hd;
    handles_trim(h);
    return HPC_OK;
}

void h5_handle_put(h5 *h, h5_handle *hd)
{
    hd->refs--;
    handles_trim(h);
}
