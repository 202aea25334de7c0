/* fmt_dhdf.c - distributed HDF4 sets ("HDF NOW"): a main file (MHF) whose
 * chunk tables describe arrays split into pieces stored in associated
 * files (AHFs).  See docs/dhdf-format.md for the convention and
 * docs/dhdf.md for the tree.
 *
 * open() reads every table through libhdf4, checks the whole set (set ids,
 * file ids, bounds, overlaps, holes, the pieces' types and sizes) and
 * builds a static hpc_tree.  read() goes through the block cache: a block
 * of an assembled array is a range of elements, split into boxes, each
 * intersected with the pieces it touches and read with SDreaddata
 * (start, edge) from that piece only.
 *
 * libhdf4 is not thread-safe: every HDF4 call runs under hdf_lock.
 */
#include "config.h"
#include "hpc_format.h"
#include "hpc_tree.h"
#include "fmt_dhdf.h"
#include "dhdf_layout.h"
#include "hpc_boxes.h"
#include "hpc_sandbox.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* the raw data-info calls give byte offsets for messages */
#define DATAINFO_MASTER 1
#include <mfhdf.h>
#include <hdatainfo.h>
#include <mfdatainfo.h>

#define CLASS_FILEINFO DHDF_CLASS_FILEINFO
#define CLASS_CHUNKS DHDF_CLASS_CHUNKS
#define VD_FILEINFO DHDF_VD_FILEINFO
#define MAX_STR_W 4096           /* widest FileName/ChunkName field accepted */
#define MAX_OPEN_FILES 16        /* AHFs kept open between reads (HDF4 allows 32) */
#define MAX_ATTR_SHOWN 65536     /* bytes of an attribute rendered as xattr */
#define DIRECT_READ_MIN (128u << 10)  /* reads this large skip the block cache */
#define MAX_WATCHED_FILES 256    /* sets up to this many files: all watched for changes */

static GMutex hdf_lock;

typedef struct dhdf_file {
    int32_t id;                  /* DHDF_FileId */
    char *name, *host;           /* as stored in File_Info */
    char *path;                  /* resolved */
    uint64_t size;
    int32 sd;                    /* SD id while open, else -1 */
    uint64_t last_use;
    uint64_t reads;              /* SDreaddata calls (tests) */
    GPtrArray *selected;         /* dhdf_piece * whose SDS id is open in sd */
} dhdf_file;

typedef struct dhdf_piece {
    uint32_t file;               /* index into files */
    int32 sds_index;             /* in that file */
    char *name;
    uint64_t rec_off;            /* its ChunkName in the MHF, for messages */
    int stream;                  /* compressed, not chunked: decoded whole */
    unsigned char fill[8];       /* one element of fill value, native order */
    uint64_t nbytes;
    GBytes *whole;               /* the decoded piece (stream pieces), or NULL */
    uint64_t whole_use;
    int32 sds;                   /* SDS id while selected, else FAIL */
    hpc_ino ino;                 /* its node (pieces of distributed arrays) */
} dhdf_piece;

typedef struct dhdf_array {
    char *name;
    int distributed;
    int32 nt;                    /* base number type */
    uint32_t esize;
    unsigned rank;
    uint64_t dims[HPC_DHDF_MAX_RANK];
    uint64_t nbytes;
    size_t npieces;
    hpc_dhdf_box *boxes;         /* npieces boxes */
    dhdf_piece *pieces;
    uint64_t holes;              /* elements no piece covers */
    hpc_dhdf_layout layout;      /* of its chunk table */
    uint64_t space;              /* cache space of the whole array */
    uint64_t *piece_space;       /* cache spaces of the pieces */
} dhdf_array;

typedef struct dhdf {
    int role;                    /* ROLE_* */
    char *setid;
    int32_t fileid;
    char *libversion;
    dhdf_file *files;            /* [0] is the MHF */
    uint32_t nfiles;
    dhdf_array *arrays;
    uint32_t narrays;
    GPtrArray *warnings;
    uint64_t clock;              /* for the open-file and decoded-piece LRUs */
    uint32_t nopen;
    uint64_t whole_bytes, whole_max;   /* decoded stream pieces held, limit */
} dhdf;

enum { ROLE_PLAIN, ROLE_MAIN, ROLE_ASSOC };

/* ---- the pure chunk-table logic (fmt_dhdf.h) --------------------------- */

size_t hpc_dhdf_record_size(const hpc_dhdf_layout *l)
{
    if (l->name_w < 1 || l->name_w > MAX_STR_W || l->dims_order < 1 ||
        l->dims_order > HPC_DHDF_MAX_RANK || l->orig_order < 1 ||
        l->orig_order > HPC_DHDF_MAX_RANK)
        return 0;
    return 4 + (size_t)l->name_w + 4 * (size_t)l->dims_order + 4 * (size_t)l->orig_order;
}

