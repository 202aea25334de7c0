/* hdf5_tree.c - the lazy tree of the HDF5 reader (see the note below):
 * group listings, links, and the lookup/getattr/readdir/readlink calls.
 * Its nodes are hdf5_node.c's, below the handles (hdf5_handle.c) that
 * this file opens datasets with. */
#include "hdf5_int.h"

/* ---- the lazy tree ------------------------------------------------------
 *
 * Nothing is walked at mount.  A group is listed (H5Literate by name; each
 * new object's type and link count read from its object header, below)
 * when it is first looked up or read; its listing stays for the life of
 * the mount: per entry a 4-byte node id, a 4-byte name offset and the
 * name.  Each object met gets one 32-byte node (h5_node) whose index is
 * its inode number minus HPC_INO_FIRST - 1, so node ids never change while
 * mounted; objects are found again by their object header address
 * (by_addr), which gives further hard links to a dataset the same inode.
 * A dataset is opened (and described) when its size, bytes or xattrs are
 * first needed; open handles live in an LRU bounded in number and in the
 * bytes of their chunk caches and rendered text.
 *
 * Locking: h->lock guards nodes, listings, handles and the counters; it is
 * taken before libhdf5's global lock, never inside a libhdf5 callback. */

static hpc_ino id_to_ino(uint32_t id)
{
    return id == 0 ? HPC_INO_ROOT : HPC_INO_FIRST + id - 1;
}

/* Symlink target for HDF5 path `target` seen from group `dir`. */
static char *rel_target(const char *dir, const char *target)
{
    if (target[0] != '/')
        return g_strdup(target);
    GString *s = g_string_new(NULL);
    gchar **parts = g_strsplit(dir, "/", -1);
    for (gchar **p = parts; *p; p++)
        if (**p)
            g_string_append(s, "../");
    g_strfreev(parts);
    while (*target == '/')
        target++;
    g_string_append(s, target);
    if (s->len == 0)
        g_string_append_c(s, '.');
    else if (s->str[s->len - 1] == '/')
        g_string_truncate(s, s->len - 1);
    return g_string_free(s, FALSE);
}

typedef struct link_ent {
    char *name;
    H5L_type_t type;
    haddr_t addr;
    size_t vsize;
} link_ent;

static herr_t collect_link(hid_t g, const char *name, const H5L_info_t *info, void *p)
{
    (void)g;
    link_ent e = { g_strdup(name), info->type, HADDR_UNDEF, 0 };
    if (info->type == H5L_TYPE_HARD)
        e.addr = info->u.address;
    else
        e.vsize = info->u.val_size;
    g_array_append_val((GArray *)p, e);
    return 0;
}

/* A symlink node under group dir (entry idx) to target. */
static uint32_t symlink_new(h5 *h, uint8_t kind, uint32_t dir, uint32_t idx, char *target)
{
    uint32_t id = h5_node_new(h, kind, 0, dir, idx);
    NODE(h, id)->size = strlen(target);
    NODE(h, id)->state = S_OK;
    g_hash_table_insert(h->targets, GUINT_TO_POINTER(id), target);
    return id;
}

static uint32_t classify_soft(h5 *h, hid_t g, uint32_t dir, uint32_t idx, const link_ent *e)
{
    char *val = e->vsize <= h->src->size ? g_malloc0(e->vsize + 1) : NULL;
    if (!val || H5Lget_val(g, e->name, val, e->vsize, H5P_DEFAULT) < 0) {
        char *why = val ? h5_errtext() : g_strdup("value longer than the file");
        uint32_t id = h5_node_new(h, K_DAMAGED, 0, dir, idx);
        h5_note_damaged(h, id, "cannot read the link", why);
        g_free(why);
        g_free(val);
        return id;
    }
    char *dpath = h5_node_path(h, dir);
    uint32_t id = symlink_new(h, K_SOFT, dir, idx, rel_target(dpath, val));
    g_free(dpath);
    g_free(val);
    return id;
}

