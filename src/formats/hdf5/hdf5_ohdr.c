/* hdf5_ohdr.c - object headers read without libhdf5, for the group
 * listing (hdf5_ohdr.h).  Layouts: the HDF5 file format specification,
 * "Data Object Headers" (version 1 and 2 prefixes, message headers) and
 * the dataspace, datatype, continuation and reference count messages; the
 * checks are those libhdf5 1.10 makes when it loads a header. */
#include "hdf5_ohdr.h"

#include "hpc_bytes.h"
#include "hpc_error.h"

#include <string.h>

enum {
    M_SDSPACE = 0x01, M_LINFO = 0x02, M_DTYPE = 0x03, M_FILL = 0x05, M_LAYOUT = 0x08, M_PLINE = 0x0b,
    M_ATTR = 0x0c, M_CONT = 0x10, M_STAB = 0x11, M_AINFO = 0x15, M_REFCOUNT = 0x16,
    M_LAST = 0x18,                 /* the last message type libhdf5 1.10 knows */
    M_BOGUS = 0x09,                /* libhdf5's test message: never in a real file */
};

/* message flags */
#define MF_SHARED 0x02
#define MF_DONTSHARE 0x04
#define MF_FAIL_WRITE 0x08
#define MF_MARK 0x10
#define MF_WAS_UNKNOWN 0x20
#define MF_SHAREABLE 0x40
#define MF_FAIL_ALWAYS 0x80

/* version 2 prefix flags */
#define OH_CHUNK0_SIZE 0x03
#define OH_CRT_ORDER 0x04
#define OH_PHASE_CHANGE 0x10
#define OH_TIMES 0x20
#define OH_ALL_FLAGS 0x3f

#define NOTSUP HPC_E_NOTSUP

typedef struct walk {
    const hpc_h5ohdr_file *f;
    hpc_h5ohdr *o;
    int version;
    unsigned msghdr;               /* bytes of a message header */
    unsigned nmesgs;               /* messages seen */
    unsigned v1_nmesgs;            /* version 1: the prefix's count of them all */
    int stab, linfo, dtype, space;
    uint64_t cont_off[HPC_H5OHDR_MAX_CHUNKS], cont_len[HPC_H5OHDR_MAX_CHUNKS];
    unsigned ncont;
} walk;

#define rot(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

uint32_t hpc_h5_checksum(const uint8_t *k, size_t len)
{
    uint32_t a, b, c;
    a = b = c = 0xdeadbeefu + (uint32_t)len;
    for (; len > 12; len -= 12, k += 12) {
        a += hpc_le32(k);
        b += hpc_le32(k + 4);
        c += hpc_le32(k + 8);
        a -= c; a ^= rot(c, 4); c += b;
        b -= a; b ^= rot(a, 6); a += c;
        c -= b; c ^= rot(b, 8); b += a;
        a -= c; a ^= rot(c, 16); c += b;
        b -= a; b ^= rot(a, 19); a += c;
        c -= b; c ^= rot(b, 4); b += a;
    }
    if (len == 0)
        return c;
    uint8_t tail[12] = { 0 };
    memcpy(tail, k, len);
    a += hpc_le32(tail);
    b += hpc_le32(tail + 4);
    c += hpc_le32(tail + 8);
    c ^= b; c -= rot(b, 14);
    a ^= c; a -= rot(c, 11);
    b ^= a; b -= rot(a, 25);
    c ^= b; c -= rot(b, 16);
    a ^= c; a -= rot(c, 4);
    b ^= a; b -= rot(a, 14);
    c ^= b; c -= rot(b, 24);
    return c;
}

int hpc_h5_over_file_size(uint64_t esize, int rank, const uint64_t *dims)
{
    uint64_t bytes = esize;
    int over = 0;
    for (int i = 0; i < rank && bytes && !over; i++)
        over = !hpc_mul_u64(bytes, dims[i], &bytes) || bytes > (uint64_t)INT64_MAX;
    return over;
}