static int32_t get_i32(const unsigned char *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Copy a NUL-padded string field of width w into out (max+1 bytes). */
static size_t copy_str(const unsigned char *p, size_t w, char *out, size_t max)
{
    size_t n = 0;
    while (n < w && p[n])
        n++;
    size_t k = MIN(n, max);
    memcpy(out, p, k);
    out[k] = '\0';
    return n;
}

/* A name usable as one path component. */
static int name_ok(const char *s)
{
    return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int hpc_dhdf_decode_record(const unsigned char *rec, const hpc_dhdf_layout *l,
                           unsigned rank, const uint64_t *dims, int32_t *fileid,
                           char *name, hpc_dhdf_box *box, const char **field,
                           char *why, size_t whylen)
{
    const unsigned char *pd = rec + 4 + l->name_w, *po = pd + 4 * (size_t)l->dims_order;
    memset(box, 0, sizeof *box);
    *fileid = get_i32(rec);
    if (*fileid < 1) {
        *field = DHDF_FIELD_FILEID;
        g_snprintf(why, whylen, "%" PRId32 " cannot hold a piece (AHF ids are >= 1)", *fileid);
        return HPC_E_CORRUPT;
    }
    size_t n = copy_str(rec + 4, l->name_w, name, HPC_DHDF_MAX_NAME);
    if (n > HPC_DHDF_MAX_NAME || !name_ok(name)) {
        *field = DHDF_FIELD_CHUNKNAME;
        g_snprintf(why, whylen, "'%s' is not a valid piece name (1 to %d bytes, no '/', "
                   "not '.' or '..')", name, HPC_DHDF_MAX_NAME);
        return HPC_E_CORRUPT;
    }
    if (rank < 1 || rank > l->dims_order || rank > l->orig_order) {
        *field = rank > l->dims_order ? DHDF_FIELD_DIMSIZES : DHDF_FIELD_ORIGINS;
        g_snprintf(why, whylen, "order %u/%u is less than the array's rank %u",
                   l->dims_order, l->orig_order, rank);
        return HPC_E_CORRUPT;
    }
    for (unsigned d = 0; d < rank; d++) {
        int32_t s = get_i32(pd + 4 * d), o = get_i32(po + 4 * d);
        if (s < 1 || (uint64_t)s > dims[d]) {
            *field = DHDF_FIELD_DIMSIZES;
            g_snprintf(why, whylen, "piece '%s': size %" PRId32 " in dimension %u "
                       "(the array has %" PRIu64 ")", name, s, d, dims[d]);
            return HPC_E_CORRUPT;
        }
        if (o < 0 || (uint64_t)o > dims[d] - (uint64_t)s) {
            *field = DHDF_FIELD_ORIGINS;
            g_snprintf(why, whylen, "piece '%s': origin %" PRId32 " + size %" PRId32
                       " in dimension %u exceeds the array's %" PRIu64,
                       name, o, s, d, dims[d]);
            return HPC_E_CORRUPT;
        }
        box->size[d] = (uint64_t)s;
        box->origin[d] = (uint64_t)o;
    }
    return HPC_OK;
}

static int boxes_meet(unsigned rank, const hpc_dhdf_box *x, const hpc_dhdf_box *y)
{
    for (unsigned d = 0; d < rank; d++)
        if (x->origin[d] >= y->origin[d] + y->size[d] || y->origin[d] >= x->origin[d] + x->size[d])
            return 0;
    return 1;
}

static int cmp_origin0(const void *a, const void *b, void *p)
{
    const hpc_dhdf_box *bx = p;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (bx[i].origin[0] != bx[j].origin[0])
        return bx[i].origin[0] < bx[j].origin[0] ? -1 : 1;
    return i < j ? -1 : i > j;
}

hpc_dhdf_problem hpc_dhdf_check_pieces(unsigned rank, const uint64_t *dims,
                                       const hpc_dhdf_box *p, size_t n,
                                       uint64_t *holes, size_t *a, size_t *b)
{
    uint64_t total = 1, covered = 0;
    *holes = 0;
    for (unsigned d = 0; d < rank; d++)
        total *= dims[d];          /* the caller checked that it fits */
    for (size_t i = 0; i < n; i++) {
        uint64_t vol = 1;
        for (unsigned d = 0; d < rank; d++) {
            if (p[i].size[d] == 0 || p[i].origin[d] > dims[d] ||
                p[i].size[d] > dims[d] - p[i].origin[d]) {
                *a = i;
                return HPC_DHDF_OUTSIDE;
            }
            vol *= p[i].size[d];
        }
        covered += vol;            /* <= total as long as nothing overlaps */
    }
    /* sweep in order of dimension-0 origin: only pieces whose dimension-0
     * ranges meet need the full test */
    size_t *ord = g_new(size_t, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    if (n > 1)
        g_qsort_with_data(ord, (gint)n, sizeof *ord, cmp_origin0, (void *)p);
    hpc_dhdf_problem res = HPC_DHDF_FINE;
    for (size_t i = 0; i < n && res == HPC_DHDF_FINE; i++) {
        const hpc_dhdf_box *x = &p[ord[i]];
        for (size_t j = i + 1; j < n; j++) {
            const hpc_dhdf_box *y = &p[ord[j]];
            if (y->origin[0] >= x->origin[0] + x->size[0])
                break;
            if (boxes_meet(rank, x, y)) {
                *a = MIN(ord[i], ord[j]);
                *b = MAX(ord[i], ord[j]);
                res = HPC_DHDF_OVERLAP;
                break;
            }
        }
    }
    g_free(ord);
    if (res == HPC_DHDF_FINE)
        *holes = total - covered;
    return res;
}

int hpc_dhdf_map_range(unsigned rank, const uint64_t *dims, const hpc_dhdf_box *p,
                       size_t n, uint64_t e0, uint64_t e1, hpc_dhdf_box_fn fn,
                       void *ctx)
{
    hpc_box box[HPC_BOXES_MAX];
    unsigned nb = hpc_boxes_split(rank, dims, e0, e1, box);
    for (unsigned bi = 0; bi < nb; bi++) {
        const uint64_t *lo = box[bi].start, *cnt = box[bi].count;
        for (size_t i = 0; i < n; i++) {
            uint64_t s[HPC_DHDF_MAX_RANK], e[HPC_DHDF_MAX_RANK];
            int empty = 0;
            for (unsigned d = 0; d < rank && !empty; d++) {
                uint64_t a = MAX(lo[d], p[i].origin[d]);
                uint64_t b = MIN(lo[d] + cnt[d], p[i].origin[d] + p[i].size[d]);
                empty = a >= b;
                s[d] = a;
                e[d] = b - a;
            }
            if (!empty) {
                int rc = fn(ctx, i, s, e);
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

void hpc_dhdf_scatter(unsigned rank, const uint64_t *dims, size_t esize,
                      const uint64_t *start, const uint64_t *edge,
                      const void *src, void *dst, uint64_t e0)
{
    hpc_boxes_scatter(rank, dims, esize, start, edge, src, dst, e0);
}

/* ---- number types ----------------------------------------------------- */

/* Element size and NumPy dtype of an HDF4 base number type; 0 if unknown. */
static uint32_t nt_info(int32 nt, const char **dtype)
{
    switch (nt & DFNT_MASK) {
    case DFNT_CHAR8: *dtype = "|S1"; return 1;
    case DFNT_UCHAR8: *dtype = "|u1"; return 1;
    case DFNT_INT8: *dtype = "|i1"; return 1;
    case DFNT_UINT8: *dtype = "|u1"; return 1;
    case DFNT_INT16: *dtype = "<i2"; return 2;
    case DFNT_UINT16: *dtype = "<u2"; return 2;
    case DFNT_INT32: *dtype = "<i4"; return 4;
    case DFNT_UINT32: *dtype = "<u4"; return 4;
    case DFNT_FLOAT32: *dtype = "<f4"; return 4;
    case DFNT_FLOAT64: *dtype = "<f8"; return 8;
    default: *dtype = "?"; return 0;
    }
}

/* HDF4 returns native order; hpcmount serves little-endian. */
static void native_to_le(void *buf, size_t n, uint32_t esize)
{
#if G_BYTE_ORDER == G_BIG_ENDIAN
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++, p += esize) {
        if (esize == 2) {
            guint16 v;
            memcpy(&v, p, 2);
            v = GUINT16_TO_LE(v);
            memcpy(p, &v, 2);
        } else if (esize == 4) {
            guint32 v;
            memcpy(&v, p, 4);
            v = GUINT32_TO_LE(v);
            memcpy(p, &v, 4);
        } else if (esize == 8) {
            guint64 v;
            memcpy(&v, p, 8);
            v = GUINT64_TO_LE(v);
            memcpy(p, &v, 8);
        }
    }
#else
    (void)buf;
    (void)n;
    (void)esize;
#endif
}

/* Render an attribute value (native order) as text. */
static char *render_attr(int32 nt, const void *v, int32 count)
{
    const char *dt;
    uint32_t es = nt_info(nt, &dt);
    int32 base = nt & DFNT_MASK;
    if (base == DFNT_CHAR8 || base == DFNT_UCHAR8) {
        size_t n = (size_t)count;
        while (n > 0 && ((const char *)v)[n - 1] == '\0')
            n--;
        return g_strndup(v, n);
    }
    GString *s = g_string_new(NULL);
    const unsigned char *p = v;
    for (int32 i = 0; i < count && es; i++, p += es) {
        if (i)
            g_string_append_c(s, ',');
        switch (base) {
        case DFNT_INT8: { int8_t x; memcpy(&x, p, 1); g_string_append_printf(s, "%d", x); break; }
        case DFNT_UINT8: { uint8_t x; memcpy(&x, p, 1); g_string_append_printf(s, "%u", x); break; }
        case DFNT_INT16: { int16_t x; memcpy(&x, p, 2); g_string_append_printf(s, "%d", x); break; }
        case DFNT_UINT16: { uint16_t x; memcpy(&x, p, 2); g_string_append_printf(s, "%u", x); break; }
        case DFNT_INT32: { int32_t x; memcpy(&x, p, 4); g_string_append_printf(s, "%" PRId32, x); break; }
        case DFNT_UINT32: { uint32_t x; memcpy(&x, p, 4); g_string_append_printf(s, "%" PRIu32, x); break; }
        case DFNT_FLOAT32: { float x; memcpy(&x, p, 4); g_string_append_printf(s, "%.9g", (double)x); break; }
        case DFNT_FLOAT64: { double x; memcpy(&x, p, 8); g_string_append_printf(s, "%.17g", x); break; }
        default: break;
        }
    }
    return g_string_free(s, FALSE);
}

/* ---- HDF4 helpers (call with hdf_lock held) ---------------------------- */

/* Read attribute idx of SD object id into a new buffer; bounds-checked
 * against the file size before allocating.  *off receives its offset. */
static int attr_read(int32 id, int32 idx, uint64_t fsize, char *name, int32 *nt,
                     int32 *count, void **val, uint64_t *off)
{
    int32 o = 0, l = 0;
    *val = NULL;
    *off = 0;
    if (SDattrinfo(id, idx, name, nt, count) == FAIL)
        return HPC_E_CORRUPT;
    if (SDgetattdatainfo(id, idx, &o, &l) != FAIL && o > 0)
        *off = (uint64_t)o;
    int32 es = DFKNTsize(*nt | DFNT_NATIVE);
    if (es <= 0 || *count < 0 || (uint64_t)*count * (uint64_t)es > fsize)
        return HPC_E_CORRUPT;
    *val = g_malloc0((size_t)*count * (size_t)es + 1);
    if (SDreadattr(id, idx, *val) == FAIL) {
        g_free(*val);
        *val = NULL;
        return HPC_E_CORRUPT;
    }
    return HPC_OK;
}

/* The file's DHDF_SetId (NULL if absent) and DHDF_FileId. */
static int read_set_attrs(int32 sd, const char *path, uint64_t fsize, char **setid,
                          int32_t *fileid, uint64_t *offs, GError **err)
{
    char name[H4_MAX_NC_NAME + 1];
    int32 nt, count;
    void *v;
    uint64_t off;
    offs[0] = offs[1] = 0;
    *setid = NULL;
    *fileid = -1;
    int32 idx = SDfindattr(sd, DHDF_ATTR_SETID);
    if (idx == FAIL)
        return HPC_OK;
    if (attr_read(sd, idx, fsize, name, &nt, &count, &v, &off) != HPC_OK)
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_SETID, off, "unreadable attribute");
    int32 base = nt & DFNT_MASK;
    if ((base != DFNT_CHAR8 && base != DFNT_UCHAR8) || count < 1 || count > DHDF_SETID_MAX) {
        g_free(v);
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_SETID, off,
                        "type %d count %d, expected a char8 string of 1 to 255 bytes",
                        (int)nt, (int)count);
    }
    *setid = render_attr(nt, v, count);
    offs[0] = off;
    g_free(v);
    idx = SDfindattr(sd, DHDF_ATTR_FILEID);
    if (idx == FAIL)
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_FILEID, 0,
                        "missing, but the file has a DHDF_SetId");
    if (attr_read(sd, idx, fsize, name, &nt, &count, &v, &off) != HPC_OK)
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_FILEID, off, "unreadable attribute");
    if ((nt & DFNT_MASK) != DFNT_INT32 || count != 1) {
        g_free(v);
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_FILEID, off,
                        "type %d count %d, expected one int32", (int)nt, (int)count);
    }
    memcpy(fileid, v, 4);
    offs[1] = off;
    g_free(v);
    if (*fileid < 0)
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_FILEID, off, "%" PRId32 " is negative",
                        *fileid);
    return HPC_OK;
}

/* One vdata loaded: the requested fields of every record, packed. */
typedef struct vtable {
    char name[VSNAMELENMAX + 1];
    int32 nrec;
    unsigned char *buf;
    size_t recsize;
    uint32_t order[4];
    uint32_t disk_off[4];        /* of each requested field in a stored record */
    uint64_t data_off;           /* of the first record, 0 if unknown */
    uint32_t disk_recsize;
} vtable;

/* Where record i, field f lies in the file (for messages). */
static uint64_t vt_off(const vtable *t, int32 i, unsigned f)
{
    return t->data_off ? t->data_off + (uint64_t)i * t->disk_recsize + t->disk_off[f] : 0;
}