/* The type and link count of hard link e's object and, for a dataset,
 * whether it certainly fits in a file: from the object header where the
 * reader is sure of it (a type whose size is not known there has at most
 * 2^32 - 1 bytes), else from libhdf5 (H5Gget_objinfo; such a dataset is
 * left to too_large).  HPC_E_IO: libhdf5 cannot read the header. */
static int object_info(h5 *h, hid_t g, const link_ent *e, H5G_obj_t *type, uint32_t *nlink,
                       int *fits, int *seq)
{
    hpc_h5ohdr o;
    if (h5_header_read(h, (uint64_t)e->addr, &o) == HPC_OK) {
        *type = o.kind == HPC_H5OBJ_GROUP ? H5G_GROUP : o.kind == HPC_H5OBJ_DATASET ? H5G_DATASET
                                                                                 : H5G_TYPE;
        *nlink = o.nlink;
        *fits = !hpc_h5_over_file_size(o.tsize ? o.tsize : UINT32_MAX, o.rank, o.dims);
        *seq = o.seq;
        return HPC_OK;
    }
    H5G_stat_t st;
    if (H5Gget_objinfo(g, e->name, 0, &st) < 0)
        return HPC_E_IO;
    *type = st.type;
    *nlink = st.nlink;
    *fits = 0;
    *seq = -1;
    return HPC_OK;
}

/* The same of dataset `name` of group g; a dataset libhdf5 cannot open
 * is a file, whose reads then fail. */
static int dset_is_seq(hid_t g, const char *name, hid_t dapl)
{
    hid_t d = H5Dopen2(g, name, dapl);
    int seq = d >= 0 && h5_dset_is_dir(d);
    if (d >= 0)
        H5Dclose(d);
    return seq;
}

/* The same of dataset `name` of group g (node dir).  Opens the dataset:
 * the listing asks only where object_info cannot say. */
static int too_large(h5 *h, hid_t g, uint32_t dir, const char *name)
{
    hid_t d = H5Dopen2(g, name, h->dapl);
    if (d < 0)
        return 0;
    int over = h5_dset_too_large(h, d, dir, name);
    H5Dclose(d);
    return over;
}

/* The node of hard link idx (named e->name) of group dir; 0: left out
 * (committed datatypes, datasets larger than a file). */
static uint32_t classify_hard(h5 *h, hid_t g, h5_list *l, uint32_t dir, uint32_t idx,
                              const link_ent *e)
{
    gpointer v;
    uint64_t addr = (uint64_t)e->addr;
    if (g_hash_table_lookup_extended(h->by_addr, GSIZE_TO_POINTER(addr), NULL, &v)) {
        uint32_t id = GPOINTER_TO_UINT(v);
        const h5_node *n = NODE(h, id);
        if ((n->kind != K_GROUP && n->kind != K_VLEN) || (n->parent == dir && n->idx == idx))
            return id;
        /* a directory cannot have two names: the first one met stays the
         * directory, the others point to it (this also breaks cycles) */
        char *dpath = h5_node_path(h, dir), *gpath = h5_node_path(h, id);
        uint32_t s = symlink_new(h, K_GLINK, dir, idx, rel_target(dpath, gpath));
        g_free(dpath);
        g_free(gpath);
        return s;
    }
    H5G_obj_t type;
    uint32_t id, nlink;
    int fits, seq;
    if (object_info(h, g, e, &type, &nlink, &fits, &seq) != HPC_OK) {
        char *why = h5_errtext();
        id = h5_node_new(h, K_DAMAGED, addr, dir, idx);
        h5_note_damaged(h, id, "cannot read the object header", why);
        g_free(why);
    } else if (type == H5G_DATASET && !fits && too_large(h, g, dir, e->name)) {
        return 0;
    } else if (type == H5G_DATASET && (seq > 0 || (seq < 0 && dset_is_seq(g, e->name, h->dapl)))) {
        id = h5_node_new(h, K_VLEN, addr, dir, idx);
        NODE(h, id)->nlink = 0;
    } else if (type == H5G_GROUP || type == H5G_DATASET) {
        id = h5_node_new(h, type == H5G_GROUP ? K_GROUP : K_DATASET, addr, dir, idx);
        NODE(h, id)->nlink = type == H5G_GROUP ? 0 : MAX(nlink, 1u);
    } else {
        l->ntypes++;
        return 0;                  /* committed datatypes have no bytes */
    }
    g_hash_table_insert(h->by_addr, GSIZE_TO_POINTER(addr), GUINT_TO_POINTER(id));
    return id;
}

