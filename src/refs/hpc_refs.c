/* hpc_refs.c - kerchunk-style references of a tree (hpc_refs.h).
 *
 * An array's chunks come from where its bytes lie: the extents of
 * hpc_mount_map (verbatim bytes), split into a regular grid along the
 * first axis, or the reader's chunk table (hpc_mount_chunks: HDF5 chunked
 * datasets, with their codecs).  Bytes the reader computes are written
 * inline up to the threshold, else the array is listed as not covered.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hpc_bytes.h"
#include "hpc_json.h"
#include "hpc_refs.h"
#include "hpc_refs_int.h"

#define MAX_DIMS HPC_REFS_MAX_DIMS
#define MAP_BATCH 64
#define BIG_CHUNK (32u << 20)      /* one contiguous extent is cut into chunks of ~this */
#define MAX_LINKED (1u << 20)  /* nodes walked again through links to directories */
#define NOT_NETCDF "netCDF-4 has no type for it (libnetcdf, and xarray on the file, " \
    "show no variable for it)"
#define BLOCK_NOTE "the extents of NAME in its files form no regular chunk grid (e.g. " \
    "partly filled chunks mid-stream, or a short last chunk at the end of a file): one " \
    "array per extent, NAME.blockK, starting at row hpcmount_first_row"

/* ---- JSON text ---------------------------------------------------------- */

static void key_of(GString *o, const char *prefix, const char *name)
{
    g_string_truncate(o, 0);
    if (prefix[0])
        g_string_append_printf(o, "%s/", prefix);
    g_string_append(o, name);
}

static void ref_begin(hpc_refs *r, const char *prefix, const char *name)
{
    GString *k = g_string_new(NULL);
    key_of(k, prefix, name);
    if (r->nrefs++)
        g_string_append(r->refs, ",\n");
    hpc_json_str(r->refs, k->str);
    g_string_append(r->refs, ": ");
    g_string_free(k, TRUE);
}

/** One metadata key whose value is the JSON document text. */
void hpc_refs_text(hpc_refs *r, const char *prefix, const char *name, const char *text)
{
    ref_begin(r, prefix, name);
    hpc_json_str(r->refs, text);
}

/** The template name ("u", "u1", ...) of a source file, made on first use. */
static const char *template_of(hpc_refs *r, const char *path)
{
    const char *t = g_hash_table_lookup(r->tmpl, path);
    if (t)
        return t;
    char *name = r->tmpl_paths->len ? g_strdup_printf("u%u", r->tmpl_paths->len) : g_strdup("u");
    g_ptr_array_add(r->tmpl_paths, g_strdup(path));
    g_hash_table_insert(r->tmpl, g_strdup(path), name);
    return name;
}

/** One chunk as a byte range of file path. */
void hpc_refs_range(hpc_refs *r, const char *prefix, const char *name, const char *path,
                    uint64_t off, uint64_t len)
{
    const char *t = template_of(r, path);
    ref_begin(r, prefix, name);
    g_string_append_printf(r->refs, "[\"{{%s}}\", %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]",
                           t, off, len);
    r->nranges++;
}

/** One chunk inline. */
void hpc_refs_inline(hpc_refs *r, const char *prefix, const char *name, const void *buf,
                     size_t len)
{
    char *b = g_base64_encode(buf, len);
    ref_begin(r, prefix, name);
    g_string_append(r->refs, "\"base64:");
    g_string_append(r->refs, b);
    g_string_append_c(r->refs, '"');
    g_free(b);
    r->ninline++;
}

/** Record in the group's note why name is not covered. */
void hpc_refs_note(hpc_refs *r, GString *notes, const char *name, const char *why)
{
    if (notes->len)
        g_string_append(notes, ", ");
    hpc_json_str(notes, name);
    g_string_append(notes, ": ");
    hpc_json_str(notes, why);
    r->nnotes++;
}

/* ---- node attributes ---------------------------------------------------- */

static char *xattr_str(hpc_mount *m, hpc_ino ino, const char *name)
{
    void *v = NULL;
    size_t len = 0;
    if (hpc_mount_getxattr(m, ino, name, &v, &len) != HPC_OK)
        return NULL;
    char *s = v ? g_strndup(v, len) : g_strdup("");
    g_free(v);
    return s;
}

/* The user.attr.* attributes that are valid UTF-8, as JSON members. */
static int attrs_json(hpc_mount *m, hpc_ino ino, GString *o)
{
    GString *names = g_string_new(NULL);
    int rc = hpc_mount_listxattr(m, ino, names);
    for (const char *x = names->str; rc == HPC_OK && x < names->str + names->len;
         x += strlen(x) + 1) {
        if (!g_str_has_prefix(x, "user.attr."))
            continue;
        char *v = xattr_str(m, ino, x);
        if (v && g_utf8_validate(v, -1, NULL)) {
            g_string_append(o, ", ");
            hpc_json_str(o, x + strlen("user.attr."));
            g_string_append(o, ": ");
            hpc_json_str(o, v);
        }
        g_free(v);
    }
    g_string_free(names, TRUE);
    return rc;
}

/* ---- arrays -------------------------------------------------------------- */

