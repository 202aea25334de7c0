/* hdf5_data.c - the bytes of a dataset: element ranges read through
 * libhdf5 or pread, extents for the daemon, and the chunks the daemon
 * decodes itself (fmt_hdf5.h). */
#include "hdf5_int.h"
#include "hpc_json.h"

/* ---- data ------------------------------------------------------------- */

/* The referenced handle of the dataset of ino for a read; read_release()
 * it.  *part: the part of a directory dataset ino is, or -1. */
static int part_acquire(hpc_container *c, hpc_ino ino, h5_handle **out, int64_t *part)
{
    h5 *h = c->priv;
    int rc;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t id = h5_ino_to_id(ino, h);
    uint8_t kind = id == NO_PARENT ? 0 : NODE(h, id)->kind;
    *part = kind == K_PART ? (int64_t)NODE(h, id)->addr : -1;
    if (kind == K_DATASET)
        rc = h5_handle_get(h, id, out);
    else if (kind == K_PART)
        rc = h5_handle_get(h, h5_part_dataset(h, id), out);
    else if (kind == K_DAMAGED)
        rc = h5_damaged_read(h, id);
    else
        rc = kind == K_GROUP || kind == K_VLEN || kind == K_PDIR ? HPC_E_ISDIR
                                                                : kind ? HPC_E_INVAL : HPC_E_NOENT;
    g_mutex_unlock(&h->lock);
    return rc;
}

static void read_release(hpc_container *c, h5_handle *hd);

/* part_acquire of a dataset's own file: the entries of a dataset of
 * sequences have no chunks, plans or stored places. */
static int read_acquire(hpc_container *c, hpc_ino ino, h5_handle **out)
{
    int64_t part;
    int rc = part_acquire(c, ino, out, &part);
    if (rc == HPC_OK && part >= 0) {
        read_release(c, *out);
        rc = HPC_E_NOTSUP;
    }
    return rc;
}

static void read_release(hpc_container *c, h5_handle *hd)
{
    h5 *h = c->priv;
    g_mutex_lock(&h->lock);
    h5_handle_put(h, hd);
    g_mutex_unlock(&h->lock);
}

/* Elements [e0, e1) of a dataset whose chunks hdf5_chunk.c decodes. */
static int read_decoded(h5 *h, const h5_handle *hd, uint64_t e0, uint64_t e1, void *buf)
{
    char *why = NULL;
    int rc = hpc_h5chunk_read(h->chunks, hd->plan, hd->node, hd->d->id, h->src, e0, e1,
                              buf, &why);
    if (rc != HPC_OK || why)
        hpc_log("hdf5: %s: elements %" PRIu64 "..%" PRIu64 ": %s", hd->d->path, e0, e1,
                why ? why : hpc_strerror(rc));
    g_free(why);
    return rc;
}

/* Elements [e0, e1) of the dataset of hd, decoded by us or by H5Dread. */
static int read_range(h5 *h, const h5_handle *hd, uint64_t e0, uint64_t e1, void *buf)
{
    if (hd->plan)
        return read_decoded(h, hd, e0, e1, buf);
    int rc = h5_read_elements(hd->d, e0, e1, buf);
    if (rc != HPC_OK && hd->d->external) {
        char *files = h5_dset_external_note(h, hd->d);
        hpc_log("hdf5: %s: %s", hd->d->path, files);
        g_free(files);
    }
    return rc;
}

typedef struct elem_ctx {
    h5 *h;
    const h5_handle *hd;
} elem_ctx;

static int fill_elem(void *p, uint64_t elem, void *buf)
{
    elem_ctx *ec = p;
    return read_range(ec->h, ec->hd, elem, elem + 1, buf);
}

/* read_data: LEN bytes at OFF of a dataset read by libhdf5, whole
 * elements read and the cut ones trimmed */
