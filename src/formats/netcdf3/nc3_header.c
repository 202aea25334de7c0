/* nc3_header.c - the netCDF-3 header (CDF-1 classic, CDF-2 64-bit offset,
 * CDF-5 64-bit data): magic, numrecs, then the lists of dimensions, global
 * attributes and variables, all big-endian.  CDF-5 widens every count and
 * size to 64 bits, CDF-2 and CDF-5 the data offsets.
 *
 * Every count is checked against the bytes left in the file before it is
 * used and the arrays grow only as entries are really read, so memory is
 * bounded by the header's real bytes.  The layout (record size, where
 * records start) follows the rules libnetcdf applies: each variable's size
 * rounded up to 4 bytes, except the record size of a file whose one
 * record variable fills a record alone.  docs/netcdf3.md. */
#include "nc3_int.h"

#define TAG_DIMENSION 0x0a
#define TAG_VARIABLE 0x0b
#define TAG_ATTRIBUTE 0x0c

static const struct {
    unsigned size;
    const char *dtype, *name;
} types[NC3_NTYPES] = {
    { 0, NULL, NULL },
    { 1, "|i1", "byte" }, { 1, "|S1", "char" }, { 2, "<i2", "short" },
    { 4, "<i4", "int" }, { 4, "<f4", "float" }, { 8, "<f8", "double" },
    { 1, "|u1", "ubyte" }, { 2, "<u2", "ushort" }, { 4, "<u4", "uint" },
    { 8, "<i8", "int64" }, { 8, "<u8", "uint64" },
};

unsigned nc3_type_size(uint32_t type)
{
    return type < NC3_NTYPES ? types[type].size : 0;
}

const char *nc3_type_dtype(uint32_t type)
{
    return type < NC3_NTYPES ? types[type].dtype : NULL;
}

const char *nc3_type_name(uint32_t type)
{
    return type < NC3_NTYPES ? types[type].name : "?";
}

/* A cursor over the header bytes read so far. */
typedef struct cur {
    const unsigned char *buf;
    size_t len;
    uint64_t pos, size;
    int version;
    const char *path;
    GError **err;
} cur;

static uint64_t pad4(uint64_t n)
{
    return (n + 3) & ~UINT64_C(3);
}

/* n bytes at the cursor, for field; NULL with the error set when they lie
 * past the file (or *rc = HPC_E_RANGE: past what was read). */
static const unsigned char *take(cur *c, uint64_t n, const char *field, int *rc)
{
    if (n > c->size || c->pos > c->size - n) {
        *rc = hpc_fail(c->err, HPC_E_CORRUPT, c->path, field, c->pos,
                       "%" PRIu64 " bytes needed, but the file (%" PRIu64 " bytes) ends first",
                       n, c->size);
        return NULL;
    }
    if (c->pos + n > c->len) {
        *rc = HPC_E_RANGE;
        return NULL;
    }
    const unsigned char *p = c->buf + c->pos;
    c->pos += n;
    *rc = HPC_OK;
    return p;
}

static int get32(cur *c, const char *field, uint64_t *v)
{
    int rc;
    const unsigned char *p = take(c, 4, field, &rc);
    if (p)
        *v = hpc_be32(p);
    return rc;
}

/* A big-endian unsigned integer of w bytes. */
static int get_uint(cur *c, unsigned w, const char *field, uint64_t *v)
{
    int rc;
    const unsigned char *p = take(c, w, field, &rc);
    if (p)
        *v = hpc_load_uint(p, w, TRUE);
    return rc;
}

/* A count or size: 64 bits in CDF-5, else 32. */
static int get_count(cur *c, const char *field, uint64_t *v)
{
    return get_uint(c, c->version == 5 ? 8 : 4, field, v);
}

/* A data offset: 32 bits in CDF-1, else 64. */
static int get_offset(cur *c, const char *field, uint64_t *v)
{
    return get_uint(c, c->version == 1 ? 4 : 8, field, v);
}

/* A count of entries of at least min bytes each: no more than the bytes
 * left in the file can hold. */
static int get_nelems(cur *c, const char *field, unsigned min, uint64_t *n)
{
    uint64_t at = c->pos;
    int rc = get_count(c, field, n);
    if (rc == HPC_OK && *n > (c->size - c->pos) / min)
        return hpc_fail(c->err, HPC_E_CORRUPT, c->path, field, at,
                        "%" PRIu64 " entries cannot fit in the %" PRIu64
                        " bytes left in the file", *n, c->size - c->pos);
    return rc;
}

/* A name: its length, its bytes, padding to 4.  libnetcdf's names end at
 * a NUL (nc_rename to a shorter name leaves the old length in place). */