/* Bytes per element of a numpy type string such as "<f8", "|S12", "<U3";
 * 0 for what zarr v2 cannot hold as a fixed-size type. */
static uint64_t dtype_size(const char *dt)
{
    if (strlen(dt) < 3 || !strchr("<>|=", dt[0]) || !strchr("biufcSUVmM", dt[1]))
        return 0;
    char *end = NULL;
    guint64 n = g_ascii_strtoull(dt + 2, &end, 10);
    if (end == dt + 2 || n == 0 || n > (1u << 20) || (*end && *end != '['))
        return 0;
    return dt[1] == 'U' ? n * 4 : n;
}

/* "a,b,c" into shape; "" is a 0-d array. */
static int parse_shape(const char *s, hpc_refs_array *a)
{
    a->nd = 0;
    if (!s[0])
        return HPC_OK;
    gchar **p = g_strsplit(s, ",", -1);
    int rc = HPC_OK;
    for (gchar **q = p; rc == HPC_OK && *q; q++) {
        char *end = NULL;
        guint64 v = g_ascii_strtoull(*q, &end, 10);
        if (a->nd == MAX_DIMS || end == *q || *end)
            rc = HPC_E_CORRUPT;
        else
            a->shape[a->nd++] = v;
    }
    g_strfreev(p);
    return rc;
}

/* Element count and bytes of a; FALSE on overflow. */
static gboolean array_bytes(hpc_refs_array *a)
{
    uint64_t n = 1;
    for (int i = 0; i < a->nd; i++)
        if (!hpc_mul_u64(n, a->shape[i], &n))
            return FALSE;
    a->row = a->itemsize;
    for (int i = 1; i < a->nd; i++)
        if (!hpc_mul_u64(a->row, a->shape[i], &a->row))
            return FALSE;
    return hpc_mul_u64(n, a->itemsize, &a->nbytes);
}

/* Describe node st: its dtype and shape, or a byte stream.  Returns a
 * reason (static text) when it cannot be an array. */
static const char *array_of(hpc_mount *m, const hpc_stat *st, hpc_refs_array *a)
{
    char *shape = xattr_str(m, st->ino, "user.shape");
    a->dtype = xattr_str(m, st->ino, "user.dtype");
    const char *why = NULL;
    if (!a->dtype && !shape) {          /* a byte stream (SION) */
        a->dtype = g_strdup("|u1");
        a->nd = 1;
        a->shape[0] = st->size;
    } else if (!a->dtype || !shape || parse_shape(shape, a) != HPC_OK) {
        why = "no usable user.dtype and user.shape";
    }
    g_free(shape);
    if (why)
        return why;
    /* a structured literal ("[(...)]", "{...}", "(base, shape)"): its zarr
     * dtype comes from the reader's chunk table (hpc_refs_retype) */
    a->structured = strchr("[{(", a->dtype[0]) != NULL;
    a->object = !strcmp(a->dtype, "O");
    a->itemsize = a->structured ? 0 : dtype_size(a->dtype);
    if (a->object)
        return array_bytes(a) ? NULL : "user.shape has too many elements";
    if (!a->itemsize && !a->structured)
        return "its type (user.dtype) is not one zarr v2 holds as fixed-size elements";
    if (!array_bytes(a) || (!a->structured && a->nbytes != st->size))
        return "user.shape and user.dtype do not give the file's size";
    a->nbytes = st->size;
    return NULL;
}

gboolean hpc_refs_retype(hpc_refs_array *a, const char *dtype, uint64_t itemsize)
{
    uint64_t nbytes = a->nbytes;
    g_free(a->dtype);
    a->dtype = g_strdup(dtype);
    a->itemsize = itemsize;
    a->structured = 0;
    return itemsize && array_bytes(a) && a->nbytes == nbytes;
}

/* The .zarray text of a with chunk rows (first axis) and codecs. */
void hpc_refs_zarray(const hpc_refs_array *a, const uint64_t *chunks, const char *compressor,
                     const char *filters, GString *o)
{
    const char *fill = a->fill;
    g_string_append(o, "{\"chunks\": [");
    for (int i = 0; i < a->nd; i++)
        g_string_append_printf(o, "%s%" G_GUINT64_FORMAT, i ? ", " : "", chunks[i]);
    g_string_append_printf(o, "], \"compressor\": %s, \"dtype\": ", compressor ? compressor : "null");
    if (a->dtype[0] == '[')             /* a structured dtype: already JSON */
        g_string_append(o, a->dtype);
    else
        hpc_json_str(o, a->dtype);
    g_string_append_printf(o, ", \"fill_value\": %s, \"filters\": %s, \"order\": \"C\", \"shape\": [",
                           fill ? fill : "null", filters ? filters : "null");
    for (int i = 0; i < a->nd; i++)
        g_string_append_printf(o, "%s%" G_GUINT64_FORMAT, i ? ", " : "", a->shape[i]);
    g_string_append(o, "], \"zarr_format\": 2}");
}

void hpc_refs_array_clear(hpc_refs_array *a)
{
    g_free(a->dtype);
    if (a->dims)
        g_array_free(a->dims, TRUE);
    if (a->attrs)
        g_string_free(a->attrs, TRUE);
    g_free(a->fillattr);
    g_free(a->fill);
}