static int read_data(hpc_container *c, const h5_handle *hd, void *buf, size_t len,
                     uint64_t off)
{
    h5 *h = c->priv;
    const h5_dset *d = hd->d;
    h5_quiet();
    uint64_t e0 = off / d->esize, e1 = (off + len - 1) / d->esize + 1;
    size_t skip = (size_t)(off - e0 * d->esize);
    int rc;
    if (skip == 0 && (e1 - e0) * d->esize == len) {
        rc = read_range(h, hd, e0, e1, buf);
    } else if (d->esize > ELEM_SLOT_MIN) {
        elem_ctx ec = { h, hd };
        rc = hpc_h5elem_read(h->elems, hd->node, d->esize, off, len, buf, fill_elem, &ec);
    } else {
        char *tmp = g_try_malloc((size_t)(e1 - e0) * d->esize);
        if (!tmp)
            return HPC_E_NOMEM;
        rc = read_range(h, hd, e0, e1, tmp);
        if (rc == HPC_OK)
            memcpy(buf, tmp + skip, len);
        g_free(tmp);
    }
    /* libhdf5's sec2 driver reads zeros past the end of a file that
     * shrank under the mount: the bytes count only if the file is
     * still as it was */
    if (rc == HPC_OK)
        rc = c->host->sources_unchanged(c);
    return rc;
}

static int read_dset(hpc_container *c, const h5_handle *hd, void *buf, size_t len,
                     uint64_t off, size_t *nread)
{
    const h5_dset *d = hd->d;
    if (off >= d->size || len == 0)
        return HPC_OK;
    len = (size_t)MIN((uint64_t)len, d->size - off);
    int rc;
    switch (d->kind) {
    case DS_TEXT:
        memcpy(buf, d->text + off, len);
        rc = HPC_OK;
        break;
    case DS_DATA:
        rc = read_data(c, hd, buf, len, off);
        break;
    case DS_REFUSED:
        hpc_log("hdf5: %s: bytes %" PRIu64 "..%" PRIu64 ": %s", d->path, off, off + len, d->note);
        rc = HPC_E_IO;
        break;
    default:
        rc = HPC_E_NOTSUP;
        break;
    }
    if (rc == HPC_OK)
        *nread = len;
    return rc;
}

int h5_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
            size_t *nread)
{
    h5_handle *hd;
    int64_t part;
    *nread = 0;
    int rc = part_acquire(c, ino, &hd, &part);
    if (rc != HPC_OK)
        return rc;
    const h5_part *p = part < 0 ? NULL : h5_part_of(hd->d, (uint64_t)part);
    if (part < 0) {
        rc = read_dset(c, hd, buf, len, off, nread);
    } else if (!p || p->dir) {
        rc = HPC_E_IO;             /* rendered otherwise now: not the part listed */
    } else {
        len = off < p->size ? (size_t)MIN((uint64_t)len, p->size - off) : 0;
        if (len)
            memcpy(buf, p->bytes + off, len);
        *nread = len;
    }
    read_release(c, hd);
    return rc;
}

int h5_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
           hpc_extent *ext, unsigned max, unsigned *n)
{
    h5 *h = c->priv;
    h5_handle *hd;
    *n = 0;
    if (read_acquire(c, ino, &hd) != HPC_OK)
        return HPC_E_NOTSUP;
    const h5_dset *d = hd->d;
    int rc = HPC_OK;
    if (d->kind != DS_FAST)
        rc = HPC_E_NOTSUP;
    else if (off < d->size && len > 0 && max > 0) {
        ext[0] = (hpc_extent){ .src = h->src, .off = d->addr + off, .len = MIN(len, d->size - off) };
        *n = 1;
    }
    read_release(c, hd);
    return rc;
}

/* ---- chunks the daemon decodes (fmt_hdf5.h) ------------------------------ */

