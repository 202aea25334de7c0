/* hdf5_node.c - the nodes of the HDF5 reader's lazy tree (hdf5_tree.c
 * tells how they are made): inode numbers, names and paths, and the
 * damage noted of them.  Below both the listings and the dataset handles
 * (hdf5_handle.c), which open objects by node. */
#include "hdf5_int.h"

uint32_t h5_ino_to_id(hpc_ino ino, const h5 *h)
{
    if (ino == HPC_INO_ROOT)
        return 0;
    if (ino < HPC_INO_FIRST || ino - HPC_INO_FIRST + 1 >= h->nodes->len)
        return NO_PARENT;
    return (uint32_t)(ino - HPC_INO_FIRST + 1);
}

/* A new node; pointers into h->nodes are invalid afterwards. */
uint32_t h5_node_new(h5 *h, uint8_t kind, uint64_t addr, uint32_t parent, uint32_t idx)
{
    h5_node n = { .addr = addr, .parent = parent, .idx = idx, .nlink = 1, .kind = kind };
    g_array_append_val(h->nodes, n);
    return h->nodes->len - 1;
}

const char *h5_node_name(h5 *h, uint32_t id)
{
    const h5_node *n = NODE(h, id);
    if (n->parent == NO_PARENT)
        return "/";
    if (n->idx == ANON_IDX)
        return g_hash_table_lookup(h->anon_names, GUINT_TO_POINTER(id));
    const h5_list *l = g_hash_table_lookup(h->lists, GUINT_TO_POINTER(n->parent));
    return l->names + l->name_at[n->idx];
}

/* The HDF5 path a node was first found under (g_free it). */
char *h5_node_path(h5 *h, uint32_t id)
{
    GPtrArray *parts = g_ptr_array_new();
    for (uint32_t i = id; NODE(h, i)->parent != NO_PARENT; i = NODE(h, i)->parent)
        g_ptr_array_add(parts, (gpointer)h5_node_name(h, i));
    GString *p = g_string_new(NULL);
    for (guint k = parts->len; k > 0; k--)
        g_string_append_printf(p, "/%s", (const char *)g_ptr_array_index(parts, k - 1));
    g_ptr_array_free(parts, TRUE);
    if (p->len == 0)
        g_string_append_c(p, '/');
    return g_string_free(p, FALSE);
}

/* Record a damaged object once for .info and log it. */
void h5_note_damaged(h5 *h, uint32_t id, const char *what, const char *why)
{
    h5_node *n = NODE(h, id);
    if (n->reported)
        return;
    n->reported = 1;
    char *path = h5_node_path(h, id);
    g_string_append_printf(h->damaged, "damaged: %s (object at %" PRIu64 "): %s: %s\n",
                           path, n->addr, what, why);
    g_hash_table_insert(h->reasons, GUINT_TO_POINTER(id), g_strdup_printf("%s: %s", what, why));
    hpc_log("hdf5: %s: %s: %s", path, what, why);
    g_free(path);
}

/* A read of a damaged node: EIO and a log line. */
int h5_damaged_read(h5 *h, uint32_t id)
{
    char *path = h5_node_path(h, id);
    const char *why = g_hash_table_lookup(h->reasons, GUINT_TO_POINTER(id));
    hpc_log("hdf5: %s: damaged object: %s", path, why ? why : "unreadable");
    g_free(path);
    return HPC_E_IO;
}

/* Open group node id (close with H5Oclose). */
hid_t h5_group_open(h5 *h, uint32_t id)
{
    if (id == 0)
        return H5Gopen2(h->file, "/", H5P_DEFAULT);
    return H5Oopen_by_addr(h->file, (haddr_t)NODE(h, id)->addr);
}

/* By its address for an "@ADDR": H5Rdereference2 applies dapl (chunk
 * cache, external-file prefix), H5Oopen_by_addr would not. */
hid_t h5_dset_open(h5 *h, uint32_t id, hid_t g, const char *name, hid_t dapl)
{
    if (NODE(h, id)->idx != ANON_IDX || NODE(h, id)->parent != 0)
        return H5Dopen2(g, name, dapl);
    hobj_ref_t ref = (hobj_ref_t)NODE(h, id)->addr;
    hid_t d = H5Rdereference2(h->file, dapl, H5R_OBJECT, &ref);
    if (d >= 0 && H5Iget_type(d) != H5I_DATASET) {
        H5Oclose(d);
        d = H5I_INVALID_HID;
    }
    return d;
}