/* The symlink target of an external link to object obj of file `file`
 * from group path dir: up out of the container's tree to where its file
 * lies, the file's name as stored, then "/" and the object's absolute
 * path, so that "//" parts the file from the object (docs/hdf5.md).  In a
 * run directory the container's tree stands where its file lies, so the
 * target leads into the tree of the target file, found as libhdf5 finds
 * it: a relative name in the linking file's directory.  An absolute name
 * stays absolute. */
static char *elink_target(const char *dir, const char *file, const char *obj)
{
    GString *s = g_string_new(NULL);
    if (file[0] != '/') {
        gchar **parts = g_strsplit(dir, "/", -1);
        for (gchar **p = parts; *p; p++)
            if (**p)
                g_string_append(s, "../");
        g_strfreev(parts);
        g_string_append(s, "../");
    }
    while (*obj == '/')
        obj++;
    g_string_append_printf(s, "%s//%s", file, obj);
    return g_string_free(s, FALSE);
}

/* External links are symlinks (K_ELINK); user-defined ones are left out
 * with a line for .info. */
static uint32_t classify_other(h5 *h, hid_t g, h5_list *l, uint32_t dir, uint32_t idx,
                               const link_ent *e)
{
    char *dpath = h5_node_path(h, dir);
    uint32_t id = 0;
    if (e->type == H5L_TYPE_EXTERNAL) {
        char *val = e->vsize <= h->src->size ? g_malloc0(e->vsize + 1) : NULL;
        const char *file = NULL, *obj = NULL;
        unsigned flags;
        if (val && H5Lget_val(g, e->name, val, e->vsize, H5P_DEFAULT) >= 0 &&
            H5Lunpack_elink_val(val, e->vsize, &flags, &file, &obj) >= 0 && file && *file && obj) {
            id = symlink_new(h, K_ELINK, dir, idx, elink_target(dpath, file, obj));
        } else {
            char *why = val ? h5_errtext() : g_strdup("value longer than the file");
            id = h5_node_new(h, K_DAMAGED, 0, dir, idx);
            h5_note_damaged(h, id, "cannot read the external link", why);
            g_free(why);
        }
        g_free(val);
    } else {
        if (!l->notes)
            l->notes = g_string_new(NULL);
        g_string_append_printf(l->notes, "%s%s%s -> user-defined link type %d (not followed)\n",
                               dpath, strcmp(dpath, "/") == 0 ? "" : "/", e->name, (int)e->type);
    }
    g_free(dpath);
    return id;
}

static void link_ents_free(GArray *a)
{
    for (guint i = 0; i < a->len; i++)
        g_free(g_array_index(a, link_ent, i).name);
    g_array_free(a, TRUE);
}

/* Whether a link name can be no file name: "." and ".." (HDF5 links may
 * have them, h5py lists and opens them), the empty name, names longer
 * than 255 bytes (the kernel's limit) and names holding '/' (libhdf5
 * writes none; a damaged or foreign file may).  Such links are left out
 * with a line in .info, which names the "@ADDR" of a hard link's object:
 * where no other path names it, that name serves it (hdf5_anon.c).  A
 * name that is not UTF-8 is served as its bytes, as a Linux file name is. */
