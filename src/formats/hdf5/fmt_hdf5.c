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
#include "hpc_format.h"
#include "hpc_tree.h"
#include "fmt_hdf5.h"
#include "hdf5_refs.h"
#include "hdf5_chunk.h"
#include "hdf5_elem.h"
#include "hdf5_type.h"

#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define H5_SIG "\211HDF\r\n\032\n"
#define MAX_TEXT_ELEMS (1u << 24)  /* variable-length strings rendered at open */
#define MAX_TEXT_BYTES (256u << 20)
#define MAX_ELEM_SIZE (64u << 20)   /* larger elements: only up to h5cache */
#define ELEM_SLOT_MIN (1u << 20)    /* larger elements: parts read through the slot */
#define XATTR_VALUE_MAX 65536      /* Linux XATTR_SIZE_MAX */
#define XATTR_NAME_MAX_LEN 255
#define NAME_MAX_LEN 255           /* a file name (Linux NAME_MAX) */
#define CHUNK_CACHE_DEFAULT (1ull << 20)   /* libhdf5's */
#define CHUNK_CACHE_MIN (4ull << 20)
#define CHUNK_CACHE_MAX (512ull << 20)
#define H5_HANDLES_DEFAULT 256                 /* -o h5handles */
#define H5_HANDLE_BYTES_DEFAULT (256ull << 20) /* -o h5cache */
#define INFO_MAX_OBJECTS 200000u               /* entries the .info walk visits */

typedef enum {
    DS_NONE,    /* no byte image (variable-length sequences, references) */
    DS_DATA,    /* H5Dread of hyperslabs */
    DS_FAST,    /* pread at H5Dget_offset */
    DS_TEXT,    /* variable-length strings rendered as lines at open */
} ds_kind;

typedef struct h5_dset {
    hid_t id;
    hid_t mtype;                   /* little-endian twin of the file type */
    hid_t rtype;                   /* big-endian numbers: read as h5py does (below), or -1 */
    GArray *pad;                   /* hpc_h5t_pad: compound padding zeroed after reads, or NULL */
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
} h5_dset;

/* One object or link met in the file (see "the lazy tree"): 32 bytes. */
typedef struct h5_node {
    uint64_t addr;                 /* object header (0 for links) */
    uint64_t size;                 /* dataset: bytes once described; link: target length */
    uint32_t parent;               /* the group it was first found in (NO_PARENT: root) */
    uint32_t idx;                  /* its entry there (name order) */
    uint32_t nlink;                /* datasets: hard links to it */
    uint8_t kind;                  /* K_* */
    uint8_t state;                 /* S_*: described, damaged */
    uint8_t reported;              /* damage noted in .info */
    uint8_t noted;                 /* attribute warnings noted in .info */
} h5_node;

/* A listed group: its entries in name order. */
typedef struct h5_list {
    uint32_t n;
    uint32_t *child;               /* node ids; 0: left out */
    uint32_t *name_at;             /* offsets of the names in names */
    char *names;
    GString *notes;                /* .info lines of left-out links */
    unsigned nexternal, ntypes;
    int unsorted;                  /* names not in strcmp order: search linearly */
} h5_list;

/* An open dataset in the handle LRU. */
typedef struct h5_handle {
    uint32_t node;
    int refs;                      /* readers using it now: not closed */
    GList link;                    /* in h->lru */
    uint64_t bytes;                /* chunk cache and rendered text */
    h5_dset *d;
    hpc_h5chunk_plan *plan;        /* chunks decoded by hdf5_chunk.c, or NULL */
    gint placed;                   /* chunk addresses: 0 unproven, 1 right, -1 wrong */
} h5_handle;

