/* hpc_refs_chunks.c - arrays described by a reader's chunk table
 * (hpc_format.chunks; the HDF5 reader's lines are listed in hdf5_refs.c).
 *
 * Chunked arrays: one reference per allocated chunk, the codecs as the
 * reader names them (numcodecs ids and configurations, in encode order,
 * which zarr undoes in reverse; a checksum the reader verified left out of
 * each chunk's reference), the fill value for chunks never written.  The
 * reader maps its format's filters to codecs: a step no codec expresses
 * comes as its reason, so nothing here knows a format's filter.
 * Contiguous data in the file's byte order (zarr reads '>' types);
 * compact data inline.  Everything else is a reason for the group's note.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "hpc_bytes.h"
#include "hpc_refs_int.h"

#define COMPACT_MAX (64u << 10)   /* HDF5's limit of compact data */
#define FILL_CHUNK_MAX (16u << 20) /* a chunk never written, inline, at most */
#define FILL_TOTAL_MAX (64u << 20)  /* and all of them (stored zlib: as large as raw) */
#define VLEN_INLINE_MAX (16u << 20) /* an object array's one inline chunk, at most */
#define SIZE_DIFFERS "its stored element size differs from the served one"
#define NO_ZDTYPE "a structured type (compound or array) with no zarr dtype from its reader"
#define NCDIM_NOTE "a netCDF-4 dimension that is no variable (its dataset holds no data; " \
    "netCDF and xarray show the dimension only)"

/* What a reader says of a node besides its bytes. */
typedef struct meta {
    GArray *dims;              /* hpc_refs_dim per axis ("dim LEN NAME") */
    GString *attrs;            /* typed attributes ("attrs", "attr NAME: VALUE") */
    char *fillattr;            /* the value of "attr \"_FillValue\": VALUE" */
    GBytes *ncfill;            /* "ncfill HEX": that value in the array's file type */
    int ncdim;                 /* "ncdim": a netCDF dimension that is no variable */
    int novar;                 /* "novar": netCDF shows no variable for it */
    const char *self;          /* the array's path in the mount */
    GArray *ldims;             /* "ldim PATH LEN NAME" of the link at self */
    size_t lmatch;             /* the length of that PATH */
} meta;

typedef struct desc {
    char *file, *layout, *unsup;
    char *zdtype, *zserved;    /* a compound's zarr dtype: as stored, as served */
    uint64_t zsize;
    char order;                /* '<', '>' or '|' */
    int has_addr;
    uint64_t addr, size;
    int nd;                    /* chunk rank (with nadims) */
    uint64_t chunk[HPC_REFS_MAX_DIMS];
    int nadims;                /* an array type's dims: trailing axes */
    uint64_t adims[HPC_REFS_MAX_DIMS];
    GString *filters;          /* JSON list members */
    unsigned trailer;          /* bytes of a checksum ending each stored chunk */
    char *trailer_name;        /* its name, for reasons */
    int verified;              /* the reader checked every chunk's checksum */
    GBytes *fill;              /* NULL: none defined */
    uint64_t fill_count;       /* the value is fill's bytes this many times */
    int started;               /* .zarray written */
    uint64_t nchunks;
    GArray *codecs;            /* codec: what zarr undoes, for fill chunks */
    GHashTable *seen;          /* chunk keys referenced */
    uint64_t file_size;        /* of file, once known (file_size_known) */
    int file_size_known;
    GPtrArray *vs;             /* "vs HEX": GBytes per element of an object array */
    meta m;
} desc;

/* A codec of the pipeline, to encode chunks never written (fsspec 2022.11's
 * reference filesystem fails on a missing key instead of letting zarr use
 * the fill value, so every chunk of the grid gets a reference): those
 * numcodecs codecs written here, or one that is not. */
typedef enum { CODEC_OTHER, CODEC_ZLIB, CODEC_SHUFFLE } codec_kind;

typedef struct codec {
    codec_kind kind;
    unsigned elemsize;
} codec;

static void dim_clear(void *p)
{
    g_free(((hpc_refs_dim *)p)->name);
}

static void meta_clear(meta *m)
{
    if (m->dims)
        g_array_free(m->dims, TRUE);
    if (m->ldims)
        g_array_free(m->ldims, TRUE);
    if (m->attrs)
        g_string_free(m->attrs, TRUE);
    g_free(m->fillattr);
    if (m->ncfill)
        g_bytes_unref(m->ncfill);
}

/* Bytes written as hex digits (in one allocation: a fill value of an
 * array type can be hundreds of MiB). */
static GBytes *hex_bytes(const char *p)
{
    size_t n = strlen(p) / 2;
    guint8 *b = g_malloc(MAX(n, 1));
    for (size_t i = 0; i < n; i++)
        b[i] = (guint8)(g_ascii_xdigit_value(p[2 * i]) << 4 | g_ascii_xdigit_value(p[2 * i + 1]));
    return g_bytes_new_take(b, n);
}