static int no_file_name(h5 *h, h5_list *l, uint32_t dir, const link_ent *e)
{
    size_t len = strlen(e->name);
    if (h5_file_name_ok(e->name, len))
        return 0;
    if (!l->notes)
        l->notes = g_string_new(NULL);
    char *dpath = h5_node_path(h, dir);
    const char *sep = strcmp(dpath, "/") ? "/" : "";
    if (len > NAME_MAX_LEN)
        g_string_append_printf(l->notes, "%s%s%.40s... -> name of %zu bytes, longer than a "
                               "file name (255): not shown", dpath, sep, e->name, len);
    else
        g_string_append_printf(l->notes, "%s%s%s -> name that is no file name: not shown",
                               dpath, sep, e->name);
    if (e->type == H5L_TYPE_HARD && e->addr != HADDR_UNDEF)
        g_string_append_printf(l->notes, "; its object: @%" PRIu64, (uint64_t)e->addr);
    g_string_append_c(l->notes, '\n');
    g_free(dpath);
    return 1;
}

/* Build the listing of group dir from its links (g open). */
static h5_list *list_build(h5 *h, hid_t g, uint32_t dir, GArray *ents)
{
    h5_list *l = g_new0(h5_list, 1);
    GString *names = g_string_new(NULL);
    l->n = ents->len;
    l->child = g_new0(uint32_t, l->n ? l->n : 1);
    l->name_at = g_new0(uint32_t, l->n ? l->n : 1);
    for (guint i = 0; i < ents->len; i++) {
        l->name_at[i] = (uint32_t)names->len;
        g_string_append_len(names, g_array_index(ents, link_ent, i).name,
                            (gssize)strlen(g_array_index(ents, link_ent, i).name) + 1);
        if (i > 0 && strcmp(g_array_index(ents, link_ent, i - 1).name,
                            g_array_index(ents, link_ent, i).name) >= 0)
            l->unsorted = 1;
    }
    l->names = g_string_free(names, FALSE);
    /* the listing is in place before the children are classified: their
     * paths go through it */
    g_hash_table_insert(h->lists, GUINT_TO_POINTER(dir), l);
    for (guint i = 0; i < ents->len; i++) {
        const link_ent *e = &g_array_index(ents, link_ent, i);
        if (no_file_name(h, l, dir, e))
            continue;
        if (dir == 0 && e->name[0] == '@')
            h5_anon_hidden(h, l, e->name);
        if (e->type == H5L_TYPE_HARD)
            l->child[i] = classify_hard(h, g, l, dir, i, e);
        else if (e->type == H5L_TYPE_SOFT)
            l->child[i] = classify_soft(h, g, dir, i, e);
        else
            l->child[i] = classify_other(h, g, l, dir, i, e);
    }
    return l;
}

/* The dataset node a part node id belongs to. */
uint32_t h5_part_dataset(h5 *h, uint32_t id)
{
    while (NODE(h, id)->kind == K_PART || NODE(h, id)->kind == K_PDIR)
        id = NODE(h, id)->parent;
    return id;
}

/* The entries of directory part p as a listing of dir (in the part's
 * order: a compound's members as the file has them). */
static h5_list *list_part_entries(h5 *h, uint32_t dir, const h5_dset *d, const h5_part *p)
{
    h5_list *l = g_new0(h5_list, 1);
    GString *names = g_string_new(NULL);
    uint32_t n = p && p->dir ? p->n : 0, first = n ? p->first : 0;
    l->n = n;
    l->unsorted = 1;
    l->child = g_new0(uint32_t, n + 1);
    l->name_at = g_new0(uint32_t, n + 1);
    for (uint32_t i = 0; i < n; i++) {
        const h5_part *e = h5_part_of(d, first + i);
        l->name_at[i] = (uint32_t)names->len;
        g_string_append_len(names, e->name, (gssize)strlen(e->name) + 1);
        l->child[i] = h5_node_new(h, e->dir ? K_PDIR : K_PART, first + i, dir, i);
    }
    l->names = g_string_free(names, FALSE);
    g_hash_table_insert(h->lists, GUINT_TO_POINTER(dir), l);
    return l;
}

/* The listing of a directory dataset (K_VLEN) or of one of its directory
 * parts (K_PDIR): rendered when the dataset is described. */