/* Load fields (int32 when want_int[f], char8 otherwise) of vdata vs. */
static int vt_load(int32 vs, const char *path, uint64_t fsize, const char *what,
                   const char *const *fields, const int *want_int, unsigned nf,
                   vtable *t, GError **err)
{
    memset(t, 0, sizeof *t);
    VSgetname(vs, t->name);
    int32 nfld = VFnfields(vs);
    int found[4] = { 0 };
    int32 offs = 0, l = 0;
    if (VSgetdatainfo(vs, 0, 1, &offs, &l) > 0 && offs > 0)
        t->data_off = (uint64_t)offs;
    for (int32 i = 0; i < nfld; i++) {
        const char *fname = VFfieldname(vs, i);
        int32 esz = VFfieldesize(vs, i);
        for (unsigned f = 0; fname && f < nf; f++) {
            if (strcmp(fname, fields[f]) != 0)
                continue;
            int32 type = VFfieldtype(vs, i) & DFNT_MASK, order = VFfieldorder(vs, i);
            int ok = want_int[f] ? type == DFNT_INT32 : (type == DFNT_CHAR8 || type == DFNT_UCHAR8);
            int32 maxo = want_int[f] ? HPC_DHDF_MAX_RANK : MAX_STR_W;
            if (!ok || order < 1 || order > maxo)
                return hpc_fail(err, HPC_E_CORRUPT, path, fields[f], t->data_off,
                                "%s '%s': field of type %d order %d, expected %s of order 1 to %d",
                                what, t->name, (int)VFfieldtype(vs, i), (int)order,
                                want_int[f] ? "int32" : "char8", (int)maxo);
            found[f] = 1;
            t->order[f] = (uint32_t)order;
            t->disk_off[f] = t->disk_recsize;
        }
        if (esz > 0)
            t->disk_recsize += (uint32_t)esz;
    }
    GString *list = g_string_new(NULL);
    for (unsigned f = 0; f < nf; f++) {
        if (!found[f]) {
            g_string_free(list, TRUE);
            return hpc_fail(err, HPC_E_CORRUPT, path, fields[f], t->data_off,
                            "%s '%s' has no field %s", what, t->name, fields[f]);
        }
        g_string_append_printf(list, "%s%s", f ? "," : "", fields[f]);
        t->recsize += t->order[f] * (want_int[f] ? 4u : 1u);
    }
    int32 n = VSelts(vs);
    if (n < 0 || (uint64_t)n * (t->disk_recsize ? t->disk_recsize : 1) > fsize) {
        g_string_free(list, TRUE);
        return hpc_fail(err, HPC_E_CORRUPT, path, "nrecords", t->data_off,
                        "%s '%s': %d records of %u bytes cannot fit in %" PRIu64 " bytes",
                        what, t->name, (int)n, t->disk_recsize, fsize);
    }
    t->nrec = n;
    t->buf = g_malloc0(t->recsize * (size_t)n + 1);
    int rc = HPC_OK;
    if (n > 0 && (VSsetfields(vs, list->str) == FAIL ||
                  VSread(vs, t->buf, n, FULL_INTERLACE) != n))
        rc = hpc_fail(err, HPC_E_CORRUPT, path, what, t->data_off,
                      "'%s': cannot read %d records", t->name, (int)n);
    g_string_free(list, TRUE);
    return rc;
}

typedef struct finfo_rec {
    int32_t id;
    char *name, *host;
    uint64_t off;                /* of the record's FileName, for messages */
} finfo_rec;

static void finfo_free(GArray *a)
{
    if (!a)
        return;
    for (guint i = 0; i < a->len; i++) {
        g_free(g_array_index(a, finfo_rec, i).name);
        g_free(g_array_index(a, finfo_rec, i).host);
    }
    g_array_free(a, TRUE);
}

static const char *const finfo_fields[] = { DHDF_FIELD_FILEID, DHDF_FIELD_FILENAME,
                                             DHDF_FIELD_HOSTNAME };
static const int finfo_int[] = { 1, 0, 0 };
static const char *const chunk_fields[] = { DHDF_FIELD_FILEID, DHDF_FIELD_CHUNKNAME,
                                             DHDF_FIELD_DIMSIZES, DHDF_FIELD_ORIGINS };
static const int chunk_int[] = { 1, 0, 1, 1 };

/* Decode a File_Info table into finfo_rec; ids unique. */
static int finfo_decode(const vtable *t, const char *path, GArray **out, GError **err)
{
    GArray *a = g_array_new(FALSE, TRUE, sizeof(finfo_rec));
    uint32_t w1 = t->order[1], w2 = t->order[2];
    int rc = HPC_OK;
    for (int32 i = 0; i < t->nrec; i++) {
        const unsigned char *r = t->buf + (size_t)i * t->recsize;
        finfo_rec f = { get_i32(r), g_strndup((const char *)r + 4, w1),
                        g_strndup((const char *)r + 4 + w1, w2), vt_off(t, i, 1) };
        g_array_append_val(a, f);
        if (f.id < 0 || f.name[0] == '\0') {
            rc = hpc_fail(err, HPC_E_CORRUPT, path, "File_Info", vt_off(t, i, 0),
                          "record %d: DHDF_FileId %" PRId32 " FileName '%s' (ids are >= 0, "
                          "names not empty)", (int)i, f.id, f.name);
            break;
        }
        for (guint j = 0; j + 1 < a->len; j++)
            if (g_array_index(a, finfo_rec, j).id == f.id) {
                rc = hpc_fail(err, HPC_E_CORRUPT, path, "File_Info", vt_off(t, i, 0),
                              "record %d: DHDF_FileId %" PRId32 " is listed twice", (int)i, f.id);
                break;
            }
        if (rc != HPC_OK)
            break;
    }
    if (rc != HPC_OK) {
        finfo_free(a);
        a = NULL;
    }
    *out = a;
    return rc;
}

/* A raw chunk table of the MHF, decoded once the SDS is known. */
typedef struct ctable {
    vtable t;
    int used;
} ctable;

/* Read the vdatas of file `path`: its File_Info (exactly one), and, if
 * tables is not NULL, every chunk table. */
static int read_vdatas(const char *path, uint64_t fsize, GArray **finfo, GPtrArray *tables,
                       GError **err)
{
    *finfo = NULL;
    int32 f = Hopen(path, DFACC_READ, 0);
    if (f == FAIL)
        return hpc_fail(err, HPC_E_CORRUPT, path, NULL, 0, "not a readable HDF4 file");
    int rc = HPC_OK;
    int nfinfo = 0;
    Vstart(f);
    for (int32 ref = VSgetid(f, -1); ref != FAIL && rc == HPC_OK; ref = VSgetid(f, ref)) {
        int32 vs = VSattach(f, ref, "r");
        if (vs == FAIL)
            continue;
        char cls[VSNAMELENMAX + 1] = "", name[VSNAMELENMAX + 1] = "";
        VSgetclass(vs, cls);
        VSgetname(vs, name);
        if (strcmp(cls, CLASS_FILEINFO) == 0 && strcmp(name, VD_FILEINFO) == 0) {
            vtable t;
            if (nfinfo++)
                rc = hpc_fail(err, HPC_E_CORRUPT, path, VD_FILEINFO, 0,
                              "more than one File_Info vdata");
            else if ((rc = vt_load(vs, path, fsize, "File_Info", finfo_fields, finfo_int, 3,
                                   &t, err)) == HPC_OK)
                rc = finfo_decode(&t, path, finfo, err);
            g_free(t.buf);
        } else if (tables && strcmp(cls, CLASS_CHUNKS) == 0) {
            ctable *ct = g_new0(ctable, 1);
            rc = vt_load(vs, path, fsize, "chunk table", chunk_fields, chunk_int, 4, &ct->t, err);
            g_ptr_array_add(tables, ct);
        }
        VSdetach(vs);
    }
    Vend(f);
    Hclose(f);
    if (rc == HPC_OK && nfinfo == 0)
        rc = hpc_fail(err, HPC_E_CORRUPT, path, VD_FILEINFO, 0,
                      "no vdata File_Info of class " CLASS_FILEINFO);
    return rc;
}

static void ctable_free(gpointer p)
{
    ctable *ct = p;
    g_free(ct->t.buf);
    g_free(ct);
}

/* ---- the container ---------------------------------------------------- */

/* End access to the SDSs selected in file k, then close it.  hdf_lock held. */
static void close_file(dhdf *d, uint32_t k)
{
    dhdf_file *f = &d->files[k];
    if (f->sd == FAIL)
        return;
    for (guint i = 0; f->selected && i < f->selected->len; i++) {
        dhdf_piece *p = g_ptr_array_index(f->selected, i);
        SDendaccess(p->sds);
        p->sds = FAIL;
    }
    if (f->selected)
        g_ptr_array_set_size(f->selected, 0);
    SDend(f->sd);
    f->sd = FAIL;
    d->nopen--;
}

static void dhdf_free(dhdf *d)
{
    if (!d)
        return;
    g_mutex_lock(&hdf_lock);
    for (uint32_t i = 0; i < d->nfiles; i++)
        close_file(d, i);
    g_mutex_unlock(&hdf_lock);
    for (uint32_t i = 0; i < d->nfiles; i++) {
        if (d->files[i].selected)
            g_ptr_array_free(d->files[i].selected, TRUE);
        g_free(d->files[i].name);
        g_free(d->files[i].host);
        g_free(d->files[i].path);
    }
    for (uint32_t i = 0; i < d->narrays; i++) {
        dhdf_array *a = &d->arrays[i];
        for (size_t k = 0; k < a->npieces; k++) {
            g_free(a->pieces[k].name);
            if (a->pieces[k].whole)
                g_bytes_unref(a->pieces[k].whole);
        }
        g_free(a->pieces);
        g_free(a->boxes);
        g_free(a->piece_space);
        g_free(a->name);
    }
    g_free(d->arrays);
    g_free(d->files);
    g_free(d->setid);
    g_free(d->libversion);
    if (d->warnings)
        g_ptr_array_free(d->warnings, TRUE);
    g_free(d);
}