/* Axis i's name: the reader's where it names the axis, its length is the
 * dimension's, and the group holds no other length under that name
 * (xarray refuses that); else NAME_dimI, unique per array.  An array may
 * name one dimension twice, as netCDF allows and xarray shows on the
 * file.  A JSON string. */
static char *dim_name(hpc_refs *r, const char *name, const hpc_refs_array *a, int i)
{
    const hpc_refs_dim *d = a->dims && (guint)i < a->dims->len
                            ? &g_array_index(a->dims, hpc_refs_dim, i) : NULL;
    gpointer len;
    if (d && d->len == a->shape[i] &&
        (!g_hash_table_lookup_extended(r->gdims, d->name, NULL, &len) ||
         *(uint64_t *)len == a->shape[i]))
        return g_strdup(d->name);
    GString *o = g_string_new(NULL);
    char *gen = g_strdup_printf("%s_dim%d", name, i);
    hpc_json_str(o, gen);
    g_free(gen);
    return g_string_free(o, FALSE);
}

/* The _ARRAY_DIMENSIONS list of a; the group learns each name's length. */
static void dims_json(hpc_refs *r, const char *name, const hpc_refs_array *a, GString *o)
{
    g_string_append_c(o, '[');
    for (int i = 0; i < a->nd; i++) {
        char *d = dim_name(r, name, a, i);
        g_string_append_printf(o, "%s%s", i ? ", " : "", d);
        if (!g_hash_table_contains(r->gdims, d))
            g_hash_table_insert(r->gdims, d, g_memdup2(&a->shape[i], sizeof a->shape[i]));
        else
            g_free(d);
    }
    g_string_append_c(o, ']');
}

/* .zattrs of an array: dimension names, its attributes (the reader's
 * typed ones, else the xattrs' text), where it came from. */
int hpc_refs_zattrs(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
                    const hpc_refs_array *a, const char *extra)
{
    GString *o = g_string_new("{\"_ARRAY_DIMENSIONS\": ");
    dims_json(r, name, a, o);
    g_string_append(o, ", \"hpcmount_path\": ");
    char *p = g_strdup_printf("%s%s%s", r->root_path, strcmp(r->root_path, "/") ? "/" : "", key);
    hpc_json_str(o, p);
    g_free(p);
    if (extra)
        g_string_append_printf(o, ", %s", extra);
    int rc = HPC_OK;
    if (a->attrs)
        g_string_append(o, a->attrs->str);
    else
        rc = attrs_json(r->m, ino, o);
    if (a->novar)
        g_string_append(o, ", \"hpcmount_not_netcdf\": \"" NOT_NETCDF "\"");
    if (a->fillattr && !a->fill)   /* no fill_value holds it: xarray reads it here */
        g_string_append_printf(o, ", \"_FillValue\": %s", a->fillattr);
    g_string_append_c(o, '}');
    if (rc == HPC_OK)
        hpc_refs_text(r, key, ".zattrs", o->str);
    g_string_free(o, TRUE);
    return rc;
}

/* The chunk key of chunk i along the first axis: "i.0.0" ("0" for 0-d). */
static char *chunk_key(const hpc_refs_array *a, uint64_t i)
{
    GString *k = g_string_new(NULL);
    g_string_append_printf(k, "%" G_GUINT64_FORMAT, i);
    for (int d = 1; d < a->nd; d++)
        g_string_append(k, ".0");
    return g_string_free(k, FALSE);
}

/* Chunk bytes [off, off+len) of node ino inline, zero-padded to room (the
 * part past the array's end, which zarr never shows). */
static int inline_chunk(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
                        uint64_t off, uint64_t len, uint64_t room)
{
    char *buf = g_malloc0(room ? room : 1);
    size_t got = 0;
    int rc = hpc_mount_read(r->m, ino, buf, len, off, &got);
    if (rc == HPC_OK && got != len)
        rc = HPC_E_CORRUPT;
    if (rc == HPC_OK)
        hpc_refs_inline(r, key, name, buf, room);
    g_free(buf);
    return rc;
}

/* The extents of all of node ino, copied (paths, not sources: a run
 * directory may close the container). */
static int gather(hpc_refs *r, hpc_ino ino, uint64_t size, GArray *out)
{
    hpc_extent ext[MAP_BATCH];
    int rc = HPC_OK;
    for (uint64_t off = 0; rc == HPC_OK && off < size;) {
        unsigned n = 0;
        rc = hpc_mount_map(r->m, ino, off, size - off, ext, MAP_BATCH, &n);
        if (rc != HPC_OK)
            break;
        for (unsigned i = 0; i < n; i++) {
            hpc_refs_ext e = { ext[i].src->path, ext[i].off, ext[i].len,
                               ext[i].space_size ? ext[i].space_size : ext[i].src->size };
            g_array_append_val(out, e);
            off += ext[i].len;
        }
        hpc_mount_unmap(r->m, ino);
        if (n == 0)
            rc = HPC_E_CORRUPT;
    }
    return rc;
}

/* Chunk bytes C over extents: the first extent's length (cut down when it
 * is the only one and large), a multiple of a row; 0 when the extents do
 * not form a regular grid (a later extent not a multiple of C). */