static int get_name(cur *c, nc3_hdr *h, const char *field, const char **name)
{
    uint64_t n;
    int rc = get_nelems(c, field, 1, &n);
    const unsigned char *p = rc == HPC_OK ? take(c, pad4(n), field, &rc) : NULL;
    if (!p)
        return rc;
    *name = g_string_chunk_insert_len(h->names, (const char *)p, (gssize)strnlen((const char *)p, n));
    return HPC_OK;
}

/* A list's tag and count: ABSENT (two zeros) or the expected tag. */
static int get_list(cur *c, uint32_t want, const char *field, unsigned min, uint64_t *n)
{
    uint64_t at = c->pos, tag = 0;
    int rc = get32(c, field, &tag);
    if (rc == HPC_OK)
        rc = get_nelems(c, field, min, n);
    if (rc != HPC_OK)
        return rc;
    if (tag == 0 && *n == 0)
        return HPC_OK;
    if (tag != want)
        return hpc_fail(c->err, HPC_E_CORRUPT, c->path, field, at,
                        "tag 0x%" PRIx64 " with %" PRIu64 " entries is neither 0x%x nor ABSENT",
                        tag, *n, want);
    return HPC_OK;
}

static int get_type(cur *c, const char *field, uint32_t *type)
{
    uint64_t at = c->pos, t = 0;
    int rc = get32(c, field, &t);
    if (rc != HPC_OK)
        return rc;
    if (t < 1 || t >= NC3_NTYPES || (t > 6 && c->version != 5))
        return hpc_fail(c->err, HPC_E_CORRUPT, c->path, field, at,
                        "%" PRIu64 " is no nc_type of CDF-%d", t, c->version);
    *type = (uint32_t)t;
    return HPC_OK;
}

static void *keep(nc3_hdr *h, void *p)
{
    g_ptr_array_add(h->allocs, p);
    return p;
}

static int get_dims(cur *c, nc3_hdr *h)
{
    uint64_t n;
    unsigned w = c->version == 5 ? 8 : 4;
    int rc = get_list(c, TAG_DIMENSION, "dim_list", 2 * w, &n);
    if (rc != HPC_OK)
        return rc;
    GArray *a = g_array_sized_new(FALSE, TRUE, sizeof(nc3_dim), (guint)MIN(n, 1024));
    for (uint64_t i = 0; rc == HPC_OK && i < n; i++) {
        nc3_dim d = { 0 };
        uint64_t at;
        rc = get_name(c, h, "dim name", &d.name);
        at = c->pos;
        if (rc == HPC_OK)
            rc = get_count(c, "dim_length", &d.len);
        if (rc == HPC_OK && d.len == 0 && h->recdim >= 0)
            rc = hpc_fail(c->err, HPC_E_CORRUPT, c->path, "dim_length", at,
                          "dimension %" PRIu64 " is a second unlimited dimension", i);
        if (rc == HPC_OK && d.len == 0)
            h->recdim = (int32_t)i;
        g_array_append_val(a, d);
    }
    h->ndims = a->len;
    h->dims = keep(h, g_array_free(a, FALSE));
    return rc;
}

static int get_atts(cur *c, nc3_hdr *h, nc3_att **out, uint32_t *count)
{
    uint64_t n;
    unsigned w = c->version == 5 ? 8 : 4;
    int rc = get_list(c, TAG_ATTRIBUTE, "att_list", 4 + 2 * w, &n);
    if (rc != HPC_OK)
        return rc;
    GArray *a = g_array_sized_new(FALSE, TRUE, sizeof(nc3_att), (guint)MIN(n, 1024));
    for (uint64_t i = 0; rc == HPC_OK && i < n; i++) {
        nc3_att t = { 0 };
        uint64_t bytes;
        rc = get_name(c, h, "attribute name", &t.name);
        if (rc == HPC_OK)
            rc = get_type(c, "attribute nc_type", &t.type);
        if (rc == HPC_OK)
            rc = get_nelems(c, "attribute nelems", nc3_type_size(t.type), &t.nelems);
        bytes = rc == HPC_OK ? t.nelems * nc3_type_size(t.type) : 0;
        if (rc == HPC_OK)    /* an offset into buf until the copy is made */
            t.values = (const unsigned char *)(uintptr_t)c->pos;
        if (rc == HPC_OK)
            take(c, pad4(bytes), "attribute values", &rc);
        g_array_append_val(a, t);
    }
    *count = a->len;
    *out = keep(h, g_array_free(a, FALSE));
    return rc;
}