static void dhdf_close(hpc_container *c)
{
    dhdf_free(c->priv);
    c->priv = NULL;
}

/* The magic bytes only: opening the file with libhdf4 here would run the
 * library on an untrusted file outside the trial open (hpc_sandbox.h). */
static int dhdf_probe(const char *path, const unsigned char *head, size_t len)
{
    static const unsigned char magic[4] = { 0x0e, 0x03, 0x13, 0x01 };
    (void)path;
    if (!head || len < 4 || memcmp(head, magic, 4) != 0)
        return 0;
    return 90;
}

/* The SD id of file k, opening it (and closing the least recently used
 * one beyond MAX_OPEN_FILES).  hdf_lock held. */
static int32 file_sd(dhdf *d, uint32_t k)
{
    dhdf_file *f = &d->files[k];
    f->last_use = ++d->clock;
    if (f->sd != FAIL)
        return f->sd;
    if (d->nopen >= MAX_OPEN_FILES) {
        uint32_t lru = UINT32_MAX;
        for (uint32_t i = 0; i < d->nfiles; i++)
            if (i != k && d->files[i].sd != FAIL &&
                (lru == UINT32_MAX || d->files[i].last_use < d->files[lru].last_use))
                lru = i;
        if (lru != UINT32_MAX)
            close_file(d, lru);
    }
    f->sd = SDstart(f->path, DFACC_READ);
    if (f->sd != FAIL)
        d->nopen++;
    return f->sd;
}

/* The SDS id of piece pc, selected once and kept while its file stays
 * open (SDselect and SDendaccess per read cost as much as a small read).
 * hdf_lock held. */
static int32 piece_sds(dhdf *d, dhdf_piece *pc)
{
    dhdf_file *f = &d->files[pc->file];
    int32 sd = file_sd(d, pc->file);
    if (sd == FAIL)
        return FAIL;
    if (pc->sds != FAIL)
        return pc->sds;
    pc->sds = SDselect(sd, pc->sds_index);
    if (pc->sds != FAIL) {
        if (!f->selected)
            f->selected = g_ptr_array_new();
        g_ptr_array_add(f->selected, pc);
    }
    return pc->sds;
}

/* Attributes of SD object id as user.attr.* xattrs of node ino. */
static void attrs_to_xattrs(hpc_tree *tree, hpc_ino ino, int32 id, int32 nattrs, uint64_t fsize)
{
    for (int32 i = 0; i < nattrs; i++) {
        char name[H4_MAX_NC_NAME + 1];
        int32 nt, count;
        void *v;
        uint64_t off;
        if (attr_read(id, i, fsize, name, &nt, &count, &v, &off) != HPC_OK)
            continue;
        char *text = render_attr(nt, v, count);
        char *x = g_strdup_printf("user.attr.%s", name);
        hpc_tree_add_xattr(tree, ino, x, text, MIN(strlen(text), MAX_ATTR_SHOWN));
        g_free(x);
        g_free(text);
        g_free(v);
    }
}

static char *shape_text(unsigned rank, const uint64_t *dims)
{
    GString *s = g_string_new(NULL);
    for (unsigned d = 0; d < rank; d++)
        g_string_append_printf(s, "%s%" PRIu64, d ? "," : "", dims[d]);
    return g_string_free(s, FALSE);
}

static void array_xattrs(hpc_tree *tree, hpc_ino ino, unsigned rank, const uint64_t *dims, int32 nt)
{
    const char *dt;
    char *shape = shape_text(rank, dims);
    nt_info(nt, &dt);
    hpc_tree_add_xattr(tree, ino, "user.shape", shape, strlen(shape));
    hpc_tree_add_xattr(tree, ino, "user.dtype", dt, strlen(dt));
    g_free(shape);
}

/* Sizes of an SDS: checked rank, dims, type; total bytes.  empty_ok: a
 * dimension may have size 0 (an unlimited dimension with no record yet;
 * SDgetinfo gives 0 and the SDS holds no element: an empty file). */
static int sds_shape(const char *path, const char *name, int32 rank, const int32 *d32, int32 nt,
                     int empty_ok, unsigned *rank_out, uint64_t *dims, uint32_t *esize,
                     uint64_t *nbytes, GError **err)
{
    const char *dt;
    *esize = nt_info(nt, &dt);
    if (*esize == 0)
        return hpc_fail(err, HPC_E_UNSUPPORTED, path, name, 0,
                        "SDS of HDF4 number type %d is not supported", (int)nt);
    if (rank < 1 || rank > HPC_DHDF_MAX_RANK)
        return hpc_fail(err, HPC_E_CORRUPT, path, name, 0, "rank %d (1 to 32)", (int)rank);
    uint64_t n = *esize;
    for (int32 i = 0; i < rank; i++) {
        if (d32[i] < 1 && !(d32[i] == 0 && empty_ok))
            return hpc_fail(err, HPC_E_CORRUPT, path, name, 0,
                            "dimension %d has size %d", (int)i, (int)d32[i]);
        dims[i] = (uint64_t)d32[i];
        if (__builtin_mul_overflow(n, dims[i], &n) || n > (UINT64_C(1) << 62))
            return hpc_fail(err, HPC_E_CORRUPT, path, name, 0, "array too large");
    }
    *rank_out = (unsigned)rank;
    *nbytes = n;
    return HPC_OK;
}

typedef struct sds_info {
    int32 index;
    char name[H4_MAX_NC_NAME + 1];
    int32 rank, dims[H4_MAX_VAR_DIMS], nt, nattrs;
    int coord;
} sds_info;

/* Every SDS of an open SD file. */
static int list_sds(int32 sd, const char *path, GArray **out, GError **err)
{
    int32 nds, ngattr;
    *out = NULL;
    if (SDfileinfo(sd, &nds, &ngattr) == FAIL)
        return hpc_fail(err, HPC_E_CORRUPT, path, NULL, 0, "cannot read the SD directory");
    GArray *a = g_array_new(FALSE, TRUE, sizeof(sds_info));
    for (int32 i = 0; i < nds; i++) {
        sds_info s = { .index = i };
        int32 id = SDselect(sd, i);
        if (id == FAIL)
            continue;
        if (SDgetinfo(id, s.name, &s.rank, s.dims, &s.nt, &s.nattrs) != FAIL) {
            s.coord = SDiscoordvar(id) > 0;
            g_array_append_val(a, s);
        }
        SDendaccess(id);
    }
    *out = a;
    return HPC_OK;
}

/* HDF4's own fill value for an SDS without _FillValue (what SDreaddata
 * returns for elements never written), native order. */
static void default_fill(int32 nt, unsigned char *out)
{
    switch (nt & DFNT_MASK) {
    case DFNT_INT8: case DFNT_UINT8: { int8_t v = FILL_BYTE; memcpy(out, &v, 1); break; }
    case DFNT_INT16: case DFNT_UINT16: { int16_t v = FILL_SHORT; memcpy(out, &v, 2); break; }
    case DFNT_INT32: case DFNT_UINT32: { int32_t v = (int32_t)FILL_LONG; memcpy(out, &v, 4); break; }
    case DFNT_FLOAT32: { float v = (float)FILL_FLOAT; memcpy(out, &v, 4); break; }
    case DFNT_FLOAT64: { double v = FILL_DOUBLE; memcpy(out, &v, 8); break; }
    default: memset(out, 0, 8); break;    /* char8, uchar8: FILL_CHAR */
    }
}

/* How piece p (SDS p->sds_index of file sd) is stored: its fill value
 * (_FillValue, else HDF4's default), and whether it is one compressed stream (a
 * compressed SDS that is not chunked: every partial SDreaddata decodes it
 * from its start, so such pieces are decoded whole once and kept, see
 * piece_whole).  hdf_lock held. */
static void piece_storage(int32 sd, dhdf_piece *p, int32 nt, uint32_t esize, unsigned rank,
                          const uint64_t *size)
{
    p->sds = FAIL;
    p->nbytes = esize;
    for (unsigned d = 0; d < rank; d++)
        p->nbytes *= size[d];
    default_fill(nt, p->fill);
    int32 id = SDselect(sd, p->sds_index);
    if (id == FAIL)
        return;
    comp_coder_t ct = COMP_CODE_NONE;
    comp_info ci;
    HDF_CHUNK_DEF cd;
    int32 flags = 0;
    unsigned char fv[16];
    if (SDgetcompinfo(id, &ct, &ci) == FAIL)
        ct = COMP_CODE_NONE;
    if (SDgetchunkinfo(id, &cd, &flags) == FAIL)
        flags = 0;
    p->stream = ct != COMP_CODE_NONE && !(flags & HDF_CHUNK);
    if (SDgetfillvalue(id, fv) != FAIL)
        memcpy(p->fill, fv, esize);
    SDendaccess(id);
}

/* Check associated file k (listed in the MHF's File_Info) and resolve its
 * pieces.  hdf_lock held. */