typedef struct h5 {
    hid_t file;
    hid_t dapl;                    /* default dataset access: external prefixes */
    hpc_source *src;
    GMutex lock;                   /* all below; taken before libhdf5's lock */
    GArray *nodes;                 /* h5_node; index = node id, 0 the root */
    GHashTable *by_addr;           /* object header address -> node id */
    GHashTable *lists;             /* group node id -> h5_list */
    GHashTable *targets;           /* symlink node id -> target */
    GHashTable *reasons;           /* damaged node id -> why */
    GHashTable *handles;           /* dataset node id -> h5_handle */
    GQueue lru;                    /* h5_handle, most recently used first */
    unsigned nhandles, max_handles;
    uint64_t handle_bytes, max_handle_bytes;
    hpc_h5chunk_cache *chunks;     /* decoded chunks */
    hpc_h5elem *elems;             /* the last large element read */
    GString *warnings;             /* one "warning: ..." line each (may repeat) */
    GString *damaged;              /* one "damaged: ..." line per damaged object */
    unsigned super_version;
    uint64_t userblock;
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
    if (d->rtype >= 0)
        H5Tclose(d->rtype);
    if (d->pad)
        g_array_unref(d->pad);
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

/* Big-endian integers, floats and enums are read as h5py reads them, into their
 * full-size type in the file's byte order, and swapped afterwards: the
 * conversion libhdf5 1.10 makes of the fill value of an n-bit type gives
 * other bytes into the little-endian type (-5 of 12 bits becomes 4091).
 * H5I_INVALID_HID for other types. */
static hid_t read_type(hid_t ftype, hid_t mtype)
{
    H5T_class_t cls = H5Tget_class(ftype);
    size_t n = H5Tget_size(mtype);
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

/* Elements of n bytes in the file's (big-endian) order to little-endian. */
static void swap_elements(void *buf, uint64_t count, size_t n)
{
    unsigned char *p = buf;
    for (uint64_t i = 0; i < count; i++, p += n)
        for (size_t a = 0, b = n - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
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

/* Describe dataset d->id: shape, types, layout, how it is read.  Fills
 * *chunk_band with the bytes of one row of chunks (0 if not chunked), the
 * bytes of a chunk and the number of chunks. */
static int dset_describe(h5 *h, h5_dset *d, uint64_t *chunk_band, uint64_t *chunk_bytes,
                         uint64_t *nchunks)
{
    hid_t ftype = H5Dget_type(d->id), space = H5Dget_space(d->id), dcpl = H5Dget_create_plist(d->id);
    int rc = HPC_E_IO;
    GString *g = g_string_new(NULL);
    char *unavail = NULL;          /* the last filter libhdf5 lacks */
    int own_lzf = 1;               /* ... all of them LZF, which the reader decodes */
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
        case HPC_H5CHUNK_FILTER_LZF: g_string_append(g, "lzf"); break;
        default: g_string_append_printf(g, "filter-%d", (int)id); break;
        }
        if (id >= 0 && H5Zfilter_avail(id) <= 0) {
            g_string_append(g, "(unavailable)");
            g_free(unavail);
            unavail = g_strdup_printf("filter %d (%s) is not available", (int)id,
                                      *name ? name : "unnamed");
            own_lzf = own_lzf && id == HPC_H5CHUNK_FILTER_LZF;
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
    /* one element is held at a time when a read ends inside one */
    if (d->esize > MAX(h->max_handle_bytes, MAX_ELEM_SIZE)) {
        d->kind = DS_NONE;
        d->note = g_strdup_printf("elements of %zu bytes, more than h5cache: not served", d->esize);
        g_string_append_printf(h->warnings, "warning: %s: %s\n", d->path, d->note);
        rc = HPC_OK;
        goto out;
    }
    if (d->esize == 0 || __builtin_mul_overflow(d->nelem, (uint64_t)d->esize, &d->size) ||
        d->size > (uint64_t)INT64_MAX) {
        d->kind = DS_NONE;
        d->size = 0;
        d->note = g_strdup_printf("%" PRIu64 " elements of %zu bytes: larger than the largest "
                                  "file size: left out (empty)", d->nelem, d->esize);
        g_string_append_printf(h->warnings, "warning: %s: %s\n", d->path, d->note);
        rc = HPC_OK;
        goto out;
    }
    d->kind = DS_DATA;
    d->rtype = read_type(ftype, d->mtype);
    /* h5py converts a compound with bit-field members (its dtype has
     * integers there), so its padding bytes are zero, not the file's: such
     * datasets go through H5Dread, and read_elements zeroes the padding.
     * Other compounds keep the file's padding where libhdf5 copies
     * unconverted, as h5py does. */
    d->pad = H5Tdetect_class(ftype, H5T_BITFIELD) > 0 ? hpc_h5t_padding(d->mtype, d->esize) : NULL;
    if (lay == H5D_CONTIGUOUS && next == 0 && d->size > 0 && !d->pad && H5Tequal(ftype, d->mtype) > 0) {
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
    if (unavail && own_lzf) {
        hpc_h5chunk_plan *p = NULL;
        own_lzf = hpc_h5chunk_plan_new(dcpl, ftype, d->mtype, d->esize, d->rank, d->dims, &p) == HPC_OK;
        hpc_h5chunk_plan_free(p);
    }
    rc = HPC_OK;
out:
    if (unavail)
        note_unavailable(h, d, unavail, own_lzf && d->kind == DS_DATA);
    g_free(unavail);
    g_string_free(g, TRUE);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc;
}

/* ---- the lazy tree ------------------------------------------------------
 *
 * Nothing is walked at mount.  A group is listed (H5Literate by name, one
 * H5Gget_objinfo per new object for its type and link count) when it is
 * first looked up or read; its listing stays for the life of the mount:
 * per entry a 4-byte node id, a 4-byte name offset and the name.  Each
 * object met gets one 32-byte node (h5_node) whose index is its inode
 * number minus HPC_INO_FIRST - 1, so node ids never change while mounted;
 * objects are found again by their object header address (by_addr), which
 * gives further hard links to a dataset the same inode.  A dataset is
 * opened (and described) when its size, bytes or xattrs are first needed;
 * open handles live in an LRU bounded in number and in the bytes of their
 * chunk caches and rendered text.
 *
 * Locking: h->lock guards nodes, listings, handles and the counters; it is
 * taken before libhdf5's global lock, never inside a libhdf5 callback. */

enum { K_GROUP = 1, K_DATASET, K_SOFT, K_GLINK, K_DAMAGED };
enum { S_NEW = 0, S_OK, S_BAD };

#define NODE(h, i) (&g_array_index((h)->nodes, h5_node, (i)))
#define NO_PARENT UINT32_MAX

static uint32_t ino_to_id(hpc_ino ino, const h5 *h)
{
    if (ino == HPC_INO_ROOT)
        return 0;
    if (ino < HPC_INO_FIRST || ino - HPC_INO_FIRST + 1 >= h->nodes->len)
        return NO_PARENT;
    return (uint32_t)(ino - HPC_INO_FIRST + 1);
}

static hpc_ino id_to_ino(uint32_t id)
{
    return id == 0 ? HPC_INO_ROOT : HPC_INO_FIRST + id - 1;
}

/* A new node; pointers into h->nodes are invalid afterwards. */
static uint32_t node_new(h5 *h, uint8_t kind, uint64_t addr, uint32_t parent, uint32_t idx)
{
    h5_node n = { .addr = addr, .parent = parent, .idx = idx, .nlink = 1, .kind = kind };
    g_array_append_val(h->nodes, n);
    return h->nodes->len - 1;
}

static const char *node_name(h5 *h, uint32_t id)
{
    const h5_node *n = NODE(h, id);
    if (n->parent == NO_PARENT)
        return "/";
    const h5_list *l = g_hash_table_lookup(h->lists, GUINT_TO_POINTER(n->parent));
    return l->names + l->name_at[n->idx];
}

/* The HDF5 path a node was first found under (g_free it). */
static char *node_path(h5 *h, uint32_t id)
{
    GPtrArray *parts = g_ptr_array_new();
    for (uint32_t i = id; NODE(h, i)->parent != NO_PARENT; i = NODE(h, i)->parent)
        g_ptr_array_add(parts, (gpointer)node_name(h, i));
    GString *p = g_string_new(NULL);
    for (guint k = parts->len; k > 0; k--)
        g_string_append_printf(p, "/%s", (const char *)g_ptr_array_index(parts, k - 1));
    g_ptr_array_free(parts, TRUE);
    if (p->len == 0)
        g_string_append_c(p, '/');
    return g_string_free(p, FALSE);
}

/* Record a damaged object once for .info and log it. */
static void note_damaged(h5 *h, uint32_t id, const char *what, const char *why)
{
    h5_node *n = NODE(h, id);
    if (n->reported)
        return;
    n->reported = 1;
    char *path = node_path(h, id);
    g_string_append_printf(h->damaged, "damaged: %s (object at %" PRIu64 "): %s: %s\n",
                           path, n->addr, what, why);
    g_hash_table_insert(h->reasons, GUINT_TO_POINTER(id), g_strdup_printf("%s: %s", what, why));
    hpc_log("hdf5: %s: %s: %s", path, what, why);
    g_free(path);
}

/* A read of a damaged node: EIO and a log line. */
static int damaged_read(h5 *h, uint32_t id)
{
    char *path = node_path(h, id);
    const char *why = g_hash_table_lookup(h->reasons, GUINT_TO_POINTER(id));
    hpc_log("hdf5: %s: damaged object: %s", path, why ? why : "unreadable");
    g_free(path);
    return HPC_E_IO;
}

/* Open group node id (close with H5Oclose). */
static hid_t group_open(h5 *h, uint32_t id)
{
    if (id == 0)
        return H5Gopen2(h->file, "/", H5P_DEFAULT);
    return H5Oopen_by_addr(h->file, (haddr_t)NODE(h, id)->addr);
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
    uint32_t id = node_new(h, kind, 0, dir, idx);
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
        uint32_t id = node_new(h, K_DAMAGED, 0, dir, idx);
        note_damaged(h, id, "cannot read the link", why);
        g_free(why);
        g_free(val);
        return id;
    }
    char *dpath = node_path(h, dir);
    uint32_t id = symlink_new(h, K_SOFT, dir, idx, rel_target(dpath, val));
    g_free(dpath);
    g_free(val);
    return id;
}

/* Does dataset `name` of group g (node dir) hold more bytes than the
 * largest file (2^63 - 1)?  Then it has no file: it is left out of the
 * listing (lookup: ENOENT) with a warning line in .info.  Its file type's
 * size counts: the size served is never smaller. */
static int too_large(h5 *h, hid_t g, uint32_t dir, const char *name)
{
    hid_t d = H5Dopen2(g, name, h->dapl);
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID, t = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
    hsize_t dims[H5S_MAX_RANK];
    int r = sp >= 0 && H5Sget_simple_extent_type(sp) == H5S_SIMPLE ? H5Sget_simple_extent_dims(sp, dims, NULL) : 0;
    uint64_t bytes = t >= 0 ? H5Tget_size(t) : 0;
    int over = 0;
    for (int i = 0; i < r && bytes && !over; i++)
        over = __builtin_mul_overflow(bytes, (uint64_t)dims[i], &bytes) || bytes > (uint64_t)INT64_MAX;
    if (over) {
        char *dpath = node_path(h, dir);
        g_string_append_printf(h->warnings, "warning: %s%s%s: more bytes than the largest file "
                               "size (2^63 - 1): left out\n", dpath, strcmp(dpath, "/") ? "/" : "",
                               name);
        g_free(dpath);
    }
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
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
        if (n->kind != K_GROUP || (n->parent == dir && n->idx == idx))
            return id;
        /* a directory cannot have two names: the first one met stays the
         * directory, the others point to it (this also breaks cycles) */
        char *dpath = node_path(h, dir), *gpath = node_path(h, id);
        uint32_t s = symlink_new(h, K_GLINK, dir, idx, rel_target(dpath, gpath));
        g_free(dpath);
        g_free(gpath);
        return s;
    }
    H5G_stat_t st;
    uint32_t id;
    if (H5Gget_objinfo(g, e->name, 0, &st) < 0) {
        char *why = h5_errtext();
        id = node_new(h, K_DAMAGED, addr, dir, idx);
        note_damaged(h, id, "cannot read the object header", why);
        g_free(why);
    } else if (st.type == H5G_DATASET && too_large(h, g, dir, e->name)) {
        return 0;
    } else if (st.type == H5G_GROUP || st.type == H5G_DATASET) {
        id = node_new(h, st.type == H5G_GROUP ? K_GROUP : K_DATASET, addr, dir, idx);
        NODE(h, id)->nlink = st.type == H5G_GROUP ? 0 : MAX(st.nlink, 1u);
    } else {
        l->ntypes++;
        return 0;                  /* committed datatypes have no bytes */
    }
    g_hash_table_insert(h->by_addr, GSIZE_TO_POINTER(addr), GUINT_TO_POINTER(id));
    return id;
}

/* External and user-defined links are left out: a line for .info. */
static void note_left_out(h5 *h, hid_t g, h5_list *l, uint32_t dir, const link_ent *e)
{
    char *dpath = node_path(h, dir);
    char *child = g_strconcat(dpath, strcmp(dpath, "/") == 0 ? "" : "/", e->name, NULL);
    if (!l->notes)
        l->notes = g_string_new(NULL);
    if (e->type == H5L_TYPE_EXTERNAL) {
        char *val = e->vsize <= h->src->size ? g_malloc0(e->vsize + 1) : NULL;
        const char *file = NULL, *obj = NULL;
        unsigned flags;
        if (val && H5Lget_val(g, e->name, val, e->vsize, H5P_DEFAULT) >= 0)
            H5Lunpack_elink_val(val, e->vsize, &flags, &file, &obj);
        g_string_append_printf(l->notes, "%s -> external %s:%s (not followed)\n", child,
                               file ? file : "?", obj ? obj : "?");
        l->nexternal++;
        g_free(val);
    } else {
        g_string_append_printf(l->notes, "%s -> user-defined link type %d (not followed)\n",
                               child, (int)e->type);
    }
    g_free(child);
    g_free(dpath);
}

static void link_ents_free(GArray *a)
{
    for (guint i = 0; i < a->len; i++)
        g_free(g_array_index(a, link_ent, i).name);
    g_array_free(a, TRUE);
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
        if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0 || !*e->name)
            continue;              /* no file name: left out */
        if (strlen(e->name) > NAME_MAX_LEN) {
            /* no file name either (the kernel takes 255 bytes): left out, noted */
            if (!l->notes)
                l->notes = g_string_new(NULL);
            char *dpath = node_path(h, dir);
            g_string_append_printf(l->notes, "%s%s%.40s... -> name of %zu bytes, longer than a "
                                   "file name (255): not shown\n", dpath,
                                   strcmp(dpath, "/") ? "/" : "", e->name, strlen(e->name));
            g_free(dpath);
            continue;
        }
        if (e->type == H5L_TYPE_HARD)
            l->child[i] = classify_hard(h, g, l, dir, i, e);
        else if (e->type == H5L_TYPE_SOFT)
            l->child[i] = classify_soft(h, g, dir, i, e);
        else
            note_left_out(h, g, l, dir, e);
    }
    return l;
}

/* The listing of group node dir, made on first use; HPC_E_IO for a group
 * libhdf5 cannot list (logged).  Lock held. */
static int list_group(h5 *h, uint32_t dir, h5_list **out)
{
    h5_list *l = g_hash_table_lookup(h->lists, GUINT_TO_POINTER(dir));
    *out = NULL;
    if (!l) {
        GArray *ents = g_array_new(FALSE, FALSE, sizeof(link_ent));
        hsize_t at = 0;
        hid_t g = group_open(h, dir);
        if (g < 0 || H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &at, collect_link, ents) < 0) {
            char *why = h5_errtext();
            note_damaged(h, dir, g < 0 ? "cannot open the group" : "cannot list the group", why);
            g_free(why);
            NODE(h, dir)->state = S_BAD;
            g_array_set_size(ents, 0);
        }
        l = list_build(h, g, dir, ents);
        link_ents_free(ents);
        if (g >= 0)
            H5Oclose(g);
    }
    if (NODE(h, dir)->state == S_BAD)
        return damaged_read(h, dir);
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

/* ---- dataset handles -------------------------------------------------- */

static void handle_close(h5 *h, h5_handle *hd)
{
    h->nhandles--;
    h->handle_bytes -= hd->bytes;
    g_hash_table_remove(h->handles, GUINT_TO_POINTER(hd->node));
    hpc_h5chunk_plan_free(hd->plan);
    dset_free(hd->d);
    g_free(hd);
}

/* Close unused handles, least recently used first, while over a bound. */
static void handles_trim(h5 *h)
{
    GList *l = h->lru.tail;
    while (l && (h->nhandles > h->max_handles || h->handle_bytes > h->max_handle_bytes)) {
        GList *prev = l->prev;
        h5_handle *hd = l->data;
        if (hd->refs == 0) {
            g_queue_unlink(&h->lru, l);
            handle_close(h, hd);
        }
        l = prev;
    }
}

/* Can the chunks of d be decoded by hdf5_chunk.c?  Sets hd->plan. */
static void plan_chunks(h5_handle *hd)
{
    h5_dset *d = hd->d;
    if (d->kind != DS_DATA || d->rank < 1 || d->size == 0 || d->pad)
        return;
    hid_t ftype = H5Dget_type(d->id), dcpl = H5Dget_create_plist(d->id);
    if (ftype >= 0 && dcpl >= 0)
        hpc_h5chunk_plan_new(dcpl, ftype, d->mtype, d->esize, d->rank, d->dims, &hd->plan);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (dcpl >= 0)
        H5Pclose(dcpl);
}

/* Give a dataset read by H5Dread a chunk cache for one row of chunks (so
 * that a sequential read decompresses each chunk once). */
static void size_chunk_cache(h5 *h, h5_dset *d, hid_t g, const char *name, uint64_t band,
                             uint64_t cbytes, uint64_t nchunks)
{
    uint64_t all;
    if (__builtin_mul_overflow(cbytes, nchunks, &all))
        all = UINT64_MAX;
    /* libhdf5's default cache (1 MiB) holds all chunks of small datasets */
    if (!band || all <= CHUNK_CACHE_DEFAULT)
        return;
    uint64_t want = MIN(MIN(MAX(band + cbytes, CHUNK_CACHE_MIN), CHUNK_CACHE_MAX), all);
    want = MIN(want, MAX(h->max_handle_bytes / 4, CHUNK_CACHE_DEFAULT));
    /* close first: while a handle is open, libhdf5 shares its dataset
     * object, chunk cache included, with every new open */
    hid_t dapl = dset_access(want, cbytes, nchunks);
    H5Dclose(d->id);
    d->id = dapl >= 0 ? H5Dopen2(g, name, dapl) : H5I_INVALID_HID;
    if (dapl >= 0)
        H5Pclose(dapl);
    if (d->id < 0)
        d->id = H5Dopen2(g, name, h->dapl);
    else
        d->cache_bytes = want;
}

/* Open and describe dataset node id.  Lock held. */
static int handle_open(h5 *h, uint32_t id, h5_handle **out)
{
    h5_dset *d = g_new0(h5_dset, 1);
    uint64_t band = 0, cbytes = 0, nchunks = 0;
    const char *name = node_name(h, id);
    int rc = HPC_E_IO;
    d->id = d->mtype = d->rtype = H5I_INVALID_HID;
    d->path = node_path(h, id);
    hid_t g = group_open(h, NODE(h, id)->parent);
    if (g >= 0)
        d->id = H5Dopen2(g, name, h->dapl);
    if (d->id < 0 || dset_describe(h, d, &band, &cbytes, &nchunks) != HPC_OK) {
        char *why = h5_errtext();
        note_damaged(h, id, "cannot open the dataset", why);
        g_free(why);
        NODE(h, id)->state = S_BAD;
        goto out;
    }
    char **fields[] = { &d->shape, &d->dtype, &d->layout, &d->filters, &d->chunks };
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
        if (!*fields[i])
            *fields[i] = g_strdup("?");
    h5_handle *hd = g_new0(h5_handle, 1);
    hd->node = id;
    hd->d = d;
    hd->link.data = hd;
    plan_chunks(hd);
    if (!hd->plan)
        size_chunk_cache(h, d, g, name, band, cbytes, nchunks);
    d = NULL;
    if (hd->d->id < 0) {
        char *why = h5_errtext();
        note_damaged(h, id, "cannot open the dataset", why);
        g_free(why);
        NODE(h, id)->state = S_BAD;
        hpc_h5chunk_plan_free(hd->plan);
        dset_free(hd->d);
        g_free(hd);
        goto out;
    }
    hd->bytes = hd->d->cache_bytes + (hd->d->text ? hd->d->size : 0);
    NODE(h, id)->size = hd->d->size;
    NODE(h, id)->state = S_OK;
    g_hash_table_insert(h->handles, GUINT_TO_POINTER(id), hd);
    h->nhandles++;
    h->handle_bytes += hd->bytes;
    *out = hd;
    rc = HPC_OK;
out:
    if (g >= 0)
        H5Oclose(g);
    dset_free(d);
    return rc;
}

/* A referenced handle of dataset node id (opened if need be).  Lock held. */
static int handle_get(h5 *h, uint32_t id, h5_handle **out)
{
    h5_handle *hd = g_hash_table_lookup(h->handles, GUINT_TO_POINTER(id));
    if (hd) {
        g_queue_unlink(&h->lru, &hd->link);
    } else {
        if (NODE(h, id)->state == S_BAD)
            return damaged_read(h, id);
        int rc = handle_open(h, id, &hd);
        if (rc != HPC_OK)
            return damaged_read(h, id);
    }
    hd->refs++;
    g_queue_push_head_link(&h->lru, &hd->link);
    *out = hd;
    handles_trim(h);
    return HPC_OK;
}

static void handle_put(h5 *h, h5_handle *hd)
{
    hd->refs--;
    handles_trim(h);
}

/* ---- nodes as the core sees them -------------------------------------- */

/* Attributes of node id.  Lock held. */
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
        st->mode = HPC_MODE_LINK;
        st->size = NODE(h, id)->size;
        return HPC_OK;
    case K_DATASET:
        if (NODE(h, id)->state != S_OK) {
            h5_handle *hd;
            int rc = handle_get(h, id, &hd);
            if (rc != HPC_OK)
                return rc;
            handle_put(h, hd);
        }
        st->mode = HPC_MODE_FILE;
        st->size = NODE(h, id)->size;
        st->nlink = NODE(h, id)->nlink;
        return HPC_OK;
    default:
        return damaged_read(h, id);
    }
}

