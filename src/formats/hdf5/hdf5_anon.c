/* hdf5_anon.c - objects no path names, reached by their address: the name
 * "@ADDR" of the root (docs/hdf5.md "Objects no path names").
 *
 * An object reference may lead to an object no link names (JLD2 keeps
 * the elements of its containers so); its reference text is "@" and the
 * address of its object header (hdf5_vlen.c ref_name).  The root resolves
 * that name to the object: lookup only, the listing never shows it
 * (finding them would mean reading every reference of the file at the
 * first readdir of the root).  Each name resolved gets a node once
 * (h->anon), whose idx is ANON_IDX and whose name is in h->anon_names;
 * the objects under an unnamed group are listed as any group's. */
#include "hdf5_int.h"

/* The address "@ADDR" names: '@', then decimal digits without a leading
 * zero; 0 when name is no such name. */
static uint64_t anon_addr(const char *name)
{
    if (name[0] != '@' || name[1] < '1' || name[1] > '9' || strlen(name + 1) > 20 ||
        strspn(name + 1, "0123456789") != strlen(name + 1))
        return 0;
    guint64 a;
    return g_ascii_string_to_unsigned(name + 1, 10, 1, G_MAXUINT64, &a, NULL) ? a : 0;
}

/* The group or dataset whose object header is at addr, open, or -1 when
 * there is none there: the address is bounded by the file, and where the
 * reader reads headers itself (h5_header_read) anything it knows is no
 * group or dataset header is refused before libhdf5 is asked (which still
 * judges what that reader leaves to it). */
static hid_t anon_open(h5 *h, uint64_t addr)
{
    hpc_h5ohdr o;
    if (addr >= h->src->size || h->userblock >= h->src->size - addr)
        return H5I_INVALID_HID;
    int rc = h5_header_read(h, addr, &o);
    if ((rc != HPC_OK && rc != HPC_E_NOTSUP) ||
        (rc == HPC_OK && o.kind != HPC_H5OBJ_GROUP && o.kind != HPC_H5OBJ_DATASET))
        return H5I_INVALID_HID;
    hid_t id = H5Oopen_by_addr(h->file, (haddr_t)addr);
    H5I_type_t t = id >= 0 ? H5Iget_type(id) : H5I_BADID;
    if (id >= 0 && t != H5I_GROUP && t != H5I_DATASET) {
        H5Oclose(id);
        id = H5I_INVALID_HID;
    }
    return id;
}

/* The path h5py names open object id by (H5Iget_name: libhdf5 searches
 * the file), or NULL for none; *err on a failure. */
static char *anon_named(hid_t id, int *err)
{
    ssize_t n = H5Iget_name(id, NULL, 0);
    *err = n < 0;
    if (n <= 0)
        return NULL;
    char *p = g_malloc0((size_t)n + 1);
    if (H5Iget_name(id, p, (size_t)n + 1) < 0) {
        *err = 1;
        g_free(p);
        return NULL;
    }
    return p;
}

/* Whether every component of path can be a file name: else the path
 * leads nowhere in the mount (its links are left out, hdf5_tree.c). */
static int anon_path_servable(const char *path)
{
    for (const char *p = path + 1; *p;) {
        size_t n = strcspn(p, "/");
        if (!h5_file_name_ok(p, n))
            return 0;
        p += n + (p[n] == '/');
    }
    return 1;
}

/* A new node for unnamed object id (open) at addr, or 0 for a dataset
 * larger than a file. */
static uint32_t anon_node(h5 *h, hid_t id, uint64_t addr, const char *name)
{
    uint8_t kind = K_GROUP;
    if (H5Iget_type(id) == H5I_DATASET) {
        if (h5_dset_too_large(h, id, 0, name))
            return 0;
        kind = h5_dset_is_dir(id) ? K_VLEN : K_DATASET;
    }
    uint32_t n = h5_node_new(h, kind, addr, 0, ANON_IDX);
    NODE(h, n)->nlink = kind == K_DATASET ? 1 : 0;
    g_hash_table_insert(h->anon_names, GUINT_TO_POINTER(n), g_strdup(name));
    g_hash_table_insert(h->by_addr, GSIZE_TO_POINTER(addr), GUINT_TO_POINTER(n));
    return n;
}