static void dim_add(GArray **dims, uint64_t len, const char *name)
{
    hpc_refs_dim d = { len, g_strdup(name) };
    if (!*dims) {
        *dims = g_array_new(FALSE, FALSE, sizeof(hpc_refs_dim));
        g_array_set_clear_func(*dims, dim_clear);
    }
    g_array_append_val(*dims, d);
}

/* The length of link path hex (from "/") when self's path ends with it,
 * else 0: in a run directory the mount's path has the container's in
 * front, so the longest such link is self's. */
static size_t self_match(const meta *m, const char *hex, size_t n)
{
    char *h = g_strndup(hex, n);
    GBytes *b = hex_bytes(h);
    gsize len;
    const char *p = g_bytes_get_data(b, &len);
    size_t sl = m->self ? strlen(m->self) : 0;
    int yes = len && p[0] == '/' && sl >= len && !memcmp(m->self + sl - len, p, len);
    g_bytes_unref(b);
    g_free(h);
    return yes ? len : 0;
}

/* A line of what the reader says besides the bytes into m; 0 when it is
 * none of those.  A directory's _FillValue is an attribute like any. */
static int meta_line(meta *m, const char *line, int array)
{
    guint64 len;
    int at = 0, hex = 0;
    if (!strcmp(line, "attrs") || g_str_has_prefix(line, "attr ")) {
        const char *v = line + 5;
        if (!m->attrs)
            m->attrs = g_string_new(NULL);
        if (line[4] == ' ' && array && g_str_has_prefix(v, "\"_FillValue\": "))
            m->fillattr = g_strdup(v + strlen("\"_FillValue\": "));
        else if (line[4] == ' ')
            g_string_append_printf(m->attrs, ", %s", v);
    } else if (sscanf(line, "dim %" G_GUINT64_FORMAT " %n", &len, &at) == 1 && at) {
        dim_add(&m->dims, len, line + at);
    } else if (g_str_has_prefix(line, "ldim ")) {
        hex = (int)strspn(line + 5, "0123456789abcdef");
        size_t n = sscanf(line + 5 + hex, " %" G_GUINT64_FORMAT " %n", &len, &at) == 1 && at
                   ? self_match(m, line + 5, (size_t)hex) : 0;
        if (n > m->lmatch && m->ldims)
            g_array_set_size(m->ldims, 0);
        m->lmatch = MAX(m->lmatch, n);
        if (n && n == m->lmatch)
            dim_add(&m->ldims, len, line + 5 + hex + at);
    } else if (g_str_has_prefix(line, "ncfill ")) {
        if (m->ncfill)
            g_bytes_unref(m->ncfill);
        m->ncfill = hex_bytes(line + 7);
    } else if (!strcmp(line, "ncdim")) {
        m->ncdim = 1;
    } else if (!strcmp(line, "novar")) {
        m->novar = 1;
    } else {
        return 0;
    }
    return 1;
}

static void desc_clear(desc *d)
{
    meta_clear(&d->m);
    g_free(d->file);
    g_free(d->layout);
    g_free(d->unsup);
    g_free(d->trailer_name);
    g_free(d->zdtype);
    g_free(d->zserved);
    g_string_free(d->filters, TRUE);
    g_array_free(d->codecs, TRUE);
    g_hash_table_destroy(d->seen);
    g_ptr_array_free(d->vs, TRUE);
    if (d->fill)
        g_bytes_unref(d->fill);
}

/* Integer value of n bytes p in byte order o ('<' or '>'). */
static uint64_t load(const unsigned char *p, size_t n, char o)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[o == '>' ? n - 1 - i : i] << (8 * i);
    return v;
}

/* A float of n bytes p in byte order o as zarr v2's JSON, or NULL. */
static char *float_json(const unsigned char *p, size_t n, char o)
{
    uint64_t v = load(p, n, o);
    double x;
    if (n == 4) {
        uint32_t u = (uint32_t)v;
        float f;
        memcpy(&f, &u, 4);
        x = f;
    } else if (n == 8) {
        memcpy(&x, &v, 8);
    } else {
        return NULL;
    }
    GString *j = g_string_new(NULL);
    hpc_json_double(j, x, HPC_JSON_NAN_STRING);
    return g_string_free(j, FALSE);
}

/* A complex fill value as zarr v2 has it: [real, imaginary]. */
static char *complex_json(const unsigned char *p, size_t n, char o)
{
    char *re = float_json(p, n / 2, o), *im = float_json(p + n / 2, n / 2, o);
    char *s = re && im ? g_strdup_printf("[%s, %s]", re, im) : NULL;
    g_free(re);
    g_free(im);
    return s;
}

/* A fill value (bytes in order o, '>' or else little-endian) of a's type
 * as zarr v2's JSON, or NULL when it has no such form. */