static int h5_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    h5 *h = c->priv;
    h5_list *l;
    int rc;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t dir = ino_to_id(parent, h);
    if (dir == NO_PARENT) {
        rc = HPC_E_NOENT;
    } else if (NODE(h, dir)->kind != K_GROUP) {
        rc = HPC_E_NOTDIR;
    } else if ((rc = list_group(h, dir, &l)) == HPC_OK) {
        int64_t i = list_find(l, name);
        rc = i < 0 || l->child[i] == 0 ? HPC_E_NOENT : node_stat(h, l->child[i], st);
    }
    g_mutex_unlock(&h->lock);
    return rc;
}

static int h5_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    h5 *h = c->priv;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t id = ino_to_id(ino, h);
    int rc = id == NO_PARENT ? HPC_E_NOENT : node_stat(h, id, st);
    g_mutex_unlock(&h->lock);
    return rc;
}

static int h5_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    h5 *h = c->priv;
    h5_list *l;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t id = ino_to_id(dir, h);
    int rc = id == NO_PARENT ? HPC_E_NOENT : NODE(h, id)->kind != K_GROUP ? HPC_E_NOTDIR
                                                                       : list_group(h, id, &l);
    g_mutex_unlock(&h->lock);
    for (uint64_t i = cookie; rc == HPC_OK && i < l->n; i++) {
        hpc_stat st;
        if (l->child[i] == 0)
            continue;
        g_mutex_lock(&h->lock);
        const h5_node *n = NODE(h, l->child[i]);
        if (n->kind == K_DATASET && n->state != S_OK) {
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

static int h5_readlink(hpc_container *c, hpc_ino ino, char **target)
{
    h5 *h = c->priv;
    g_mutex_lock(&h->lock);
    uint32_t id = ino_to_id(ino, h);
    const char *t = id == NO_PARENT ? NULL : g_hash_table_lookup(h->targets, GUINT_TO_POINTER(id));
    *target = g_strdup(t);
    g_mutex_unlock(&h->lock);
    return t ? HPC_OK : HPC_E_INVAL;
}

/* ---- attributes as xattrs --------------------------------------------- */

typedef struct attr_ctx {
    h5 *h;
    GPtrArray *names, *values;     /* char *, GString * */
    GString *notes;                /* over-long names, cut values */
    char *failed;                  /* message of the first attribute that failed */
    const char *path;
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
        g_string_append_printf(a->notes, "warning: %s: attribute name '%.40s...' is too "
                               "long for an xattr: not shown\n", a->path, name);
    } else {
        if (v->len > XATTR_VALUE_MAX) {
            g_string_truncate(v, XATTR_VALUE_MAX);
            g_string_append_printf(a->notes, "warning: %s: attribute '%s' cut to %d bytes\n",
                                   a->path, name, XATTR_VALUE_MAX);
        }
        g_ptr_array_add(a->names, xname);
        g_ptr_array_add(a->values, v);
        xname = NULL;
        v = NULL;
    }
    if (aid >= 0)
        H5Aclose(aid);
    if (v)
        g_string_free(v, TRUE);
    g_free(xname);
    return 0;
}

static void gstring_free(gpointer p)
{
    g_string_free(p, TRUE);
}

/* Read the attributes of object oid (node id) into a; a damaged attribute
 * is noted for .info and left out.  Lock held. */
static void attrs_read(h5 *h, uint32_t id, hid_t oid, attr_ctx *a)
{
    char *path = node_path(h, id);
    hsize_t at = 0;
    a->h = h;
    a->names = g_ptr_array_new_with_free_func(g_free);
    a->values = g_ptr_array_new_with_free_func(gstring_free);
    a->notes = g_string_new(NULL);
    a->path = path;
    if (H5Aiterate2(oid, H5_INDEX_NAME, H5_ITER_INC, &at, attr_visit, a) < 0 && !a->failed) {
        char *why = h5_errtext();
        a->failed = g_strdup_printf("attributes: %s", why);
        g_free(why);
    }
    if (a->failed)
        note_damaged(h, id, "cannot read", a->failed);
    if (a->notes->len && !NODE(h, id)->noted) {
        NODE(h, id)->noted = 1;
        g_string_append(h->warnings, a->notes->str);
    }
    a->path = NULL;
    g_free(path);
}

static void attrs_clear(attr_ctx *a)
{
    if (a->names)
        g_ptr_array_free(a->names, TRUE);
    if (a->values)
        g_ptr_array_free(a->values, TRUE);
    if (a->notes)
        g_string_free(a->notes, TRUE);
    g_free(a->failed);
}

static int h5_xattrs(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx)
{
    h5 *h = c->priv;
    attr_ctx a = { 0 };
    char *shape = NULL, *dtype = NULL;
    int rc = HPC_OK;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t id = ino_to_id(ino, h);
    uint8_t kind = id == NO_PARENT ? 0 : NODE(h, id)->kind;
    if (kind == K_DATASET) {
        h5_handle *hd;
        rc = handle_get(h, id, &hd);
        if (rc == HPC_OK) {
            shape = g_strdup(hd->d->shape);
            dtype = g_strdup(hd->d->dtype);
            attrs_read(h, id, hd->d->id, &a);
            handle_put(h, hd);
        }
    } else if (kind == K_GROUP) {
        hid_t g = group_open(h, id);
        if (g >= 0) {
            attrs_read(h, id, g, &a);
            H5Oclose(g);
        }
    } else if (id == NO_PARENT) {
        rc = HPC_E_NOENT;
    }
    g_mutex_unlock(&h->lock);
    int stop = 0;
    if (shape)
        stop = fn(ctx, "user.shape", shape, strlen(shape)) ||
               fn(ctx, "user.dtype", dtype, strlen(dtype));
    for (guint i = 0; !stop && a.names && i < a.names->len; i++) {
        GString *v = g_ptr_array_index(a.values, i);
        stop = fn(ctx, g_ptr_array_index(a.names, i), v->str, v->len);
    }
    attrs_clear(&a);
    g_free(shape);
    g_free(dtype);
    return rc;
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
        handle_close(h, l->data);
    if (h->handles)
        g_hash_table_destroy(h->handles);
    if (h->lists)
        g_hash_table_destroy(h->lists);
    if (h->by_addr)
        g_hash_table_destroy(h->by_addr);
    if (h->targets)
        g_hash_table_destroy(h->targets);
    if (h->reasons)
        g_hash_table_destroy(h->reasons);
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
    h->lists = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, list_free);
    h->targets = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    h->reasons = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    h->handles = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_queue_init(&h->lru);
    h->warnings = g_string_new(NULL);
    h->damaged = g_string_new(NULL);
    h->max_handles = c->opts.h5_handles ? c->opts.h5_handles : H5_HANDLES_DEFAULT;
    h->max_handle_bytes = c->opts.h5_cache ? c->opts.h5_cache : H5_HANDLE_BYTES_DEFAULT;
    h->elems = hpc_h5elem_new();
    h->chunks = hpc_h5chunk_cache_new(c->opts.cache_size ? c->opts.cache_size : (64u << 20));
    return h;
}