/* The dataspace message: version 1 or 2, rank, flags, [class], dims. */
static int msg_space(walk *w, const uint8_t *p, size_t n)
{
    unsigned ss = w->f->sizeof_size;
    if (n < 4 || p[0] < 1 || p[0] > 2 || p[1] > HPC_H5OHDR_MAX_RANK)
        return NOTSUP;
    unsigned rank = p[1];
    int simple = rank > 0;
    size_t at = 8;                 /* version 1: 4 bytes more reserved */
    if (p[0] == 2) {
        if (p[3] > 2 || (p[3] == 1) != (rank > 0))
            return NOTSUP;         /* scalar 0, simple 1 (with dims), null 2 */
        simple = p[3] == 1;
        at = 4;
        w->o->rank = p[3] == 2 ? -2 : -1;
    } else {
        w->o->rank = -1;
    }
    if (n < at + (size_t)rank * ss * ((p[2] & 1) ? 2 : 1))
        return NOTSUP;
    if (simple)
        w->o->rank = (int)rank;
    for (unsigned i = 0; i < rank; i++)
        w->o->dims[i] = hpc_load_uint(p + at + (size_t)i * ss, ss, FALSE);
    for (unsigned i = 0; (p[2] & 1) && i < rank; i++) {
        /* H5S_UNLIMITED is all ones in 8 bytes; whether all ones in
         * fewer bytes is unlimited is libhdf5's to say */
        uint64_t max = hpc_load_uint(p + at + (size_t)(rank + i) * ss, ss, FALSE);
        if (ss < 8 && max == (UINT64_C(1) << 8 * ss) - 1)
            return NOTSUP;
        w->o->unlim |= (uint32_t)(max == UINT64_MAX) << i;
    }
    return HPC_OK;
}

/* The datatype message: version and class, class bits, size.  The size
 * libhdf5 gives a dataset's type (H5Dget_type) is the size in memory,
 * which differs from the file's for variable-length data, also inside
 * compounds and arrays, and for references: unknown for those classes. */
static int msg_dtype(walk *w, const uint8_t *p, size_t n)
{
    enum { T_STRING = 3, T_COMPOUND = 6, T_REFERENCE, T_ENUM, T_VLEN, T_ARRAY };
    if (n < 8 || (p[0] >> 4) < 1 || (p[0] >> 4) > 4 || (p[0] & 0x0f) > T_ARRAY)
        return NOTSUP;
    unsigned cls = p[0] & 0x0f;
    int mem = cls == T_COMPOUND || cls == T_REFERENCE || cls == T_VLEN || cls == T_ARRAY;
    w->o->tsize = mem ? 0 : hpc_le32(p + 4);
    w->o->seq = cls == T_VLEN && (p[1] & 0x0f) == 0;   /* class bits: 0 sequence, 1 string */
    w->o->tclass = cls == T_VLEN && (p[1] & 0x0f) == 1 ? T_STRING : (int)cls;
    if (cls == T_COMPOUND || cls == T_ARRAY)
        w->o->seq = -1;            /* a directory when it holds variable-length data */
    return HPC_OK;
}

/* The attribute message (versions 1 to 3): its name, which libhdf5 reads
 * up to its NUL. */
static int msg_attr(walk *w, const uint8_t *p, size_t n)
{
    const char *const *names = w->f->attr_names;
    size_t at = n >= 1 && p[0] == 3 ? 9 : 8;      /* version 3: the name's encoding */
    if (n < at || p[0] < 1 || p[0] > 3)
        return NOTSUP;
    size_t len = hpc_le16(p + 2), k;
    if (len == 0 || len > n - at || (k = strnlen((const char *)p + at, len)) == len)
        return NOTSUP;
    for (unsigned i = 0; names && i < 32 && names[i]; i++)
        if (strlen(names[i]) == k && memcmp(names[i], p + at, k) == 0)
            w->o->attrs |= UINT32_C(1) << i;
    return HPC_OK;
}

/* The attribute info message: dense storage when its fractal heap's
 * address is defined (not all ones). */
static int msg_ainfo(walk *w, const uint8_t *p, size_t n)
{
    unsigned sa = w->f->sizeof_addr;
    size_t at = n >= 2 && (p[1] & 1) ? 4 : 2;   /* flag 1: the largest creation index */
    if (n < at + sa || p[0] != 0)
        return NOTSUP;
    uint64_t undef = sa < 8 ? (UINT64_C(1) << 8 * sa) - 1 : UINT64_MAX;
    w->o->attrs_hidden |= hpc_load_uint(p + at, sa, FALSE) != undef;
    return HPC_OK;
}

static int msg_cont(walk *w, const uint8_t *p, size_t n)
{
    unsigned sa = w->f->sizeof_addr, ss = w->f->sizeof_size;
    if (n < sa + ss || w->ncont >= HPC_H5OHDR_MAX_CHUNKS)
        return NOTSUP;
    uint64_t addr = hpc_load_uint(p, sa, FALSE), len = hpc_load_uint(p + sa, ss, FALSE);
    if (!hpc_add_u64(w->f->base, addr, &w->cont_off[w->ncont]) || len == 0 ||
        len > HPC_H5OHDR_MAX_CHUNK)
        return NOTSUP;
    w->cont_len[w->ncont++] = len;
    return HPC_OK;
}