/* Whether the daemon is to decode the dataset's chunks.  libhdf5 1.10
 * finds a chunk's place (H5Dget_chunk_info_by_coord) by walking the index
 * up to it: the places of n chunks cost n * n / 2 index entries of 40-200
 * ns (v1 B-tree to extensible array), 12 CPU s for a dataset of 10000
 * two-byte chunks.  Up to 1024 chunks the walks cost tens of milliseconds
 * a dataset, and up to one chunk per 128 bytes of a chunk less than
 * inflating the chunks; other datasets go to the helper's own decoder,
 * whose lookup (H5Dread_chunk's) does not walk. */
static int daemon_decodes(const hpc_h5chunk_plan *p)
{
    uint64_t n = hpc_h5chunk_plan_nchunks(p);
    return n <= 1024 || n <= hpc_h5chunk_plan_chunk_bytes(p) / 128;
}

int hpc_hdf5_chunk_plan(hpc_container *c, hpc_ino ino, GByteArray *out)
{
    h5_handle *hd;
    int rc = read_acquire(c, ino, &hd);
    if (rc != HPC_OK)
        return rc;
    if (hd->plan && hd->d->kind == DS_DATA && daemon_decodes(hd->plan)) {
        hpc_h5chunk_wire_plan w;
        hpc_h5chunk_plan_pack(hd->plan, &w);
        uint64_t size = hd->d->size;
        g_byte_array_append(out, (const guint8 *)&w, sizeof w);
        g_byte_array_append(out, (const guint8 *)&size, sizeof size);
    } else {
        rc = HPC_E_NOTSUP;
    }
    read_release(c, hd);
    return rc;
}

/* Do the size bytes at addr hold the raw chunk at off (and its mask)? */
static int chunk_placed(h5 *h, const h5_handle *hd, const hsize_t *off, uint64_t addr,
                        uint64_t size, unsigned mask)
{
    unsigned char *lib = g_try_malloc((size_t)size), *file = g_try_malloc((size_t)size);
    uint32_t filters = 0;
    int same = lib && file && H5Dread_chunk(hd->d->id, H5P_DEFAULT, off, &filters, lib) >= 0 &&
               filters == mask && hpc_source_pread(h->src, file, (size_t)size, addr) == HPC_OK &&
               memcmp(lib, file, (size_t)size) == 0;
    g_free(lib);
    g_free(file);
    return same;
}

/* Where chunk number `chunk` of hd is stored: H5Dget_chunk_info_by_coord,
 * its size confirmed by the lookup H5Dread makes (H5Dget_chunk_storage_size).
 * libhdf5 1.10 counts that address from the superblock, so the user block
 * is added (H5Dget_offset, by contrast, includes it).  The address is
 * proven by comparing with H5Dread_chunk's bytes: for the first chunk of
 * a dataset, and for every chunk whose filters carry no check (a misplaced
 * chunk would decode to wrong bytes); a library that counted otherwise
 * fails that proof, and H5Dread reads the dataset's chunks. */
static void chunk_where(h5 *h, h5_handle *hd, uint64_t chunk, hpc_h5chunk_where *w)
{
    hsize_t off[HPC_HDF5_MAX_RANK], size = 0, ssize = 0;
    haddr_t addr = HADDR_UNDEF;
    uint64_t at;
    unsigned mask = 0;
    memset(w, 0, sizeof *w);
    hpc_h5chunk_origin(hd->plan, chunk, off);
    int placed = g_atomic_int_get(&hd->placed);
    if (placed < 0 || H5Dget_chunk_info_by_coord(hd->d->id, off, &mask, &addr, &size) < 0 ||
        addr == HADDR_UNDEF || size == 0 || size > 2 * hpc_h5chunk_plan_chunk_bytes(hd->plan) + 4096 ||
        H5Dget_chunk_storage_size(hd->d->id, off, &ssize) < 0 || ssize != size ||
        !hpc_add_u64((uint64_t)addr, h->userblock, &at) ||
        !hpc_source_contains(h->src, at, (uint64_t)size))
        return;
    if (placed == 0 || !hpc_h5chunk_plan_checked(hd->plan)) {
        int ok = chunk_placed(h, hd, off, at, (uint64_t)size, mask);
        g_atomic_int_set(&hd->placed, ok ? 1 : -1);
        if (!ok)
            return;
    }
    *w = (hpc_h5chunk_where){ .addr = at, .size = (uint64_t)size, .mask = mask };
}

