/* hdf5_vlen.c - datasets with no byte image of their own, read through
 * libhdf5 when first described (docs/hdf5.md): variable-length sequences
 * as Arrow's list arrays lay them out (a directory of `values` and
 * `offsets`), compounds holding variable-length or reference members as a
 * directory of one entry per member, object and region references as the
 * paths (and selections) of their targets, one an element of text
 * (hpc_h5t_text_eol).  What one dataset holds is bounded by MAX_TEXT_BYTES, as
 * the text of variable-length strings is, and the handle LRU (-o h5cache)
 * bounds it across datasets. */
#include "hdf5_int.h"

#define SCAN_ELEMS 4096u           /* elements one H5Dread of references reads */

/* ---- datasets as directories of parts ---------------------------------- */

/* The memory manager of a read of variable-length data: libhdf5 allocates
 * every sequence and string of the elements read, so allocations beyond
 * what may still be kept fail (and the read with them) instead of growing
 * the daemon. */
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

/* What rendering one dataset's parts shares. */
typedef struct pctx {
    h5_dset *d;                    /* a dataset's parts, or NULL (an attribute's) */
    hid_t loc;                     /* references are followed from here */
    const char *path;              /* ... of this object (log lines) */
    GArray *parts;                 /* h5_part */
    uint64_t bytes;                /* rendered so far: at most MAX_TEXT_BYTES */
    GHashTable *names;             /* references: object address -> path */
    char *why;                     /* not served: why */
} pctx;

#define PART(r, i) (&g_array_index((r)->parts, h5_part, (i)))

static void part_clear(h5_part *p)
{
    g_free(p->name);
    g_free(p->bytes);
    g_free(p->dtype);
    g_free(p->shape);
    g_free(p->extra);
}

void h5_parts_free(GArray *parts)
{
    for (guint i = 0; parts && i < parts->len; i++)
        part_clear(&g_array_index(parts, h5_part, i));
    if (parts)
        g_array_free(parts, TRUE);
}

const h5_part *h5_part_of(const h5_dset *d, uint64_t i)
{
    return d->parts && i < d->parts->len ? &g_array_index(d->parts, h5_part, i) : NULL;
}

/* Does type t hold variable-length data or references (at any depth)? */
/* Is a dataset of type t served as a directory: a sequence, a compound
 * holding variable-length data or references, an array of either?
 * (Arrays of strings or references are text files.) */
int h5_type_is_dir(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    int dir = 0;
    if (c == H5T_VLEN)
        return 1;
    if (c == H5T_COMPOUND)
        return hpc_h5t_has_var(t);
    if (c == H5T_ARRAY) {
        hid_t b = H5Tget_super(t);
        dir = b >= 0 && h5_type_is_dir(b);
        if (b >= 0)
            H5Tclose(b);
    }
    return dir;
}

static hid_t part_mtype(hid_t t, int depth, char **why);

/* An entry name a member may have: a file name (docs/hdf5.md). */
static int member_name_ok(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..") &&
           strlen(s) <= NAME_MAX_LEN;
}

/* The memory type of compound t: its members' memory types packed in
 * the file's order, under the file's names. */
static hid_t compound_mtype(hid_t t, int depth, char **why)
{
    int nm = H5Tget_nmembers(t);
    hid_t *mt = g_new(hid_t, nm > 0 ? nm : 1), m = H5I_INVALID_HID;
    size_t size = 0;
    int ok = nm > 0, i;
    for (i = 0; ok && i < nm; i++) {
        hid_t ft = H5Tget_member_type(t, (unsigned)i);
        mt[i] = ft >= 0 ? part_mtype(ft, depth + 1, why) : H5I_INVALID_HID;
        ok = mt[i] >= 0;
        size += ok ? H5Tget_size(mt[i]) : 0;
        if (ft >= 0)
            H5Tclose(ft);
    }
    int made = i - !ok;
    if (ok)
        m = H5Tcreate(H5T_COMPOUND, size);
    size_t off = 0;
    for (int k = 0; m >= 0 && k < nm; off += H5Tget_size(mt[k]), k++) {
        char *name = H5Tget_member_name(t, (unsigned)k);
        if (!member_name_ok(name) || H5Tinsert(m, name, off, mt[k]) < 0) {
            *why = g_strdup("a member name that is no file name");
            H5Tclose(m);
            m = H5I_INVALID_HID;
        }
        H5free_memory(name);
    }
    for (int k = 0; k < made; k++)
        H5Tclose(mt[k]);
    g_free(mt);
    return m;
}

