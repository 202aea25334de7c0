/* fmt_hdf5.c - HDF5 files through libhdf5.
 *
 * libhdf5 is the parser: superblocks 0-3, both object header versions, all
 * chunk indexes, fractal heaps and filters are its business.  open() walks
 * the file once and builds an hpc_tree: groups are directories, datasets
 * files holding their elements in C order and little-endian, soft links
 * symlinks, further hard links to a dataset the same inode, attributes
 * xattrs user.attr.<name>.  Dataset handles stay open for the life of the
 * container, each with a chunk cache large enough for one row of chunks, so
 * that a sequential read decompresses every chunk once.
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
 */
#include "hpc_formats.h"
#include "fmt_hdf5.h"
#include "hdf5_type.h"

#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define H5_SIG "\211HDF\r\n\032\n"
#define MAX_DEPTH 256              /* nesting of groups we follow */
#define MAX_TEXT_ELEMS (1u << 24)  /* variable-length strings rendered at open */
#define MAX_TEXT_BYTES (256u << 20)
#define MAX_ELEM_SIZE (64u << 20)   /* larger elements: not served */
#define XATTR_VALUE_MAX 65536      /* Linux XATTR_SIZE_MAX */
#define XATTR_NAME_MAX_LEN 255
#define CHUNK_CACHE_DEFAULT (1ull << 20)   /* libhdf5's */
#define CHUNK_CACHE_MIN (4ull << 20)
#define CHUNK_CACHE_MAX (512ull << 20)

typedef enum {
    DS_NONE,    /* no byte image (variable-length sequences, references) */
    DS_DATA,    /* H5Dread of hyperslabs */
    DS_FAST,    /* pread at H5Dget_offset */
    DS_TEXT,    /* variable-length strings rendered as lines at open */
} ds_kind;

typedef struct h5_dset {
    hid_t id;
    hid_t mtype;                   /* little-endian twin of the file type */
    char *path;                    /* first path it was found under */
    ds_kind kind;
    int rank;
    uint64_t dims[HPC_HDF5_MAX_RANK];
    uint64_t nelem;
    size_t esize;                  /* bytes per element in memory */
    uint64_t size;                 /* bytes of the file */
    uint64_t addr;                 /* DS_FAST: file offset of the raw data */
    char *text;                    /* DS_TEXT */
    char *shape, *dtype, *layout, *filters, *chunks, *note;
    uint64_t cache_bytes;          /* chunk cache of the handle, 0: default */
    int zero_fill;                 /* compound: zero buffers before H5Dread */
} h5_dset;

typedef struct h5_seen {
    hpc_ino ino;
    char *path;
    int is_group;
} h5_seen;

typedef struct h5 {
    hid_t file;
    hpc_source *src;
    GPtrArray *dsets;              /* h5_dset *; tree data = index + 1 */
    GHashTable *seen;              /* object address -> h5_seen * */
    GString *warnings;             /* one "warning: ..." line each */
    GString *links;                /* soft and external links for .info */
    unsigned super_version;
    uint64_t userblock;
    unsigned ngroups, nsoft, nhard, nexternal, ntypes, nskipped;
    int salvage;
} h5;

/* ---- libhdf5 housekeeping --------------------------------------------- */

/* Silence libhdf5's error printing in this thread (the setting is per
 * thread in the thread-safe build). */
static void h5_quiet(void)
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
static char *h5_errtext(void)
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

/* ---- byte ranges to boxes --------------------------------------------- */

/* Box of `cnt` steps of dimension k starting at linear element cur. */
static void box_at(int rank, const uint64_t *dims, const uint64_t *step, uint64_t cur,
                   int k, uint64_t cnt, hpc_hdf5_box *b)
{
    for (int j = 0; j < rank; j++) {
        if (j < k) {
            b->start[j] = (cur / step[j]) % dims[j];
            b->count[j] = 1;
        } else if (j == k) {
            b->start[j] = (cur / step[j]) % dims[j];
            b->count[j] = cnt;
        } else {
            b->start[j] = 0;
            b->count[j] = dims[j];
        }
    }
}

