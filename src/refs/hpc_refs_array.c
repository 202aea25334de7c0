/* hpc_refs_array.c - the pieces of kerchunk-style references (hpc_refs.h):
 * the JSON text of a reference, a node's attributes and array description,
 * and the arrays whose chunks are the extents of hpc_mount_map (verbatim
 * bytes, on a regular grid along the first axis or one array per extent)
 * or inline bytes.  hpc_refs.c walks the tree and hpc_refs_chunks.c writes
 * the arrays a reader's chunk table describes; both stand on this file.
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

/* The text of xattr name of ino; NULL for none, or for one holding NUL
 * (HDF5's NUL-ended strings, docs/hdf5.md), which a JSON string of its
 * text up to the NUL would give wrong. */
static char *xattr_str(hpc_mount *m, hpc_ino ino, const char *name)
{
    void *v = NULL;
    size_t len = 0;
    if (hpc_mount_getxattr(m, ino, name, &v, &len) != HPC_OK)
        return NULL;
    if (v && memchr(v, '\0', len)) {
        g_free(v);
        return NULL;
    }
    char *s = v ? g_strndup(v, len) : g_strdup("");
    g_free(v);
    return s;
}

/* HDF5's attributes of references, sequences and compounds holding them
 * (docs/hdf5.md), of xattr names `names` (NUL-separated): the attribute
 * names that have a user.attrref, user.attroffsets or user.attr:0 xattr.
 * Their user.attr text is no string of zarr's attrs, as libnetcdf shows
 * none. */
static GHashTable *structured_attrs(const GString *names)
{
    static const char *const family[] = { "user.attrref.", "user.attroffsets.", "user.attr:0." };
    GHashTable *set = g_hash_table_new(g_str_hash, g_str_equal);
    for (const char *x = names->str; x < names->str + names->len; x += strlen(x) + 1) {
        for (size_t f = 0; f < G_N_ELEMENTS(family); f++) {
            if (g_str_has_prefix(x, family[f]))
                g_hash_table_add(set, (gpointer)(x + strlen(family[f])));
        }
    }
    return set;
}

int hpc_refs_attrs_json(hpc_mount *m, hpc_ino ino, GString *o)
{
    GString *names = g_string_new(NULL);
    int rc = hpc_mount_listxattr(m, ino, names);
    GHashTable *structured = structured_attrs(names);
    for (const char *x = names->str; rc == HPC_OK && x < names->str + names->len;
         x += strlen(x) + 1) {
        if (!g_str_has_prefix(x, "user.attr.") ||
            g_hash_table_contains(structured, x + strlen("user.attr.")))
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
    g_hash_table_destroy(structured);
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

const char *hpc_refs_array_of(hpc_mount *m, const hpc_stat *st, hpc_refs_array *a)
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
        rc = hpc_refs_attrs_json(r->m, ino, o);
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

int hpc_refs_mapped_array(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
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
