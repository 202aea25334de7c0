/* hdf5_vlen.c - datasets with no byte image of their own, read through
 * libhdf5 when first described (docs/hdf5.md): variable-length sequences
 * of numbers as Arrow's list arrays lay them out (a directory of `values`
 * and `offsets`), object and region references as the paths (and
 * selections) of their targets, one a line.  What one dataset holds is
 * bounded by MAX_TEXT_BYTES, as the text of variable-length strings is,
 * and the handle LRU (-o h5cache) bounds it across datasets. */
#include "hdf5_int.h"

#define SCAN_ELEMS 4096u           /* elements one H5Dread reads */

/* ---- variable-length sequences ----------------------------------------- */

/* The memory manager of a read of sequences: libhdf5 allocates every
 * sequence of the elements read, so allocations beyond what may still be
 * kept fail (and the read with them) instead of growing the daemon. */
typedef struct budget {
    size_t left;
    int over;
} budget;

static void *budget_alloc(size_t size, void *info)
{
    budget *b = info;
    if (size > b->left) {
        b->over = 1;
        return NULL;
    }
    b->left -= size;
    return malloc(size ? size : 1);
}

static void budget_free(void *p, void *info)
{
    (void)info;
    free(p);
}

void h5_seq_clear(h5_seq *s)
{
    g_free(s->values);
    g_free(s->offsets);
    g_free(s->vdtype);
    memset(s, 0, sizeof *s);
}

/* The memory type of the values of sequence type ftype (its base read as
 * h5py reads it) and its dtype text; *why says why there is none. */
static hid_t seq_base(hid_t ftype, h5_seq *s, char **why)
{
    hid_t base = H5Tget_super(ftype), m = H5I_INVALID_HID;
    if (base < 0)
        return H5I_INVALID_HID;
    if (H5Tget_class(base) == H5T_VLEN || H5Tdetect_class(base, H5T_VLEN) > 0 ||
        H5Tdetect_class(base, H5T_REFERENCE) > 0)
        *why = g_strdup("sequences of variable-length data or references: not served");
    else if (hpc_h5t_refusal(base, why) == HPC_OK && (m = hpc_h5t_mem_type_of(base)) >= 0) {
        GString *g = g_string_new(NULL);
        hpc_h5t_np_dtype(base, m, g);
        s->vdtype = g_string_free(g, FALSE);
        s->vesize = H5Tget_size(m);
    }
    H5Tclose(base);
    return m;
}

/* Elements [e0, e1) of d read into v (hvl_t, zeroed), their values
 * appended to vals and their offsets set; the sequences freed again. */
static int seq_block(h5_dset *d, budget *b, uint64_t e0, uint64_t e1, hvl_t *v, GByteArray *vals)
{
    h5_seq *s = &d->seq;
    int rc = h5_read_elements(d, e0, e1, v);
    for (uint64_t i = 0; rc == HPC_OK && i < e1 - e0; i++) {
        uint64_t n = v[i].len;
        if (n && !v[i].p) {
            rc = HPC_E_IO;
            break;
        }
        if (n)
            g_byte_array_append(vals, v[i].p, (guint)(n * s->vesize));
        s->offsets[e0 + i + 1] = s->offsets[e0 + i] + (int64_t)n;
    }
    hsize_t n = e1 - e0;
    hid_t ms = H5Screate_simple(1, &n, NULL);
    if (ms >= 0) {
        H5Dvlen_reclaim(d->mtype, ms, d->dxpl, v);
        H5Sclose(ms);
    }
    return b->over ? HPC_E_NOMEM : rc;
}

/* Read every sequence of d, SCAN_ELEMS elements at a time. */
static int seq_scan(h5_dset *d, budget *b)
{
    h5_seq *s = &d->seq;
    uint64_t kept = (d->nelem + 1) * sizeof(int64_t);
    GByteArray *vals = g_byte_array_new();
    hvl_t *v = g_new(hvl_t, MIN(d->nelem, SCAN_ELEMS) + 1);
    int rc = HPC_OK;
    s->offsets = g_new0(int64_t, d->nelem + 1);
    for (uint64_t e0 = 0; rc == HPC_OK && e0 < d->nelem; e0 += SCAN_ELEMS) {
        b->left = kept + vals->len < MAX_TEXT_BYTES ? (size_t)(MAX_TEXT_BYTES - kept - vals->len) : 0;
        rc = seq_block(d, b, e0, MIN(e0 + SCAN_ELEMS, d->nelem), v, vals);
    }
    g_free(v);
    s->nvalues = s->vesize ? vals->len / s->vesize : 0;
    s->values = g_byte_array_free(vals, FALSE);
    for (uint64_t i = 0; i <= d->nelem; i++)
        s->offsets[i] = GINT64_TO_LE(s->offsets[i]);
    return rc;
}