static uint64_t grid_of(const hpc_refs_array *a, const GArray *ex)
{
    const hpc_refs_ext *e = (const hpc_refs_ext *)(void *)ex->data;
    uint64_t c = e[0].len;
    if (a->row == 0 || c % a->row)
        return 0;
    if (ex->len == 1 && c > BIG_CHUNK && a->nd > 0)
        c = MAX(1, BIG_CHUNK / a->row) * a->row;
    for (guint i = 0; i + 1 < ex->len; i++)
        if (e[i].len % c)
            return 0;
    return c;
}

/* The references of a verbatim array: extents ex cut into chunks of c
 * bytes.  A last, short chunk is referenced full-size when the file has
 * the bytes (zarr ignores what lies past the array), else inlined padded. */
static int emit_grid(hpc_refs *r, hpc_ino ino, const char *key, const hpc_refs_array *a,
                     const GArray *ex, uint64_t c, const char **why)
{
    uint64_t at = 0, idx = 0;
    int rc = HPC_OK;
    for (guint i = 0; rc == HPC_OK && i < ex->len; i++) {
        const hpc_refs_ext *e = &g_array_index(ex, hpc_refs_ext, i);
        for (uint64_t o = 0; rc == HPC_OK && o < e->len; o += c, idx++) {
            uint64_t len = MIN(c, e->len - o);
            char *name = chunk_key(a, idx);
            if (c <= r->o.inline_max && !a->raw)
                rc = inline_chunk(r, ino, key, name, at + o, len, c);
            else if (len == c || e->off + o + c <= e->size)
                hpc_refs_range(r, key, name, e->path, e->off + o, c);
            else
                *why = "its last chunk is short at the end of its file and larger than the "
                       "inline threshold";
            g_free(name);
            if (*why)
                return HPC_OK;
        }
        at += e->len;
    }
    return rc;
}

/* The .zarray for chunks of c bytes along the first axis. */
static void zarray_rows(hpc_refs *r, const char *key, const hpc_refs_array *a, uint64_t c)
{
    uint64_t chunks[MAX_DIMS];
    for (int i = 0; i < a->nd; i++)
        chunks[i] = a->shape[i] ? a->shape[i] : 1;
    if (a->nd && a->row)
        chunks[0] = MAX(1, c / a->row);
    GString *z = g_string_new(NULL);
    hpc_refs_zarray(a, chunks, NULL, NULL, z);
    hpc_refs_text(r, key, ".zarray", z->str);
    g_string_free(z, TRUE);
}

int hpc_refs_inline_array(hpc_refs *r, hpc_ino ino, const char *key, const hpc_refs_array *a)
{
    zarray_rows(r, key, a, a->nbytes);
    if (a->nbytes == 0)
        return HPC_OK;
    char *name = chunk_key(a, 0);
    int rc = inline_chunk(r, ino, key, name, 0, a->nbytes, a->nbytes);
    g_free(name);
    return rc;
}

/* An array whose bytes the reader computes: inline when small. */
static int computed_array(hpc_refs *r, hpc_ino ino, const char *key, const hpc_refs_array *a,
                          const char **why)
{
    if (a->nbytes > r->o.inline_max) {
        *why = "its bytes are computed by the reader (not verbatim in a file) and larger "
               "than the inline threshold";
        return HPC_OK;
    }
    return hpc_refs_inline_array(r, ino, key, a);
}

/* An array with irregular extents: one array per extent (NAME.blockK) when
 * each holds whole rows, else not covered. */
static int block_arrays(hpc_refs *r, hpc_ino ino, const char *key, const hpc_refs_array *a,
                        const GArray *ex, const char *name, const char **why)
{
    for (guint i = 0; i < ex->len; i++)
        if (g_array_index(ex, hpc_refs_ext, i).len % a->row) {
            *why = "its extents in the file are irregular and split rows";
            return HPC_OK;
        }
    uint64_t first = 0;
    for (guint i = 0; i < ex->len; i++) {
        const hpc_refs_ext *e = &g_array_index(ex, hpc_refs_ext, i);
        hpc_refs_array b = *a;
        b.shape[0] = e->len / a->row;
        b.nbytes = e->len;
        char *bkey = g_strdup_printf("%s.block%u", key, i);
        char *bname = g_strdup_printf("%s.block%u", name, i);
        char *zat = g_strdup_printf("\"hpcmount_block_of\": \"%s\", \"hpcmount_first_row\": %"
                                    G_GUINT64_FORMAT ", \"hpcmount_note\": \"%s\"", name, first,
                                    BLOCK_NOTE);
        zarray_rows(r, bkey, &b, e->len);
        int rc = hpc_refs_zattrs(r, ino, bkey, bname, &b, zat);
        g_free(bname);
        char *cname = chunk_key(&b, 0);
        hpc_refs_range(r, bkey, cname, e->path, e->off, e->len);
        g_free(cname);
        g_free(zat);
        g_free(bkey);
        first += b.shape[0];
        if (rc != HPC_OK)
            return rc;
    }
    r->narrays += ex->len;
    return HPC_OK;
}

