/* hdf5_lib.c - the reader's calls into libhdf5 that its other files stand
 * on: the error stack silenced and read as text, and a described
 * dataset's elements read with H5Dread (hdf5_vlen.c renders from them,
 * hdf5_data.c serves them). */
#include "hdf5_int.h"

/* ---- the error stack -------------------------------------------------- */

/* Silence libhdf5's error printing in this thread (the setting is per
 * thread in the thread-safe build). */
void h5_quiet(void)
{
    static _Thread_local int done;
    if (!done) {
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        done = 1;
    }
}

/* The two most specific messages of the error stack: the innermost alone
 * is often a detail ("can't open directory" of the plugin search). */
static herr_t errmsg_walk(unsigned n, const H5E_error2_t *e, void *p)
{
    GString *m = p;
    char minor[256] = "";
    const char *d = e->desc;
    if (n >= 2)
        return 0;
    if (!d || !*d) {
        H5Eget_msg(e->min_num, NULL, minor, sizeof minor);
        d = minor;
    }
    g_string_append_printf(m, "%s%s", n ? "; " : "", d);
    return 0;
}

/* This thread's error stack as one line (call right after the failing
 * call, before any other). */
char *h5_errtext(void)
{
    GString *m = g_string_new(NULL);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, errmsg_walk, m);
    if (m->len == 0)
        g_string_append(m, "libhdf5 gave no reason");
    for (char *c = m->str; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    return g_string_free(m, FALSE);
}

/* ---- elements --------------------------------------------------------- */

/* Elements of n bytes in the file's (big-endian) order to little-endian. */
void h5_swap_elements(void *buf, uint64_t count, size_t n)
{
    unsigned char *p = buf;
    for (uint64_t i = 0; i < count; i++, p += n)
        for (size_t a = 0, b = n - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* Zero the padding bytes of count elements of d in buf. */
static void zero_padding(const h5_dset *d, void *buf, uint64_t count)
{
    unsigned char *e = buf;
    for (uint64_t i = 0; i < count; i++, e += d->esize)
        for (guint k = 0; k < d->pad->len; k++) {
            const hpc_h5t_pad *p = &g_array_index(d->pad, hpc_h5t_pad, k);
            memset(e + p->off, 0, p->len);
        }
}

/* Elements [e0, e1) of d into buf. */
int h5_read_elements(const h5_dset *d, uint64_t e0, uint64_t e1, void *buf)
{
    hid_t fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    int rc = HPC_E_IO;
    /* H5Dread leaves bytes untouched (storage never allocated with
     * H5D_FILL_TIME_NEVER, the padding of converted compounds): they are
     * zero, as in h5py's numpy.zeros buffers, never what buf held */
    memset(buf, 0, (size_t)(e1 - e0) * d->esize);
    hid_t rtype = d->rtype >= 0 ? d->rtype : d->mtype;
    if (d->rank == 0) {
        if (H5Dread(d->id, rtype, H5S_ALL, H5S_ALL, d->dxpl, buf) >= 0)
            rc = HPC_OK;
        goto out;
    }
    hpc_hdf5_box box[2 * HPC_HDF5_MAX_RANK - 1];
    unsigned nb = hpc_hdf5_boxes(d->rank, d->dims, e0, e1, box);
    hsize_t n = e1 - e0;
    void *base = buf;
    fs = H5Dget_space(d->id);
    if (fs < 0 || nb == 0)
        goto out;
    for (unsigned i = 0; i < nb; i++) {
        hsize_t start[HPC_HDF5_MAX_RANK], count[HPC_HDF5_MAX_RANK];
        for (int k = 0; k < d->rank; k++) {
            start[k] = box[i].start[k];
            count[k] = box[i].count[k];
        }
        if (H5Sselect_hyperslab(fs, i ? H5S_SELECT_OR : H5S_SELECT_SET, start, NULL, count, NULL) < 0)
            goto out;
    }
    if (d->rank == 1) {
        ms = H5Screate_simple(1, &n, NULL);
    } else {
        /* A memory space of another shape than the file selection sends
         * libhdf5 1.10 through a per-element loop for chunked data (3x
         * the CPU of decompressing).  So: the memory space is the file
         * space with the same selection, and the buffer's address is
         * shifted so that element e0 lands at buf.  libhdf5 only touches
         * the selected elements, [e0, e1), all inside buf; the shift is
         * integer arithmetic, the pointer is never dereferenced outside. */
        ms = H5Scopy(fs);
        base = (void *)((uintptr_t)buf - (uintptr_t)(e0 * d->esize));
    }
    if (ms >= 0 && H5Dread(d->id, rtype, ms, fs, d->dxpl, base) >= 0)
        rc = HPC_OK;
out:
    if (rc == HPC_OK && d->rtype >= 0)
        h5_swap_elements(buf, (e1 - e0) * (d->esize / d->swap), d->swap);
    if (rc == HPC_OK && d->pad)
        zero_padding(d, buf, e1 - e0);
    if (rc != HPC_OK) {
        char *why = h5_errtext();
        hpc_log("hdf5: %s: H5Dread of elements %" PRIu64 "..%" PRIu64 " failed: %s%s%s",
                d->path, e0, e1, d->note ? d->note : "", d->note ? ": " : "", why);
        g_free(why);
    }
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    return rc;
}