/* Describe and read dataset d of variable-length sequence type ftype. */
int h5_seq_render(h5 *h, h5_dset *d, hid_t ftype)
{
    char *why = NULL;
    d->kind = DS_SEQ;
    d->dtype = g_strdup("O");
    hid_t m = seq_base(ftype, &d->seq, &why);
    if (m < 0 || (d->mtype = H5Tvlen_create(m)) < 0) {
        h5_dset_leave_out(h, d, 1, why ? why : g_strdup("sequences of a type without a "
                                                        "byte image: not served"));
        if (m >= 0)
            H5Tclose(m);
        return HPC_OK;
    }
    H5Tclose(m);
    d->esize = sizeof(hvl_t);
    if (d->nelem >= MAX_TEXT_BYTES / sizeof(int64_t)) {
        h5_dset_leave_out(h, d, 0, g_strdup_printf("more than %u sequences: not served",
                                                   MAX_TEXT_BYTES / 8));
        return HPC_OK;
    }
    budget b = { 0, 0 };
    d->dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (d->dxpl < 0 || H5Pset_vlen_mem_manager(d->dxpl, budget_alloc, &b, budget_free, NULL) < 0)
        return HPC_E_IO;
    int rc = seq_scan(d, &b);
    H5Pclose(d->dxpl);
    d->dxpl = 0;
    if (rc == HPC_E_NOMEM) {
        h5_seq_clear(&d->seq);
        h5_dset_leave_out(h, d, 1, g_strdup_printf("sequences of more than %u bytes in all: "
                                                   "not served", MAX_TEXT_BYTES));
        rc = HPC_OK;
    }
    return rc;
}

uint64_t h5_seq_part_size(const h5_dset *d, int part)
{
    if (d->kind != DS_SEQ)
        return 0;
    return part == SEQ_OFFSETS ? (d->nelem + 1) * sizeof(int64_t)
                               : d->seq.nvalues * d->seq.vesize;
}

int h5_seq_read(const h5_dset *d, int part, void *buf, size_t len, uint64_t off)
{
    uint64_t size = h5_seq_part_size(d, part);
    if (off > size || len > size - off)
        return HPC_E_INVAL;
    if (len == 0)
        return HPC_OK;
    const uint8_t *src = part == SEQ_OFFSETS ? (const uint8_t *)d->seq.offsets : d->seq.values;
    memcpy(buf, src + off, len);
    return HPC_OK;
}

void h5_seq_part_xattrs(const h5_dset *d, int part, char **dtype, char **shape)
{
    if (d->kind != DS_SEQ) {
        *dtype = *shape = NULL;
        return;
    }
    *dtype = g_strdup(part == SEQ_OFFSETS ? "<i8" : d->seq.vdtype);
    *shape = g_strdup_printf("%" PRIu64, part == SEQ_OFFSETS ? d->nelem + 1 : d->seq.nvalues);
}

/* ---- references ---------------------------------------------------------- */

typedef struct refs_ctx {
    h5_dset *d;
    H5R_type_t type;
    GHashTable *names;             /* object header address -> path */
    GString *t;
} refs_ctx;

/* The path h5py gives the object oid (H5Iget_name), remembered by its
 * address: libhdf5 searches the file for a name of an object opened by
 * address. */
static int ref_name(refs_ctx *r, hid_t oid)
{
    H5O_info_t oi;
    if (H5Oget_info2(oid, &oi, H5O_INFO_BASIC) < 0)
        return HPC_E_IO;
    gpointer key = GSIZE_TO_POINTER((gsize)oi.addr);
    const char *name = g_hash_table_lookup(r->names, key);
    if (!name) {
        ssize_t n = H5Iget_name(oid, NULL, 0);
        if (n < 0)
            return HPC_E_IO;
        char *v = g_malloc0((size_t)n + 1);
        if (H5Iget_name(oid, v, (size_t)n + 1) < 0) {
            g_free(v);
            return HPC_E_IO;
        }
        g_hash_table_insert(r->names, key, v);
        name = v;
    }
    g_string_append(r->t, name);
    return HPC_OK;
}

/* The selection of a region reference: "all", "none", "points (i,j) ..."
 * or "blocks (i,j)-(k,l) ..." (the corners of each block, inclusive), in
 * the order libhdf5 lists them. */