/* A verbatim array: its extents on a regular grid, else per block. */
static int mapped_array(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
                        const hpc_refs_array *a, const char **why)
{
    GArray *ex = g_array_new(FALSE, FALSE, sizeof(hpc_refs_ext));
    int rc = gather(r, ino, a->nbytes, ex);
    if (rc == HPC_E_NOTSUP) {
        rc = computed_array(r, ino, key, a, why);
        goto out;
    }
    if (rc == HPC_OK)
        rc = hpc_refs_extents(r, ino, key, name, a, ex, why);
out:
    g_array_free(ex, TRUE);
    return rc;
}

int hpc_refs_extents(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
                     const hpc_refs_array *a, const GArray *ex, const char **why)
{
    int rc = HPC_OK;
    if (a->nbytes == 0) {       /* no elements (e.g. N = 0 rows): the .zarray alone */
        zarray_rows(r, key, a, 0);
        return HPC_OK;
    }
    uint64_t c = grid_of(a, ex);
    gsize mark = r->refs->len;
    unsigned nmark = r->nrefs;
    if (c) {
        zarray_rows(r, key, a, c);
        rc = emit_grid(r, ino, key, a, ex, c, why);
    }
    if (rc == HPC_OK && (!c || *why)) {
        g_string_truncate(r->refs, mark);       /* not one grid: per block */
        r->nrefs = nmark;
        *why = NULL;
        rc = block_arrays(r, ino, key, a, ex, name, why);
        if (rc == HPC_OK && !*why)
            rc = 1;                     /* described, but not as one array */
    }
    return rc;
}