int hpc_hdf5_chunk_where(hpc_container *c, hpc_ino ino, uint64_t first, uint64_t n,
                         GByteArray *out)
{
    h5 *h = c->priv;
    h5_handle *hd;
    int rc = read_acquire(c, ino, &hd);
    if (rc != HPC_OK)
        return rc;
    uint64_t all = hd->plan ? hpc_h5chunk_plan_nchunks(hd->plan) : 0;
    if (!hd->plan)
        rc = HPC_E_NOTSUP;
    else if (first >= all)
        rc = HPC_E_INVAL;
    for (uint64_t i = first; rc == HPC_OK && i < all && i - first < n; i++) {
        hpc_h5chunk_where w;
        chunk_where(h, hd, i, &w);
        g_byte_array_append(out, (const guint8 *)&w, sizeof w);
    }
    read_release(c, hd);
    return rc;
}

/* Where the dataset's stored bytes lie, for references (hdf5_refs.c). */
/* A group's attributes, as the references write them. */
static int group_chunks(h5 *h, hpc_ino ino, GString *out)
{
    int rc = HPC_E_NOTSUP;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t id = h5_ino_to_id(ino, h);
    hid_t g = id != NO_PARENT && NODE(h, id)->kind == K_GROUP ? h5_group_open(h, id) : -1;
    if (g >= 0) {
        g_string_append(out, "layout group\n");
        rc = hpc_h5refs_attrs(g, H5I_INVALID_HID, h->src->size, h5_nctypes(h), out);
        const char *x = id == 0 ? h5_ncext(h) : NULL;     /* the root: external links */
        g_string_append(out, x ? x : "");
        H5Oclose(g);
    }
    g_mutex_unlock(&h->lock);
    return rc;
}

/* "dim LEN NAME" per axis (NAME in JSON) of a dataset netCDF-4 names,
 * "ncdim" for a netCDF dimension that is no variable, "novar" for a
 * dataset of a type netCDF has none for. */
static void ncdims_lines(h5 *h, uint32_t id, GString *out)
{
    g_mutex_lock(&h->lock);
    const h5_ncdims *n = h5_ncdims_of(h, NODE(h, id)->addr);
    for (int k = 0; n && n->names && k < n->rank; k++) {
        g_string_append_printf(out, "dim %" G_GUINT64_FORMAT " ", n->len[k]);
        hpc_json_str(out, n->names[k]);
        g_string_append_c(out, '\n');
    }
    if (n && n->links)
        g_string_append(out, n->links->str);
    if (n && n->dimonly)
        g_string_append(out, "ncdim\n");
    if (n && n->novar)
        g_string_append(out, "novar\n");
    g_mutex_unlock(&h->lock);
}

/* Whether libhdf5 has the chunk at index element idx of ix where ix has it
 * (its addresses leave out the user block, base). */
static int index_agrees(hid_t did, const hpc_h5idx *ix, guint i, uint64_t base)
{
    const hpc_h5idx_chunk *c = &g_array_index(ix->chunks, hpc_h5idx_chunk, i);
    uint64_t at[HPC_H5OHDR_MAX_RANK];
    hsize_t off[H5S_MAX_RANK], size = 0;
    haddr_t addr = HADDR_UNDEF;
    unsigned mask = 0;
    hpc_h5idx_origin(ix, c->idx, at);
    for (int d = 0; d < ix->rank; d++)
        off[d] = at[d];
    return H5Dget_chunk_info_by_coord(did, off, &mask, &addr, &size) >= 0 && addr + base == c->addr &&
           size == c->size && mask == c->mask;
}

