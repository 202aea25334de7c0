/* fmt_hdf5.c - HDF5 files through libhdf5.
 *
 * libhdf5 is the parser: superblocks 0-3, both object header versions, all
 * chunk indexes, fractal heaps and filters are its business.  Groups are
 * directories, datasets files holding their elements in C order and
 * little-endian, soft links symlinks, further hard links to a dataset the
 * same inode, attributes xattrs user.attr.<name>.  Nothing is walked at
 * mount: a group is listed when first used (hdf5_tree.c), a dataset opened
 * and described when first needed (hdf5_dset.c), and open handles live in
 * an LRU bounded in number and bytes (hdf5_handle.c), each with a chunk
 * cache large enough for one row of chunks, so that a sequential read
 * decompresses every chunk once.
 *
 * A read of bytes [off, off+len) becomes the elements [e0, e1), i.e. at most
 * 2*rank-1 hyperslab boxes, and one H5Dread into a memory type that is the
 * file type with little-endian byte order.  Contiguous, unfiltered data
 * whose file type already is that memory type are read with pread at
 * H5Dget_offset through the block cache, outside libhdf5's global lock
 * (and mapped, so that the daemon splices large reads).
 *
 * Debian's libhdf5 is thread-safe: every call takes one global lock.  Its
 * error stack and the "print errors" switch are per thread, hence
 * h5_quiet() on every entry point.
 *
 * This file: probe, open/close and .info; hdf5_lib.c silences libhdf5.
 * hdf5_data.c reads bytes, hdf5_attr.c serves attributes; hdf5_int.h is
 * what the reader's files share.
 */
#include "hdf5_int.h"

/* ---- libhdf5 housekeeping --------------------------------------------- */

/* A read-only view must not take (or wait for) a writer's lock.  Said
 * through the environment, not a fapl: libhdf5 opens the source files of
 * a virtual dataset with a fapl of its own, and refuses to open a file
 * twice with two locking settings, so a source the mount also serves in
 * this process would fail either as a container or as a source (its
 * values read as fill).  A user's own setting stays. */
static gpointer set_no_locking(gpointer unused)
{
    (void)unused;
    g_setenv("HDF5_USE_FILE_LOCKING", "FALSE", FALSE);
    return NULL;
}

static void h5_no_locking(void)
{
    static GOnce once = G_ONCE_INIT;
    g_once(&once, set_no_locking, NULL);
}

static int h5_probe(const char *path, const unsigned char *head, size_t len)
{
    /* the superblock sits at 0 or after a user block of 512 * 2^k bytes */
    for (uint64_t at = 0; head && at + 8 <= len; at = at ? at * 2 : 512)
        if (memcmp(head + at, H5_SIG, 8) == 0)
            return 100;
    if (!head || len < 4096 || !path)
        return 0;
    hpc_source s;
    int score = 0;
    if (hpc_source_open(path, &s, NULL) != HPC_OK)
        return 0;
    for (uint64_t at = 4096; at + 8 <= s.size && at != 0; at *= 2) {
        unsigned char sig[8];
        if (hpc_source_pread(&s, sig, 8, at) == HPC_OK && memcmp(sig, H5_SIG, 8) == 0) {
            score = 100;
            break;
        }
    }
    hpc_source_close(&s);
    return score;
}

/* Offset of the superblock, for messages; 0 if none found. */
static uint64_t superblock_offset(const hpc_source *s)
{
    for (uint64_t at = 0; at + 8 <= s->size; at = at ? at * 2 : 512) {
        unsigned char sig[8];
        if (hpc_source_pread(s, sig, 8, at) == HPC_OK && memcmp(sig, H5_SIG, 8) == 0)
            return at;
    }
    return 0;
}


/* ---- open / close ----------------------------------------------------- */

static void list_free(gpointer p)
{
    h5_list *l = p;
    g_free(l->child);
    g_free(l->name_at);
    g_free(l->names);
    if (l->notes)
        g_string_free(l->notes, TRUE);
    g_free(l);
}