/* The memory type of array or sequence type t (c), of its base's. */
static hid_t super_mtype(hid_t t, H5T_class_t c, int depth, char **why)
{
    hsize_t adims[H5S_MAX_RANK];
    hid_t b = H5Tget_super(t), mb = b >= 0 ? part_mtype(b, depth + 1, why) : H5I_INVALID_HID;
    hid_t m = H5I_INVALID_HID;
    int nd = c == H5T_ARRAY ? H5Tget_array_ndims(t) : 0;
    if (mb >= 0 && c == H5T_VLEN)
        m = H5Tvlen_create(mb);
    else if (mb >= 0 && nd > 0 && nd <= H5S_MAX_RANK && H5Tget_array_dims2(t, adims) == nd)
        m = H5Tarray_create2(mb, (unsigned)nd, adims);
    if (mb >= 0)
        H5Tclose(mb);
    if (b >= 0)
        H5Tclose(b);
    return m;
}

/* The memory type h5py reads file type t into: numbers as hpc_h5t_mem_type
 * has them, strings as char *, references as libhdf5's, sequences as
 * hvl_t; *why (new) says why there is none. */
static hid_t part_mtype(hid_t t, int depth, char **why)
{
    H5T_class_t c = H5Tget_class(t);
    hid_t m = H5I_INVALID_HID;
    if (depth > HPC_H5T_MAX_DEPTH) {
        *why = g_strdup("types nested too deeply");
    } else if (!hpc_h5t_has_var(t)) {
        if (hpc_h5t_refusal(t, why) == HPC_OK)
            m = hpc_h5t_mem_type_of(t);
    } else if (c == H5T_STRING) {
        m = H5Tcopy(H5T_C_S1);
        if (m >= 0 && (H5Tset_size(m, H5T_VARIABLE) < 0 || H5Tset_cset(m, H5Tget_cset(t)) < 0)) {
            H5Tclose(m);
            m = H5I_INVALID_HID;
        }
    } else if (c == H5T_REFERENCE) {
        int obj = H5Tequal(t, H5T_STD_REF_OBJ) > 0;
        if (obj || H5Tequal(t, H5T_STD_REF_DSETREG) > 0)
            m = H5Tcopy(obj ? H5T_STD_REF_OBJ : H5T_STD_REF_DSETREG);
        else
            *why = g_strdup("references of an unknown kind");
    } else if (c == H5T_COMPOUND) {
        m = compound_mtype(t, depth, why);
    } else {
        m = super_mtype(t, c, depth, why);
    }
    if (m < 0 && !*why)
        *why = g_strdup("a type libhdf5 cannot convert");
    return m;
}

/* Count bytes more of rendered parts; HPC_E_NOMEM beyond the bound. */
static int part_charge(pctx *r, uint64_t bytes)
{
    if (bytes > MAX_TEXT_BYTES - r->bytes)
        return HPC_E_NOMEM;
    r->bytes += bytes;
    return HPC_OK;
}

static char *shape_text(const uint64_t *dims, int rank)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; i < rank; i++)
        g_string_append_printf(s, "%s%" PRIu64, i ? "," : "", dims[i]);
    return g_string_free(s, FALSE);
}

static int render(pctx *r, uint32_t pi, hid_t t, hid_t m, const uint8_t *buf, uint64_t n,
                  const uint64_t *dims, int rank);

/* Part pi as the bytes of n elements of a type without variable data,
 * their padding zero (as h5py's buffers have it). */
static int render_fixed(pctx *r, uint32_t pi, hid_t t, hid_t m, const uint8_t *buf, uint64_t n)
{
    size_t es = H5Tget_size(m);
    int rc = part_charge(r, n * es);
    if (rc != HPC_OK)
        return rc;
    h5_part *p = PART(r, pi);
    p->size = n * es;
    p->bytes = g_malloc(p->size + 1);
    memcpy(p->bytes, buf, p->size);
    GArray *pad = hpc_h5t_padding(m, es);
    for (uint64_t i = 0; pad && i < n; i++)
        for (guint k = 0; k < pad->len; k++) {
            const hpc_h5t_pad *g = &g_array_index(pad, hpc_h5t_pad, k);
            memset(p->bytes + i * es + g->off, 0, g->len);
        }
    if (pad)
        g_array_unref(pad);
    GString *g = g_string_new(NULL);
    hpc_h5t_np_dtype(t, m, g);
    p->dtype = g_string_free(g, FALSE);
    return HPC_OK;
}