/* One array node at key (relative to the walk's root). */
static int do_array(hpc_refs *r, const hpc_stat *st, const char *key, const char *name,
                    GString *notes)
{
    hpc_refs_array a = { 0 };
    const char *why = array_of(r->m, st, &a);
    gsize mark = r->refs->len;
    unsigned nmark = r->nrefs;
    int rc = HPC_OK, chunked = 0;
    if (!why)
        rc = hpc_refs_chunked(r, st->ino, key, name, &a, &why, &chunked);
    if (!why && rc == HPC_OK && !chunked && a.structured)
        why = "a structured type (compound or array) with no zarr dtype from its reader";
    if (!why && rc == HPC_OK && !chunked && a.object)
        why = "objects (user.dtype O) whose elements its reader does not list";
    if (!why && rc == HPC_OK && !chunked)
        rc = mapped_array(r, st->ino, key, name, &a, &why);
    if (rc == 1) {                      /* became block arrays */
        rc = HPC_OK;
        goto out;
    }
    if (!why && rc == HPC_OK)
        rc = hpc_refs_zattrs(r, st->ino, key, name, &a, NULL);
    if (!why && rc == HPC_OK)
        r->narrays++;
    if (why) {                          /* drop what was written of it */
        g_string_truncate(r->refs, mark);
        r->nrefs = nmark;
        hpc_refs_note(r, notes, name, why);
    }
    if (rc == HPC_OK)
        rc = hpc_mount_sources_unchanged(r->m, st->ino);
out:
    hpc_refs_array_clear(&a);
    return rc;
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct dent {
    char *name;
    hpc_stat st;
} dent;

static int collect(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    (void)next;
    if (strcmp(name, ".") && strcmp(name, "..")) {
        dent e = { g_strdup(name), *st };
        g_array_append_val((GArray *)p, e);
    }
    return 0;
}

static int dent_cmp(const void *a, const void *b)
{
    return strcmp(((const dent *)a)->name, ((const dent *)b)->name);
}

static void dent_clear(void *p)
{
    g_free(((dent *)p)->name);
}

static int walk_dir(hpc_refs *r, const hpc_stat *dir, const char *key, const char *path);

/* The root's .info (once), where readers name damaged nodes and why. */
static const char *root_info(hpc_refs *r)
{
    hpc_stat st;
    if (r->info || hpc_mount_resolve(r->m, "/.info", &st) != HPC_OK || !S_ISREG(st.mode))
        return r->info ? r->info : "";
    size_t len = (size_t)MIN(st.size, (uint64_t)(1u << 20)), got = 0;
    r->info = g_malloc0(len + 1);
    if (hpc_mount_read(r->m, st.ino, r->info, len, 0, &got) != HPC_OK)
        got = 0;
    r->info[got] = '\0';
    return r->info;
}

/* Why node path cannot be referenced: the error, and the line of .info
 * that names it ("damaged: PATH (...): why") when there is one. */
static char *damage_why(hpc_refs *r, const char *path, int rc)
{
    char *head = g_strdup_printf("damaged: %s ", path);
    const char *l = strstr(root_info(r), head), *why = l ? strstr(l, "): ") : NULL;
    const char *end = why ? strchr(why, '\n') : NULL;
    char *out = why ? g_strdup_printf("cannot be read (%s): %.*s", hpc_strerror(rc),
                                      (int)(end ? end - why - 3 : (ptrdiff_t)strlen(why + 3)),
                                      why + 3)
                    : g_strdup_printf("cannot be read (%s)", hpc_strerror(rc));
    g_free(head);
    return out;
}

/* A node whose reads fail (a damaged dataset, a group that cannot be
 * listed) is left out with a note; other errors (memory, a source that
 * changed, the root's own structure) refuse the document. */
static int node_damaged(int rc)
{
    return rc == HPC_E_IO || rc == HPC_E_CORRUPT || rc == HPC_E_CHECKSUM;
}

/* A symbolic link to a directory (an HDF5 soft link to a group, or a
 * group's further hard link): the directory at path again under the
 * link's name (key), as libnetcdf shows it; not one being walked (a
 * cycle), and at most MAX_LINKED nodes so (links to links multiply). */
static int linked_dir(hpc_refs *r, const hpc_stat *st, const char *key, const char *path,
                      const char *name, GString *notes)
{
    if (g_hash_table_contains(r->walking, &st->ino)) {
        hpc_refs_note(r, notes, name, "a symbolic link to a directory it is in (a cycle)");
        return HPC_OK;
    }
    if (r->linked > MAX_LINKED) {
        hpc_refs_note(r, notes, name, "a symbolic link to a directory, past the bound of "
                      "nodes walked again through such links");
        return HPC_OK;
    }
    uint64_t before = r->nodes;
    int rc = walk_dir(r, st, key, path);
    r->linked += r->nodes - before + 1;
    return rc;
}

/* Whether file lies in the directory the references may name files in:
 * that of the file given, or one below it. */
static gboolean ext_allowed(hpc_refs *r, const char *file)
{
    char *real = realpath(file, NULL);
    gboolean yes = real && r->xdir && g_str_has_prefix(real, r->xdir) &&
                   real[strlen(r->xdir)] == '/';
    free(real);
    return yes;
}

/* The mount of file, opened on first use; NULL and *why when it cannot be. */
static hpc_mount *ext_mount(hpc_refs *r, const char *file, const char **why)
{
    hpc_mount *xm = g_hash_table_lookup(r->xmounts, file);
    GError *err = NULL;
    if (xm)
        return xm;
    if (hpc_mount_open(file, r->o.mount_opts, &xm, &err) == HPC_OK) {
        g_hash_table_insert(r->xmounts, g_strdup(file), xm);
        return xm;
    }
    char *w = g_strdup_printf("an HDF5 external link to a file that cannot be opened: %s",
                              err ? err->message : "?");
    *why = g_string_chunk_insert(r->texts, w);
    g_free(w);
    g_clear_error(&err);
    return NULL;
}

/* The object x in mount xm (node st, its path there real), walked under
 * key as if it were here: with xm's nodes, inodes and .info. */
static int ext_walk(hpc_refs *r, hpc_mount *xm, const hpc_stat *st, const char *real,
                    const char *key, const char *name, GString *notes)
{
    hpc_mount *m = r->m;
    GHashTable *walking = r->walking;
    char *info = r->info;
    uint64_t before = r->nodes;
    r->m = xm;
    r->walking = g_hash_table_new(g_int64_hash, g_int64_equal);
    r->info = NULL;
    r->xdepth++;
    int rc = S_ISDIR(st->mode) ? walk_dir(r, st, key, real) : do_array(r, st, key, name, notes);
    r->xdepth--;
    g_free(r->info);
    r->info = info;
    g_hash_table_destroy(r->walking);
    r->walking = walking;
    r->m = m;
    r->linked += r->nodes - before + 1;
    return rc;
}

/* A symbolic link out of the tree that is an HDF5 external link the
 * reader followed as libnetcdf does (r->xlinks, by its path from the
 * root): the object in the other file, under the link's name (*done);
 * a note when that file is out of bounds or unreadable, the object
 * missing, or the link leads into what it is in (a cycle). */
static int external(hpc_refs *r, const char *key, const char *name, GString *notes, int *done)
{
    char *in = g_build_filename(r->root_path, key, NULL);
    char *top = g_canonicalize_filename(in, "/");
    const hpc_refs_xlink *x = r->xlinks ? g_hash_table_lookup(r->xlinks, top) : NULL;
    const char *why = NULL;
    char *real = NULL, *id = NULL;
    hpc_mount *xm = NULL;
    hpc_stat st;
    int rc = HPC_OK;
    g_free(top);
    g_free(in);
    *done = x != NULL;
    if (!x)
        return HPC_OK;
    if (!ext_allowed(r, x->file))
        why = "an HDF5 external link to a file outside the directory of the file given";
    else if ((xm = ext_mount(r, x->file, &why)) &&
             hpc_mount_resolve_follow(xm, x->obj, TRUE, &st, &real) != HPC_OK)
        why = "an HDF5 external link to nothing in its file";
    if (!why) {
        id = g_strdup_printf("%s//%s", x->file, real);
        if (g_hash_table_contains(r->xwalking, id) || r->xdepth >= HPC_MAX_LINKS)
            why = "an HDF5 external link to a group it is in (a cycle)";
        else if (r->linked > MAX_LINKED)
            why = "an HDF5 external link, past the bound of nodes walked again through links";
    }
    if (why) {
        hpc_refs_note(r, notes, name, why);
    } else {
        g_hash_table_add(r->xwalking, id);
        rc = ext_walk(r, xm, &st, real, key, name, notes);
        g_hash_table_remove(r->xwalking, id);
    }
    g_free(id);
    g_free(real);
    return rc;
}

/* One entry of a directory. */
static int walk_one(hpc_refs *r, const dent *e, const char *key, const char *path,
                    GString *notes)
{
    char *sub = g_strdup_printf("%s/%s", strcmp(path, "/") ? path : "", e->name);
    char *subkey = key[0] ? g_strdup_printf("%s/%s", key, e->name) : g_strdup(e->name);
    hpc_stat st = e->st;
    char *real = NULL;
    int rc = st.partial ? hpc_mount_getattr(r->m, st.ino, &st) : HPC_OK;
    if (rc != HPC_OK) {
        r->failed_at = r->failed_at ? r->failed_at : g_strdup(sub);
        goto out;
    }
    if (e->name[0] == '.') {
        if (strcmp(e->name, ".info"))
            hpc_refs_note(r, notes, e->name, "zarr keys may not start with a dot");
        goto out;
    }
    /* every link on it followed (GSD frames lend frame 0's chunks this
     * way, HDF5 soft links name groups) */
    if (S_ISLNK(st.mode) && hpc_mount_resolve_follow(r->m, sub, TRUE, &st, &real) != HPC_OK) {
        int done = 0;
        rc = external(r, subkey, e->name, notes, &done);
        if (!done)
            hpc_refs_note(r, notes, e->name, "a symbolic link to nothing inside the tree");
        goto out;
    }
    if (S_ISDIR(st.mode) && S_ISLNK(e->st.mode))
        rc = linked_dir(r, &st, subkey, real, e->name, notes);
    else if (S_ISDIR(st.mode))
        rc = walk_dir(r, &st, subkey, sub);
    else
        rc = do_array(r, &st, subkey, e->name, notes);
    if (rc != HPC_OK && !r->failed_at)
        r->failed_at = g_strdup(sub);
out:
    if (r->o.progress)
        r->o.progress(r->o.progress_ctx, ++r->nodes);
    g_free(real);
    g_free(sub);
    g_free(subkey);
    return rc;
}

/* One entry of a directory; a damaged one becomes a note. */
static int walk_entry(hpc_refs *r, const dent *e, const char *key, const char *path,
                      GString *notes)
{
    gsize mark = r->refs->len;
    hpc_refs counts = *r;
    int rc = walk_one(r, e, key, path, notes);
    if (!node_damaged(rc))
        return rc;
    g_string_truncate(r->refs, mark);   /* nothing half: drop what was written of it */
    r->nrefs = counts.nrefs;
    r->narrays = counts.narrays;
    r->nranges = counts.nranges;
    r->ninline = counts.ninline;
    r->nnotes = counts.nnotes;
    char *sub = g_strdup_printf("%s/%s", strcmp(path, "/") ? path : "", e->name);
    char *why = damage_why(r, sub, rc);
    hpc_log("refs: %s: %s: left out: %s", r->source, sub, why);
    hpc_refs_note(r, notes, e->name, why);
    g_clear_pointer(&r->failed_at, g_free);
    g_free(why);
    g_free(sub);
    return HPC_OK;
}

/* A group: .zgroup, its members, then .zattrs with the notes. */
static int walk_dir(hpc_refs *r, const hpc_stat *dir, const char *key, const char *path)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(dent));
    g_array_set_clear_func(a, dent_clear);
    GString *notes = g_string_new(NULL), *za = g_string_new("{");
    GHashTable *outer = r->gdims;      /* dimension names are the group's own */
    r->gdims = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_hash_table_add(r->walking, (gpointer)&dir->ino);
    int rc = hpc_mount_readdir(r->m, dir->ino, 0, collect, a);
    if (rc != HPC_OK) {
        if (!r->failed_at)
            r->failed_at = g_strdup(path);
        goto out;
    }
    g_array_sort(a, dent_cmp);
    hpc_refs_text(r, key, ".zgroup", "{\"zarr_format\": 2}");
    for (guint i = 0; rc == HPC_OK && i < a->len; i++)
        rc = walk_entry(r, &g_array_index(a, dent, i), key, path, notes);
    if (rc != HPC_OK)
        goto out;
    g_string_append(za, "\"hpcmount_path\": ");
    hpc_json_str(za, path);
    if (!key[0]) {
        g_string_append(za, ", \"hpcmount_source\": ");
        hpc_json_str(za, r->source);
    }
    if (notes->len)
        g_string_append_printf(za, ", \"hpcmount_not_covered\": {%s}", notes->str);
    rc = hpc_refs_dir_attrs(r, dir->ino, za) ? HPC_OK : attrs_json(r->m, dir->ino, za);
    if (rc != HPC_OK && !r->failed_at)
        r->failed_at = g_strdup(path);
    g_string_append_c(za, '}');
    hpc_refs_text(r, key, ".zattrs", za->str);