static int check_ahf(hpc_container *c, dhdf *d, uint32_t k, const finfo_rec *listed,
                     GError **err)
{
    const char *mhf = c->path;
    hpc_tree *tree = c->tree;
    dhdf_file *f = &d->files[k];
    hpc_source tmp = { .fd = -1 }, *src = &tmp;
    GError *e = NULL;
    /* a source of the container is watched for changes by the core (reads
     * fail once it changed); that costs a descriptor per file */
    int watched = d->nfiles <= MAX_WATCHED_FILES;
    if (watched)
        src = hpc_container_add_source(c, f->path, &e);
    else if (hpc_source_open(f->path, &tmp, &e) != HPC_OK)
        src = NULL;
    if (!src) {
        int rc = hpc_fail(err, HPC_E_CORRUPT, mhf, "File_Info.FileName", listed->off,
                          "associated file %" PRId32 " '%s' is missing: %s", f->id, f->name,
                          e->message);
        g_error_free(e);
        return rc;
    }
    f->size = src->size;
    unsigned char head[4] = { 0 };
    int isdf = src->size >= 4 && hpc_source_pread(src, head, 4, 0) == HPC_OK &&
               memcmp(head, "\x0e\x03\x13\x01", 4) == 0;
    if (!watched)
        hpc_source_close(&tmp);
    if (!isdf)
        return hpc_fail(err, HPC_E_CORRUPT, f->path, "magic", 0,
                        "associated file %" PRId32 " of %s is not an HDF4 file", f->id, mhf);
    hpc_sandbox_note(f->path);
    int32 sd = SDstart(f->path, DFACC_READ);
    if (sd == FAIL)
        return hpc_fail(err, HPC_E_CORRUPT, f->path, NULL, 0, "not a readable HDF4 file");
    char *setid = NULL;
    int32_t fid;
    uint64_t aoff[2];
    GArray *fi = NULL, *sds = NULL;
    int rc = read_set_attrs(sd, f->path, f->size, &setid, &fid, aoff, err);
    if (rc != HPC_OK)
        goto out;
    if (!setid || strcmp(setid, d->setid) != 0) {
        rc = hpc_fail(err, HPC_E_CORRUPT, f->path, DHDF_ATTR_SETID, aoff[0],
                      "'%s' does not match the main file's '%s': the file belongs to another set",
                      setid ? setid : "(none)", d->setid);
        goto out;
    }
    if (fid != f->id) {
        rc = hpc_fail(err, HPC_E_CORRUPT, f->path, DHDF_ATTR_FILEID, aoff[1],
                      "%" PRId32 ", but %s lists the file as %" PRId32, fid, mhf, f->id);
        goto out;
    }
    rc = read_vdatas(f->path, f->size, &fi, NULL, err);
    if (rc != HPC_OK)
        goto out;
    int has0 = 0, hasme = 0;
    for (guint i = 0; i < fi->len; i++) {
        has0 |= g_array_index(fi, finfo_rec, i).id == 0;
        hasme |= g_array_index(fi, finfo_rec, i).id == f->id;
    }
    if (!has0 || !hasme) {
        rc = hpc_fail(err, HPC_E_CORRUPT, f->path, VD_FILEINFO, 0,
                      "lacks the record of the main file (id 0) or of itself (id %" PRId32 ")",
                      f->id);
        goto out;
    }
    rc = list_sds(sd, f->path, &sds, err);
    if (rc != HPC_OK)
        goto out;
    for (uint32_t ai = 0; ai < d->narrays && rc == HPC_OK; ai++) {
        dhdf_array *a = &d->arrays[ai];
        for (size_t pi = 0; pi < a->npieces && rc == HPC_OK; pi++) {
            dhdf_piece *p = &a->pieces[pi];
            if (p->file != k)
                continue;
            const sds_info *s = NULL;
            for (guint j = 0; j < sds->len && !s; j++)
                if (strcmp(g_array_index(sds, sds_info, j).name, p->name) == 0)
                    s = &g_array_index(sds, sds_info, j);
            if (!s) {
                char *fn = g_strdup_printf("%s[%zu].ChunkName", a->name, pi);
                rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, p->rec_off,
                              "piece '%s' is not an SDS of associated file %" PRId32 " %s",
                              p->name, f->id, f->path);
                g_free(fn);
                break;
            }
            int same = (s->nt & DFNT_MASK) == (a->nt & DFNT_MASK) && s->rank == (int32)a->rank;
            for (unsigned dd = 0; same && dd < a->rank; dd++)
                same = (uint64_t)s->dims[dd] == a->boxes[pi].size[dd];
            if (!same) {
                char *want = shape_text(a->rank, a->boxes[pi].size);
                GString *have = g_string_new(NULL);
                for (int32 dd = 0; dd < s->rank && dd < H4_MAX_VAR_DIMS; dd++)
                    g_string_append_printf(have, "%s%d", dd ? "," : "", (int)s->dims[dd]);
                int32 off = 0, len = 0, id = SDselect(sd, s->index);
                if (id != FAIL) {
                    if (SDgetdatainfo(id, NULL, 0, 1, &off, &len) < 1 || off < 0)
                        off = 0;
                    SDendaccess(id);
                }
                rc = hpc_fail(err, HPC_E_CORRUPT, f->path, p->name, (uint64_t)off,
                              "piece of '%s' has type %d shape %s, the chunk table of %s says "
                              "type %d shape %s", a->name, (int)(s->nt & DFNT_MASK), have->str,
                              mhf, (int)a->nt, want);
                g_string_free(have, TRUE);
                g_free(want);
                break;
            }
            p->sds_index = s->index;
            piece_storage(sd, p, a->nt, a->esize, a->rank, a->boxes[pi].size);
            if (p->ino && s->nattrs > 0) {
                int32 id = SDselect(sd, s->index);
                if (id != FAIL) {
                    attrs_to_xattrs(tree, p->ino, id, s->nattrs, f->size);
                    SDendaccess(id);
                }
            }
        }
    }
out:
    finfo_free(fi);
    if (sds)
        g_array_free(sds, TRUE);
    g_free(setid);
    SDend(sd);
    return rc;
}

/* Resolve FileName against the MHF's directory. */
static char *resolve(const char *mhf, const char *name)
{
    if (g_path_is_absolute(name))
        return g_strdup(name);
    char *dir = g_path_get_dirname(mhf);
    char *p = g_build_filename(dir, name, NULL);
    g_free(dir);
    return p;
}

/* Decode the chunk table of distributed array a and check its pieces. */
static int load_pieces(hpc_container *c, dhdf *d, dhdf_array *a, ctable *ct, GError **err)
{
    const char *mhf = c->path;
    vtable *t = &ct->t;
    a->layout = (hpc_dhdf_layout){ t->order[1], t->order[2], t->order[3] };
    a->npieces = (size_t)t->nrec;
    a->boxes = g_new0(hpc_dhdf_box, a->npieces ? a->npieces : 1);
    a->pieces = g_new0(dhdf_piece, a->npieces ? a->npieces : 1);
    GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
    int rc = HPC_OK;
    for (size_t i = 0; i < a->npieces; i++) {
        char name[HPC_DHDF_MAX_NAME + 1], why[512];
        const char *field = NULL;
        int32_t fid;
        rc = hpc_dhdf_decode_record(t->buf + i * t->recsize, &a->layout, a->rank, a->dims, &fid,
                                    name, &a->boxes[i], &field, why, sizeof why);
        unsigned fno = 3;
        for (unsigned k = 0; k < 3; k++)
            if (strcmp(field ? field : "", chunk_fields[k]) == 0)
                fno = k;
        if (rc != HPC_OK) {
            char *fn = g_strdup_printf("%s[%zu].%s", a->name, i, field);
            rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, vt_off(t, (int32)i, fno), "%s", why);
            g_free(fn);
            break;
        }
        a->pieces[i].name = g_strdup(name);
        a->pieces[i].sds = FAIL;
        a->pieces[i].rec_off = vt_off(t, (int32)i, 1);
        a->pieces[i].file = UINT32_MAX;
        for (uint32_t k = 1; k < d->nfiles; k++)
            if (d->files[k].id == fid)
                a->pieces[i].file = k;
        if (a->pieces[i].file == UINT32_MAX) {
            char *fn = g_strdup_printf("%s[%zu].DHDF_FileId", a->name, i);
            rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, vt_off(t, (int32)i, 0),
                          "piece '%s' is in file %" PRId32 ", which File_Info does not list",
                          name, fid);
            g_free(fn);
            break;
        }
        if (!g_hash_table_add(names, a->pieces[i].name)) {
            char *fn = g_strdup_printf("%s[%zu].ChunkName", a->name, i);
            rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, vt_off(t, (int32)i, 1),
                          "piece name '%s' is used twice", name);
            g_free(fn);
            break;
        }
    }
    g_hash_table_destroy(names);
    if (rc != HPC_OK)
        return rc;
    size_t x = 0, y = 0;
    switch (hpc_dhdf_check_pieces(a->rank, a->dims, a->boxes, a->npieces, &a->holes, &x, &y)) {
    case HPC_DHDF_OUTSIDE: {
        char *fn = g_strdup_printf("%s[%zu].DimSizes", a->name, x);
        rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, vt_off(t, (int32)x, 2),
                      "piece %zu '%s' exceeds the array", x, a->pieces[x].name);
        g_free(fn);
        return rc;
    }
    case HPC_DHDF_OVERLAP: {
        char *o1 = shape_text(a->rank, a->boxes[x].origin), *o2 = shape_text(a->rank, a->boxes[y].origin);
        char *fn = g_strdup_printf("%s[%zu].Origins", a->name, y);
        rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, vt_off(t, (int32)y, 3),
                      "pieces %zu '%s' (origin %s) and %zu '%s' (origin %s) overlap",
                      x, a->pieces[x].name, o1, y, a->pieces[y].name, o2);
        g_free(fn);
        g_free(o1);
        g_free(o2);
        return rc;
    }
    case HPC_DHDF_FINE:
        break;
    }
    if (a->holes && !c->opts.allowholes)
        return hpc_fail(err, HPC_E_CORRUPT, mhf, a->name, t->data_off,
                        "the %zu pieces leave %" PRIu64 " of %" PRIu64 " elements uncovered "
                        "(holes); mount with -o allowholes to read them as zeros",
                        a->npieces, a->holes, a->nbytes / a->esize);
    return HPC_OK;
}