static void h5_free(h5 *h)
{
    if (!h)
        return;
    GList *l;
    while ((l = g_queue_pop_head_link(&h->lru)))
        h5_handle_close(h, l->data);
    if (h->handles)
        g_hash_table_destroy(h->handles);
    if (h->lists)
        g_hash_table_destroy(h->lists);
    if (h->by_addr)
        g_hash_table_destroy(h->by_addr);
    if (h->anon)
        g_hash_table_destroy(h->anon);
    if (h->anon_names)
        g_hash_table_destroy(h->anon_names);
    if (h->targets)
        g_hash_table_destroy(h->targets);
    if (h->reasons)
        g_hash_table_destroy(h->reasons);
    if (h->narrowed)
        g_hash_table_destroy(h->narrowed);
    if (h->ref_names)
        g_hash_table_destroy(h->ref_names);
    h5_ncdims_free(h);
    if (h->nodes)
        g_array_free(h->nodes, TRUE);
    if (h->dapl >= 0)
        H5Pclose(h->dapl);
    if (h->file >= 0)
        H5Fclose(h->file);
    hpc_h5chunk_cache_free(h->chunks);
    hpc_h5elem_free(h->elems);
    if (h->warnings)
        g_string_free(h->warnings, TRUE);
    if (h->damaged)
        g_string_free(h->damaged, TRUE);
    g_free(h->win);
    g_mutex_clear(&h->lock);
    g_free(h);
}

static void h5_close(hpc_container *c)
{
    h5_quiet();
    h5_free(c->priv);
    c->priv = NULL;
}

static h5 *h5_new(const hpc_container *c)
{
    h5 *h = g_new0(h5, 1);
    g_mutex_init(&h->lock);
    h->file = h->dapl = H5I_INVALID_HID;
    h->nodes = g_array_new(FALSE, FALSE, sizeof(h5_node));
    h->by_addr = g_hash_table_new(g_direct_hash, g_direct_equal);
    h->anon = g_hash_table_new(g_direct_hash, g_direct_equal);
    h->anon_names = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    h->lists = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, list_free);
    h->targets = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    h->reasons = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    h->handles = g_hash_table_new(g_direct_hash, g_direct_equal);
    h->narrowed = g_hash_table_new(g_direct_hash, g_direct_equal);
    h->uid = c->uid;
    h->gid = c->gid;
    g_queue_init(&h->lru);
    h->warnings = g_string_new(NULL);
    h->damaged = g_string_new(NULL);
    h->max_handles = hpc_hdf5_opt_handles(&c->opts);
    h->max_handle_bytes = hpc_hdf5_opt_cache(&c->opts);
    h->elems = hpc_h5elem_new();
    h->chunks = hpc_h5chunk_cache_new(c->opts.cache_size ? c->opts.cache_size : (64u << 20));
    return h;
}

/* Open the file and its root group: all a mount costs. */
static int h5_open(hpc_container *c, GError **err)
{
    h5_quiet();
    h5 *h = h5_new(c);
    hid_t root = H5I_INVALID_HID;
    int rc;
    h->src = c->host->add_source(c, c->path, err);
    if (!h->src) {
        rc = HPC_E_IO;
        goto out;
    }
    uint64_t sb = superblock_offset(h->src);
    h5_no_locking();
    h->file = H5Fopen(c->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (h->file < 0) {
        char *why = h5_errtext();
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, "superblock", sb,
                      "libhdf5 cannot open the file: %s", why);
        g_free(why);
        goto out;
    }
    H5F_info2_t fi;
    if (H5Fget_info2(h->file, &fi) >= 0)
        h->super_version = fi.super.version;
    hid_t fcpl = H5Fget_create_plist(h->file);
    hsize_t ub = 0;
    if (fcpl >= 0) {
        H5Pget_userblock(fcpl, &ub);
        H5Pclose(fcpl);
    }
    h->userblock = ub;
    h5_headers_init(h);
    h->dapl = h5_dset_access(0, 0, 0);
    root = H5Gopen2(h->file, "/", H5P_DEFAULT);
    H5O_info_t oi;
    if (root < 0 || h->dapl < 0 || H5Oget_info2(root, &oi, H5O_INFO_BASIC) < 0) {
        char *why = h5_errtext();
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, "root group", sb,
                      "libhdf5 cannot open the root group: %s", why);
        g_free(why);
        goto out;
    }
    h5_node_new(h, K_GROUP, (uint64_t)oi.addr, NO_PARENT, 0);
    g_hash_table_insert(h->by_addr, GSIZE_TO_POINTER((uint64_t)oi.addr), GUINT_TO_POINTER(0));
    c->host->cache(c);        /* made now: never under h->lock */
    c->priv = h;
    h = NULL;
    rc = HPC_OK;