static int list_parts(h5 *h, uint32_t dir, h5_list **out)
{
    h5_handle *hd;
    int rc = h5_handle_get(h, h5_part_dataset(h, dir), &hd);
    if (rc != HPC_OK)
        return rc;
    uint64_t pi = NODE(h, dir)->kind == K_PDIR ? NODE(h, dir)->addr : 0;
    *out = list_part_entries(h, dir, hd->d, h5_part_of(hd->d, pi));
    h5_handle_put(h, hd);
    return HPC_OK;
}

/* The listing of group node dir, made on first use; HPC_E_IO for a group
 * libhdf5 cannot list (logged).  Lock held. */
int h5_list_group(h5 *h, uint32_t dir, h5_list **out)
{
    h5_list *l = g_hash_table_lookup(h->lists, GUINT_TO_POINTER(dir));
    *out = NULL;
    if (!l && (NODE(h, dir)->kind == K_VLEN || NODE(h, dir)->kind == K_PDIR))
        return list_parts(h, dir, out);
    if (!l) {
        GArray *ents = g_array_new(FALSE, FALSE, sizeof(link_ent));
        hsize_t at = 0;
        hid_t g = h5_group_open(h, dir);
        if (g < 0 || H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &at, collect_link, ents) < 0) {
            char *why = h5_errtext();
            h5_note_damaged(h, dir, g < 0 ? "cannot open the group" : "cannot list the group", why);
            g_free(why);
            NODE(h, dir)->state = S_BAD;
            g_array_set_size(ents, 0);
        }
        l = list_build(h, g, dir, ents);
        link_ents_free(ents);
        if (g >= 0)
            H5Oclose(g);
        /* libhdf5 sizes its metadata cache by the hit rate of the last
         * 50000 accesses: the misses of a listing (each group's index
         * loaded once) made it double the cache at the first dataset
         * opens after a find, for no better hit rate (25 MiB more and
         * twice the page faults for an ls -lR of 10^4 datasets). */
        H5Freset_mdc_hit_rate_stats(h->file);
    }
    if (NODE(h, dir)->state == S_BAD)
        return h5_damaged_read(h, dir);
    *out = l;
    return HPC_OK;
}

/* Index of name in l, or -1. */
static int64_t list_find(const h5_list *l, const char *name)
{
    if (l->unsorted) {
        for (uint32_t i = 0; i < l->n; i++)
            if (strcmp(l->names + l->name_at[i], name) == 0)
                return i;
        return -1;
    }
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->names + l->name_at[mid], name);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}


/* ---- nodes as the core sees them -------------------------------------- */

/* Attributes of node id.  Lock held. */
/* A described dataset's read bits (h5_dset.perm). */
static uint32_t dset_bits(h5 *h, uint32_t id)
{
    gpointer v = g_hash_table_lookup(h->narrowed, GUINT_TO_POINTER(id));
    return v ? GPOINTER_TO_UINT(v) & HPC_PERM_ALL : HPC_PERM_ALL;
}

/* A file part of a directory dataset: its size once the dataset is read. */
static int part_stat(h5 *h, uint32_t id, hpc_stat *st)
{
    uint32_t ds = h5_part_dataset(h, id);
    h5_handle *hd;
    int rc = h5_handle_get(h, ds, &hd);
    if (rc != HPC_OK)
        return rc;
    const h5_part *p = h5_part_of(hd->d, NODE(h, id)->addr);
    NODE(h, id)->size = p ? p->size : 0;
    NODE(h, id)->state = S_OK;
    h5_handle_put(h, hd);
    st->mode = hpc_perm_mode(HPC_MODE_FILE, dset_bits(h, ds));
    st->size = NODE(h, id)->size;
    st->nlink = 1;
    return HPC_OK;
}

static int is_dir(uint8_t kind)
{
    return kind == K_GROUP || kind == K_VLEN || kind == K_PDIR;
}