/* Part pi as text, a string or reference an element, each ended as
 * hpc_h5t_text_eol says (docs/hdf5.md). */
static int render_text(pctx *r, uint32_t pi, hid_t m, const uint8_t *buf, uint64_t n)
{
    size_t es = H5Tget_size(m);
    int ref = H5Tget_class(m) == H5T_REFERENCE, region = ref && H5Tequal(m, H5T_STD_REF_DSETREG) > 0;
    GString *t = g_string_new(NULL);
    int rc = HPC_OK;
    for (uint64_t i = 0; rc == HPC_OK && i < n && t->len <= MAX_TEXT_BYTES - r->bytes; i++) {
        char *s;
        if (ref) {
            rc = h5_ref_text(r->loc, r->path, r->names, region, buf + i * es, t);
            continue;
        }
        memcpy(&s, buf + i * es, sizeof s);
        if (s)
            g_string_append(t, s);
        g_string_append_c(t, '\0');
    }
    if (rc == HPC_OK)
        rc = part_charge(r, t->len);
    h5_part *p = PART(r, pi);
    p->eol_nul = hpc_h5t_text_eol(t);
    p->size = t->len;
    p->bytes = (uint8_t *)g_string_free(t, FALSE);
    p->dtype = g_strdup("O");
    if (ref) {
        p->extra_name = "user.h5ref";
        p->extra = g_strdup(region ? "region" : "object");
    }
    return rc;
}

/* Append n parts, entries of directory part pi, named by names. */
static uint32_t parts_add(pctx *r, uint32_t pi, uint32_t n)
{
    uint32_t first = r->parts->len;
    g_array_set_size(r->parts, first + n);
    PART(r, pi)->dir = 1;
    PART(r, pi)->first = first;
    PART(r, pi)->n = n;
    return first;
}

/* Close the pair of types a part was rendered with; returns rc. */
static int close_pair(hid_t a, hid_t b, int rc)
{
    if (a >= 0)
        H5Tclose(a);
    if (b >= 0)
        H5Tclose(b);
    return rc;
}

/* Part pi as a directory of offsets and values (Arrow's list array) of
 * n sequences of memory type m (hvl_t). */
static int render_seq(pctx *r, uint32_t pi, hid_t t, hid_t m, const uint8_t *buf, uint64_t n)
{
    hid_t tb = H5Tget_super(t), mb = H5Tget_super(m);
    size_t bs = mb >= 0 ? H5Tget_size(mb) : 0;
    uint32_t first = parts_add(r, pi, 2);
    int64_t *off = g_new0(int64_t, n + 1);
    int rc = tb >= 0 && bs ? part_charge(r, (n + 1) * sizeof *off) : HPC_E_IO;
    for (uint64_t i = 0; rc == HPC_OK && i < n; i++) {
        hvl_t v;
        memcpy(&v, buf + i * sizeof v, sizeof v);
        if (v.len && !v.p)
            rc = HPC_E_IO;
        else if (v.len > (MAX_TEXT_BYTES - r->bytes) / bs - (uint64_t)off[i])
            rc = HPC_E_NOMEM;
        else
            off[i + 1] = off[i] + (int64_t)v.len;
    }
    uint8_t *vals = rc == HPC_OK ? g_malloc((size_t)off[n] * bs + 1) : NULL;
    for (uint64_t i = 0; vals && i < n; i++) {
        hvl_t v;
        memcpy(&v, buf + i * sizeof v, sizeof v);
        if (v.len)
            memcpy(vals + (size_t)off[i] * bs, v.p, v.len * bs);
    }
    uint64_t nv = rc == HPC_OK ? (uint64_t)off[n] : 0;
    for (uint64_t i = 0; i <= n; i++)
        off[i] = GINT64_TO_LE(off[i]);
    h5_part *o = PART(r, first);
    o->name = g_strdup("offsets");
    o->bytes = (uint8_t *)off;
    o->size = (n + 1) * sizeof *off;
    o->dtype = g_strdup("<i8");
    o->shape = g_strdup_printf("%" PRIu64, n + 1);
    PART(r, first + 1)->name = g_strdup("values");
    if (rc == HPC_OK)
        rc = render(r, first + 1, tb, mb, vals, nv, &nv, 1);
    g_free(vals);
    PART(r, pi)->dtype = g_strdup("O");
    PART(r, pi)->extra_name = "user.vlen";
    PART(r, pi)->extra = g_strdup(PART(r, first + 1)->dtype ? PART(r, first + 1)->dtype : "O");
    return close_pair(tb, mb, rc);
}