out:
    g_hash_table_remove(r->walking, &dir->ino);
    g_hash_table_destroy(r->gdims);
    r->gdims = outer;
    g_string_free(notes, TRUE);
    g_string_free(za, TRUE);
    g_array_free(a, TRUE);
    return rc;
}

/* ---- entry point --------------------------------------------------------- */

/* A file alone whose reader follows HDF5 external links: the references
 * may name the files in its directory and below. */
static void ext_begin(hpc_refs *r)
{
    if (!r->o.mount_opts || hpc_mount_is_directory(r->m))
        return;
    char *dir = g_path_get_dirname(r->source);
    r->xdir = realpath(dir, NULL);
    g_free(dir);
    hpc_refs_ext_load(r);
}

/* A root path through an HDF5 external link (the longest one of
 * r->xlinks it starts with): its node *st in the other file's mount,
 * which the walk then reads (r->m), and its path there *real. */
static int ext_root(hpc_refs *r, hpc_stat *st, char **real)
{
    char *path = g_canonicalize_filename(r->root_path, "/"), *p = g_strdup(path), *slash;
    const hpc_refs_xlink *x = NULL;
    const char *why = NULL;
    hpc_mount *xm = NULL;
    int rc = HPC_E_NOENT;
    while (r->xlinks && !(x = g_hash_table_lookup(r->xlinks, p)) && (slash = strrchr(p, '/')))
        *slash = '\0';
    if (x && ext_allowed(r, x->file) && (xm = ext_mount(r, x->file, &why))) {
        char *in = g_strconcat(x->obj, "/", path + strlen(p), NULL);
        rc = hpc_mount_resolve_follow(xm, in, TRUE, st, real);
        g_free(in);
    }
    if (rc == HPC_OK) {
        r->m = xm;
        r->xdepth = 1;
    }
    g_free(path);
    g_free(p);
    return rc;
}