static char *fill_json(GBytes *fill, const hpc_refs_array *a, char o)
{
    if (!fill)
        return NULL;
    gsize n;
    const unsigned char *p = g_bytes_get_data(fill, &n);
    char k = a->dtype[0] == '[' ? 'V' : a->dtype[1];
    if (n != a->itemsize)
        return NULL;
    if (k == 'S' || k == 'V') {         /* the bytes in base64 */
        char *b = g_base64_encode(p, n);
        char *s = g_strdup_printf("\"%s\"", b);
        g_free(b);
        return s;
    }
    if (k == 'c')
        return complex_json(p, n, o);
    if (k == 'f')
        return float_json(p, n, o);
    if (n > 8 || (k != 'i' && k != 'u' && k != 'b'))
        return NULL;
    uint64_t v = load(p, n, o);
    if (k == 'u' || k == 'b')
        return k == 'b' ? g_strdup(v ? "true" : "false") : g_strdup_printf("%" G_GUINT64_FORMAT, v);
    int64_t sv = n == 8 ? (int64_t)v : (int64_t)(v << (64 - 8 * n)) >> (64 - 8 * n);
    return g_strdup_printf("%" G_GINT64_FORMAT, sv);
}

/* A codec's numcodecs configuration as one written here or not: its id,
 * and the element size of a shuffle. */
static codec codec_of(const char *json)
{
    codec k = { CODEC_OTHER, 0 };
    const char *es = strstr(json, "\"elementsize\":");
    unsigned long n = es ? strtoul(es + strlen("\"elementsize\":"), NULL, 10) : 0;
    if (g_str_has_prefix(json, "{\"id\": \"zlib\""))
        k.kind = CODEC_ZLIB;
    else if (g_str_has_prefix(json, "{\"id\": \"shuffle\"") && n && n <= UINT32_MAX)
        k = (codec){ CODEC_SHUFFLE, (unsigned)n };
    return k;
}

/* A "codec JSON" line: one more numcodecs filter, in encode order.  A
 * checksum the references leave out must end the stored bytes. */
static const char *codec_line(desc *d, const char *json)
{
    if (d->trailer || json[0] != '{')
        return "the reader's chunk table is malformed";
    codec k = codec_of(json);
    g_array_append_val(d->codecs, k);
    g_string_append_printf(d->filters, "%s%s", d->filters->len ? ", " : "", json);
    return NULL;
}

/* A "checksum N NAME" line: each stored chunk ends with an N-byte
 * checksum NAME that no codec decodes. */
static const char *checksum_line(desc *d, const char *rest)
{
    unsigned n = 0;
    int at = 0;
    if (sscanf(rest, "%u %n", &n, &at) != 1 || !at || !n || n > 64)
        return "the reader's chunk table is malformed";
    d->trailer = n;
    g_free(d->trailer_name);
    d->trailer_name = g_strdup(rest + at);
    return NULL;
}

/* A reason about the checksum, in r's texts. */
static const char *trailer_why(hpc_refs *r, const desc *d, const char *fmt)
{
    char *s = g_strdup_printf(fmt, d->trailer_name);
    const char *why = g_string_chunk_insert(r->texts, s);
    g_free(s);
    return why;
}

/* "fill HEX COUNT": the fill value is the bytes HEX COUNT times. */
static const char *fill_line(desc *d, const char *rest)
{
    size_t n = strspn(rest, "0123456789abcdef");
    char *hex = g_strndup(rest, n);
    guint64 count = 0;
    int at = 0;
    if (rest[n] != ' ' || sscanf(rest + n + 1, "%" G_GUINT64_FORMAT "%n", &count, &at) != 1 ||
        rest[n + 1 + at] || !count) {
        g_free(hex);
        return "the reader's chunk table is malformed";
    }
    if (d->fill)
        g_bytes_unref(d->fill);
    d->fill = hex_bytes(hex);
    d->fill_count = count;
    g_free(hex);
    return NULL;
}

/* The fill value whole when it is one element of a (the only size zarr
 * takes), else NULL. */
static GBytes *fill_of(const desc *d, const hpc_refs_array *a)
{
    gsize n = d->fill ? g_bytes_get_size(d->fill) : 0;
    uint64_t total;
    if (!d->fill || !hpc_mul_u64(n, d->fill_count, &total) || total != a->itemsize)
        return NULL;
    if (d->fill_count == 1)
        return g_bytes_ref(d->fill);
    const guint8 *p = g_bytes_get_data(d->fill, NULL);
    GByteArray *b = g_byte_array_sized_new((guint)total);
    for (uint64_t i = 0; i < d->fill_count; i++)
        g_byte_array_append(b, p, (guint)n);
    return g_byte_array_free_to_bytes(b);
}

/* .zarray of a chunked (or unallocated contiguous) dataset. */
static const char *start_array(hpc_refs *r, desc *d, const char *key, const hpc_refs_array *a)
{
    if (strcmp(d->layout, "chunked") && a->nd) {
        d->nd = a->nd;                  /* unallocated contiguous: one chunk */
        memcpy(d->chunk, a->shape, sizeof d->chunk);
        for (int i = 0; i < a->nd; i++)
            d->chunk[i] = MAX(d->chunk[i], 1);
    }
    if (d->nd != a->nd)
        return "its chunk rank differs from its shape";
    /* the fill value of chunks never written, which fill_chunks() writes */
    GBytes *whole = fill_of(d, a);
    if (d->fill)
        g_bytes_unref(d->fill);
    d->fill = whole;
    d->fill_count = 1;
    char *fill = fill_json(d->fill, a, a->dtype[0]);
    char *flt = d->filters->len ? g_strdup_printf("[%s]", d->filters->str) : NULL;
    GString *z = g_string_new(NULL);
    hpc_refs_zarray(a, d->chunk, NULL, flt, z);
    hpc_refs_text(r, key, ".zarray", z->str);
    g_string_free(z, TRUE);
    d->started = 1;
    int nofill = fill == NULL;
    g_free(fill);
    g_free(flt);
    return nofill ? "FILL" : NULL;
}