unsigned hpc_hdf5_boxes(int rank, const uint64_t *dims, uint64_t e0, uint64_t e1,
                        hpc_hdf5_box *box)
{
    uint64_t step[HPC_HDF5_MAX_RANK];
    unsigned n = 0;
    if (e0 >= e1 || rank < 1 || rank > HPC_HDF5_MAX_RANK)
        return 0;
    step[rank - 1] = 1;
    for (int k = rank - 2; k >= 0; k--)
        step[k] = step[k + 1] * dims[k + 1];
    uint64_t cur = e0;
    int k = rank - 1, down = 1;
    /* Up: complete the partial rows from the innermost dimension outwards,
     * until cur sits on a boundary of dimension 0 or e1 comes first. */
    for (; k > 0; k--) {
        uint64_t outer = step[k - 1];
        if (cur % outer == 0)
            continue;
        uint64_t bound = cur - cur % outer + outer;
        uint64_t take = (MIN(bound, e1) - cur) / step[k] * step[k];
        if (take) {
            box_at(rank, dims, step, cur, k, take / step[k], &box[n++]);
            cur += take;
        }
        if (cur != bound) {
            down = k + 1;
            break;
        }
    }
    if (k == 0) {
        uint64_t take = (e1 - cur) / step[0] * step[0];
        if (take) {
            box_at(rank, dims, step, cur, 0, take / step[0], &box[n++]);
            cur += take;
        }
    }
    /* Down: what is left is less than one step of the dimension before. */
    for (int j = down; j < rank && cur < e1; j++) {
        uint64_t take = (e1 - cur) / step[j] * step[j];
        if (take) {
            box_at(rank, dims, step, cur, j, take / step[j], &box[n++]);
            cur += take;
        }
    }
    return n;
}

typedef struct attr_ctx {
    h5 *h;
    hpc_tree *tree;
    hpc_ino ino;
    const char *path;
    char *failed;                  /* message of the first attribute that failed */
} attr_ctx;

static herr_t attr_visit(hid_t loc, const char *name, const H5A_info_t *info, void *p)
{
    (void)info;
    attr_ctx *a = p;
    char *xname = g_strconcat("user.attr.", name, NULL);
    GString *v = g_string_new(NULL);
    hid_t aid = H5Aopen(loc, name, H5P_DEFAULT);
    int rc = aid >= 0 ? hpc_h5t_attr_text(aid, a->h->src->size, v) : HPC_E_IO;
    if (rc != HPC_OK) {
        char *why = h5_errtext();
        if (!a->failed)
            a->failed = g_strdup_printf("attribute '%s': %s", name, why);
        g_free(why);
    } else if (strlen(xname) > XATTR_NAME_MAX_LEN) {
        g_string_append_printf(a->h->warnings, "warning: %s: attribute name '%.40s...' is too "
                               "long for an xattr: not shown\n", a->path, name);
    } else {
        if (v->len > XATTR_VALUE_MAX) {
            g_string_truncate(v, XATTR_VALUE_MAX);
            g_string_append_printf(a->h->warnings, "warning: %s: attribute '%s' cut to %d bytes\n",
                                   a->path, name, XATTR_VALUE_MAX);
        }
        hpc_tree_add_xattr(a->tree, a->ino, xname, v->str, v->len);
    }
    if (aid >= 0)
        H5Aclose(aid);
    g_string_free(v, TRUE);
    g_free(xname);
    return 0;
}

/* ---- datasets --------------------------------------------------------- */

static void dset_free(gpointer p)
{
    h5_dset *d = p;
    if (!d)
        return;
    if (d->id >= 0)
        H5Dclose(d->id);
    if (d->mtype >= 0)
        H5Tclose(d->mtype);
    g_free(d->path);
    g_free(d->text);
    g_free(d->shape);
    g_free(d->dtype);
    g_free(d->layout);
    g_free(d->filters);
    g_free(d->chunks);
    g_free(d->note);
    g_free(d);
}

static hid_t dset_access(uint64_t cache_bytes, uint64_t chunk_bytes, uint64_t nchunks)
{
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl < 0)
        return dapl;
    /* external raw data and virtual sources next to the .h5 file */
    H5Pset_efile_prefix(dapl, "${ORIGIN}");
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

/* Render a variable-length string dataset as lines. */
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
        g_string_append_c(t, '\n');
    }
    if (t->len > MAX_TEXT_BYTES) {
        d->kind = DS_NONE;
        d->note = g_strdup_printf("strings longer than %u bytes in all: not rendered", MAX_TEXT_BYTES);
        g_string_truncate(t, 0);
    }
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

/* Describe dataset d->id: shape, types, layout, how it is read.  Fills
 * *chunk_band with the bytes of one row of chunks (0 if not chunked), the
 * bytes of a chunk and the number of chunks. */