static int sel_text(hid_t sp, GString *t)
{
    int rank = H5Sget_simple_extent_ndims(sp);
    H5S_sel_type st = H5Sget_select_type(sp);
    hssize_t n = st == H5S_SEL_POINTS ? H5Sget_select_elem_npoints(sp)
               : st == H5S_SEL_HYPERSLABS ? H5Sget_select_hyper_nblocks(sp) : 0;
    unsigned corners = st == H5S_SEL_HYPERSLABS ? 2 : 1;
    if (st == H5S_SEL_ALL || st == H5S_SEL_NONE) {
        g_string_append(t, st == H5S_SEL_ALL ? "all" : "none");
        return HPC_OK;
    }
    if (rank < 1 || n < 0 || (uint64_t)n * corners * (uint64_t)rank > MAX_TEXT_BYTES / 8 ||
        (st != H5S_SEL_POINTS && st != H5S_SEL_HYPERSLABS))
        return HPC_E_IO;
    hsize_t *c = g_new(hsize_t, (size_t)n * corners * (size_t)rank + 1);
    herr_t e = st == H5S_SEL_POINTS ? H5Sget_select_elem_pointlist(sp, 0, (hsize_t)n, c)
                                    : H5Sget_select_hyper_blocklist(sp, 0, (hsize_t)n, c);
    g_string_append(t, st == H5S_SEL_POINTS ? "points" : "blocks");
    for (hssize_t i = 0; e >= 0 && i < n && t->len <= MAX_TEXT_BYTES; i++)
        for (unsigned k = 0; k < corners; k++) {
            g_string_append(t, k ? ")-(" : " (");
            for (int j = 0; j < rank; j++)
                g_string_append_printf(t, "%s%" PRIu64, j ? "," : "",
                                       (uint64_t)c[((size_t)i * corners + k) * (size_t)rank + (size_t)j]);
            if (k + 1 == corners)
                g_string_append_c(t, ')');
        }
    g_free(c);
    return e >= 0 ? HPC_OK : HPC_E_IO;
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* One reference as a line: empty when null, else the target's path, and
 * for a region a tab and its selection. */
static int ref_line(refs_ctx *r, const void *ref)
{
    int rc = HPC_OK;
    if (!all_zero(ref, r->d->esize)) {
        hid_t oid = H5Rdereference2(r->d->id, H5P_DEFAULT, r->type, ref);
        hid_t sp = H5I_INVALID_HID;
        rc = oid >= 0 ? ref_name(r, oid) : HPC_E_IO;
        if (rc == HPC_OK && r->type == H5R_DATASET_REGION) {
            sp = H5Rget_region(r->d->id, H5R_DATASET_REGION, ref);
            g_string_append_c(r->t, '\t');
            rc = sp >= 0 ? sel_text(sp, r->t) : HPC_E_IO;
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (oid >= 0)
            H5Oclose(oid);
    }
    g_string_append_c(r->t, '\n');
    return rc;
}

/* Every reference of d as lines, SCAN_ELEMS at a time. */
static int refs_scan(refs_ctx *r)
{
    h5_dset *d = r->d;
    uint8_t *v = g_malloc0((size_t)MIN(d->nelem, SCAN_ELEMS) * d->esize + 1);
    int rc = HPC_OK;
    for (uint64_t e0 = 0; rc == HPC_OK && e0 < d->nelem && r->t->len <= MAX_TEXT_BYTES;
         e0 += SCAN_ELEMS) {
        uint64_t e1 = MIN(e0 + SCAN_ELEMS, d->nelem);
        rc = h5_read_elements(d, e0, e1, v);
        for (uint64_t i = 0; rc == HPC_OK && i < e1 - e0 && r->t->len <= MAX_TEXT_BYTES; i++) {
            rc = ref_line(r, v + i * d->esize);
            if (rc != HPC_OK) {
                char *why = h5_errtext();
                hpc_log("hdf5: %s: reference %" PRIu64 " cannot be followed: %s", d->path,
                        e0 + i, why);
                g_free(why);
            }
        }
    }
    g_free(v);
    return rc;
}

/* Describe and read dataset d of reference type ftype as text. */
int h5_refs_render(h5 *h, h5_dset *d, hid_t ftype)
{
    int obj = H5Tequal(ftype, H5T_STD_REF_OBJ) > 0;
    d->dtype = g_strdup("O");
    if (!obj && H5Tequal(ftype, H5T_STD_REF_DSETREG) <= 0) {
        h5_dset_leave_out(h, d, 1, g_strdup("references of an unknown kind: not served"));
        return HPC_OK;
    }
    d->ref = g_strdup(obj ? "object" : "region");
    d->mtype = H5Tcopy(obj ? H5T_STD_REF_OBJ : H5T_STD_REF_DSETREG);
    d->esize = obj ? sizeof(hobj_ref_t) : sizeof(hdset_reg_ref_t);
    if (d->nelem > MAX_TEXT_ELEMS) {
        h5_dset_leave_out(h, d, 0, g_strdup_printf("more than %u references: not rendered",
                                                   MAX_TEXT_ELEMS));
        return HPC_OK;
    }
    refs_ctx r = { d, obj ? H5R_OBJECT : H5R_DATASET_REGION,
                   g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
                   g_string_new(NULL) };
    int rc = d->mtype >= 0 ? refs_scan(&r) : HPC_E_IO;
    g_hash_table_destroy(r.names);
    d->kind = DS_TEXT;
    if (rc == HPC_OK && r.t->len > MAX_TEXT_BYTES) {
        d->kind = DS_NONE;
        d->note = g_strdup_printf("references of more than %u bytes as text: not rendered",
                                  MAX_TEXT_BYTES);
        g_string_truncate(r.t, 0);
    }
    d->size = r.t->len;
    d->text = g_string_free(r.t, FALSE);
    return rc;
}