/* Whether [off, off + len) lies inside file path (the dataset's own file
 * is looked at once): a damaged chunk index can name bytes past the end,
 * which a reference must never point at. */
static gboolean inside_file(desc *d, const char *path, uint64_t off, uint64_t len)
{
    uint64_t end, size = d->file_size;
    GStatBuf sb;
    if (!hpc_add_u64(off, len, &end))
        return FALSE;
    if (strcmp(path, d->file) || !d->file_size_known) {
        if (g_stat(path, &sb) != 0)
            return FALSE;
        size = (uint64_t)sb.st_size;
    }
    if (!strcmp(path, d->file)) {
        d->file_size = size;
        d->file_size_known = 1;
    }
    return end <= size;
}

/* "c OFFSET SIZE MASK C0,C1,...": one chunk's reference. */
static const char *chunk_line(hpc_refs *r, desc *d, const char *key, const char *rest,
                              const hpc_refs_array *a)
{
    guint64 off, size;
    unsigned mask;
    char coords[1024];
    int at = 0;
    if (sscanf(rest, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %u %1023s%n", &off, &size,
               &mask, coords, &at) != 4)
        return "the reader's chunk table is malformed";
    const char *file = rest[at] == ' ' ? rest + at + 1 : d->file;   /* a chunk in another file */
    if (mask)
        return "a chunk is stored with some filters skipped (a nonzero filter mask, e.g. an "
               "unfiltered partial edge chunk)";
    if (size < d->trailer)
        return trailer_why(r, d, "a chunk shorter than its %s checksum");
    if (!inside_file(d, file, off, size))
        return "a chunk lies beyond the end of its file (a damaged chunk index)";
    gchar **c = g_strsplit(coords, ",", -1);
    GString *name = g_string_new(NULL);
    int i = 0, rank = d->nd - d->nadims;
    for (; c[i] && i < rank; i++) {
        uint64_t v = g_ascii_strtoull(c[i], NULL, 10);
        /* a chunk beyond the extent: libhdf5 1.10 gives such coordinates for
         * some indexes where h5py reads other values; trust none of them */
        if (v % d->chunk[i] || v >= MAX(a->shape[i], 1))
            break;
        g_string_append_printf(name, "%s%" G_GUINT64_FORMAT, i ? "." : "", v / d->chunk[i]);
    }
    const char *why = i != rank || c[i] ? "a chunk off the chunk grid or beyond the extent "
                                          "(libhdf5's chunk coordinates not trusted)" : NULL;
    for (int k = 0; k < d->nadims; k++)         /* an array type's axes: one chunk */
        g_string_append(name, rank + k ? ".0" : "0");
    if (!why)
        hpc_refs_range(r, key, name->str, file, off, size - d->trailer);
    d->nchunks++;
    g_hash_table_add(d->seen, g_string_free(name, FALSE));
    g_strfreev(c);
    return why;
}

/* Byte transposition as numcodecs' shuffle: all first bytes of the
 * elements, then all second bytes, ...; a tail stays. */
static void shuffle(GByteArray *b, unsigned es)
{
    size_t n = es > 1 ? b->len / es : 0;
    if (!n)
        return;
    guint8 *out = g_memdup2(b->data, b->len);
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < es; k++)
            out[k * n + i] = b->data[i * es + k];
    memcpy(b->data, out, n * es);
    g_free(out);
}

/* A zlib stream of stored (uncompressed) deflate blocks: what any zlib
 * decoder reads back as b. */
static void zlib_stored(GByteArray *b)
{
    GByteArray *z = g_byte_array_sized_new(b->len + b->len / 65535 * 5 + 16);
    guint8 head[2] = { 0x78, 0x01 };
    g_byte_array_append(z, head, 2);
    size_t at = 0;
    do {
        size_t n = MIN(b->len - at, 65535u);
        guint8 h[5] = { at + n == b->len, (guint8)n, (guint8)(n >> 8), (guint8)~n,
                        (guint8)(~n >> 8) };
        g_byte_array_append(z, h, 5);
        g_byte_array_append(z, b->data + at, (guint)n);
        at += n;
    } while (at < b->len);
    uint32_t s1 = 1, s2 = 0;
    for (size_t i = 0; i < b->len; i++) {
        s1 = (s1 + b->data[i]) % 65521;
        s2 = (s2 + s1) % 65521;
    }
    uint32_t ad = s2 << 16 | s1;
    guint8 t[4] = { (guint8)(ad >> 24), (guint8)(ad >> 16), (guint8)(ad >> 8), (guint8)ad };
    g_byte_array_append(z, t, 4);
    g_byte_array_set_size(b, 0);
    g_byte_array_append(b, z->data, z->len);
    g_byte_array_free(z, TRUE);
}