static int dset_describe(h5 *h, h5_dset *d, uint64_t *chunk_band, uint64_t *chunk_bytes,
                         uint64_t *nchunks)
{
    hid_t ftype = H5Dget_type(d->id), space = H5Dget_space(d->id), dcpl = H5Dget_create_plist(d->id);
    int rc = HPC_E_IO;
    GString *g = g_string_new(NULL);
    *chunk_band = *chunk_bytes = *nchunks = 0;
    if (ftype < 0 || space < 0 || dcpl < 0)
        goto out;

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
            if (__builtin_mul_overflow(d->nelem, d->dims[i], &d->nelem)) {
                d->kind = DS_NONE;
                d->note = g_strdup("more elements than 2^64");
                rc = HPC_OK;
            }
        }
        if (d->note)
            goto out;
    } else if (sc == H5S_SCALAR) {
        d->rank = 0;
        d->nelem = 1;
    } else if (sc == H5S_NULL) {
        d->rank = 0;
        d->nelem = 0;
        g_string_append(g, "0");
    } else {
        goto out;
    }
    d->shape = g_strdup(g->str);
    g_string_truncate(g, 0);

    /* layout, filters, chunking */
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int next = H5Pget_external_count(dcpl);
    switch (lay) {
    case H5D_COMPACT: g_string_append(g, "compact"); break;
    case H5D_CONTIGUOUS: g_string_append(g, "contiguous"); break;
    case H5D_CHUNKED: g_string_append_printf(g, "chunked/%s", chunk_index_name(d->id)); break;
    case H5D_VIRTUAL: g_string_append(g, "virtual"); break;
    default: g_string_append(g, "?"); break;
    }
    if (next > 0)
        g_string_append_printf(g, "+external(%d)", next);
    d->layout = g_strdup(g->str);
    g_string_truncate(g, 0);
    int nf = H5Pget_nfilters(dcpl);
    for (int i = 0; i < nf; i++) {
        unsigned flags, cd[8];
        size_t ncd = G_N_ELEMENTS(cd);
        char name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        if (i)
            g_string_append_c(g, ',');
        switch (id) {
        case H5Z_FILTER_DEFLATE: g_string_append_printf(g, "deflate(%u)", ncd ? cd[0] : 0); break;
        case H5Z_FILTER_SHUFFLE: g_string_append(g, "shuffle"); break;
        case H5Z_FILTER_FLETCHER32: g_string_append(g, "fletcher32"); break;
        case H5Z_FILTER_SZIP: g_string_append(g, "szip"); break;
        case H5Z_FILTER_NBIT: g_string_append(g, "nbit"); break;
        case H5Z_FILTER_SCALEOFFSET: g_string_append(g, "scaleoffset"); break;
        default: g_string_append_printf(g, "filter-%d", (int)id); break;
        }
        if (id >= 0 && H5Zfilter_avail(id) <= 0) {
            g_string_append(g, "(unavailable)");
            g_free(d->note);
            d->note = g_strdup_printf("filter %d (%s) is not available", (int)id, *name ? name : "unnamed");
            g_string_append_printf(h->warnings, "warning: %s: filter %d (%s) is not available "
                                   "in this libhdf5: reads fail with EIO\n", d->path, (int)id,
                                   *name ? name : "unnamed");
        }
    }
    d->filters = g_strdup(nf > 0 ? g->str : "-");
    g_string_truncate(g, 0);
    hsize_t cd[H5S_MAX_RANK];
    if (lay == H5D_CHUNKED && d->rank > 0 && H5Pget_chunk(dcpl, d->rank, cd) == d->rank) {
        uint64_t nchunks_row = 1, cb = H5Tget_size(ftype);
        for (int i = 0; i < d->rank; i++) {
            g_string_append_printf(g, "%s%" PRIu64, i ? "," : "", (uint64_t)cd[i]);
            if (cd[i] == 0)
                continue;
            if (__builtin_mul_overflow(cb, (uint64_t)cd[i], &cb))
                cb = UINT64_MAX;
            uint64_t across = (d->dims[i] + cd[i] - 1) / cd[i];
            if (i > 0 && __builtin_mul_overflow(nchunks_row, across, &nchunks_row))
                nchunks_row = UINT64_MAX;
        }
        *chunk_bytes = cb;
        if (__builtin_mul_overflow(cb, nchunks_row, chunk_band))
            *chunk_band = UINT64_MAX;
        uint64_t rows = cd[0] ? (d->dims[0] + cd[0] - 1) / cd[0] : 0;
        if (__builtin_mul_overflow(rows, nchunks_row, nchunks))
            *nchunks = UINT64_MAX;
    }
    d->chunks = g_strdup(g->len ? g->str : "-");
    g_string_truncate(g, 0);

    /* types and how to read */
    if (H5Tget_class(ftype) == H5T_STRING && H5Tis_variable_str(ftype) > 0) {
        d->kind = DS_TEXT;
        d->dtype = g_strdup("O");
        d->esize = 0;
        if (d->nelem > MAX_TEXT_ELEMS) {
            d->kind = DS_NONE;
            d->note = g_strdup_printf("more than %u strings: not rendered", MAX_TEXT_ELEMS);
            rc = HPC_OK;
            goto out;
        }
        rc = dset_text(d, ftype, space);
        goto out;
    }
    d->mtype = hpc_h5t_mem_type(ftype);
    if (d->mtype < 0) {
        d->kind = DS_NONE;
        d->dtype = g_strdup("O");
        d->note = g_strdup("type without a byte image (variable-length or reference): not served");
        rc = HPC_OK;
        goto out;
    }
    hpc_h5t_np_dtype(d->mtype, g);
    d->dtype = g_strdup(g->str);
    d->esize = H5Tget_size(d->mtype);
    if (d->esize > MAX_ELEM_SIZE) {
        d->kind = DS_NONE;
        d->note = g_strdup_printf("elements of %zu bytes: not served", d->esize);
        rc = HPC_OK;
        goto out;
    }
    if (d->esize == 0 || __builtin_mul_overflow(d->nelem, (uint64_t)d->esize, &d->size)) {
        d->kind = DS_NONE;
        d->size = 0;
        d->note = g_strdup("more than 2^64 bytes: not served");
        rc = HPC_OK;
        goto out;
    }
    d->kind = DS_DATA;
    d->zero_fill = H5Tdetect_class(d->mtype, H5T_COMPOUND) > 0;
    if (lay == H5D_CONTIGUOUS && next == 0 && d->size > 0 && H5Tequal(ftype, d->mtype) > 0) {
        haddr_t a = H5Dget_offset(d->id);
        if (a != HADDR_UNDEF && hpc_source_contains(h->src, (uint64_t)a, d->size)) {
            d->kind = DS_FAST;
            d->addr = (uint64_t)a;
        } else if (a != HADDR_UNDEF) {
            d->note = g_strdup_printf("raw data at %" PRIu64 " (+%" PRIu64 ") end beyond the "
                                      "end of the file", (uint64_t)a, d->size);
            g_string_append_printf(h->warnings, "warning: %s: %s\n", d->path, d->note);
        }
    }
    rc = HPC_OK;