static int get_var(cur *c, nc3_hdr *h, nc3_var *v)
{
    unsigned w = c->version == 5 ? 8 : 4;
    uint64_t nd;
    int rc = get_name(c, h, "variable name", &v->name);
    if (rc == HPC_OK)
        rc = get_nelems(c, "variable dimensions", w, &nd);
    if (rc != HPC_OK)
        return rc;
    v->dimids = keep(h, g_new0(uint32_t, nd ? nd : 1));
    for (uint64_t i = 0; rc == HPC_OK && i < nd; i++) {
        uint64_t at = c->pos, id;
        rc = get_count(c, "dimid", &id);
        if (rc == HPC_OK && id >= h->ndims)
            rc = hpc_fail(c->err, HPC_E_CORRUPT, c->path, "dimid", at,
                          "dimension %" PRIu64 " of %u dimensions", id, h->ndims);
        if (rc == HPC_OK && (int64_t)id == h->recdim && i > 0)
            rc = hpc_fail(c->err, HPC_E_CORRUPT, c->path, "dimid", at,
                          "the unlimited dimension is not the first of variable '%s'", v->name);
        v->dimids[i] = (uint32_t)id;
        v->ndims = (uint32_t)i + 1;
    }
    uint64_t vsize;
    if (rc == HPC_OK)
        rc = get_atts(c, h, &v->atts, &v->natts);
    if (rc == HPC_OK)
        rc = get_type(c, "variable nc_type", &v->type);
    if (rc == HPC_OK)
        rc = get_count(c, "vsize", &vsize);   /* libnetcdf computes it anew */
    v->entry = c->pos;
    return rc == HPC_OK ? get_offset(c, "begin", &v->begin) : rc;
}

static int get_vars(cur *c, nc3_hdr *h)
{
    uint64_t n;
    unsigned w = c->version == 5 ? 8 : 4;
    /* name, ndims, empty att_list, nc_type, vsize, begin */
    int rc = get_list(c, TAG_VARIABLE, "var_list", 4 * w + 8 + (c->version == 1 ? 4 : 8), &n);
    if (rc != HPC_OK)
        return rc;
    GArray *a = g_array_sized_new(FALSE, TRUE, sizeof(nc3_var), (guint)MIN(n, 1024));
    for (uint64_t i = 0; rc == HPC_OK && i < n; i++) {
        nc3_var v = { 0 };
        rc = get_var(c, h, &v);
        g_array_append_val(a, v);
    }
    h->nvars = a->len;
    h->vars = keep(h, g_array_free(a, FALSE));
    return rc;
}

/* ---- layout --------------------------------------------------------------- */

uint64_t nc3_var_bytes(const nc3_hdr *h, const nc3_var *v)
{
    return v->is_rec ? v->slab * h->numrecs : v->slab;
}

/* Each variable's bytes per record (or in all), the record size. */
static int shapes(nc3_hdr *h, const char *path, GError **err)
{
    uint64_t first_rec = 0;
    for (uint32_t i = 0; i < h->nvars; i++) {
        nc3_var *v = &h->vars[i];
        v->is_rec = v->ndims > 0 && (int64_t)v->dimids[0] == h->recdim;
        uint64_t n = nc3_type_size(v->type);
        for (uint32_t d = v->is_rec ? 1 : 0; d < v->ndims; d++)
            if (!hpc_mul_u64(n, h->dims[v->dimids[d]].len, &n) || n > UINT64_MAX - 3)
                return hpc_fail(err, HPC_E_CORRUPT, path, "vsize", v->entry,
                                "variable '%s' holds more than 2^64 bytes", v->name);
        v->slab = n;
        if (!v->is_rec)
            continue;
        if (h->nrecvars++ == 0) {
            first_rec = n;
            h->begin_rec = v->begin;
        }
        if (!hpc_add_u64(h->recsize, pad4(n), &h->recsize))
            return hpc_fail(err, HPC_E_CORRUPT, path, "vsize", v->entry,
                            "a record holds more than 2^64 bytes");
    }
    /* a record of one variable is not padded */
    if (h->nrecvars && h->recsize == pad4(first_rec))
        h->recsize = first_rec;
    return HPC_OK;
}

static int numrecs_of(nc3_hdr *h, uint64_t size)
{
    if (!h->streaming)
        return HPC_OK;
    h->numrecs = 0;
    if (h->recsize && size > h->begin_rec)
        h->numrecs = (size - h->begin_rec) / h->recsize;
    return HPC_OK;
}

/* Where variable v's data end (of its last record), in *end. */
static gboolean data_end(const nc3_hdr *h, const nc3_var *v, uint64_t *end)
{
    if (!v->is_rec)
        return hpc_add_u64(v->begin, v->slab, end);
    if (h->numrecs == 0) {          /* no byte of it in the file yet */
        *end = 0;
        return TRUE;
    }
    uint64_t last;
    return hpc_muladd_u64(h->numrecs - 1, h->recsize, v->begin, &last) &&
           hpc_add_u64(last, v->slab, end);
}

/* Variables in header order (fixed ones, then the record ones inside a
 * record) start after the header and after each other and, for the
 * records numrecs says, end inside the file. */