/* Open the file and its root group: all a mount costs. */
static int h5_open(hpc_container *c, GError **err)
{
    h5_quiet();
    h5 *h = h5_new(c);
    hid_t fapl = H5I_INVALID_HID, root = H5I_INVALID_HID;
    int rc;
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
    h->dapl = dset_access(0, 0, 0);
    root = H5Gopen2(h->file, "/", H5P_DEFAULT);
    H5O_info_t oi;
    if (root < 0 || h->dapl < 0 || H5Oget_info2(root, &oi, H5O_INFO_BASIC) < 0) {
        char *why = h5_errtext();
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, "root group", sb,
                      "libhdf5 cannot open the root group: %s", why);
        g_free(why);
        goto out;
    }
    node_new(h, K_GROUP, (uint64_t)oi.addr, NO_PARENT, 0);
    g_hash_table_insert(h->by_addr, GSIZE_TO_POINTER((uint64_t)oi.addr), GUINT_TO_POINTER(0));
    hpc_container_cache(c);        /* made now: never under h->lock */
    c->priv = h;
    h = NULL;
    rc = HPC_OK;
out:
    if (root >= 0)
        H5Gclose(root);
    if (fapl >= 0)
        H5Pclose(fapl);
    h5_free(h);
    return rc;
}

/* ---- data ------------------------------------------------------------- */