out:
    g_string_free(g, TRUE);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc;
}

/* ---- the walk --------------------------------------------------------- */

typedef struct pending {
    char *path;
    hpc_ino ino;
    int depth;
} pending;

typedef struct walk {
    hpc_container *c;
    h5 *h;
    hid_t dapl;                    /* default access: external prefixes */
    GQueue todo;                   /* pending *: groups still to list */
    GError **err;
} walk;

/* A damaged object: skip it under -o salvage, else fail the mount. */
static int damaged(walk *w, const char *path, uint64_t addr, const char *what, const char *why)
{
    if (w->h->salvage) {
        g_string_append_printf(w->h->warnings, "warning: %s (object at %" PRIu64 "): %s: %s: "
                               "skipped (salvage)\n", path, addr, what, why);
        w->h->nskipped++;
        return HPC_OK;
    }
    return hpc_fail(w->err, HPC_E_CORRUPT, w->c->path, path, addr,
                    "%s: %s (mount with -o salvage to skip damaged objects)", what, why);
}

static int attrs_of(walk *w, hid_t oid, hpc_ino ino, const char *path, uint64_t addr)
{
    attr_ctx a = { w->h, w->c->tree, ino, path, NULL };
    hsize_t idx = 0;
    int rc = HPC_OK;
    if (H5Aiterate2(oid, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_visit, &a) < 0 && !a.failed)
        a.failed = g_strdup_printf("attributes: %s", h5_errtext());
    if (a.failed)
        rc = damaged(w, path, addr, "cannot read", a.failed);
    g_free(a.failed);
    return rc;
}

static void add_seen(h5 *h, uint64_t addr, hpc_ino ino, const char *path, int is_group)
{
    h5_seen *s = g_new0(h5_seen, 1);
    s->ino = ino;
    s->path = g_strdup(path);
    s->is_group = is_group;
    g_hash_table_insert(h->seen, g_memdup2(&addr, sizeof addr), s);
}