/* Build the tree.  hdf_lock held (attributes are read again). */
static int build_tree(hpc_container *c, dhdf *d, int32 mhf_sd, GError **err)
{
    hpc_tree *t = hpc_tree_new();
    int rc = HPC_OK;
    int32 nds, ngattr;
    c->tree = t;
    if (SDfileinfo(mhf_sd, &nds, &ngattr) != FAIL)
        attrs_to_xattrs(t, HPC_INO_ROOT, mhf_sd, ngattr, d->files[0].size);
    for (uint32_t ai = 0; ai < d->narrays; ai++) {
        dhdf_array *a = &d->arrays[ai];
        hpc_ino ino;
        a->space = hpc_cache_space_new();
        if (hpc_tree_add(t, HPC_INO_ROOT, a->name, HPC_MODE_FILE, a->nbytes,
                         (uint64_t)ai << 32, &ino) != HPC_OK) {
            if (a->distributed)
                return hpc_fail(err, HPC_E_CORRUPT, c->path, a->name, 0,
                                "the array's name clashes with another entry");
            g_ptr_array_add(d->warnings, g_strdup_printf("SDS '%s' not shown: its name "
                                                         "clashes with another entry", a->name));
            continue;
        }
        array_xattrs(t, ino, a->rank, a->dims, a->nt);
        /* the SDS's own attributes (for pieces: those of the MHF's SDS) */
        int32 idx = SDnametoindex(mhf_sd, a->name);
        int32 id = idx == FAIL ? FAIL : SDselect(mhf_sd, idx);
        if (id != FAIL) {
            char nm[H4_MAX_NC_NAME + 1];
            int32 rk, dm[H4_MAX_VAR_DIMS], nt, na;
            if (SDgetinfo(id, nm, &rk, dm, &nt, &na) != FAIL)
                attrs_to_xattrs(t, ino, id, na, d->files[0].size);
            SDendaccess(id);
        }
        if (!a->distributed)
            continue;
        char *dir = g_strdup_printf("%s" DHDF_PIECES_SUFFIX, a->name);
        hpc_ino dino;
        rc = hpc_tree_add(t, HPC_INO_ROOT, dir, HPC_MODE_DIR, 0, 0, &dino);
        if (rc != HPC_OK)
            rc = hpc_fail(err, HPC_E_CORRUPT, c->path, a->name, 0,
                          "'%s' clashes with another entry", dir);
        g_free(dir);
        if (rc != HPC_OK)
            return rc;
        a->piece_space = g_new0(uint64_t, a->npieces ? a->npieces : 1);
        for (size_t pi = 0; pi < a->npieces; pi++) {
            dhdf_piece *p = &a->pieces[pi];
            uint64_t nb = a->esize;
            for (unsigned dd = 0; dd < a->rank; dd++)
                nb *= a->boxes[pi].size[dd];
            a->piece_space[pi] = hpc_cache_space_new();
            rc = hpc_tree_add(t, dino, p->name, HPC_MODE_FILE, nb,
                              ((uint64_t)ai << 32) | (uint64_t)(pi + 1), &ino);
            if (rc != HPC_OK)
                return hpc_fail(err, rc, c->path, a->name, 0, "cannot add piece '%s'", p->name);
            array_xattrs(t, ino, a->rank, a->boxes[pi].size, a->nt);
            char *o = shape_text(a->rank, a->boxes[pi].origin);
            hpc_tree_add_xattr(t, ino, "user.origin", o, strlen(o));
            g_free(o);
            const dhdf_file *f = &d->files[p->file];
            hpc_tree_add_xattr(t, ino, "user.file", f->name, strlen(f->name));
            p->ino = ino;        /* its attributes come with the check of its AHF */
        }
    }
    return HPC_OK;
}

/* Arrays of the MHF (or of a plain HDF4 file): every SDS; distributed
 * when a chunk table of its name exists. */
static int collect_arrays(hpc_container *c, dhdf *d, int32 sd, GPtrArray *tables, GError **err)
{
    GArray *sds;
    int rc = list_sds(sd, c->path, &sds, err);
    if (rc != HPC_OK)
        return rc;
    d->arrays = g_new0(dhdf_array, sds->len + 1);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < sds->len && rc == HPC_OK; i++) {
        sds_info *s = &g_array_index(sds, sds_info, i);
        if (s->coord)
            continue;
        ctable *ct = NULL;
        for (guint j = 0; tables && j < tables->len && !ct; j++) {
            ctable *x = g_ptr_array_index(tables, j);
            if (strcmp(x->t.name, s->name) == 0)
                ct = x;
        }
        if (g_hash_table_contains(seen, s->name) || !name_ok(s->name) ||
            strcmp(s->name, ".info") == 0) {
            if (ct)
                rc = hpc_fail(err, HPC_E_CORRUPT, c->path, s->name, 0,
                              "distributed array name is empty, invalid or used twice");
            else
                g_ptr_array_add(d->warnings, g_strdup_printf("SDS %d '%s' not shown: "
                                                             "invalid or repeated name",
                                                             (int)s->index, s->name));
            continue;
        }
        dhdf_array *a = &d->arrays[d->narrays];
        GError *e = NULL;
        rc = sds_shape(c->path, s->name, s->rank, s->dims, s->nt, ct == NULL, &a->rank,
                       a->dims, &a->esize, &a->nbytes, &e);
        if (rc != HPC_OK) {
            if (ct) {
                g_propagate_error(err, e);
                break;
            }
            /* a plain SDS we cannot serve (its type, a negative size):
             * skip it, say so */
            g_ptr_array_add(d->warnings, g_strdup_printf("SDS '%s' not shown: %s", s->name,
                                                         e->message));
            g_clear_error(&e);
            rc = HPC_OK;
            continue;
        }
        a->name = g_strdup(s->name);
        a->nt = s->nt & DFNT_MASK;
        d->narrays++;
        g_hash_table_add(seen, a->name);
        if (ct) {
            ct->used = 1;
            a->distributed = 1;
            rc = load_pieces(c, d, a, ct, err);
        } else {
            a->npieces = 1;
            a->boxes = g_new0(hpc_dhdf_box, 1);
            a->pieces = g_new0(dhdf_piece, 1);
            memcpy(a->boxes[0].size, a->dims, sizeof a->dims);
            a->pieces[0] = (dhdf_piece){ .file = 0, .sds_index = s->index,
                                         .name = g_strdup(s->name) };
            piece_storage(sd, &a->pieces[0], a->nt, a->esize, a->rank, a->dims);
        }
    }
    for (guint j = 0; rc == HPC_OK && tables && j < tables->len; j++) {
        ctable *x = g_ptr_array_index(tables, j);
        if (!x->used)
            rc = hpc_fail(err, HPC_E_CORRUPT, c->path, x->t.name, x->t.data_off,
                          "chunk table '%s' has no SDS of that name in the main file", x->t.name);
    }
    g_hash_table_destroy(seen);
    g_array_free(sds, TRUE);
    return rc;
}

static int dhdf_open(hpc_container *c, GError **err)
{
    dhdf *d = g_new0(dhdf, 1);
    d->warnings = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *tables = g_ptr_array_new_with_free_func(ctable_free);
    GArray *finfo = NULL;
    int32 sd = FAIL;
    int rc;
    unsigned char head[4];

    hpc_source *src = hpc_container_add_source(c, c->path, err);
    if (!src) {
        rc = HPC_E_IO;
        goto out_unlocked;
    }
    rc = hpc_source_pread_field(src, head, 4, 0, "magic", err);
    if (rc != HPC_OK)
        goto out_unlocked;
    if (memcmp(head, "\x0e\x03\x13\x01", 4) != 0) {
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, "magic", 0, "not an HDF4 file");
        goto out_unlocked;
    }
    g_mutex_lock(&hdf_lock);
    uint32 maj, min, rel;
    char ver[128] = "";   /* LIBVSTR_LEN (80) + 1 is enough */
    Hgetlibversion(&maj, &min, &rel, ver);
    d->libversion = g_strdup_printf("%u.%u.%u", maj, min, rel);
    hpc_sandbox_note(c->path);
    sd = SDstart(c->path, DFACC_READ);
    if (sd == FAIL) {
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, NULL, 0, "not a readable HDF4 SD file");
        goto out;
    }
    uint64_t aoff[2];
    rc = read_set_attrs(sd, c->path, src->size, &d->setid, &d->fileid, aoff, err);
    if (rc != HPC_OK)
        goto out;
    d->role = !d->setid ? ROLE_PLAIN : d->fileid == 0 ? ROLE_MAIN : ROLE_ASSOC;
    /* decoded compressed pieces may take as much memory as the block cache */
    d->whole_max = c->opts.cache_size;
    if (d->role == ROLE_MAIN) {
        rc = read_vdatas(c->path, src->size, &finfo, tables, err);
        if (rc != HPC_OK)
            goto out;
        int has0 = 0;
        for (guint i = 0; i < finfo->len; i++)
            has0 |= g_array_index(finfo, finfo_rec, i).id == 0;
        if (!has0) {
            rc = hpc_fail(err, HPC_E_CORRUPT, c->path, VD_FILEINFO, 0,
                          "no record of the main file itself (DHDF_FileId 0)");
            goto out;
        }
        d->nfiles = finfo->len;
    } else {
        d->nfiles = 1;
    }
    d->files = g_new0(dhdf_file, d->nfiles);
    d->files[0] = (dhdf_file){ .id = d->fileid < 0 ? 0 : d->fileid, .path = g_strdup(c->path),
                               .size = src->size, .sd = FAIL };
    for (uint32_t i = 0, k = 1; finfo && i < finfo->len; i++) {
        finfo_rec *r = &g_array_index(finfo, finfo_rec, i);
        dhdf_file *f = r->id == 0 ? &d->files[0] : &d->files[k++];
        f->id = r->id;
        f->name = g_strdup(r->name);
        f->host = g_strdup(r->host);
        if (r->id != 0) {
            f->path = resolve(c->path, r->name);
            f->sd = FAIL;
        }
    }
    if (!d->files[0].name)
        d->files[0].name = g_path_get_basename(c->path);
    rc = collect_arrays(c, d, sd, d->role == ROLE_MAIN ? tables : NULL, err);
    if (rc == HPC_OK)
        rc = build_tree(c, d, sd, err);
    for (uint32_t k = 1; rc == HPC_OK && k < d->nfiles; k++) {
        const finfo_rec *listed = NULL;
        for (guint i = 0; i < finfo->len; i++)
            if (g_array_index(finfo, finfo_rec, i).id == d->files[k].id)
                listed = &g_array_index(finfo, finfo_rec, i);
        rc = check_ahf(c, d, k, listed, err);
    }
