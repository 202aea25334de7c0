/* hdf5_dset.c - a dataset described once, when first needed: its byte
 * image (elements in C order, little-endian; or rendered text), how it is
 * read (hyperslabs, pread at H5Dget_offset, chunks the daemon decodes)
 * and what cannot be served, and why. */
#include "hdf5_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

/* ---- datasets --------------------------------------------------------- */

void h5_dset_free(gpointer p)
{
    h5_dset *d = p;
    if (!d)
        return;
    if (d->id >= 0)
        H5Dclose(d->id);
    if (d->mtype >= 0)
        H5Tclose(d->mtype);
    if (d->rtype >= 0)
        H5Tclose(d->rtype);
    if (d->pad)
        g_array_unref(d->pad);
    g_free(d->path);
    g_free(d->text);
    h5_parts_free(d->parts);
    g_free(d->ref);
    g_free(d->shape);
    g_free(d->dtype);
    g_free(d->layout);
    g_free(d->filters);
    g_free(d->chunks);
    g_free(d->note);
    g_free(d);
}

hid_t h5_dset_access(uint64_t cache_bytes, uint64_t chunk_bytes, uint64_t nchunks)
{
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl < 0)
        return dapl;
    /* virtual sources next to the .h5 file (external raw data: below) */
    H5Pset_virtual_prefix(dapl, "${ORIGIN}");
    if (cache_bytes) {
        /* hash slots: ~10 per chunk that fits, odd to spread the hash;
         * libhdf5 allocates them at open, so at most 512 KiB of them */
        uint64_t fit = MIN(chunk_bytes ? cache_bytes / chunk_bytes + 1 : 1, nchunks);
        size_t slots = (size_t)MIN(MAX(fit * 10, 31), 1u << 16) | 1;
        H5Pset_chunk_cache(dapl, slots, (size_t)cache_bytes, 0.75);
    }
    return dapl;
}

/* Reopen d (of group g, named name), which has external raw data, with
 * the prefix that finds the raw data files next to the .h5 file.  Only
 * such datasets get it: libhdf5 refuses to open a dataset that is open
 * with another external-file prefix, and a virtual dataset opens its
 * sources in the same file with none; had the mount one of them open
 * with the prefix, the virtual dataset would read fill values there
 * instead of the source's bytes.  HPC_E_IO when it cannot be reopened. */
hid_t h5_dset_access_external(void)
{
    hid_t dapl = h5_dset_access(0, 0, 0);
    if (dapl >= 0 && H5Pset_efile_prefix(dapl, "${ORIGIN}") < 0) {
        H5Pclose(dapl);
        dapl = H5I_INVALID_HID;
    }
    return dapl;
}

int h5_dset_reopen_external(h5 *h, uint32_t id, h5_dset *d, hid_t g, const char *name)
{
    hid_t dapl = h5_dset_access_external();
    H5Dclose(d->id);
    d->id = dapl >= 0 ? h5_dset_open(h, id, g, name, dapl) : H5I_INVALID_HID;
    if (dapl >= 0)
        H5Pclose(dapl);
    return d->id >= 0 ? HPC_OK : HPC_E_IO;
}

/* Render a variable-length string dataset as text, each string ended as
 * hpc_h5t_text_eol says. */