static void ext_end(hpc_refs *r)
{
    if (r->xlinks)
        g_hash_table_destroy(r->xlinks);
    if (r->xdims)
        g_hash_table_destroy(r->xdims);
    g_hash_table_destroy(r->xwalking);
    g_hash_table_destroy(r->xmounts);
    free(r->xdir);
}

static void finish(hpc_refs *r, GString *out)
{
    g_string_append(out, "{\"version\": 1, \"templates\": {");
    for (guint i = 0; i < r->tmpl_paths->len; i++) {
        const char *p = g_ptr_array_index(r->tmpl_paths, i);
        g_string_append(out, i ? ", " : "");
        hpc_json_str(out, g_hash_table_lookup(r->tmpl, p));
        g_string_append(out, ": ");
        hpc_json_str(out, p);
    }
    g_string_append(out, "},\n\"refs\": {\n");
    g_string_append_len(out, r->refs->str, (gssize)r->refs->len);
    g_string_append(out, "\n}}\n");
}

/* A single array at the root of the hierarchy. */
static int root_array(hpc_refs *r, const hpc_stat *st, const char *path)
{
    GString *notes = g_string_new(NULL);
    char *base = g_path_get_basename(path);
    int rc = do_array(r, st, "", base, notes);
    if (rc == HPC_OK && notes->len)
        rc = HPC_E_NOTSUP;
    if (rc != HPC_OK && !r->failed_at)
        r->failed_at = g_strdup_printf("%s: %s", path, notes->len ? notes->str : "");
    g_free(base);
    g_string_free(notes, TRUE);
    return rc;
}

int hpc_refs_json(hpc_mount *m, const char *path, const hpc_refs_opts *o, GString *out,
                  GError **err)
{
    hpc_refs r = { .m = m, .refs = g_string_new(NULL), .root_path = path ? path : "/",
                   .tmpl = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                   .tmpl_paths = g_ptr_array_new_with_free_func(g_free),
                   .texts = g_string_chunk_new(1024),
                   .gdims = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                   .walking = g_hash_table_new(g_int64_hash, g_int64_equal),
                   .xmounts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                    (GDestroyNotify)hpc_mount_close),
                   .xwalking = g_hash_table_new(g_str_hash, g_str_equal) };
    if (o)
        r.o = *o;
    else
        r.o.inline_max = HPC_REFS_INLINE_DEFAULT;
    r.source = hpc_mount_source(m);
    ext_begin(&r);
    hpc_stat st;
    char *real = NULL;
    int rc = hpc_mount_resolve_follow(m, r.root_path, TRUE, &st, &real);
    if (rc == HPC_E_NOENT)
        rc = ext_root(&r, &st, &real);
    if (rc != HPC_OK)
        r.failed_at = g_strdup(r.root_path);
    else if (S_ISDIR(st.mode))
        rc = walk_dir(&r, &st, "", real);
    else
        rc = root_array(&r, &st, r.root_path);
    if (rc == HPC_OK)
        finish(&r, out);
    else
        g_set_error(err, HPC_ERROR, rc, "%s: %s: %s", r.source, r.failed_at ? r.failed_at : "?",
                    rc == HPC_E_NOTSUP ? "cannot be described as an array" : hpc_strerror(rc));
    g_free(real);
    g_free(r.failed_at);
    g_free(r.info);
    g_string_chunk_free(r.texts);
    g_hash_table_destroy(r.gdims);
    g_hash_table_destroy(r.walking);
    ext_end(&r);
    g_hash_table_destroy(r.tmpl);
    g_ptr_array_free(r.tmpl_paths, TRUE);
    g_string_free(r.refs, TRUE);
    return rc;
}