out:
    if (sd != FAIL)
        SDend(sd);
    g_mutex_unlock(&hdf_lock);
out_unlocked:
    finfo_free(finfo);
    g_ptr_array_free(tables, TRUE);
    if (rc != HPC_OK) {
        dhdf_free(d);
        return rc;
    }
    c->priv = d;
    return HPC_OK;
}

/* ---- data ------------------------------------------------------------- */

typedef struct fill_ctx {
    dhdf *d;
    const dhdf_array *a;
    unsigned rank;
    const uint64_t *dims;        /* of the view: the array, or one piece */
    const hpc_dhdf_box *boxes;
    dhdf_piece *pieces;
    size_t npieces;
    int zero;                    /* view has holes */
    uint64_t nbytes;
    uint32_t bs;
    void *dst;
    uint64_t e0;
} fill_ctx;

/* n elements of esize bytes, each a copy of one element. */
static void fill_pattern(void *buf, uint64_t n, const unsigned char *elem, uint32_t esize)
{
    size_t total = (size_t)n * esize, have = esize;
    if (total == 0)
        return;
    memcpy(buf, elem, esize);
    while (have < total) {           /* doubling copies */
        size_t k = MIN(have, total - have);
        memcpy((char *)buf + have, buf, k);
        have += k;
    }
}

/* SDreaddata of box (start, edge) of piece pc into buf (native order).
 * buf is set to the piece's fill value first, so that an element the
 * library does not write (an SDS with no data written: hdp's "No data
 * written") is never left as it was.  Where the library writes fill values
 * itself, its own win (a chunked SDS keeps the fill value it had when it
 * was made chunked).  hdf_lock held. */
static int piece_read(dhdf *d, dhdf_piece *pc, uint32_t esize, unsigned rank,
                      const uint64_t *start, const uint64_t *edge, void *buf)
{
    int32 st[HPC_DHDF_MAX_RANK], ed[HPC_DHDF_MAX_RANK];
    fill_pattern(buf, hpc_box_elements(rank, edge), pc->fill, esize);
    for (unsigned k = 0; k < rank; k++) {
        st[k] = (int32)start[k];
        ed[k] = (int32)edge[k];
    }
    int32 id = piece_sds(d, pc);
    d->files[pc->file].reads++;
    if (id == FAIL || SDreaddata(id, st, NULL, ed, buf) == FAIL) {
        hpc_log("%s: SDS '%s': SDreaddata failed", d->files[pc->file].path, pc->name);
        return HPC_E_IO;
    }
    return HPC_OK;
}

/* Drop decoded stream pieces, least recently used first, until `need`
 * more bytes fit.  hdf_lock held. */
static void whole_make_room(dhdf *d, uint64_t need)
{
    while (d->whole_bytes + need > d->whole_max) {
        dhdf_piece *lru = NULL;
        for (uint32_t i = 0; i < d->narrays; i++)
            for (size_t k = 0; k < d->arrays[i].npieces; k++) {
                dhdf_piece *x = &d->arrays[i].pieces[k];
                if (x->whole && (!lru || x->whole_use < lru->whole_use))
                    lru = x;
            }
        if (!lru)
            return;
        d->whole_bytes -= lru->nbytes;
        g_bytes_unref(lru->whole);
        lru->whole = NULL;
    }
}

/* The decoded bytes of stream piece pc (a new reference, little-endian),
 * decoding it if it is not held; NULL when it is larger than the limit or
 * cannot be read.  hdf_lock held. */
static GBytes *piece_whole(dhdf *d, dhdf_piece *pc, uint32_t esize, unsigned rank,
                           const uint64_t *size)
{
    if (pc->whole) {
        pc->whole_use = ++d->clock;
        return g_bytes_ref(pc->whole);
    }
    if (pc->nbytes > d->whole_max)
        return NULL;
    uint64_t st[HPC_DHDF_MAX_RANK] = { 0 };
    void *buf = g_malloc(pc->nbytes);
    if (piece_read(d, pc, esize, rank, st, size, buf) != HPC_OK) {
        g_free(buf);
        return NULL;
    }
    native_to_le(buf, pc->nbytes / esize, esize);
    whole_make_room(d, pc->nbytes);
    pc->whole = g_bytes_new_take(buf, pc->nbytes);
    pc->whole_use = ++d->clock;
    d->whole_bytes += pc->nbytes;
    return g_bytes_ref(pc->whole);
}

/* Whether the box with sizes edge is one run of elements in C order of an
 * array of dims: sizes 1 before some dimension, whole dimensions after it. */
static int box_contiguous(unsigned rank, const uint64_t *dims, const uint64_t *edge)
{
    unsigned j = 0;
    while (j + 1 < rank && edge[j] == 1)
        j++;
    for (unsigned d = j + 1; d < rank; d++)
        if (edge[d] != dims[d])
            return 0;
    return 1;
}

/* One box of one piece: read (start - origin, edge) into place: straight
 * into the destination when the box is contiguous there, else packed and
 * scattered. */
static int fill_box(void *p, size_t pi, const uint64_t *start, const uint64_t *edge)
{
    fill_ctx *f = p;
    dhdf_piece *pc = &f->pieces[pi];
    uint32_t es = f->a->esize;
    uint64_t st[HPC_DHDF_MAX_RANK], n = hpc_box_elements(f->rank, edge);
    uint64_t lin = 0;
    for (unsigned d = 0; d < f->rank; d++) {
        st[d] = start[d] - f->boxes[pi].origin[d];
        lin = lin * f->dims[d] + start[d];
    }
    int direct = box_contiguous(f->rank, f->dims, edge);
    unsigned char *out = direct ? (unsigned char *)f->dst + (lin - f->e0) * es
                                : g_malloc(n * es);
    int rc = HPC_OK;
    g_mutex_lock(&hdf_lock);
    GBytes *whole = pc->stream ? piece_whole(f->d, pc, es, f->rank, f->boxes[pi].size) : NULL;
    if (!whole)
        rc = piece_read(f->d, pc, es, f->rank, st, edge, out);
    g_mutex_unlock(&hdf_lock);
    if (whole) {
        hpc_boxes_gather(f->rank, f->boxes[pi].size, es, st, edge,
                         g_bytes_get_data(whole, NULL), out);
        g_bytes_unref(whole);
    } else if (rc == HPC_OK) {
        native_to_le(out, n, es);
    }
    if (rc == HPC_OK && !direct)
        hpc_boxes_scatter(f->rank, f->dims, es, start, edge, out, f->dst, f->e0);
    if (!direct)
        g_free(out);
    return rc;
}

/* Bytes [off, off+n) of the view into dst.  Elements cut by either end are
 * assembled whole in a bounce buffer (block sizes need not be multiples of
 * the element size). */
static int fill_range(fill_ctx *f, void *dst, uint64_t off, size_t n)
{
    uint32_t es = f->a->esize;
    uint64_t e0 = off / es, e1 = (off + n + es - 1) / es;
    int aligned = off % es == 0 && n % es == 0;
    void *buf = aligned ? dst : g_malloc((size_t)(e1 - e0) * es);
    if (f->zero)
        memset(buf, 0, (size_t)(e1 - e0) * es);
    f->dst = buf;
    f->e0 = e0;
    int rc = hpc_dhdf_map_range(f->rank, f->dims, f->boxes, f->npieces, e0, e1, fill_box, f);
    if (!aligned) {
        if (rc == HPC_OK)
            memcpy(dst, (char *)buf + (off - e0 * es), n);
        g_free(buf);
    }
    return rc;
}

static int fill_block(void *p, uint64_t block, void *buf, size_t *len)
{
    fill_ctx *f = p;
    uint64_t off = block * f->bs;
    if (off >= f->nbytes)
        return HPC_E_CORRUPT;
    size_t n = (size_t)MIN((uint64_t)f->bs, f->nbytes - off);
    *len = n;
    return fill_range(f, buf, off, n);
}