static void seen_free(gpointer p)
{
    h5_seen *s = p;
    g_free(s->path);
    g_free(s);
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

static int add_symlink(walk *w, hpc_ino dir, const char *name, const char *target)
{
    hpc_ino ino;
    int rc = hpc_tree_add(w->c->tree, dir, name, HPC_MODE_LINK, strlen(target), 0, &ino);
    if (rc == HPC_OK)
        rc = hpc_tree_set_symlink(w->c->tree, ino, target);
    return rc;
}

static herr_t collect_name(hid_t g, const char *name, const H5L_info_t *info, void *p)
{
    (void)g;
    (void)info;
    g_ptr_array_add(p, g_strdup(name));
    return 0;
}

static int add_dataset(walk *w, hid_t gid, const char *name, hpc_ino dir, const char *path,
                       uint64_t addr)
{
    h5 *h = w->h;
    h5_dset *d = g_new0(h5_dset, 1);
    uint64_t band, cbytes, nchunks, all;
    hpc_ino ino;
    int rc;
    d->id = d->mtype = H5I_INVALID_HID;
    d->path = g_strdup(path);
    d->id = H5Dopen2(gid, name, w->dapl);
    if (d->id < 0 || dset_describe(h, d, &band, &cbytes, &nchunks) != HPC_OK) {
        char *why = h5_errtext();
        dset_free(d);
        rc = damaged(w, path, addr, "cannot open the dataset", why);
        g_free(why);
        return rc;
    }
    if (__builtin_mul_overflow(cbytes, nchunks, &all))
        all = UINT64_MAX;
    /* libhdf5's default cache (1 MiB) holds all chunks of small datasets */
    if (band && all > CHUNK_CACHE_DEFAULT) {
        /* a cache for one row of chunks (plus one): each chunk is
         * decompressed once when the dataset is read in C order */
        uint64_t want = MIN(MIN(MAX(band + cbytes, CHUNK_CACHE_MIN), CHUNK_CACHE_MAX), all);
        if (band > CHUNK_CACHE_MAX)
            g_string_append_printf(h->warnings, "warning: %s: a row of chunks is %" PRIu64
                                   " bytes, the chunk cache %" PRIu64 ": sequential reads "
                                   "decompress chunks more than once\n", path, band, want);
        /* close first: while a handle is open, libhdf5 shares its
         * dataset object, chunk cache included, with every new open */
        hid_t dapl = dset_access(want, cbytes, nchunks);
        H5Dclose(d->id);
        d->id = dapl >= 0 ? H5Dopen2(gid, name, dapl) : H5I_INVALID_HID;
        if (dapl >= 0)
            H5Pclose(dapl);
        if (d->id < 0)
            d->id = H5Dopen2(gid, name, w->dapl);
        else
            d->cache_bytes = want;
        if (d->id < 0) {
            char *why = h5_errtext();
            dset_free(d);
            rc = damaged(w, path, addr, "cannot open the dataset", why);
            g_free(why);
            return rc;
        }
    }
    /* fields a dataset we cannot describe fully never set */
    char **fields[] = { &d->shape, &d->dtype, &d->layout, &d->filters, &d->chunks };
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
        if (!*fields[i])
            *fields[i] = g_strdup("?");
    rc = hpc_tree_add(w->c->tree, dir, name, HPC_MODE_FILE, d->size, h->dsets->len + 1, &ino);
    if (rc != HPC_OK) {
        g_string_append_printf(h->warnings, "warning: %s: name cannot be a file name: skipped\n", path);
        dset_free(d);
        return HPC_OK;
    }
    g_ptr_array_add(h->dsets, d);
    hpc_tree_add_xattr(w->c->tree, ino, "user.shape", d->shape, strlen(d->shape));
    hpc_tree_add_xattr(w->c->tree, ino, "user.dtype", d->dtype, strlen(d->dtype));
    add_seen(h, addr, ino, path, 0);
    return attrs_of(w, d->id, ino, path, addr);
}

static int add_link(walk *w, hid_t gid, const char *name, hpc_ino dir, const char *path,
                    int depth)
{
    h5 *h = w->h;
    H5L_info_t li;
    char *child = g_strconcat(path, strcmp(path, "/") == 0 ? "" : "/", name, NULL);
    int rc = HPC_OK;
    if (H5Lget_info(gid, name, &li, H5P_DEFAULT) < 0) {
        char *why = h5_errtext();
        rc = damaged(w, child, 0, "cannot read the link", why);
        g_free(why);
        goto out;
    }
    if (li.type == H5L_TYPE_SOFT || li.type == H5L_TYPE_EXTERNAL) {
        size_t vs = li.u.val_size;
        if (vs > h->src->size) {
            rc = damaged(w, child, 0, "cannot read the link", "value longer than the file");
            goto out;
        }
        char *val = g_malloc0(vs + 1);
        if (H5Lget_val(gid, name, val, vs, H5P_DEFAULT) < 0) {
            char *why = h5_errtext();
            rc = damaged(w, child, 0, "cannot read the link", why);
            g_free(why);
        } else if (li.type == H5L_TYPE_SOFT) {
            char *target = rel_target(path, val);
            if (add_symlink(w, dir, name, target) == HPC_OK) {
                h->nsoft++;
                g_string_append_printf(h->links, "%s -> %s\n", child, val);
            }
            g_free(target);
        } else {
            const char *file = NULL, *obj = NULL;
            unsigned flags;
            if (H5Lunpack_elink_val(val, vs, &flags, &file, &obj) >= 0)
                g_string_append_printf(h->links, "%s -> external %s:%s (not followed)\n",
                                       child, file ? file : "?", obj ? obj : "?");
            h->nexternal++;
        }
        g_free(val);
        goto out;
    }
    if (li.type != H5L_TYPE_HARD) {
        g_string_append_printf(h->links, "%s -> user-defined link type %d (not followed)\n",
                               child, (int)li.type);
        goto out;
    }
    uint64_t addr = (uint64_t)li.u.address;
    h5_seen *s = g_hash_table_lookup(h->seen, &addr);
    if (s) {
        if (s->is_group) {
            /* a directory cannot have two names: point to the first one */
            char *target = rel_target(path, s->path);
            if (add_symlink(w, dir, name, target) == HPC_OK)
                g_string_append_printf(h->links, "%s -> hard link to group %s (symlink)\n",
                                       child, s->path);
            g_free(target);
        } else if (hpc_tree_link(w->c->tree, dir, name, s->ino) == HPC_OK) {
            h->nhard++;
            g_string_append_printf(h->links, "%s -> hard link to %s\n", child, s->path);
        }
        goto out;
    }
    H5O_info_t oi;
    if (H5Oget_info_by_name2(gid, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        char *why = h5_errtext();
        rc = damaged(w, child, addr, "cannot read the object header", why);
        g_free(why);
        goto out;
    }
    if (oi.type == H5O_TYPE_GROUP) {
        hpc_ino sub;
        if (depth >= MAX_DEPTH) {
            rc = damaged(w, child, addr, "cannot open the group", "groups nested too deep");
            goto out;
        }
        hid_t g = H5Gopen2(gid, name, H5P_DEFAULT);
        if (g < 0) {
            char *why = h5_errtext();
            rc = damaged(w, child, addr, "cannot open the group", why);
            g_free(why);
            goto out;
        }
        if (hpc_tree_add(w->c->tree, dir, name, HPC_MODE_DIR, 0, 0, &sub) == HPC_OK) {
            h->ngroups++;
            add_seen(h, addr, sub, child, 1);
            rc = attrs_of(w, g, sub, child, addr);
            /* listed later: breadth first, so that of two names of a
             * group the shallower one becomes the directory */
            pending *p = g_new0(pending, 1);
            p->path = g_strdup(child);
            p->ino = sub;
            p->depth = depth + 1;
            g_queue_push_tail(&w->todo, p);
        }
        H5Gclose(g);
    } else if (oi.type == H5O_TYPE_DATASET) {
        rc = add_dataset(w, gid, name, dir, child, addr);
    } else {
        h->ntypes++;             /* committed datatypes have no bytes */
    }
out:
    g_free(child);
    return rc;
}

/* List one group: its datasets and links enter the tree, its subgroups
 * the queue. */
static int walk_group(walk *w, hid_t gid, hpc_ino dir, const char *path, int depth)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    hsize_t idx = 0;
    int rc = HPC_OK;
    /* names first: no calls back into the tree while libhdf5 iterates */
    if (H5Literate(gid, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_name, names) < 0) {
        char *why = h5_errtext();
        rc = damaged(w, path, 0, "cannot list the group", why);
        g_free(why);
    }
    for (guint i = 0; i < names->len && rc == HPC_OK; i++)
        rc = add_link(w, gid, g_ptr_array_index(names, i), dir, path, depth);
    g_ptr_array_free(names, TRUE);
    return rc;
}

static void pending_free(gpointer p)
{
    pending *q = p;
    g_free(q->path);
    g_free(q);
}

/* The whole file, breadth first from the root. */
static int walk_all(walk *w, hid_t root)
{
    int rc = walk_group(w, root, HPC_INO_ROOT, "/", 0);
    pending *p;
    while (rc == HPC_OK && (p = g_queue_pop_head(&w->todo))) {
        hid_t g = H5Gopen2(w->h->file, p->path, H5P_DEFAULT);
        if (g < 0) {
            char *why = h5_errtext();
            rc = damaged(w, p->path, 0, "cannot open the group", why);
            g_free(why);
        } else {
            rc = walk_group(w, g, p->ino, p->path, p->depth);
            H5Gclose(g);
        }
        pending_free(p);
    }
    g_queue_clear_full(&w->todo, pending_free);
    return rc;
}

/* ---- open / close ----------------------------------------------------- */

static void h5_free(h5 *h)
{
    if (!h)
        return;
    if (h->dsets)
        g_ptr_array_free(h->dsets, TRUE);
    if (h->seen)
        g_hash_table_destroy(h->seen);
    if (h->file >= 0)
        H5Fclose(h->file);
    if (h->warnings)
        g_string_free(h->warnings, TRUE);
    if (h->links)
        g_string_free(h->links, TRUE);
    g_free(h);
}

static void h5_close(hpc_container *c)
{
    h5_quiet();
    h5_free(c->priv);
    c->priv = NULL;
}

static int h5_open(hpc_container *c, GError **err)
{
    h5_quiet();
    h5 *h = g_new0(h5, 1);
    hid_t fapl = H5I_INVALID_HID, root = H5I_INVALID_HID;
    walk w = { c, h, H5I_INVALID_HID, G_QUEUE_INIT, err };
    int rc;
    h->file = H5I_INVALID_HID;
    h->dsets = g_ptr_array_new_with_free_func(dset_free);
    h->seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, seen_free);
    h->warnings = g_string_new(NULL);
    h->links = g_string_new(NULL);
    h->salvage = c->opts.salvage;

    h->src = hpc_container_add_source(c, c->path, err);
    if (!h->src) {
        rc = HPC_E_IO;
        goto out;
    }
    uint64_t sb = superblock_offset(h->src);
    fapl = H5Pcreate(H5P_FILE_ACCESS);
#if H5_VERSION_GE(1, 10, 7)
    /* a read-only view must not take (or wait for) the writer's lock */
    if (fapl >= 0)
        H5Pset_file_locking(fapl, 0, 1);
#endif
    h->file = H5Fopen(c->path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
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
    w.dapl = dset_access(0, 0, 0);
    root = H5Gopen2(h->file, "/", H5P_DEFAULT);
    if (root < 0 || w.dapl < 0) {
        char *why = h5_errtext();
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, "root group", sb,
                      "libhdf5 cannot open the root group: %s", why);
        g_free(why);
        goto out;
    }
    c->tree = hpc_tree_new();
    H5O_info_t oi;
    if (H5Oget_info2(root, &oi, H5O_INFO_BASIC) >= 0)
        add_seen(h, (uint64_t)oi.addr, HPC_INO_ROOT, "/", 1);
    rc = attrs_of(&w, root, HPC_INO_ROOT, "/", 0);
    if (rc == HPC_OK)
        rc = walk_all(&w, root);
    if (rc != HPC_OK)
        goto out;
    c->priv = h;
    h = NULL;
out:
    if (root >= 0)
        H5Gclose(root);
    if (w.dapl >= 0)
        H5Pclose(w.dapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (h) {
        h5_free(h);
        hpc_tree_free(c->tree);
        c->tree = NULL;
    }
    return rc;
}

/* ---- data ------------------------------------------------------------- */

static h5_dset *dset_of(hpc_container *c, hpc_ino ino)
{
    h5 *h = c->priv;
    uint64_t data;
    if (hpc_tree_data(c->tree, ino, &data) != HPC_OK || data == 0 || data > h->dsets->len)
        return NULL;
    return g_ptr_array_index(h->dsets, data - 1);
}

/* Elements [e0, e1) of d into buf. */
static int read_elements(const h5_dset *d, uint64_t e0, uint64_t e1, void *buf)
{
    hid_t fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    int rc = HPC_E_IO;
    /* a conversion writes the members of a compound, not its padding */
    if (d->zero_fill)
        memset(buf, 0, (size_t)(e1 - e0) * d->esize);
    if (d->rank == 0) {
        if (H5Dread(d->id, d->mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0)
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
    if (ms >= 0 && H5Dread(d->id, d->mtype, ms, fs, H5P_DEFAULT, base) >= 0)
        rc = HPC_OK;
out:
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

static int h5_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread)
{
    h5 *h = c->priv;
    h5_dset *d = dset_of(c, ino);
    *nread = 0;
    if (!d)
        return hpc_tree_getattr(c->tree, ino, &(hpc_stat){ 0 }) == HPC_OK ? HPC_E_ISDIR : HPC_E_NOENT;
    if (off >= d->size || len == 0)
        return HPC_OK;
    len = (size_t)MIN((uint64_t)len, d->size - off);
    int rc;
    switch (d->kind) {
    case DS_TEXT:
        memcpy(buf, d->text + off, len);
        rc = HPC_OK;
        break;
    case DS_FAST:
        rc = hpc_cache_read_source(hpc_container_cache(c), h->src, buf, len, d->addr + off);
        break;
    case DS_DATA: {
        h5_quiet();
        uint64_t e0 = off / d->esize, e1 = (off + len - 1) / d->esize + 1;
        size_t skip = (size_t)(off - e0 * d->esize);
        if (skip == 0 && (e1 - e0) * d->esize == len) {
            rc = read_elements(d, e0, e1, buf);
        } else {
            char *tmp = g_try_malloc((size_t)(e1 - e0) * d->esize);
            if (!tmp)
                return HPC_E_NOMEM;
            rc = read_elements(d, e0, e1, tmp);
            if (rc == HPC_OK)
                memcpy(buf, tmp + skip, len);
            g_free(tmp);
        }
        break;
    }
    default:
        rc = HPC_E_NOTSUP;
        break;
    }
    if (rc == HPC_OK)
        *nread = len;
    return rc;
}

static int h5_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                  hpc_extent *ext, unsigned max, unsigned *n)
{
    h5 *h = c->priv;
    h5_dset *d = dset_of(c, ino);
    *n = 0;
    if (!d || d->kind != DS_FAST)
        return HPC_E_NOTSUP;
    if (off >= d->size || len == 0 || max == 0)
        return HPC_OK;
    ext[0] = (hpc_extent){ h->src, d->addr + off, MIN(len, d->size - off) };
    *n = 1;
    return HPC_OK;
}

/* ---- .info ------------------------------------------------------------ */

static const char *kind_name(const h5_dset *d)
{
    switch (d->kind) {
    case DS_FAST: return "pread";
    case DS_DATA: return "H5Dread";
    case DS_TEXT: return "text";
    default: return "none";
    }
}

static int h5_info(hpc_container *c, GString *o)
{
    h5 *h = c->priv;
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    g_string_append_printf(o, "libhdf5: %u.%u.%u\nsuperblock: %u\nuserblock: %" PRIu64 "\n"
                           "groups: %u\ndatasets: %u\nsoft_links: %u\nhard_links: %u\n"
                           "external_links: %u (not followed)\nnamed_datatypes: %u\n",
                           maj, min, rel, h->super_version, h->userblock, h->ngroups + 1,
                           h->dsets->len, h->nsoft, h->nhard, h->nexternal, h->ntypes);
    if (h->nskipped)
        g_string_append_printf(o, "salvaged: %u damaged objects skipped\n", h->nskipped);
    g_string_append(o, h->warnings->str);
    if (h->links->len) {
        g_string_append(o, "\nlink\n");
        g_string_append(o, h->links->str);
    }
    g_string_append(o, "\ndataset\tshape\tdtype\tlayout\tfilters\tchunks\tbytes\tread\tchunk_cache\tnote\n");
    for (guint i = 0; i < h->dsets->len; i++) {
        const h5_dset *d = g_ptr_array_index(h->dsets, i);
        g_string_append_printf(o, "%s\t%s\t%s\t%s\t%s\t%s\t%" PRIu64 "\t%s\t%" PRIu64 "\t%s\n",
                               d->path, d->rank == 0 && d->nelem == 1 ? "()" : d->shape,
                               d->dtype, d->layout, d->filters, d->chunks, d->size,
                               kind_name(d), d->cache_bytes, d->note ? d->note : "-");
    }
    return HPC_OK;
}

const hpc_format hpc_format_hdf5 = {
    .name = "hdf5",
    .sandbox_lib = "libhdf5",
    .probe = h5_probe,
    .open = h5_open,
    .close = h5_close,
    .read = h5_read,
    .map = h5_map,
    .info = h5_info,
};