/* The referenced handle of dataset ino for a read; read_release() it. */
static int read_acquire(hpc_container *c, hpc_ino ino, h5_handle **out)
{
    h5 *h = c->priv;
    int rc;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t id = ino_to_id(ino, h);
    uint8_t kind = id == NO_PARENT ? 0 : NODE(h, id)->kind;
    if (kind == K_DATASET)
        rc = handle_get(h, id, out);
    else if (kind == K_DAMAGED)
        rc = damaged_read(h, id);
    else
        rc = kind == K_GROUP ? HPC_E_ISDIR : kind ? HPC_E_INVAL : HPC_E_NOENT;
    g_mutex_unlock(&h->lock);
    return rc;
}

static void read_release(hpc_container *c, h5_handle *hd)
{
    h5 *h = c->priv;
    g_mutex_lock(&h->lock);
    handle_put(h, hd);
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
static int read_elements(const h5_dset *d, uint64_t e0, uint64_t e1, void *buf)
{
    hid_t fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    int rc = HPC_E_IO;
    /* H5Dread leaves bytes untouched (storage never allocated with
     * H5D_FILL_TIME_NEVER, the padding of converted compounds): they are
     * zero, as in h5py's numpy.zeros buffers, never what buf held */
    memset(buf, 0, (size_t)(e1 - e0) * d->esize);
    hid_t rtype = d->rtype >= 0 ? d->rtype : d->mtype;
    if (d->rank == 0) {
        if (H5Dread(d->id, rtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0)
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
    if (ms >= 0 && H5Dread(d->id, rtype, ms, fs, H5P_DEFAULT, base) >= 0)
        rc = HPC_OK;
out:
    if (rc == HPC_OK && d->rtype >= 0)
        swap_elements(buf, e1 - e0, d->esize);
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

/* Elements [e0, e1) of the dataset of hd, decoded by us or by H5Dread. */
static int read_range(h5 *h, const h5_handle *hd, uint64_t e0, uint64_t e1, void *buf)
{
    return hd->plan ? read_decoded(h, hd, e0, e1, buf) : read_elements(hd->d, e0, e1, buf);
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

static int read_dset(hpc_container *c, const h5_handle *hd, void *buf, size_t len,
                     uint64_t off, size_t *nread)
{
    h5 *h = c->priv;
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
    case DS_DATA: {
        h5_quiet();
        uint64_t e0 = off / d->esize, e1 = (off + len - 1) / d->esize + 1;
        size_t skip = (size_t)(off - e0 * d->esize);
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
            rc = hpc_container_sources_unchanged(c);
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

static int h5_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread)
{
    h5_handle *hd;
    *nread = 0;
    int rc = read_acquire(c, ino, &hd);
    if (rc != HPC_OK)
        return rc;
    rc = read_dset(c, hd, buf, len, off, nread);
    read_release(c, hd);
    return rc;
}

static int h5_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
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

int hpc_hdf5_chunk_plan(hpc_container *c, hpc_ino ino, GByteArray *out)
{
    h5_handle *hd;
    int rc = read_acquire(c, ino, &hd);
    if (rc != HPC_OK)
        return rc;
    if (hd->plan && hd->d->kind == DS_DATA) {
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
 * The address is proven by comparing with H5Dread_chunk's bytes: for the
 * first chunk of a dataset, and for every chunk whose filters carry no
 * check (a misplaced chunk would decode to wrong bytes). */
static void chunk_where(h5 *h, h5_handle *hd, uint64_t chunk, hpc_h5chunk_where *w)
{
    hsize_t off[HPC_HDF5_MAX_RANK], size = 0, ssize = 0;
    haddr_t addr = HADDR_UNDEF;
    unsigned mask = 0;
    memset(w, 0, sizeof *w);
    hpc_h5chunk_origin(hd->plan, chunk, off);
    int placed = g_atomic_int_get(&hd->placed);
    if (placed < 0 || H5Dget_chunk_info_by_coord(hd->d->id, off, &mask, &addr, &size) < 0 ||
        addr == HADDR_UNDEF || size == 0 || size > 2 * hpc_h5chunk_plan_chunk_bytes(hd->plan) + 4096 ||
        H5Dget_chunk_storage_size(hd->d->id, off, &ssize) < 0 || ssize != size ||
        !hpc_source_contains(h->src, (uint64_t)addr, (uint64_t)size))
        return;
    if (placed == 0 || !hpc_h5chunk_plan_checked(hd->plan)) {
        int ok = chunk_placed(h, hd, off, (uint64_t)addr, (uint64_t)size, mask);
        g_atomic_int_set(&hd->placed, ok ? 1 : -1);
        if (!ok)
            return;
    }
    *w = (hpc_h5chunk_where){ .addr = (uint64_t)addr, .size = (uint64_t)size, .mask = mask };
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
static int h5_chunks(hpc_container *c, hpc_ino ino, GString *out)
{
    h5_handle *hd;
    int rc = read_acquire(c, ino, &hd);
    if (rc != HPC_OK)
        return rc;
    rc = hd->d->id >= 0 ? hpc_h5refs_describe(hd->d->id, out) : HPC_E_NOTSUP;
    read_release(c, hd);
    return rc;
}

/* ---- .info ------------------------------------------------------------ */

static const char *kind_name(const h5_handle *hd)
{
    switch (hd->d->kind) {
    case DS_FAST: return "pread";
    case DS_DATA: return hd->plan ? "decode" : "H5Dread";
    case DS_TEXT: return "text";
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
    attrs_read(h, id, oid, &a);
    attrs_clear(&a);
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
        path = node_path(h, id);
        g_string_append_printf(w->links, "%s -> %s (%s)\n", path,
                               (const char *)g_hash_table_lookup(h->targets, GUINT_TO_POINTER(id)),
                               n->kind == K_SOFT ? "soft link" : "hard link to a group: symlink");
        w->nsoft += n->kind == K_SOFT;
        break;
    case K_DATASET:
        if (g_hash_table_contains(w->datasets, GUINT_TO_POINTER(id))) {
            first = node_path(h, id);
            char *dpath = node_path(h, dir);
            g_string_append_printf(w->links, "%s%s%s -> hard link to %s\n", dpath,
                                   strcmp(dpath, "/") == 0 ? "" : "/", l->names + l->name_at[i], first);
            g_free(dpath);
            w->nhard++;
            break;
        }
        g_hash_table_add(w->datasets, GUINT_TO_POINTER(id));
        if (handle_get(h, id, &hd) != HPC_OK)
            break;
        const h5_dset *d = hd->d;
        g_string_append_printf(w->rows, "%s\t%s\t%s\t%s\t%s\t%s\t%" PRIu64 "\t%s\t%" PRIu64 "\t%s\n",
                               d->path, d->rank == 0 && d->nelem == 1 ? "()" : d->shape,
                               d->dtype, d->layout, d->filters, d->chunks, d->size,
                               kind_name(hd), d->cache_bytes, d->note ? d->note : "-");
        info_attrs(h, id, d->id);
        handle_put(h, hd);
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
    int rc = list_group(h, dir, &l);
    if (rc == HPC_OK) {
        hid_t g = group_open(h, dir);
        if (g >= 0) {
            info_attrs(h, dir, g);
            H5Oclose(g);
        }
        if (l->notes)
            g_string_append(w->links, l->notes->str);
        w->nexternal += l->nexternal;
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
                           "external_links: %u (not followed)\nnamed_datatypes: %u\n",
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
};