/* Member k of compound t (memory type m) as part pi: its n values
 * gathered from the elements at buf. */
static int render_member(pctx *r, uint32_t pi, hid_t t, hid_t m, unsigned k, const uint8_t *buf,
                         uint64_t n, const uint64_t *dims, int rank)
{
    hid_t ft = H5Tget_member_type(t, k), mt = H5Tget_member_type(m, k);
    size_t es = H5Tget_size(m), ms = mt >= 0 ? H5Tget_size(mt) : 0, mo = H5Tget_member_offset(m, k);
    int rc = HPC_E_IO;
    char *name = H5Tget_member_name(m, k);
    PART(r, pi)->name = g_strdup(name);
    H5free_memory(name);
    if (ft >= 0 && mt >= 0) {
        uint8_t *col = g_malloc(n * ms + 1);
        for (uint64_t i = 0; i < n; i++)
            memcpy(col + i * ms, buf + i * es + mo, ms);
        rc = render(r, pi, ft, mt, col, n, dims, rank);
        g_free(col);
    }
    return close_pair(ft, mt, rc);
}

/* Part pi as a directory of one entry per member of compound t. */
static int render_compound(pctx *r, uint32_t pi, hid_t t, hid_t m, const uint8_t *buf, uint64_t n,
                           const uint64_t *dims, int rank)
{
    int nm = H5Tget_nmembers(m);
    uint32_t first = parts_add(r, pi, nm > 0 ? (uint32_t)nm : 0);
    int rc = HPC_OK;
    for (int k = 0; rc == HPC_OK && k < nm; k++)
        rc = render_member(r, first + (uint32_t)k, t, m, (unsigned)k, buf, n, dims, rank);
    GString *g = g_string_new(NULL);
    hpc_h5t_np_dtype(t, m, g);
    PART(r, pi)->dtype = g_string_free(g, FALSE);
    return rc;
}

/* Array type t of variable base: its elements as n * (its size) elements
 * of the base, the array's axes after the shape's. */
static int render_array(pctx *r, uint32_t pi, hid_t t, hid_t m, const uint8_t *buf, uint64_t n,
                        const uint64_t *dims, int rank)
{
    hsize_t adims[H5S_MAX_RANK];
    uint64_t all[2 * H5S_MAX_RANK], k = 1;
    hid_t tb = H5Tget_super(t), mb = H5Tget_super(m);
    int nd = H5Tget_array_ndims(m), rc = HPC_E_IO;
    if (nd > 0 && nd <= H5S_MAX_RANK && rank + nd <= 2 * H5S_MAX_RANK &&
        H5Tget_array_dims2(m, adims) == nd && tb >= 0 && mb >= 0) {
        memcpy(all, dims, (size_t)rank * sizeof *all);
        for (int i = 0; i < nd; i++) {
            all[rank + i] = adims[i];
            k *= adims[i];
        }
        rc = render(r, pi, tb, mb, buf, n * k, all, rank + nd);
    } else if (rank + nd > 2 * H5S_MAX_RANK) {
        r->why = g_strdup("arrays nested too deeply");
    }
    return close_pair(tb, mb, rc);
}

/* Part pi holding the n elements at buf (memory type m of file type t)
 * of shape dims. */
static int render(pctx *r, uint32_t pi, hid_t t, hid_t m, const uint8_t *buf, uint64_t n,
                  const uint64_t *dims, int rank)
{
    H5T_class_t c = H5Tget_class(m);
    int rc;
    if (c == H5T_ARRAY && hpc_h5t_has_var(m))
        return render_array(r, pi, t, m, buf, n, dims, rank);
    if (!hpc_h5t_has_var(m))
        rc = render_fixed(r, pi, t, m, buf, n);
    else if (c == H5T_VLEN)
        rc = render_seq(r, pi, t, m, buf, n);
    else if (c == H5T_COMPOUND)
        rc = render_compound(r, pi, t, m, buf, n, dims, rank);
    else
        rc = render_text(r, pi, m, buf, n);
    g_free(PART(r, pi)->shape);
    PART(r, pi)->shape = shape_text(dims, rank);
    return rc;
}