/* Grid position idx (C order) as a chunk key. */
static void grid_key(const desc *d, const hpc_refs_array *a, uint64_t idx, GString *k)
{
    uint64_t pos[HPC_REFS_MAX_DIMS];
    for (int i = a->nd - 1; i >= 0; i--) {
        uint64_t n = (a->shape[i] + d->chunk[i] - 1) / d->chunk[i];
        pos[i] = n ? idx % n : 0;
        idx = n ? idx / n : 0;
    }
    g_string_truncate(k, 0);
    for (int i = 0; i < a->nd; i++)
        g_string_append_printf(k, "%s%" G_GUINT64_FORMAT, i ? "." : "", pos[i]);
    if (!a->nd)
        g_string_append_c(k, '0');
}

/* Whether every codec is one written here (for chunks never written). */
static int codecs_known(const desc *d)
{
    for (guint i = 0; i < d->codecs->len; i++)
        if (g_array_index(d->codecs, codec, i).kind == CODEC_OTHER)
            return 0;
    return 1;
}

/* Every chunk never written, inline: the fill value encoded by the pipeline. */
static const char *fill_chunks(hpc_refs *r, desc *d, const char *key, const hpc_refs_array *a,
                               uint64_t total, int nofill)
{
    uint64_t missing = 0, elems = 1, bytes;
    GString *name = g_string_new(NULL);
    for (uint64_t i = 0; total != UINT64_MAX && i < total; i++) {
        grid_key(d, a, i, name);
        missing += !g_hash_table_contains(d->seen, name->str);
    }
    g_string_free(name, TRUE);
    if (!missing)
        return NULL;
    if (nofill || !d->fill || total == UINT64_MAX)
        return "chunks never written and a fill value zarr cannot hold (or none defined)";
    if (!codecs_known(d))
        return "chunks never written and a codec they are not encoded with here";
    gsize fn;
    const guint8 *fv = g_bytes_get_data(d->fill, &fn);
    for (int i = 0; i < a->nd; i++)
        elems *= d->chunk[i];
    if (!hpc_mul_u64(elems, fn, &bytes) || bytes > FILL_CHUNK_MAX ||
        missing > FILL_TOTAL_MAX / MAX(bytes, 1))
        return "too many or too large chunks never written to write inline";
    GByteArray *b = g_byte_array_sized_new((guint)bytes);
    for (uint64_t i = 0; i < elems; i++)
        g_byte_array_append(b, fv, (guint)fn);
    for (guint i = 0; i < d->codecs->len; i++) {
        const codec *k = &g_array_index(d->codecs, codec, i);
        if (k->kind == CODEC_SHUFFLE)
            shuffle(b, k->elemsize);
        else
            zlib_stored(b);
    }
    name = g_string_new(NULL);
    for (uint64_t i = 0; i < total; i++) {
        grid_key(d, a, i, name);
        if (!g_hash_table_contains(d->seen, name->str))
            hpc_refs_inline(r, key, name->str, b->data, b->len);
    }
    g_string_free(name, TRUE);
    g_byte_array_free(b, TRUE);
    return NULL;
}

/* Chunks of the whole shape on d's grid. */
static uint64_t grid_chunks(const desc *d, const hpc_refs_array *a)
{
    uint64_t n = 1;
    for (int i = 0; i < a->nd; i++)
        if (!hpc_mul_u64(n, (a->shape[i] + d->chunk[i] - 1) / d->chunk[i], &n))
            return UINT64_MAX;
    return n;
}

/* "dtype SIZE JSON" (the file's) or "sdtype SIZE JSON" (the served
 * bytes'): a typestr is kept without its quotes, a list as it is. */
static const char *dtype_line(desc *d, const char *line)
{
    int served = line[0] == 's', at = 0;
    guint64 size = 0;
    if (sscanf(line + (served ? 7 : 6), "%" G_GUINT64_FORMAT " %n", &size, &at) != 1 || !at)
        return "the reader's chunk table is malformed";
    const char *t = line + (served ? 7 : 6) + at;
    size_t n = strlen(t);
    char *v = t[0] == '"' && n > 2 && t[n - 1] == '"' ? g_strndup(t + 1, n - 2) : g_strdup(t);
    g_free(served ? d->zserved : d->zdtype);
    *(served ? &d->zserved : &d->zdtype) = v;
    d->zsize = size;
    return NULL;
}

/* A header line into d; a reason (in r's texts) when the array cannot be
 * referenced. */