/* A little-endian integer of n bytes (1..8). */
static uint64_t le_n(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << 8 * i;
    return v;
}

/* A version 4 chunked layout message: version, class 2, flags, rank,
 * bytes a dim, the dims, the index type, its parameters, its address. */
static void msg_layout(walk *w, const uint8_t *p, size_t n)
{
    static const unsigned params[] = { 0, 0, 0, 1, 5, 6 };   /* by index type */
    unsigned sa = w->f->sizeof_addr;
    if (n < 5 || p[0] != 4 || p[1] != 2 || p[3] < 2 || p[3] > HPC_H5OHDR_MAX_RANK + 1 ||
        p[4] < 1 || p[4] > 8)
        return;
    size_t at = 5 + (size_t)p[3] * p[4];
    if (n < at + 1 || p[at] < 1 || p[at] > 5)
        return;
    unsigned kind = p[at], more = params[kind];
    if (kind == 1 && (p[2] & 2))        /* a filtered single chunk: size, mask */
        more = w->f->sizeof_size + 4;
    if (n < at + 1 + more + sa)
        return;
    for (unsigned i = 0; i < p[3]; i++)
        w->o->clayout_dims[i] = le_n(p + 5 + (size_t)i * p[4], p[4]);
    w->o->clayout_rank = p[3];
    w->o->cindex = (int)kind;
    w->o->cindex_addr = hpc_load_uint(p + at + 1 + more, sa, FALSE);
}

/* One message: what the type and size need, and libhdf5's refusals. */
static int message(walk *w, unsigned type, unsigned flags, const uint8_t *p, size_t n)
{
    int sharable = type == M_SDSPACE || type == M_DTYPE || type == M_FILL || type == M_PLINE ||
                   type == M_ATTR;
    w->nmesgs++;
    if (type > M_LAST || type == M_BOGUS || (flags & (MF_WAS_UNKNOWN | MF_FAIL_ALWAYS)) ||
        ((flags & MF_SHARED) && (flags & MF_DONTSHARE)) || ((flags & MF_SHAREABLE) && !sharable))
        return NOTSUP;
    switch (type) {
    case M_SDSPACE:
        if (w->space++ || (flags & MF_SHARED))
            return NOTSUP;
        return msg_space(w, p, n);
    case M_DTYPE:
        if (w->dtype++)
            return NOTSUP;
        if (flags & MF_SHARED) {
            w->o->seq = -1;        /* committed: size and class unknown */
            w->o->tclass = -1;
            return HPC_OK;
        }
        return msg_dtype(w, p, n);
    case M_ATTR:
        if (flags & MF_SHARED) {
            w->o->attrs_hidden = 1;
            return HPC_OK;
        }
        return msg_attr(w, p, n);
    case M_AINFO:
        return msg_ainfo(w, p, n);
    case M_LINFO:
        w->linfo = 1;
        return HPC_OK;
    case M_STAB:
        w->stab = 1;
        return HPC_OK;
    case M_CONT:
        return msg_cont(w, p, n);
    case M_LAYOUT:
        /* a virtual dataset's extent is computed from its sources at open */
        if (n >= 2 && p[0] >= 3 && p[1] == 3)
            return NOTSUP;
        msg_layout(w, p, n);
        return HPC_OK;
    case M_REFCOUNT:
        if (w->version == 1 || n < 5 || p[0] != 0)
            return NOTSUP;
        w->o->nlink = hpc_le32(p + 1);
        return HPC_OK;
    default:
        return HPC_OK;
    }
}

/* The messages of one chunk, n bytes at p. */
static int messages(walk *w, const uint8_t *p, size_t n)
{
    size_t at = 0;
    while (n - at >= w->msghdr) {
        unsigned type, size, flags;
        if (w->version == 1) {
            type = hpc_le16(p + at);
            size = hpc_le16(p + at + 2);
            flags = p[at + 4];
            if (size % 8)
                return NOTSUP;     /* libhdf5: "message not aligned" */
        } else {
            type = p[at];
            size = hpc_le16(p + at + 1);
            flags = p[at + 3];
        }
        at += w->msghdr;
        if (size > n - at)
            return NOTSUP;         /* libhdf5: "corrupt object header" */
        int rc = message(w, type, flags, p + at, size);
        if (rc != HPC_OK)
            return rc;
        at += size;
    }
    /* a gap shorter than a message header ends version 2 chunks only */
    return at == n || w->version == 2 ? HPC_OK : NOTSUP;
}