static int dset_text(h5_dset *d, hid_t ftype, hid_t space)
{
    hid_t m = H5Tcopy(H5T_C_S1);
    char **v = NULL;
    int rc = HPC_E_IO;
    if (m < 0 || H5Tset_size(m, H5T_VARIABLE) < 0 || H5Tset_cset(m, H5Tget_cset(ftype)) < 0)
        goto out;
    v = g_new0(char *, d->nelem ? d->nelem : 1);
    if (d->nelem && H5Dread(d->id, m, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        goto out;
    GString *t = g_string_new(NULL);
    for (uint64_t i = 0; i < d->nelem && t->len <= MAX_TEXT_BYTES; i++) {
        if (v[i])
            g_string_append(t, v[i]);
        g_string_append_c(t, '\0');
    }
    if (t->len > MAX_TEXT_BYTES) {
        d->kind = DS_NONE;
        d->note = g_strdup_printf("strings longer than %u bytes in all: not rendered", MAX_TEXT_BYTES);
        g_string_truncate(t, 0);
    }
    d->eol_nul = hpc_h5t_text_eol(t);
    if (d->nelem)
        H5Dvlen_reclaim(m, space, H5P_DEFAULT, v);
    d->size = t->len;
    d->text = g_string_free(t, FALSE);
    rc = HPC_OK;
out:
    g_free(v);
    if (m >= 0)
        H5Tclose(m);
    return rc;
}

static const char *chunk_index_name(hid_t did)
{
    H5D_chunk_index_t idx;
    if (H5Dget_chunk_index_type(did, &idx) < 0)
        return "?";
    switch (idx) {
    case H5D_CHUNK_IDX_BTREE: return "btree-v1";
    case H5D_CHUNK_IDX_SINGLE: return "single-chunk";
    case H5D_CHUNK_IDX_NONE: return "implicit";
    case H5D_CHUNK_IDX_FARRAY: return "fixed-array";
    case H5D_CHUNK_IDX_EARRAY: return "extensible-array";
    case H5D_CHUNK_IDX_BT2: return "btree-v2";
    default: return "?";
    }
}

/* Big-endian integers, floats and enums are read as h5py reads them, into their
 * full-size type in the file's byte order, and swapped afterwards: the
 * conversion libhdf5 1.10 makes of the fill value of an n-bit type gives
 * other bytes into the little-endian type (-5 of 12 bits becomes 4091).
 * H5I_INVALID_HID for other types. */
static hid_t read_type(hid_t ftype, hid_t mtype)
{
    H5T_class_t cls = H5Tget_class(ftype);
    size_t n = H5Tget_size(mtype);
    /* h5py's opaque NumPy types: a big-endian number is read as stored */
    if (cls == H5T_OPAQUE)
        return hpc_h5t_opaque_swap(ftype) ? H5Tcopy(ftype) : H5I_INVALID_HID;
    if ((cls != H5T_INTEGER && cls != H5T_FLOAT && cls != H5T_ENUM) ||
        H5Tget_order(ftype) != H5T_ORDER_BE || (n != 2 && n != 4 && n != 8))
        return H5I_INVALID_HID;
    /* an enum converted to another byte order turns values that are not
     * members into all ones; h5py reads it as stored */
    if (cls == H5T_ENUM)
        return H5Tget_size(ftype) == n && H5Tget_precision(ftype) == 8 * n ? H5Tcopy(ftype)
                                                                          : H5I_INVALID_HID;
    hid_t t = H5Tcopy(mtype);
    if (t >= 0 && H5Tset_order(t, H5T_ORDER_BE) < 0) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

/* A filter of d libhdf5 does not have: a note and a warning, unless the
 * reader decodes the chunks itself (LZF). */
static void note_unavailable(h5 *h, h5_dset *d, const char *what, int decoded)
{
    if (decoded) {
        GString *f = g_string_new(d->filters);
        g_string_replace(f, "(unavailable)", "", 0);
        g_free(d->filters);
        d->filters = g_string_free(f, FALSE);
        return;
    }
    if (d->note)
        return;
    d->note = g_strdup(what);
    g_string_append_printf(h->warnings, "warning: %s: %s in this libhdf5: reads fail with EIO\n",
                           d->path, what);
}

/* d's shape from its dataspace: rank, dims, nelem and the text.  Sets
 * d->note (and d->kind DS_NONE) when the elements do not fit in 64 bits. */
static int dset_shape(h5_dset *d, hid_t space)
{
    GString *g = g_string_new(NULL);
    int rc = HPC_E_IO;
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    if (sc == H5S_SIMPLE) {
        hsize_t hd[H5S_MAX_RANK];
        int r = H5Sget_simple_extent_ndims(space);
        if (r < 1 || r > HPC_HDF5_MAX_RANK || H5Sget_simple_extent_dims(space, hd, NULL) < 0)
            goto out;
        d->rank = r;
        d->nelem = 1;
        for (int i = 0; i < r; i++) {
            d->dims[i] = hd[i];
            g_string_append_printf(g, "%s%" PRIu64, i ? "," : "", d->dims[i]);
            if (!hpc_mul_u64(d->nelem, d->dims[i], &d->nelem) && !d->note) {
                d->kind = DS_NONE;
                d->note = g_strdup("more elements than 2^64");
            }
        }
    } else if (sc == H5S_SCALAR) {
        d->rank = 0;
        d->nelem = 1;
    } else if (sc == H5S_NULL) {
        /* no elements and no shape: served as a 1-D empty array (parts
         * and user.shape "0"), user.h5space tells the two apart */
        d->rank = 1;
        d->dims[0] = 0;
        d->nelem = 0;
        d->null_space = 1;
        g_string_append(g, "0");
    } else {
        goto out;
    }
    rc = HPC_OK;
    if (!d->note)
        d->shape = g_strdup(g->str);
out:
    g_string_free(g, TRUE);
    return rc;
}

/* d->layout: "contiguous", "chunked/<index>", ..., "+external(n)". */
static void dset_layout(h5_dset *d, H5D_layout_t lay, int next)
{
    const char *name;
    switch (lay) {
    case H5D_COMPACT: name = "compact"; break;
    case H5D_CONTIGUOUS: name = "contiguous"; break;
    case H5D_CHUNKED: name = NULL; break;
    case H5D_VIRTUAL: name = "virtual"; break;
    default: name = "?"; break;
    }
    GString *g = g_string_new(name);
    if (!name)
        g_string_append_printf(g, "chunked/%s", chunk_index_name(d->id));
    if (next > 0)
        g_string_append_printf(g, "+external(%d)", next);
    d->layout = g_string_free(g, FALSE);
}

static void filter_name(GString *g, H5Z_filter_t id, const unsigned *cd, size_t ncd)
{
    switch (id) {
    case H5Z_FILTER_DEFLATE: g_string_append_printf(g, "deflate(%u)", ncd ? cd[0] : 0); break;
    case H5Z_FILTER_SHUFFLE: g_string_append(g, "shuffle"); break;
    case H5Z_FILTER_FLETCHER32: g_string_append(g, "fletcher32"); break;
    case H5Z_FILTER_SZIP: g_string_append(g, "szip"); break;
    case H5Z_FILTER_NBIT: g_string_append(g, "nbit"); break;
    case H5Z_FILTER_SCALEOFFSET: g_string_append(g, "scaleoffset"); break;
    case HPC_H5CHUNK_FILTER_LZF: g_string_append(g, "lzf"); break;
    default: g_string_append_printf(g, "filter-%d", (int)id); break;
    }
}

/* libhdf5 looks for a filter it lacks in its plugin directories at every
 * use: each chunk it reads of such a dataset dlopens every plugin there,
 * with the libraries each needs, and unloads them again (some 100 mmaps a
 * search).  One more reference to each of those files, taken the first
 * time a filter is missing, keeps them loaded: libhdf5's later searches
 * open the same files and find the same filters, and their dlopen and
 * dlclose only count references.  The files are the ones libhdf5 opens
 * itself, found the same way (H5PLget). */
static gpointer pin_plugins(gpointer unused)
{
    (void)unused;
    unsigned state = 0, n = 0;
    if (H5PLget_loading_state(&state) < 0 || !(state & H5PL_FILTER_PLUGIN) || H5PLsize(&n) < 0)
        return NULL;
    for (unsigned i = 0; i < n; i++) {
        char dir[4096];
        ssize_t len = H5PLget(i, dir, sizeof dir);
        GDir *dh = len > 0 && (size_t)len < sizeof dir ? g_dir_open(dir, 0, NULL) : NULL;
        const char *name;
        while (dh && (name = g_dir_read_name(dh))) {
            char *file = g_build_filename(dir, name, NULL);
            (void)dlopen(file, RTLD_LAZY);      /* kept for the process's life */
            g_free(file);
        }
        if (dh)
            g_dir_close(dh);
    }
    return NULL;
}

/* Whether libhdf5 has filter id, its plugins kept loaded once one lacks. */
static int filter_avail(H5Z_filter_t id)
{
    static GOnce once = G_ONCE_INIT;
    if (H5Zfilter_avail(id) > 0)
        return 1;
    g_once(&once, pin_plugins, NULL);
    return 0;
}

/* d->filters, in pipeline order.  *unavail gets the last filter libhdf5
 * lacks (a new string, or NULL); *own_lzf stays 1 when all of them are
 * LZF, which the reader decodes itself. */
static void dset_filters(h5_dset *d, hid_t dcpl, char **unavail, int *own_lzf)
{
    GString *g = g_string_new(NULL);
    int nf = H5Pget_nfilters(dcpl);
    for (int i = 0; i < nf; i++) {
        unsigned flags, cd[8];
        size_t ncd = G_N_ELEMENTS(cd);
        char name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        if (i)
            g_string_append_c(g, ',');
        filter_name(g, id, cd, ncd);
        if (id < 0 || filter_avail(id))
            continue;
        g_string_append(g, "(unavailable)");
        g_free(*unavail);
        *unavail = g_strdup_printf("filter %d (%s) is not available", (int)id,
                                   *name ? name : "unnamed");
        *own_lzf = *own_lzf && id == HPC_H5CHUNK_FILTER_LZF;
    }
    d->filters = g_strdup(nf > 0 ? g->str : "-");
    g_string_free(g, TRUE);
}

/* d->chunks (the chunk shape or "-"); the bytes of a chunk, of a row of
 * chunks (along dimension 0) and the number of chunks, saturated at
 * UINT64_MAX; all 0 when not chunked. */
static void dset_chunking(h5_dset *d, hid_t dcpl, hid_t ftype, H5D_layout_t lay,
                          uint64_t *chunk_band, uint64_t *chunk_bytes, uint64_t *nchunks)
{
    GString *g = g_string_new(NULL);
    hsize_t cd[H5S_MAX_RANK];
    if (lay == H5D_CHUNKED && d->rank > 0 && H5Pget_chunk(dcpl, d->rank, cd) == d->rank) {
        uint64_t nchunks_row = 1, cb = H5Tget_size(ftype);
        for (int i = 0; i < d->rank; i++) {
            g_string_append_printf(g, "%s%" PRIu64, i ? "," : "", (uint64_t)cd[i]);
            if (cd[i] == 0)
                continue;
            cb = hpc_mul_u64_sat(cb, (uint64_t)cd[i]);
            if (i > 0)
                nchunks_row = hpc_mul_u64_sat(nchunks_row, (d->dims[i] + cd[i] - 1) / cd[i]);
        }
        *chunk_bytes = cb;
        *chunk_band = hpc_mul_u64_sat(cb, nchunks_row);
        uint64_t rows = cd[0] ? (d->dims[0] + cd[0] - 1) / cd[0] : 0;
        *nchunks = hpc_mul_u64_sat(rows, nchunks_row);
    }
    d->chunks = g_strdup(g->len ? g->str : "-");
    g_string_free(g, TRUE);
}

/* Where d's contiguous storage starts in the file, or HADDR_UNDEF when it
 * was never allocated or does not hold all of d.  libhdf5 1.10 adds the
 * user block's size to an undefined address (HADDR_UNDEF + 512 gives 511),
 * so H5Dget_offset alone does not say whether the storage exists. */
static haddr_t dset_contig_addr(const h5 *h, const h5_dset *d)
{
    H5D_space_status_t st;
    if (H5Dget_space_status(d->id, &st) < 0 || st != H5D_SPACE_STATUS_ALLOCATED ||
        H5Dget_storage_size(d->id) < d->size)
        return HADDR_UNDEF;
    haddr_t a = H5Dget_offset(d->id);
    return a < h->userblock ? HADDR_UNDEF : a;
}

/* A contiguous dataset stored as its byte image inside the file is read
 * with pread at its address (DS_FAST). */
static void dset_try_fast(h5 *h, h5_dset *d, hid_t ftype)
{
    if (d->size == 0 || d->pad || d->rtype >= 0 || H5Tequal(ftype, d->mtype) <= 0)
        return;
    haddr_t a = dset_contig_addr(h, d);
    if (a == HADDR_UNDEF)
        return;
    if (hpc_source_contains(h->src, (uint64_t)a, d->size)) {
        d->kind = DS_FAST;
        d->addr = (uint64_t)a;
        return;
    }
    d->note = g_strdup_printf("raw data at %" PRIu64 " (+%" PRIu64 ") end beyond the "
                              "end of the file", (uint64_t)a, d->size);
    g_string_append_printf(h->warnings, "warning: %s: %s\n", d->path, d->note);
}

/* A type h5py has no NumPy image of (why, taken): listed with the file
 * type's size, reads fail with EIO; .info has a note and a warning. */
static void dset_refuse(h5 *h, h5_dset *d, hid_t ftype, char *why)
{
    d->kind = DS_REFUSED;
    d->esize = H5Tget_size(ftype);
    d->dtype = g_strdup_printf("|V%zu", d->esize);
    if (!hpc_mul_u64(d->nelem, (uint64_t)d->esize, &d->size) || d->size > (uint64_t)INT64_MAX)
        d->size = 0;
    d->note = g_strdup_printf("%s: reads fail with EIO", why);
    g_string_append_printf(h->warnings, "warning: %s: %s\n", d->path, d->note);
    g_free(why);
}

/* d's element types, its size and how it is read (d->kind). */
static int dset_kind(h5 *h, h5_dset *d, hid_t ftype, hid_t space, int contiguous)
{
    char *why = NULL;
    if (H5Tget_class(ftype) == H5T_STRING && H5Tis_variable_str(ftype) > 0) {
        d->kind = DS_TEXT;
        d->dtype = g_strdup("O");
        d->esize = 0;
        if (d->nelem <= MAX_TEXT_ELEMS)
            return dset_text(d, ftype, space);
        h5_dset_leave_out(h, d, 0, g_strdup_printf("more than %u strings: not rendered", MAX_TEXT_ELEMS));
        return HPC_OK;
    }
    if (H5Tget_class(ftype) == H5T_VLEN || hpc_h5t_has_var(ftype))
        return h5_parts_render(h, d, ftype);
    if (H5Tget_class(ftype) == H5T_REFERENCE)
        return h5_refs_render(h, d, ftype);
    if (hpc_h5t_refusal(ftype, &why) != HPC_OK) {
        dset_refuse(h, d, ftype, why);
        return HPC_OK;
    }
    d->mtype = hpc_h5t_mem_type_of(ftype);
    if (d->mtype < 0) {
        d->dtype = g_strdup("O");
        h5_dset_leave_out(h, d, 0, g_strdup("type without a byte image (variable-length or "
                                         "reference): not served"));
        return HPC_OK;
    }
    GString *g = g_string_new(NULL);
    hpc_h5t_np_dtype(ftype, d->mtype, g);
    d->dtype = g_string_free(g, FALSE);
    d->esize = H5Tget_size(d->mtype);
    /* one element is held at a time when a read ends inside one */
    if (d->esize > MAX(h->max_handle_bytes, MAX_ELEM_SIZE)) {
        h5_dset_leave_out(h, d, 1, g_strdup_printf("elements of %zu bytes, more than h5cache: "
                                                "not served", d->esize));
        return HPC_OK;
    }
    if (d->esize == 0 || !hpc_mul_u64(d->nelem, (uint64_t)d->esize, &d->size) ||
        d->size > (uint64_t)INT64_MAX) {
        d->size = 0;
        h5_dset_leave_out(h, d, 1, g_strdup_printf("%" PRIu64 " elements of %zu bytes: larger than "
                                                "the largest file size: left out (empty)",
                                                d->nelem, d->esize));
        return HPC_OK;
    }
    d->kind = DS_DATA;
    d->rtype = read_type(ftype, d->mtype);
    size_t unit = hpc_h5t_opaque_swap(ftype);
    d->swap = d->rtype < 0 ? 0 : unit ? unit : d->esize;
    /* h5py converts a compound with bit-field members (its dtype has
     * integers there), so its padding bytes are zero, not the file's: such
     * datasets go through H5Dread, and h5_read_elements zeroes the padding.
     * Other compounds keep the file's padding where libhdf5 copies
     * unconverted, as h5py does. */
    d->pad = H5Tdetect_class(ftype, H5T_BITFIELD) > 0 ? hpc_h5t_padding(d->mtype, d->esize) : NULL;
    if (contiguous)
        dset_try_fast(h, d, ftype);
    return HPC_OK;
}

/* bits narrowed by the file name that libhdf5 reads some of a dataset's
 * bytes from (relative: beside the .h5 file, as the prefixes say).  A file
 * this process cannot read narrows nothing: the library, which runs with
 * the rights of the container's owner, reads no byte of it either (fill
 * values, or EIO). */
static uint32_t narrow_by_file(const h5 *h, uint32_t bits, const char *name)
{
    char *dir = g_path_get_dirname(h->src->path);
    char *p = g_path_is_absolute(name) ? g_strdup(name) : g_build_filename(dir, name, NULL);
    if (access(p, R_OK) == 0)
        bits = hpc_perm_path(bits, hpc_creds_of(h->uid, h->gid), h->uid, h->gid, p);
    g_free(p);
    g_free(dir);
    return bits;
}

/* "external raw data: PATH (cannot be read by its owner: ...), ..." for the
 * log line of a failed read of d (a file its owner cannot read is missing). */
char *h5_dset_external_note(const h5 *h, const h5_dset *d)
{
    hid_t dcpl = d->external ? H5Dget_create_plist(d->id) : H5I_INVALID_HID;
    int next = dcpl >= 0 ? H5Pget_external_count(dcpl) : 0;
    GString *o = g_string_new(NULL);
    char *dir = g_path_get_dirname(h->src->path);
    for (int i = 0; i < next; i++) {
        char name[4096];
        off_t off;
        hsize_t size;
        if (H5Pget_external(dcpl, (unsigned)i, sizeof name, name, &off, &size) < 0)
            break;
        name[sizeof name - 1] = '\0';
        char *p = g_path_is_absolute(name) ? g_strdup(name) : g_build_filename(dir, name, NULL);
        int e = access(p, R_OK) == 0 ? 0 : errno;
        g_string_append_printf(o, "%s%s%s%s%s", i ? ", " : "external raw data: ", p,
                               e ? " (cannot be read by its owner: " : "", e ? g_strerror(e) : "",
                               e ? ")" : "");
        g_free(p);
    }
    g_free(dir);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return g_string_free(o, FALSE);
}

/* The read bits of a dataset beyond its file's: those of its external raw
 * data files and of its virtual sources' files (docs/design.md, "Who may
 * read what").  A source named by a printf pattern: its owner alone. */
static uint32_t dset_perm(const h5 *h, hid_t dcpl, H5D_layout_t lay, int next)
{
    uint32_t bits = HPC_PERM_ALL;
    char name[4096];
    for (int i = 0; i < next; i++) {
        off_t off;
        hsize_t size;
        if (H5Pget_external(dcpl, (unsigned)i, sizeof name, name, &off, &size) < 0)
            return 0;
        name[sizeof name - 1] = '\0';
        bits = narrow_by_file(h, bits, name);
    }
    size_t nvirt = 0;
    if (lay != H5D_VIRTUAL || H5Pget_virtual_count(dcpl, &nvirt) < 0)
        return bits;
    for (size_t i = 0; i < nvirt; i++) {
        ssize_t len = H5Pget_virtual_filename(dcpl, i, name, sizeof name);
        if (len < 0 || (size_t)len >= sizeof name)
            return 0;
        if (strchr(name, '%'))
            bits &= 0400u;
        else if (strcmp(name, ".") != 0)
            bits = narrow_by_file(h, bits, name);
    }
    return bits;
}

/* Describe dataset d->id: shape, types, layout, how it is read.  Fills
 * *chunk_band with the bytes of one row of chunks (0 if not chunked), the
 * bytes of a chunk and the number of chunks. */
int h5_dset_describe(h5 *h, h5_dset *d, uint64_t *chunk_band, uint64_t *chunk_bytes,
                     uint64_t *nchunks)
{
    hid_t ftype = H5Dget_type(d->id), space = H5Dget_space(d->id), dcpl = H5Dget_create_plist(d->id);
    int rc = HPC_E_IO;
    char *unavail = NULL;          /* the last filter libhdf5 lacks */
    int own_lzf = 1;               /* ... all of them LZF, which the reader decodes */
    *chunk_band = *chunk_bytes = *nchunks = 0;
    if (ftype < 0 || space < 0 || dcpl < 0)
        goto out;
    rc = dset_shape(d, space);
    if (rc != HPC_OK || d->note)
        goto out;
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int next = H5Pget_external_count(dcpl);
    d->external = next > 0;
    d->perm = dset_perm(h, dcpl, lay, next);
    dset_layout(d, lay, next);
    dset_filters(d, dcpl, &unavail, &own_lzf);
    dset_chunking(d, dcpl, ftype, lay, chunk_band, chunk_bytes, nchunks);
    rc = dset_kind(h, d, ftype, space, lay == H5D_CONTIGUOUS && next == 0);
    if (rc != HPC_OK || d->kind != DS_DATA)
        goto out;
    if (unavail && own_lzf) {
        hpc_h5chunk_plan *p = NULL;
        own_lzf = hpc_h5chunk_plan_new(dcpl, ftype, d->mtype, d->esize, d->rank, d->dims, &p) == HPC_OK;
        hpc_h5chunk_plan_free(p);
    }
out:
    if (unavail)
        note_unavailable(h, d, unavail, own_lzf && d->kind == DS_DATA);
    g_free(unavail);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc;
}