static int check_data(const nc3_hdr *h, uint64_t size, const char *path, GError **err)
{
    uint64_t fixed_end = h->header_len, rec_end = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < h->nvars; i++) {
            const nc3_var *v = &h->vars[i];
            uint64_t *prev = pass ? &rec_end : &fixed_end, end;
            if (v->is_rec != pass)
                continue;
            if (pass && rec_end == 0)
                rec_end = fixed_end;
            if (v->begin < *prev)
                return hpc_fail(err, HPC_E_CORRUPT, path, "begin", v->entry,
                                "variable '%s' starts at %" PRIu64 ", inside the %s before "
                                "(which ends at %" PRIu64 ")", v->name, v->begin,
                                *prev == h->header_len ? "header" : "variable", *prev);
            if (!data_end(h, v, &end) || end > size)
                return hpc_fail(err, HPC_E_CORRUPT, path, pass ? "numrecs" : "begin",
                                pass ? 4 : v->entry,
                                "variable '%s' (%" PRIu64 " bytes%s at %" PRIu64 ") ends "
                                "beyond the end of the file (%" PRIu64 " bytes)", v->name,
                                v->slab, pass ? " a record" : "", v->begin, size);
            *prev = v->begin + pad4(v->slab);
        }
    }
    return HPC_OK;
}

/* Names a mount cannot show as /<name>. */
static void hide(nc3_hdr *h)
{
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (uint32_t i = 0; i < h->nvars; i++) {
        nc3_var *v = &h->vars[i];
        if (v->hidden)
            continue;
        if (!v->name[0] || strchr(v->name, '/') || !strcmp(v->name, ".") ||
            !strcmp(v->name, "..") || !strcmp(v->name, ".info"))
            v->hidden = "its name cannot be a file name";
        else if (!g_hash_table_add(seen, (gpointer)v->name))
            v->hidden = "a variable before it has the same name";
    }
    g_hash_table_destroy(seen);
}

/* ---- the whole header ------------------------------------------------------- */

void nc3_hdr_free(nc3_hdr *h)
{
    if (!h)
        return;
    g_ptr_array_free(h->allocs, TRUE);
    g_string_chunk_free(h->names);
    g_free(h->raw);
    g_free(h);
}

static int get_magic(cur *c, nc3_hdr *h)
{
    int rc;
    const unsigned char *p = take(c, 4, "magic", &rc);
    if (!p)
        return rc;
    if (memcmp(p, "CDF", 3) != 0 || (p[3] != 1 && p[3] != 2 && p[3] != 5))
        return hpc_fail(c->err, HPC_E_CORRUPT, c->path, "magic", 0,
                        "not 'CDF' and version 1, 2 or 5");
    c->version = h->version = p[3];
    uint64_t at = c->pos, nr;
    if ((rc = get_count(c, "numrecs", &nr)) != HPC_OK)
        return rc;
    h->streaming = nr == (c->version == 5 ? NC3_STREAMING64 : NC3_STREAMING32);
    if (c->version == 5 && !h->streaming && nr > INT64_MAX)
        return hpc_fail(c->err, HPC_E_CORRUPT, c->path, "numrecs", at,
                        "%" PRIu64 " is negative", nr);
    h->numrecs = h->streaming ? 0 : nr;
    return HPC_OK;
}

/* Point the attributes' values (offsets into buf) into h->raw. */
static void rebase(nc3_hdr *h, nc3_att *a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        a[i].values = h->raw + (uintptr_t)a[i].values;
}

int nc3_parse(const unsigned char *buf, size_t len, uint64_t size, const char *path,
              nc3_hdr **out, GError **err)
{
    nc3_hdr *h = g_new0(nc3_hdr, 1);
    cur c = { buf, len, 0, size, 1, path, err };
    h->recdim = -1;
    h->names = g_string_chunk_new(1024);
    h->allocs = g_ptr_array_new_with_free_func(g_free);
    int rc = get_magic(&c, h);
    if (rc == HPC_OK)
        rc = get_dims(&c, h);
    if (rc == HPC_OK)
        rc = get_atts(&c, h, &h->gatts, &h->ngatts);
    if (rc == HPC_OK)
        rc = get_vars(&c, h);
    h->header_len = c.pos;
    if (rc == HPC_OK)
        rc = shapes(h, path, err);
    if (rc == HPC_OK)
        rc = numrecs_of(h, size);
    if (rc == HPC_OK)
        rc = check_data(h, size, path, err);
    if (rc != HPC_OK) {
        nc3_hdr_free(h);
        return rc;
    }
    h->raw = g_memdup2(buf, h->header_len);
    rebase(h, h->gatts, h->ngatts);
    for (uint32_t i = 0; i < h->nvars; i++)
        rebase(h, h->vars[i].atts, h->vars[i].natts);
    hide(h);
    *out = h;
    return HPC_OK;
}