static int node_stat(h5 *h, uint32_t id, hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = id_to_ino(id);
    switch (NODE(h, id)->kind) {
    case K_GROUP:
        st->mode = HPC_MODE_DIR;
        return HPC_OK;
    case K_SOFT:
    case K_GLINK:
    case K_ELINK:
        st->mode = HPC_MODE_LINK;
        st->size = NODE(h, id)->size;
        return HPC_OK;
    case K_DATASET:
        if (NODE(h, id)->state != S_OK) {
            h5_handle *hd;
            int rc = h5_handle_get(h, id, &hd);
            if (rc != HPC_OK)
                return rc;
            h5_handle_put(h, hd);
        }
        st->mode = hpc_perm_mode(HPC_MODE_FILE, dset_bits(h, id));
        st->size = NODE(h, id)->size;
        st->nlink = NODE(h, id)->nlink;
        return HPC_OK;
    case K_VLEN:
    case K_PDIR:
        st->mode = HPC_MODE_DIR;
        return HPC_OK;
    case K_PART:
        return part_stat(h, id, st);
    default:
        return h5_damaged_read(h, id);
    }
}

int h5_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    h5 *h = c->priv;
    h5_list *l;
    int rc;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t dir = h5_ino_to_id(parent, h);
    if (dir == NO_PARENT) {
        rc = HPC_E_NOENT;
    } else if (!is_dir(NODE(h, dir)->kind)) {
        rc = HPC_E_NOTDIR;
    } else if ((rc = h5_list_group(h, dir, &l)) == HPC_OK) {
        int64_t i = list_find(l, name);
        uint32_t id = i >= 0 ? l->child[i] : 0;
        /* a link of that name wins over an "@ADDR" */
        if (i < 0 && dir == 0 && h5_anon_lookup(h, name, &id) != HPC_OK)
            id = 0;
        rc = id == 0 ? HPC_E_NOENT : node_stat(h, id, st);
    }
    g_mutex_unlock(&h->lock);
    return rc;
}

int h5_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    h5 *h = c->priv;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t id = h5_ino_to_id(ino, h);
    int rc = id == NO_PARENT ? HPC_E_NOENT : node_stat(h, id, st);
    g_mutex_unlock(&h->lock);
    return rc;
}

int h5_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    h5 *h = c->priv;
    h5_list *l;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t id = h5_ino_to_id(dir, h);
    int rc = id == NO_PARENT ? HPC_E_NOENT : !is_dir(NODE(h, id)->kind) ? HPC_E_NOTDIR
                                                                         : h5_list_group(h, id, &l);
    g_mutex_unlock(&h->lock);
    for (uint64_t i = cookie; rc == HPC_OK && i < l->n; i++) {
        hpc_stat st;
        if (l->child[i] == 0)
            continue;
        g_mutex_lock(&h->lock);
        const h5_node *n = NODE(h, l->child[i]);
        if ((n->kind == K_DATASET || n->kind == K_PART) && n->state != S_OK) {
            /* not opened for a listing (find, ls): the size is asked for
             * by getattr; damaged ones are listed (as h5py lists them),
             * their getattr and reads fail */
            memset(&st, 0, sizeof st);
            st.ino = id_to_ino(l->child[i]);
            st.mode = HPC_MODE_FILE;
            st.nlink = n->nlink;
            st.partial = 1;
        } else if (node_stat(h, l->child[i], &st) != HPC_OK) {
            memset(&st, 0, sizeof st);
            st.ino = id_to_ino(l->child[i]);
            st.mode = HPC_MODE_FILE;
            st.partial = 1;
        }
        g_mutex_unlock(&h->lock);
        if (fn(ctx, l->names + l->name_at[i], &st, i + 1))
            break;
    }
    return rc;
}

int h5_readlink(hpc_container *c, hpc_ino ino, char **target)
{
    h5 *h = c->priv;
    g_mutex_lock(&h->lock);
    uint32_t id = h5_ino_to_id(ino, h);
    const char *t = id == NO_PARENT ? NULL : g_hash_table_lookup(h->targets, GUINT_TO_POINTER(id));
    *target = g_strdup(t);
    g_mutex_unlock(&h->lock);
    return t ? HPC_OK : HPC_E_INVAL;
}
