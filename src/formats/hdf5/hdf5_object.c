/* hdf5_object.c - what the reader knows of an object before it lists or
 * opens it: its header read by the reader itself (hdf5_ohdr.c), and of an
 * open dataset whether it is a directory or larger than any file.  Below
 * the tree (hdf5_tree.c) and the objects named by address (hdf5_anon.c),
 * which both ask it. */
#include "hdf5_int.h"

/* ---- object headers read by the listing ---------------------------------
 *
 * What a listing needs of a new object is a few bytes of its header; the
 * reader reads them itself (hdf5_ohdr.c) through a window of the file,
 * since the headers of a group's objects usually lie close together.
 * Where that reader is not sure, libhdf5 is asked, as before. */

#define WIN_BYTES (16u << 10)      /* read at least this much at a time */
G_STATIC_ASSERT(HPC_H5OHDR_MAX_RANK == H5S_MAX_RANK);

/* hpc_h5ohdr_read_fn over h's window of the file (lock held, or at open). */
static int window_read(void *ctx, uint64_t off, size_t len, const uint8_t **p)
{
    h5 *h = ctx;
    if (len > HPC_H5OHDR_MAX_CHUNK || !hpc_source_contains(h->src, off, len))
        return HPC_E_CORRUPT;
    if (off < h->win_off || off + len > h->win_off + h->win_len) {
        uint64_t start = off & ~(uint64_t)4095;
        uint64_t end = MIN(MAX(start + WIN_BYTES, off + len), h->src->size);
        if (!h->win)
            h->win = g_malloc(HPC_H5OHDR_MAX_CHUNK + 4096);
        h->win_len = 0;
        int rc = hpc_source_pread(h->src, h->win, (size_t)(end - start), start);
        if (rc != HPC_OK)
            return rc;
        h->win_off = start;
        h->win_len = (size_t)(end - start);
    }
    *p = h->win + (off - h->win_off);
    return HPC_OK;
}

/* The attributes hdf5_ncdims.c asks libhdf5 for (a dimension scale's
 * and attached scales'): a dataset whose header holds none of them is
 * read from its header there. */
static const char *const nc_attrs[] = { "CLASS", "_Netcdf4Coordinates", "DIMENSION_LIST", NULL };

/* Whether the headers can be read here: the root group's must say what
 * libhdf5 says of it (this checks the base address and the field sizes),
 * and a file closed with a metadata cache image has its headers there,
 * where libhdf5 reads them, not at their addresses. */
void h5_headers_init(h5 *h)
{
    hid_t fcpl = H5Fget_create_plist(h->file);
    size_t sa = 0, ss = 0;
    if (fcpl >= 0) {
        H5Pget_sizes(fcpl, &sa, &ss);
        H5Pclose(fcpl);
    }
    h->ohdr = (hpc_h5ohdr_file){ .base = h->userblock, .sizeof_addr = (unsigned)sa,
                                 .sizeof_size = (unsigned)ss, .attr_names = nc_attrs };
    haddr_t image = HADDR_UNDEF;
    hsize_t image_len = 0;
    H5O_info_t oi;
    hpc_h5ohdr o;
    h->ohdr_libhdf5 = 1;
    if (sa < 2 || sa > 8 || ss < 2 || ss > 8 ||
        H5Fget_mdc_image_info(h->file, &image, &image_len) < 0 || image_len > 0 ||
        H5Oget_info_by_name2(h->file, "/", &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
        return;
    h->ohdr_libhdf5 = hpc_h5ohdr_read(&h->ohdr, (uint64_t)oi.addr, window_read, h, &o) != HPC_OK ||
                      o.kind != HPC_H5OBJ_GROUP || o.nlink != oi.rc;
}

int h5_header_read(h5 *h, uint64_t addr, hpc_h5ohdr *o)
{
    if (h->ohdr_libhdf5)
        return HPC_E_NOTSUP;
    return hpc_h5ohdr_read(&h->ohdr, addr, window_read, h, o);
}

/* Is open dataset d a directory (a sequence, a compound holding
 * variable-length data: docs/hdf5.md)?  Asked of libhdf5 where the object
 * header did not say (a committed type, a compound, an array). */
int h5_dset_is_dir(hid_t d)
{
    hid_t t = H5Dget_type(d);
    int seq = t >= 0 && h5_type_is_dir(t);
    if (t >= 0)
        H5Tclose(t);
    return seq;
}

/* Does open dataset d, linked as name in group node dir, hold more bytes
 * than the largest file (2^63 - 1)?  Then it has no file: it is left out
 * of the listing (lookup: ENOENT) with a warning line in .info, whose
 * path is made only then.  Its file type's size counts: the size served
 * is never smaller. */
int h5_dset_too_large(h5 *h, hid_t d, uint32_t dir, const char *name)
{
    hid_t sp = H5Dget_space(d), t = H5Dget_type(d);
    hsize_t dims[H5S_MAX_RANK];
    uint64_t d64[H5S_MAX_RANK];
    int r = sp >= 0 && H5Sget_simple_extent_type(sp) == H5S_SIMPLE ? H5Sget_simple_extent_dims(sp, dims, NULL) : 0;
    for (int i = 0; i < r; i++)
        d64[i] = dims[i];
    int over = t >= 0 && hpc_h5_over_file_size(H5Tget_size(t), r, d64);
    if (over) {
        char *dpath = h5_node_path(h, dir);
        g_string_append_printf(h->warnings, "warning: %s%s%s: more bytes than the largest file "
                               "size (2^63 - 1): left out\n", dpath, strcmp(dpath, "/") ? "/" : "",
                               name);
        g_free(dpath);
    }
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    return over;
}