static int dhdf_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                     size_t *nread)
{
    dhdf *d = c->priv;
    uint64_t data;
    int rc = hpc_tree_data(c->tree, ino, &data);
    *nread = 0;
    if (rc != HPC_OK)
        return rc;
    uint32_t ai = (uint32_t)(data >> 32), pi = (uint32_t)data;
    if (ai >= d->narrays)
        return HPC_E_ISDIR;
    dhdf_array *a = &d->arrays[ai];
    hpc_dhdf_box whole = { { 0 }, { 0 } };
    fill_ctx f = { .d = d, .a = a, .rank = a->rank };
    uint64_t space;
    if (pi == 0) {
        f.dims = a->dims;
        f.boxes = a->boxes;
        f.pieces = a->pieces;
        f.npieces = a->npieces;
        f.zero = a->holes > 0;
        f.nbytes = a->nbytes;
        space = a->space;
    } else {
        if (pi > a->npieces || !a->distributed)
            return HPC_E_NOENT;
        memcpy(whole.size, a->boxes[pi - 1].size, sizeof whole.size);
        f.dims = whole.size;
        f.boxes = &whole;
        f.pieces = &a->pieces[pi - 1];
        f.npieces = 1;
        f.nbytes = a->esize * hpc_box_elements(a->rank, whole.size);
        space = a->piece_space[pi - 1];
    }
    if (off >= f.nbytes)
        return HPC_OK;
    len = (size_t)MIN((uint64_t)len, f.nbytes - off);
    hpc_cache *cache = hpc_container_cache(c);
    f.bs = hpc_cache_block_size(cache);
    /* large reads (sequential readers, the kernel's read-ahead) go straight
     * into the caller's buffer: the kernel's page cache keeps them, and a
     * copy through the block cache would cost as much as the read */
    if (len >= DIRECT_READ_MIN && len >= f.bs)
        rc = fill_range(&f, buf, off, len);
    else
        rc = hpc_cache_read(cache, space, buf, len, off, fill_block, &f);
    if (rc == HPC_OK)
        *nread = len;
    return rc;
}

/** For tests: SDreaddata calls made on file k of the set (0 = the MHF). */
uint64_t hpc_dhdf_file_reads(hpc_container *c, uint32_t k);

uint64_t hpc_dhdf_file_reads(hpc_container *c, uint32_t k)
{
    dhdf *d = c->priv;
    g_mutex_lock(&hdf_lock);
    uint64_t n = k < d->nfiles ? d->files[k].reads : 0;
    g_mutex_unlock(&hdf_lock);
    return n;
}

/* ---- references (hpc_format.chunks) ------------------------------------ */

/* Where piece pc's elements lie: one uncompressed block of its file in the
 * stored byte order, else a reason.  hdf_lock held. */
static const char *piece_block(dhdf *d, dhdf_piece *pc, int32 *off, int32 *len, int *be)
{
    int32 id = piece_sds(d, pc), rank, nt, nattrs, dims[H4_MAX_VAR_DIMS];
    char name[H4_MAX_NC_NAME];
    if (id == FAIL || SDgetinfo(id, name, &rank, dims, &nt, &nattrs) == FAIL)
        return "libhdf4 cannot select the SDS";
    if (pc->stream || SDgetdatainfo(id, NULL, 0, 0, NULL, NULL) != 1 ||
        SDgetdatainfo(id, NULL, 0, 1, off, len) != 1)
        return "its data are compressed, chunked, split in linked blocks or never written";
    if ((uint64_t)*len != pc->nbytes)
        return "its stored size differs from its shape";
    *be = !(nt & DFNT_LITEND);
    return NULL;
}

/* The lines of hdf5_refs.c's format: one piece (or a plain SDS) as
 * contiguous data; an assembled array as chunks when its pieces form a
 * regular grid of equal boxes. */
static int dhdf_chunks(hpc_container *c, hpc_ino ino, GString *out)
{
    dhdf *d = c->priv;
    uint64_t data;
    int rc = hpc_tree_data(c->tree, ino, &data);
    uint32_t ai = (uint32_t)(data >> 32), pi = (uint32_t)data;
    if (rc != HPC_OK || ai >= d->narrays)
        return rc != HPC_OK ? rc : HPC_E_NOTSUP;
    dhdf_array *a = &d->arrays[ai];
    size_t first = pi ? pi - 1 : 0, n = pi || !a->distributed ? 1 : a->npieces;
    if (first + n > a->npieces)
        return HPC_E_NOENT;
    const char *why = a->holes && !pi ? "elements no piece holds (holes)" : NULL, *grid = NULL;
    for (unsigned k = 0; !why && n > 1 && k < a->rank; k++)
        for (size_t i = 0; !why && i < n; i++)
            if (a->boxes[i].size[k] != a->boxes[0].size[k] || a->dims[k] % a->boxes[0].size[k] ||
                a->boxes[i].origin[k] % a->boxes[0].size[k])
                why = grid = "its pieces form no regular grid of equal boxes: they are the arrays of";
    g_string_append_printf(out, "layout %s\n", n > 1 ? "chunked" : "contiguous");
    g_mutex_lock(&hdf_lock);
    for (size_t i = first; !why && i < first + n; i++) {
        int32 off = 0, len = 0;
        int be = 1;
        dhdf_piece *pc = &a->pieces[i];
        if ((why = piece_block(d, pc, &off, &len, &be)))
            break;
        if (i == first)
            g_string_append_printf(out, "order %s\nfill none\n", a->esize == 1 ? "none"
                                   : be ? "be" : "le");
        if (n == 1) {
            g_string_append_printf(out, "file %s\naddr %" PRId32 " %" PRId32 "\n",
                                   d->files[pc->file].path, off, len);
            continue;
        }
        if (i == first) {
            g_string_append(out, "chunk ");
            for (unsigned k = 0; k < a->rank; k++)
                g_string_append_printf(out, "%s%" PRIu64, k ? "," : "", a->boxes[0].size[k]);
            g_string_append_c(out, '\n');
        }
        g_string_append_printf(out, "c %" PRId32 " %" PRId32 " 0 ", off, len);
        for (unsigned k = 0; k < a->rank; k++)
            g_string_append_printf(out, "%s%" PRIu64, k ? "," : "", a->boxes[i].origin[k]);
        g_string_append_printf(out, " %s\n", d->files[pc->file].path);
    }
    g_mutex_unlock(&hdf_lock);
    if (why)
        g_string_append_printf(out, "unsup %s%s%s%s\n", why, why == grid ? " " : "",
                               why == grid ? a->name : "", why == grid ? ".pieces" : "");
    return HPC_OK;
}

/* ---- .info ------------------------------------------------------------ */

static int dhdf_info(hpc_container *c, GString *o)
{
    const dhdf *d = c->priv;
    static const char *const roles[] = { "plain HDF4 file (no DHDF_SetId)", "main file",
                                         "associated file mounted alone (pieces shown as "
                                         "plain arrays; mount the main file to assemble)" };
    uint32_t ndist = 0;
    uint64_t holes = 0;
    for (uint32_t i = 0; i < d->narrays; i++) {
        ndist += (uint32_t)d->arrays[i].distributed;
        holes += d->arrays[i].holes;
    }
    g_string_append_printf(o, "hdf4_library: %s\nrole: %s\nset_id: %s\nfile_id: %" PRId32 "\n"
                           "files: %u\narrays: %u\ndistributed: %u\n",
                           d->libversion, roles[d->role], d->setid ? d->setid : "",
                           d->fileid < 0 ? 0 : d->fileid, d->nfiles, d->narrays, ndist);
    if (holes)
        g_string_append_printf(o, "holes: %" PRIu64 " elements uncovered, served as zeros "
                               "(-o allowholes)\n", holes);
    else
        g_string_append(o, "holes: none\n");
    for (guint i = 0; i < d->warnings->len; i++)
        g_string_append_printf(o, "warning: %s\n", (char *)g_ptr_array_index(d->warnings, i));
    g_string_append(o, "\narray\tkind\tdtype\tshape\tbytes\tpieces\tholes\n");
    for (uint32_t i = 0; i < d->narrays; i++) {
        const dhdf_array *a = &d->arrays[i];
        const char *dt;
        nt_info(a->nt, &dt);
        char *shape = shape_text(a->rank, a->dims);
        g_string_append_printf(o, "%s\t%s\t%s\t%s\t%" PRIu64 "\t%zu\t%" PRIu64 "\n", a->name,
                               a->distributed ? "distributed" : "plain", dt, shape, a->nbytes,
                               a->distributed ? a->npieces : 0, a->holes);
        g_free(shape);
    }
    if (d->role == ROLE_MAIN) {
        g_string_append(o, "\nFile_Info\nDHDF_FileId\tFileName\tHostName\tpath\tsize\n");
        for (uint32_t k = 0; k < d->nfiles; k++) {
            const dhdf_file *f = &d->files[k];
            g_string_append_printf(o, "%" PRId32 "\t%s\t%s\t%s\t%" PRIu64 "\n", f->id,
                                   f->name ? f->name : "", f->host ? f->host : "", f->path,
                                   f->size);
        }
    }
    for (uint32_t i = 0; i < d->narrays; i++) {
        const dhdf_array *a = &d->arrays[i];
        if (!a->distributed)
            continue;
        g_string_append_printf(o, "\nchunk table %s (class " CLASS_CHUNKS ", ChunkName width %u, "
                               "DimSizes order %u, Origins order %u)\n"
                               "piece\tDHDF_FileId\tChunkName\tDimSizes\tOrigins\n",
                               a->name, a->layout.name_w, a->layout.dims_order,
                               a->layout.orig_order);
        for (size_t k = 0; k < a->npieces; k++) {
            char *s = shape_text(a->rank, a->boxes[k].size), *og = shape_text(a->rank, a->boxes[k].origin);
            g_string_append_printf(o, "%zu\t%" PRId32 "\t%s\t%s\t%s\n", k,
                                   d->files[a->pieces[k].file].id, a->pieces[k].name, s, og);
            g_free(s);
            g_free(og);
        }
    }
    return HPC_OK;
}

const hpc_format hpc_format_dhdf = {
    .name = "dhdf",
    .sandbox_lib = "libhdf4",
    .probe = dhdf_probe,
    .open = dhdf_open,
    .close = dhdf_close,
    .read = dhdf_read,
    .info = dhdf_info,
    .chunks = dhdf_chunks,
};