/* Read every element of d (memory type d->mtype) into buf under budget b,
 * then render them as part 0. */
static int parts_read(pctx *r, hid_t ftype, uint8_t *buf)
{
    h5_dset *d = r->d;
    budget b = { MAX_TEXT_BYTES - (size_t)(d->nelem * d->esize), 0 };
    d->dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (d->dxpl < 0 || H5Pset_vlen_mem_manager(d->dxpl, budget_alloc, &b, budget_free, NULL) < 0) {
        if (d->dxpl >= 0)
            H5Pclose(d->dxpl);
        d->dxpl = 0;
        return HPC_E_IO;
    }
    int rc = d->nelem ? h5_read_elements(d, 0, d->nelem, buf) : HPC_OK;
    if (b.over)
        rc = HPC_E_NOMEM;
    if (rc == HPC_OK)
        rc = render(r, 0, ftype, d->mtype, buf, d->nelem, d->dims, d->rank);
    hsize_t n = d->nelem;
    hid_t ms = n ? H5Screate_simple(1, &n, NULL) : H5I_INVALID_HID;
    if (ms >= 0) {
        H5Dvlen_reclaim(d->mtype, ms, d->dxpl, buf);
        H5Sclose(ms);
    }
    H5Pclose(d->dxpl);
    d->dxpl = 0;
    return rc;
}

/* A dataset whose part 0 is a file (an array of strings or references at
 * the top): served as that text. */
static void parts_to_text(h5_dset *d)
{
    h5_part *p = &g_array_index(d->parts, h5_part, 0);
    d->kind = DS_TEXT;
    d->text = (char *)p->bytes;
    d->size = p->size;
    p->bytes = NULL;
    g_free(d->shape);
    d->shape = g_strdup(p->shape);
    d->ref = g_strdup(p->extra);
    d->eol_nul = p->eol_nul;
    h5_parts_free(d->parts);
    d->parts = NULL;
}

/* Describe and read dataset d of file type ftype, holding variable-length
 * data or references inside a sequence, compound or array. */
int h5_parts_render(h5 *h, h5_dset *d, hid_t ftype)
{
    char *why = NULL;
    d->kind = DS_SEQ;
    d->dtype = g_strdup("O");
    d->mtype = part_mtype(ftype, 0, &why);
    if (d->mtype < 0) {
        h5_dset_leave_out(h, d, 1, g_strdup_printf("%s: not served", why));
        g_free(why);
        return HPC_OK;
    }
    d->esize = H5Tget_size(d->mtype);
    if (d->esize == 0 || d->nelem > MAX_TEXT_BYTES / d->esize) {
        h5_dset_leave_out(h, d, 1, g_strdup_printf("more than %u bytes of elements: not served",
                                                   MAX_TEXT_BYTES));
        return HPC_OK;
    }
    pctx r = { d, d->id, d->path, g_array_new(FALSE, TRUE, sizeof(h5_part)), 0,
               g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free), NULL };
    g_array_set_size(r.parts, 1);
    uint8_t *buf = g_malloc0((size_t)(d->nelem * d->esize) + 1);
    int rc = parts_read(&r, ftype, buf);
    g_free(buf);
    g_hash_table_destroy(r.names);
    d->parts = r.parts;
    d->parts_bytes = r.bytes;
    if (rc == HPC_OK && !PART(&r, 0)->dir) {
        parts_to_text(d);
    } else if (rc == HPC_OK) {
        g_free(d->dtype);
        d->dtype = g_strdup(PART(&r, 0)->dtype);
        g_free(d->shape);          /* an array type's axes after the dataset's */
        d->shape = g_strdup(PART(&r, 0)->shape);
    } else if (rc == HPC_E_NOMEM || r.why) {
        h5_parts_free(d->parts);
        d->parts = NULL;
        d->parts_bytes = 0;
        h5_dset_leave_out(h, d, 1, r.why ? g_strdup_printf("%s: not served", r.why) :
                          g_strdup_printf("more than %u bytes in all: not served", MAX_TEXT_BYTES));
        rc = HPC_OK;
    }
    g_free(r.why);
    return rc;
}