/* The chunk index of dataset did read by the reader (hdf5_index.h), where
 * it reads that kind, and only as libhdf5 has it: as many chunks as it
 * counts, the first and the last where it finds them (the only lookups
 * by coordinate that walk the index once in all).  NULL: libhdf5 lists. */
static hpc_h5idx *chunk_index(h5 *h, hid_t did)
{
    H5O_info_t oi, root;
    hpc_h5ohdr o;
    hpc_h5idx *ix = NULL;
    uint64_t maxdims[H5S_MAX_RANK];
    hsize_t n = 0;
    if (H5Oget_info2(did, &oi, H5O_INFO_BASIC) < 0 ||
        H5Oget_info_by_name2(h->file, "/", &root, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
        oi.fileno != root.fileno)
        return NULL;               /* through an external link: another file */
    g_mutex_lock(&h->lock);
    int rc = h5_header_read(h, (uint64_t)oi.addr, &o);
    g_mutex_unlock(&h->lock);
    hid_t space = rc == HPC_OK ? H5Dget_space(did) : H5I_INVALID_HID;
    int rank = space >= 0 ? H5Sget_simple_extent_dims(space, NULL, (hsize_t *)maxdims) : -1;
    G_STATIC_ASSERT(sizeof(hsize_t) == sizeof(uint64_t));     /* H5S_UNLIMITED: UINT64_MAX */
    if (rank > 0 && hpc_h5idx_read(&h->ohdr, &o, rank, maxdims, h->src, HPC_H5REFS_MAX_CHUNKS,
                                   &ix) == HPC_OK &&
        (H5Dget_num_chunks(did, space, &n) < 0 || n != ix->chunks->len ||
         (n && (!index_agrees(did, ix, 0, h->userblock) ||
                !index_agrees(did, ix, (guint)n - 1, h->userblock))))) {
        hpc_h5idx_free(ix);
        ix = NULL;
    }
    if (space >= 0)
        H5Sclose(space);
    return ix;
}

/* What the references need of a node (hdf5_refs.h): of a group its
 * attributes; of a dataset its dimension names and attributes, then where
 * its stored bytes lie. */
int h5_chunks(hpc_container *c, hpc_ino ino, GString *out)
{
    h5 *h = c->priv;
    h5_handle *hd;
    int rc = read_acquire(c, ino, &hd);
    if (rc == HPC_E_ISDIR)
        return group_chunks(h, ino, out);
    if (rc != HPC_OK)
        return rc;
    hid_t did = hd->d->id, t = did >= 0 ? H5Dget_type(did) : H5I_INVALID_HID;
    rc = did >= 0 ? HPC_OK : HPC_E_NOTSUP;
    if (rc == HPC_OK) {
        ncdims_lines(h, hd->node, out);
        g_mutex_lock(&h->lock);
        const GArray *types = h5_nctypes(h);
        g_mutex_unlock(&h->lock);
        rc = hpc_h5refs_attrs(did, t, h->src->size, types, out);
    }
    if (rc == HPC_OK) {
        hpc_h5idx *ix = chunk_index(h, did);
        rc = hpc_h5refs_describe(did, ix, out);
        hpc_h5idx_free(ix);
    }
    if (rc == HPC_OK && hd->d->kind == DS_TEXT && !hd->d->ref)
        rc = hpc_h5refs_vstrings(did, hd->d->nelem, out);
    else if (rc == HPC_OK && hd->d->kind == DS_TEXT && !strcmp(hd->d->ref, "object"))
        hpc_h5refs_vpaths(hd->d->text, hd->d->size, hd->d->nelem, hd->d->eol_nul ? '\0' : '\n',
                          out);
    if (t >= 0)
        H5Tclose(t);
    read_release(c, hd);
    return rc;
}