out:
    if (root >= 0)
        H5Gclose(root);
    h5_free(h);
    return rc;
}


/* ---- .info ------------------------------------------------------------ */

static const char *kind_name(const h5_handle *hd)
{
    switch (hd->d->kind) {
    case DS_FAST: return "pread";
    case DS_DATA: return hd->plan ? "decode" : "H5Dread";
    case DS_TEXT: return "text";
    case DS_REFUSED: return "EIO";
    case DS_SEQ: return "sequences";
    default: return "none";
    }
}

/* What the .info walk counts and prints. */
typedef struct info_walk {
    GString *rows, *links;
    GHashTable *datasets;          /* dataset node ids met */
    GQueue todo;                   /* group node ids to list */
    unsigned ngroups, nsoft, nhard, nexternal, ntypes;
    uint64_t objects;
    int cut;
} info_walk;

/* Read (and drop) the attributes of node id so that damaged ones are
 * noted.  Lock held. */
static void info_attrs(h5 *h, uint32_t id, hid_t oid)
{
    attr_ctx a = { 0 };
    h5_attrs_read(h, id, oid, &a);
    h5_attrs_clear(&a);
}

/* One entry of a listed group.  Lock held. */
static void info_entry(h5 *h, info_walk *w, uint32_t dir, const h5_list *l, uint32_t i)
{
    uint32_t id = l->child[i];
    const h5_node *n = NODE(h, id);
    char *path = NULL, *first = NULL;
    h5_handle *hd;
    switch (n->kind) {
    case K_GROUP:
        if (n->parent == dir && n->idx == i) {
            w->ngroups++;
            g_queue_push_tail(&w->todo, GUINT_TO_POINTER(id));
        }
        break;
    case K_GLINK:
    case K_SOFT:
    case K_ELINK:
        path = h5_node_path(h, id);
        g_string_append_printf(w->links, "%s -> %s (%s)\n", path,
                               (const char *)g_hash_table_lookup(h->targets, GUINT_TO_POINTER(id)),
                               n->kind == K_SOFT ? "soft link" : n->kind == K_ELINK ?
                               "external link: file//object" : "hard link to a group: symlink");
        w->nsoft += n->kind == K_SOFT;
        w->nexternal += n->kind == K_ELINK;
        break;
    case K_VLEN:
    case K_DATASET:
        if (g_hash_table_contains(w->datasets, GUINT_TO_POINTER(id))) {
            first = h5_node_path(h, id);
            char *dpath = h5_node_path(h, dir);
            g_string_append_printf(w->links, "%s%s%s -> hard link to %s\n", dpath,
                                   strcmp(dpath, "/") == 0 ? "" : "/", l->names + l->name_at[i], first);
            g_free(dpath);
            w->nhard++;
            break;
        }
        g_hash_table_add(w->datasets, GUINT_TO_POINTER(id));
        if (h5_handle_get(h, id, &hd) != HPC_OK)
            break;
        const h5_dset *d = hd->d;
        g_string_append_printf(w->rows, "%s\t%s\t%s\t%s\t%s\t%s\t%" PRIu64 "\t%s\t%" PRIu64 "\t%s\n",
                               d->path, d->rank == 0 && d->nelem == 1 ? "()" : d->shape,
                               d->dtype, d->layout, d->filters, d->chunks, d->size,
                               kind_name(hd), d->cache_bytes, d->note ? d->note : "-");
        info_attrs(h, id, d->id);
        h5_handle_put(h, hd);
        break;
    default:
        break;
    }
    g_free(path);
    g_free(first);
}

/* List group dir for .info: its entries, attributes, left-out links. */
static void info_group(h5 *h, info_walk *w, uint32_t dir)
{
    h5_list *l;
    g_mutex_lock(&h->lock);
    int rc = h5_list_group(h, dir, &l);
    if (rc == HPC_OK) {
        hid_t g = h5_group_open(h, dir);
        if (g >= 0) {
            info_attrs(h, dir, g);
            H5Oclose(g);
        }
        if (l->notes)
            g_string_append(w->links, l->notes->str);
        w->ntypes += l->ntypes;
    }
    g_mutex_unlock(&h->lock);
    for (uint32_t i = 0; rc == HPC_OK && i < l->n && !w->cut; i++) {
        if (l->child[i] == 0)
            continue;
        if (++w->objects > INFO_MAX_OBJECTS) {
            w->cut = 1;
            break;
        }
        g_mutex_lock(&h->lock);
        info_entry(h, w, dir, l, i);
        g_mutex_unlock(&h->lock);
    }
}