/* A symlink at the root named name to target (taken). */
static uint32_t anon_link(h5 *h, const char *name, char *target)
{
    uint32_t n = h5_node_new(h, K_GLINK, 0, 0, ANON_IDX);
    NODE(h, n)->size = strlen(target);
    NODE(h, n)->state = S_OK;
    g_hash_table_insert(h->targets, GUINT_TO_POINTER(n), target);
    g_hash_table_insert(h->anon_names, GUINT_TO_POINTER(n), g_strdup(name));
    return n;
}

/* The node of the object at addr (open as id) named name at the root.
 * An object a path of the mount names is a symlink to that path; one a
 * path names that holds no file name (a link of 300 bytes) is served as
 * an unnamed one; an unnamed one met already under an unnamed group is
 * that dataset, or a symlink to that group (a directory has one name). */
static uint32_t anon_resolve(h5 *h, hid_t id, uint64_t addr, const char *name)
{
    int err;
    char *path = anon_named(id, &err);
    if (err)
        return 0;
    if (path && !anon_path_servable(path))
        g_clear_pointer(&path, g_free);
    if (path) {
        char *target = g_strdup(path[0] == '/' && path[1] ? path + 1 : ".");
        g_free(path);
        return anon_link(h, name, target);
    }
    gpointer v;
    if (!g_hash_table_lookup_extended(h->by_addr, GSIZE_TO_POINTER(addr), NULL, &v))
        return anon_node(h, id, addr, name);
    uint32_t n = GPOINTER_TO_UINT(v);
    if (NODE(h, n)->kind != K_GROUP && NODE(h, n)->kind != K_VLEN)
        return n;
    char *p = h5_node_path(h, n);
    uint32_t s = anon_link(h, name, g_strdup(p + 1));
    g_free(p);
    return s;
}

int h5_anon_lookup(h5 *h, const char *name, uint32_t *out)
{
    uint64_t addr = anon_addr(name);
    if (addr == 0)
        return HPC_E_NOENT;
    gpointer v;
    if (g_hash_table_lookup_extended(h->anon, GSIZE_TO_POINTER(addr), NULL, &v)) {
        *out = GPOINTER_TO_UINT(v);
        return *out ? HPC_OK : HPC_E_NOENT;
    }
    hid_t id = anon_open(h, addr);
    uint32_t n = id >= 0 ? anon_resolve(h, id, addr, name) : 0;
    /* only addresses of objects are remembered (0: one left out, larger
     * than a file): lookups of any number where none lies cost no memory */
    if (id >= 0) {
        H5Oclose(id);
        g_hash_table_insert(h->anon, GSIZE_TO_POINTER(addr), GUINT_TO_POINTER(n));
    }
    *out = n;
    return n ? HPC_OK : HPC_E_NOENT;
}

/* A link of the root named "@ADDR" wins over the object at ADDR; where
 * that object is one no path names, it is left out: a line in .info. */
void h5_anon_hidden(h5 *h, h5_list *l, const char *name)
{
    uint64_t addr = anon_addr(name);
    hid_t id = addr ? anon_open(h, addr) : H5I_INVALID_HID;
    if (id < 0)
        return;
    int err;
    char *path = anon_named(id, &err);
    H5Oclose(id);
    if (!path && !err) {
        if (!l->notes)
            l->notes = g_string_new(NULL);
        g_string_append_printf(l->notes, "/%s -> a link of the root: the object at %" PRIu64
                               ", which no path names, is not shown\n", name, addr);
    }
    g_free(path);
}