static const char *header_line(hpc_refs *r, desc *d, const char *line)
{
    if (g_str_has_prefix(line, "file ")) {      /* the reader's own overrides the core's */
        g_free(d->file);
        d->file = g_strdup(line + 5);
    }
    else if (g_str_has_prefix(line, "layout "))
        d->layout = g_strdup(line + 7);
    else if (g_str_has_prefix(line, "order "))
        d->order = line[6] == 'b' ? '>' : line[6] == 'l' ? '<' : '|';
    else if (g_str_has_prefix(line, "unsup ") && !d->unsup)
        d->unsup = g_strdup(line + 6);
    else if (g_str_has_prefix(line, "dtype ") || g_str_has_prefix(line, "sdtype "))
        return dtype_line(d, line);
    else if (sscanf(line, "addr %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT, &d->addr, &d->size) == 2)
        d->has_addr = 1;
    else if (g_str_has_prefix(line, "codec "))
        return codec_line(d, line + 6);
    else if (g_str_has_prefix(line, "nocodec "))
        return g_string_chunk_insert(r->texts, line + 8);
    else if (g_str_has_prefix(line, "checksum "))
        return checksum_line(d, line + 9);
    else if (g_str_has_prefix(line, "adims ")) {
        gchar **c = g_strsplit(line + 6, ",", -1);
        for (d->nadims = 0; c[d->nadims] && d->nadims < HPC_REFS_MAX_DIMS; d->nadims++)
            d->adims[d->nadims] = g_ascii_strtoull(c[d->nadims], NULL, 10);
        g_strfreev(c);
    } else if (g_str_has_prefix(line, "chunk ")) {
        gchar **c = g_strsplit(line + 6, ",", -1);
        for (d->nd = 0; c[d->nd] && d->nd < HPC_REFS_MAX_DIMS; d->nd++)
            d->chunk[d->nd] = MAX(g_ascii_strtoull(c[d->nd], NULL, 10), 1);
        g_strfreev(c);
    } else if (g_str_has_prefix(line, "vs ")) {
        g_ptr_array_add(d->vs, hex_bytes(line + 3));
    } else if (g_str_has_prefix(line, "fill ") && strcmp(line + 5, "none")) {
        return fill_line(d, line + 5);
    } else if (meta_line(&d->m, line, 1)) {
        return NULL;
    } else if (!strcmp(line, "checksums verified"))
        d->verified = 1;
    return NULL;
}

/* The file's dtype: the mount's (little-endian) with the file's order, or
 * the reader's for a compound. */
static const char *file_dtype(const desc *d, hpc_refs_array *f)
{
    if (d->zdtype) {
        if (!hpc_refs_retype(f, d->zdtype, d->zsize))
            return SIZE_DIFFERS;
    } else if (f->structured) {
        return NO_ZDTYPE;
    } else if (d->order == '>' && f->dtype[0] == '<') {
        f->dtype[0] = '>';
    } else if (d->order == '>' || (d->order == '|' && f->itemsize > 1 && f->dtype[0] != '|')) {
        return "its type's byte order is not one numpy names";
    }
    f->raw = 1;
    return NULL;
}

/* Contiguous in the file's byte order: one extent on a regular grid. */
static int contiguous(hpc_refs *r, desc *d, hpc_ino ino, const char *key, const char *name,
                      const hpc_refs_array *f, const char **why)
{
    if (d->size != f->nbytes) {
        *why = "its stored size differs from its shape";
        return HPC_OK;
    }
    if (!inside_file(d, d->file, d->addr, d->size)) {
        *why = "its data lie beyond the end of its file (a damaged layout)";
        return HPC_OK;
    }
    GArray *ex = g_array_new(FALSE, FALSE, sizeof(hpc_refs_ext));
    hpc_refs_ext e = { d->file, d->addr, d->size, d->addr + d->size };
    g_array_append_val(ex, e);
    int rc = hpc_refs_extents(r, ino, key, name, f, ex, why);
    g_array_free(ex, TRUE);
    return rc;
}

/* An array type's dims as trailing axes of f (and of the chunks). */
static const char *add_adims(desc *d, hpc_refs_array *f, int chunked)
{
    if (f->nd + d->nadims > HPC_REFS_MAX_DIMS || (chunked && d->nd != f->nd))
        return "more dimensions with its array type's than references describe";
    for (int i = 0; i < d->nadims; i++) {
        f->shape[f->nd++] = d->adims[i];
        if (chunked)
            d->chunk[d->nd++] = MAX(d->adims[i], 1);
    }
    return NULL;
}

static void put_le32(GByteArray *b, uint32_t v)
{
    guint8 le[4] = { (guint8)v, (guint8)(v >> 8), (guint8)(v >> 16), (guint8)(v >> 24) };
    g_byte_array_append(b, le, 4);
}

/* An object array whose elements the reader listed ("vs" lines): one
 * chunk inline in numcodecs' variable-length encoding (a count, then
 * each element's length and bytes, all little-endian uint32), VLenUTF8
 * when every element is UTF-8 (h5py's str), else VLenBytes. */
static const char *object_array(hpc_refs *r, desc *d, const char *key, hpc_refs_array *f)
{
    uint64_t n = f->nd ? f->shape[0] : 1, total = 4;
    for (int i = 1; i < f->nd; i++)
        n = hpc_mul_u64_sat(n, f->shape[i]);   /* never wraps to the count listed */
    if (d->vs->len != n)
        return "objects (user.dtype O) whose elements its reader does not list (too many or "
               "too large to write inline, or region references)";
    int utf8 = 1;
    for (guint i = 0; i < d->vs->len; i++) {
        gsize len;
        const char *p = g_bytes_get_data(g_ptr_array_index(d->vs, i), &len);
        utf8 &= !len || (g_utf8_validate_len(p, len, NULL) && !memchr(p, 0, len));
        total += 4 + len;
    }
    if (total > VLEN_INLINE_MAX || n > UINT32_MAX)
        return "objects (user.dtype O) larger than written inline";
    GByteArray *b = g_byte_array_sized_new((guint)total);
    put_le32(b, (uint32_t)n);
    for (guint i = 0; i < d->vs->len; i++) {
        gsize len;
        const guint8 *p = g_bytes_get_data(g_ptr_array_index(d->vs, i), &len);
        put_le32(b, (uint32_t)len);
        if (len)                        /* an empty GBytes has no data pointer */
            g_byte_array_append(b, p, (guint)len);
    }
    g_free(f->dtype);
    f->dtype = g_strdup("|O");
    uint64_t chunks[HPC_REFS_MAX_DIMS];
    for (int i = 0; i < f->nd; i++)
        chunks[i] = MAX(f->shape[i], 1);
    GString *z = g_string_new(NULL);
    hpc_refs_zarray(f, chunks, NULL,
                    utf8 ? "[{\"id\": \"vlen-utf8\"}]" : "[{\"id\": \"vlen-bytes\"}]", z);
    hpc_refs_text(r, key, ".zarray", z->str);
    g_string_free(z, TRUE);
    GString *k = g_string_new(NULL);
    for (int i = 0; i < f->nd; i++)
        g_string_append(k, i ? ".0" : "0");
    if (n)
        hpc_refs_inline(r, key, k->len ? k->str : "0", b->data, b->len);
    g_string_free(k, TRUE);
    g_byte_array_free(b, TRUE);
    return NULL;
}

/* Walk the reader's lines: header, then chunk lines. */
static int describe(hpc_refs *r, desc *d, gchar **lines, hpc_ino ino, const char *key,
                    const char *name, hpc_refs_array *f, const char **why, int *done)
{
    int i = 0;
    for (; lines[i] && !*why && !g_str_has_prefix(lines[i], "c "); i++)
        *why = header_line(r, d, lines[i]);
    if (*why || !d->layout || !d->file)
        return *why || d->layout ? HPC_OK : HPC_E_CORRUPT;
    if (d->m.ncdim) {
        *why = NCDIM_NOTE;
        *done = 1;
        return HPC_OK;
    }
    if (f->object) {
        *done = 1;
        *why = object_array(r, d, key, f);
        return HPC_OK;
    }
    if (d->m.ncfill && !f->structured)      /* _FillValue: zarr's fill_value */
        f->fill = fill_json(d->m.ncfill, f, d->order);
    int chunked = !strcmp(d->layout, "chunked");
    if (!d->unsup && (*why = add_adims(d, f, chunked))) {
        *done = 1;
        return HPC_OK;
    }
    if (!strcmp(d->layout, "compact") && !d->unsup && f->nbytes <= COMPACT_MAX) {
        *done = 1;                      /* compact: inline, whatever the threshold */
        if (d->zserved && !hpc_refs_retype(f, d->zserved, d->zsize))
            *why = SIZE_DIFFERS;
        else if (f->structured)
            *why = NO_ZDTYPE;
        return *why ? HPC_OK : hpc_refs_inline_array(r, ino, key, f);
    }
    if (!chunked && d->unsup && !d->has_addr && !f->structured)
        return HPC_OK;                  /* the mount's bytes, as the extents give them */
    *done = 1;
    if (d->unsup || (*why = file_dtype(d, f))) {
        *why = *why ? *why : g_string_chunk_insert(r->texts, d->unsup);
        return HPC_OK;
    }
    if (!chunked && d->has_addr)
        return contiguous(r, d, ino, key, name, f, why);
    const char *w = start_array(r, d, key, f);
    int nofill = w && !strcmp(w, "FILL");
    *why = nofill ? NULL : w;
    for (; lines[i] && !*why; i++)
        *why = g_str_has_prefix(lines[i], "c ") ? chunk_line(r, d, key, lines[i] + 2, f)
                                                : header_line(r, d, lines[i]);
    if (!*why && d->unsup)      /* found while it listed chunks: some are missing */
        *why = g_string_chunk_insert(r->texts, d->unsup);
    if (!*why && d->trailer && !d->verified)
        *why = trailer_why(r, d, "%s checksums that were not checked");
    if (!*why)      /* by key: chunks beyond a shrunk extent count in nchunks */
        *why = fill_chunks(r, d, key, f, grid_chunks(d, f), nofill);
    return HPC_OK;
}

/* The dimension names of the array at path (from the root) reached
 * through an external link: those the root's file gives it ("xdim"), not
 * its own file's. */
static void ext_dims(hpc_refs *r, const char *path, GArray **dims)
{
    char *p = g_canonicalize_filename(path, "/");
    const GArray *x = g_hash_table_lookup(r->xdims, p);
    g_free(p);
    if (*dims)
        g_array_free(*dims, TRUE);
    *dims = NULL;
    for (guint i = 0; x && i < x->len; i++) {
        const hpc_refs_dim *d = &g_array_index(x, hpc_refs_dim, i);
        dim_add(dims, d->len, d->name);
    }
}

/* Text hex (up to a blank or the end) as a string; *end past it. */
static char *hex_str(const char *p, const char **end)
{
    size_t n = strspn(p, "0123456789abcdef");
    char *h = g_strndup(p, n);
    GBytes *b = hex_bytes(h);
    gsize len;
    const char *s = g_bytes_get_data(b, &len);
    char *out = memchr(s, 0, len) ? NULL : g_strndup(s, len);
    g_bytes_unref(b);
    g_free(h);
    *end = p + n + (p[n] == ' ');
    return out;
}

static void xlink_free(void *p)
{
    hpc_refs_xlink *x = p;
    g_free(x->file);
    g_free(x->obj);
    g_free(x);
}

static void ext_line(hpc_refs *r, const char *line)
{
    const char *p;
    guint64 len;
    int at = 0;
    if (g_str_has_prefix(line, "xfile ")) {
        hpc_refs_xlink *x = g_new0(hpc_refs_xlink, 1);
        char *path = hex_str(line + 6, &p);
        x->file = hex_str(p, &p);
        x->obj = hex_str(p, &p);
        if (path && x->file && x->obj)
            g_hash_table_replace(r->xlinks, g_steal_pointer(&path), g_steal_pointer(&x));
        g_free(path);
        if (x)
            xlink_free(x);
    } else if (g_str_has_prefix(line, "xdim ")) {
        char *path = hex_str(line + 5, &p);
        GArray *dims = path ? g_hash_table_lookup(r->xdims, path) : NULL;
        if (path && sscanf(p, "%" G_GUINT64_FORMAT " %n", &len, &at) == 1 && at) {
            GArray *old = dims;
            dim_add(&dims, len, p + at);
            if (!old)
                g_hash_table_insert(r->xdims, g_strdup(path), dims);
        }
        g_free(path);
    }
}

void hpc_refs_ext_load(hpc_refs *r)
{
    GString *t = g_string_new(NULL);
    hpc_stat st;
    r->xlinks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, xlink_free);
    r->xdims = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify)g_array_unref);
    if (hpc_mount_resolve(r->m, "/", &st) == HPC_OK &&
        hpc_mount_chunks(r->m, st.ino, t) == HPC_OK) {
        gchar **lines = g_strsplit(t->str, "\n", -1);
        for (gchar **l = lines; *l; l++)
            ext_line(r, *l);
        g_strfreev(lines);
    }
    g_string_free(t, TRUE);
}