/* Each line of lines once, in order. */
static void append_unique(GString *o, const char *lines)
{
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    gchar **v = g_strsplit(lines, "\n", -1);
    for (gchar **p = v; *p; p++)
        if (**p && g_hash_table_add(seen, *p))
            g_string_append_printf(o, "%s\n", *p);
    g_hash_table_destroy(seen);
    g_strfreev(v);
}

/* .info walks the file breadth first when it is first read, at most
 * INFO_MAX_OBJECTS entries; a mount never does. */
static int h5_info(hpc_container *c, GString *o)
{
    h5 *h = c->priv;
    info_walk w = { g_string_new(NULL), g_string_new(NULL),
                    g_hash_table_new(g_direct_hash, g_direct_equal), G_QUEUE_INIT, 1, 0, 0, 0, 0, 0, 0 };
    unsigned maj, min, rel;
    h5_quiet();
    g_queue_push_tail(&w.todo, GUINT_TO_POINTER(0));
    while (!g_queue_is_empty(&w.todo) && !w.cut)
        info_group(h, &w, GPOINTER_TO_UINT(g_queue_pop_head(&w.todo)));
    H5get_libversion(&maj, &min, &rel);
    g_string_append_printf(o, "libhdf5: %u.%u.%u\nsuperblock: %u\nuserblock: %" PRIu64 "\n"
                           "groups: %u\ndatasets: %u\nsoft_links: %u\nhard_links: %u\n"
                           "external_links: %u (symlinks)\nnamed_datatypes: %u\n",
                           maj, min, rel, h->super_version, h->userblock, w.ngroups,
                           g_hash_table_size(w.datasets), w.nsoft, w.nhard, w.nexternal, w.ntypes);
    if (w.cut)
        g_string_append_printf(o, "walk: stopped after %u entries (breadth first): the counts "
                               "and tables below cover those only\n", INFO_MAX_OBJECTS);
    g_mutex_lock(&h->lock);
    g_string_append_printf(o, "handles: at most %u datasets open (h5handles), their chunk "
                           "caches and text at most %" PRIu64 " bytes (h5cache)\n",
                           h->max_handles, h->max_handle_bytes);
    append_unique(o, h->damaged->str);
    append_unique(o, h->warnings->str);
    g_mutex_unlock(&h->lock);
    if (w.links->len) {
        g_string_append(o, "\nlink\n");
        g_string_append(o, w.links->str);
    }
    g_string_append(o, "\ndataset\tshape\tdtype\tlayout\tfilters\tchunks\tbytes\tread\tchunk_cache\tnote\n");
    g_string_append(o, w.rows->str);
    g_string_free(w.rows, TRUE);
    g_string_free(w.links, TRUE);
    g_hash_table_destroy(w.datasets);
    g_queue_clear(&w.todo);
    return HPC_OK;
}

/* In the helper process: what hdf5_remote.c asks of the datasets whose
 * chunks the daemon decodes. */
static int h5_request(hpc_container *c, uint32_t op, hpc_ino ino, uint64_t a, uint64_t b,
                      GByteArray *out)
{
    if (op == H5_RQ_CHUNK_PLAN)
        return hpc_hdf5_chunk_plan(c, ino, out);
    if (op == H5_RQ_CHUNK_WHERE)
        return hpc_hdf5_chunk_where(c, ino, a, b, out);
    return HPC_E_INVAL;
}

const hpc_format hpc_format_hdf5 = {
    .name = "hdf5",
    .sandbox_lib = "libhdf5",
    .probe = h5_probe,
    .open = h5_open,
    .close = h5_close,
    .lookup = h5_lookup,
    .getattr = h5_getattr,
    .readdir = h5_readdir,
    .readlink = h5_readlink,
    .read = h5_read,
    .map = h5_map,
    .xattrs = h5_xattrs,
    .info = h5_info,
    .chunks = h5_chunks,
    .remote_side = &hpc_h5remote_side,
    .request = h5_request,
    .before_walk = hpc_hdf5_walk_begins,
    .after_walk = hpc_hdf5_walk_ends,
    .options = hpc_hdf5_options,
};