int h5_attr_parts(hid_t aid, hid_t loc, const char *path, GHashTable *names, hid_t ftype,
                  uint64_t n, const uint64_t *dims, int rank, GArray **parts, char **why)
{
    *parts = NULL;
    hid_t m = part_mtype(ftype, 0, why);
    if (m < 0)
        return HPC_E_UNSUPPORTED;
    size_t es = H5Tget_size(m);
    /* what no xattr could hold anyway is not rendered */
    pctx r = { NULL, loc, path, g_array_new(FALSE, TRUE, sizeof(h5_part)),
               MAX_TEXT_BYTES - MAX_ATTR_PARTS, names, NULL };
    g_array_set_size(r.parts, 1);
    uint8_t *buf = es && n <= MAX_ATTR_PARTS / es ? g_malloc0((size_t)(n * es) + 1) : NULL;
    int rc = !buf ? HPC_E_NOMEM : n && H5Aread(aid, m, buf) < 0 ? HPC_E_IO : HPC_OK;
    if (rc == HPC_OK) {
        /* a reference that cannot be followed leaves the attribute out,
         * as libhdf5 read it well */
        rc = render(&r, 0, ftype, m, buf, n, dims, rank);
        rc = rc == HPC_E_IO ? HPC_E_UNSUPPORTED : rc;
        hsize_t hn = n;
        hid_t ms = n ? H5Screate_simple(1, &hn, NULL) : H5I_INVALID_HID;
        if (ms >= 0) {
            H5Dvlen_reclaim(m, ms, H5P_DEFAULT, buf);
            H5Sclose(ms);
        }
    }
    g_free(buf);
    H5Tclose(m);
    if (rc == HPC_E_UNSUPPORTED && !r.why)
        r.why = g_strdup("a reference that cannot be followed");
    if (rc == HPC_E_NOMEM && !r.why)
        r.why = g_strdup_printf("more than %u bytes rendered", MAX_ATTR_PARTS);
    if (rc == HPC_OK)
        *parts = r.parts;
    else
        h5_parts_free(r.parts);
    *why = r.why;
    return rc;
}

/* ---- references ---------------------------------------------------------- */

typedef struct refs_ctx {
    h5_dset *d;                    /* refs_scan: the dataset read */
    hid_t loc;                     /* references are followed from here */
    H5R_type_t type;
    size_t rsize;                  /* bytes of one reference */
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
        if (n == 0) {
            /* no name (JLD2's unlinked datasets; h5py names it None):
             * its address, which no path is */
            g_free(v);
            v = g_strdup_printf("@%" PRIu64, (uint64_t)oi.addr);
        } else if (H5Iget_name(oid, v, (size_t)n + 1) < 0) {
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

/* One reference as an element of text ended with NUL (hpc_h5t_text_eol):
 * empty when null, else the target's path, and for a region a tab and its
 * selection. */
static int ref_line(refs_ctx *r, const void *ref)
{
    int rc = HPC_OK;
    if (!all_zero(ref, r->rsize)) {
        hid_t oid = H5Rdereference2(r->loc, H5P_DEFAULT, r->type, ref);
        hid_t sp = H5I_INVALID_HID;
        rc = oid >= 0 ? ref_name(r, oid) : HPC_E_IO;
        if (rc == HPC_OK && r->type == H5R_DATASET_REGION) {
            sp = H5Rget_region(r->loc, H5R_DATASET_REGION, ref);
            g_string_append_c(r->t, '\t');
            rc = sp >= 0 ? sel_text(sp, r->t) : HPC_E_IO;
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (oid >= 0)
            H5Oclose(oid);
    }
    g_string_append_c(r->t, '\0');
    return rc;
}

/* Every reference of d as text, SCAN_ELEMS at a time. */
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

int h5_ref_text(hid_t loc, const char *path, GHashTable *names, int region, const void *ref,
                GString *t)
{
    refs_ctx r = { NULL, loc, region ? H5R_DATASET_REGION : H5R_OBJECT,
                   region ? sizeof(hdset_reg_ref_t) : sizeof(hobj_ref_t), names, t };
    int rc = ref_line(&r, ref);
    if (rc != HPC_OK) {
        char *why = h5_errtext();
        hpc_log("hdf5: %s: a reference cannot be followed: %s", path, why);
        g_free(why);
    }
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
    refs_ctx r = { d, d->id, obj ? H5R_OBJECT : H5R_DATASET_REGION, d->esize,
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
    d->eol_nul = hpc_h5t_text_eol(r.t);
    d->size = r.t->len;
    d->text = g_string_free(r.t, FALSE);
    return rc;
}