int hpc_refs_chunked(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
                     hpc_refs_array *a, const char **why, int *done)
{
    GString *t = g_string_new(NULL);
    *done = 0;
    int rc = hpc_mount_chunks(r->m, ino, t);
    if (rc == HPC_E_NOTSUP) {
        g_string_free(t, TRUE);
        return HPC_OK;
    }
    desc d = { .filters = g_string_new(NULL), .order = '|',
               .codecs = g_array_new(FALSE, FALSE, sizeof(codec)),
               .seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
               .vs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref) };
    char *self = g_strdup_printf("%s%s%s", r->root_path, strcmp(r->root_path, "/") ? "/" : "",
                                 key);
    d.m.self = self;
    hpc_refs_array f = *a;
    f.dtype = g_strdup(a->dtype);
    gchar **lines = g_strsplit(t->str, "\n", -1);
    if (rc == HPC_OK)
        rc = describe(r, &d, lines, ino, key, name, &f, why, done);
    if (*done && !*why) {               /* an array type's axes: in .zattrs too */
        a->nd = f.nd;
        memcpy(a->shape, f.shape, sizeof a->shape);
    }
    /* a dataset of several links: this link's names; one reached through
     * an external link: those libnetcdf gives it from the root's file */
    a->dims = d.m.ldims ? g_steal_pointer(&d.m.ldims) : g_steal_pointer(&d.m.dims);
    if (r->xdepth)
        ext_dims(r, self, &a->dims);
    a->attrs = g_steal_pointer(&d.m.attrs);
    a->fillattr = g_steal_pointer(&d.m.fillattr);
    a->novar = d.m.novar;
    a->fill = f.fill;
    g_strfreev(lines);
    g_free(f.dtype);
    g_free(self);
    desc_clear(&d);
    g_string_free(t, TRUE);
    return rc;
}

int hpc_refs_dir_attrs(hpc_refs *r, hpc_ino ino, GString *o)
{
    GString *t = g_string_new(NULL);
    meta m = { 0 };
    if (hpc_mount_chunks(r->m, ino, t) == HPC_OK) {
        gchar **lines = g_strsplit(t->str, "\n", -1);
        for (gchar **l = lines; *l; l++)
            meta_line(&m, *l, 0);
        g_strfreev(lines);
    }
    int got = m.attrs != NULL;
    if (got)
        g_string_append(o, m.attrs->str);
    meta_clear(&m);
    g_string_free(t, TRUE);
    return got;
}