/* Chunk image of len bytes at off; version 2: signature sig first and a
 * checksum last; version 1: messages only.  skip: prefix bytes. */
static int chunk(walk *w, hpc_h5ohdr_read_fn rd, void *ctx, uint64_t off, uint64_t len,
                 const char *sig, size_t skip)
{
    const uint8_t *p;
    if (len > HPC_H5OHDR_MAX_CHUNK || rd(ctx, off, (size_t)len, &p) != HPC_OK)
        return NOTSUP;
    if (w->version == 1)
        return messages(w, p + skip, (size_t)len - skip);
    if (len < skip + 4 || memcmp(p, sig, 4) != 0 ||
        hpc_h5_checksum(p, (size_t)len - 4) != hpc_le32(p + len - 4))
        return NOTSUP;
    return messages(w, p + skip, (size_t)len - skip - 4);
}

/* The prefix at off: version, link count, chunk 0 (*skip: prefix bytes,
 * *len: prefix, messages and checksum). */
static int prefix(walk *w, hpc_h5ohdr_read_fn rd, void *ctx, uint64_t off, size_t *skip,
                  uint64_t *len)
{
    const uint8_t *p;
    if (rd(ctx, off, 16, &p) != HPC_OK)
        return NOTSUP;
    if (memcmp(p, "OHDR", 4) == 0) {
        unsigned flags = p[5], width = 1u << (flags & OH_CHUNK0_SIZE);
        size_t at = 6 + ((flags & OH_TIMES) ? 16 : 0) + ((flags & OH_PHASE_CHANGE) ? 4 : 0);
        if (p[4] != 2 || (flags & ~OH_ALL_FLAGS) || rd(ctx, off, at + width, &p) != HPC_OK)
            return NOTSUP;
        uint64_t size0 = hpc_load_uint(p + at, width, FALSE);
        w->version = 2;
        w->msghdr = (flags & OH_CRT_ORDER) ? 6 : 4;
        w->o->nlink = 1;
        *skip = at + width;
        return hpc_add_u64(size0, *skip + 4, len) ? HPC_OK : NOTSUP;
    }
    unsigned nmesgs = hpc_le16(p + 2);
    uint32_t size0 = hpc_le32(p + 8);
    if (p[0] != 1 || (nmesgs > 0 && size0 < 8) || (nmesgs == 0 && size0 > 0))
        return NOTSUP;
    w->version = 1;
    w->msghdr = 8;
    w->v1_nmesgs = nmesgs;
    w->o->nlink = hpc_le32(p + 4);
    *skip = 16;
    *len = 16 + (uint64_t)size0;
    return HPC_OK;
}

int hpc_h5ohdr_read(const hpc_h5ohdr_file *f, uint64_t addr, hpc_h5ohdr_read_fn rd, void *ctx,
                    hpc_h5ohdr *out)
{
    walk w = { .f = f, .o = out };
    uint64_t off, len;
    size_t skip;
    memset(out, 0, sizeof *out);
    if (!hpc_add_u64(f->base, addr, &off) || prefix(&w, rd, ctx, off, &skip, &len) != HPC_OK)
        return NOTSUP;
    if (chunk(&w, rd, ctx, off, len, "OHDR", skip) != HPC_OK)
        return NOTSUP;
    for (unsigned i = 0; i < w.ncont; i++)
        if (chunk(&w, rd, ctx, w.cont_off[i], w.cont_len[i], "OCHK", w.version == 1 ? 0 : 4) != HPC_OK)
            return NOTSUP;
    if (w.version == 1 && w.nmesgs != w.v1_nmesgs)
        return NOTSUP;             /* libhdf5: "incorrect # of messages" */
    /* libhdf5's order: group, dataset, committed datatype */
    if (w.stab || w.linfo)
        out->kind = HPC_H5OBJ_GROUP;
    else if (w.dtype && w.space)
        out->kind = HPC_H5OBJ_DATASET;
    else if (w.dtype)
        out->kind = HPC_H5OBJ_DATATYPE;
    else
        return NOTSUP;             /* libhdf5: "unable to determine object type" */
    return HPC_OK;
}
