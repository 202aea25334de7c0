/* hpc_npy.c - NPY headers byte-identical to numpy's np.save.
 *
 * numpy writes "{'descr': D, 'fortran_order': False, 'shape': S, }", then
 * spaces so that the first dimension can grow to 21 digits in place, then
 * pads with spaces and one newline until magic + length + header is a
 * multiple of 64 bytes (always at least one space: 1..64 bytes of padding).
 * The header is Latin-1 in formats 1.0 (2-byte length) and 2.0 (4-byte
 * length), UTF-8 in 3.0, chosen as the first that can hold it.
 */
#include "hpc_npy.h"
#include "hpc_error.h"

#include <stdlib.h>
#include <string.h>

#define NPY_ALIGN 64
#define NPY_MAGIC_LEN 8            /* "\x93NUMPY" + major + minor */
#define NPY_GROWTH_DIGITS 21

/* Python's repr of the shape tuple: "()", "(5,)", "(2, 3)". */
static int shape_repr(const char *shape, GString *out, size_t *first_len)
{
    const char *p = shape;
    unsigned n = 0;
    g_string_append_c(out, '(');
    *first_len = 0;
    while (*p) {
        const char *start = p;
        while (g_ascii_isdigit(*p))
            p++;
        if (p == start || p - start > 20 || (*p && *p != ','))
            return HPC_E_INVAL;
        if (p - start > 1 && *start == '0')
            return HPC_E_INVAL;
        if (n++)
            g_string_append(out, ", ");
        else
            *first_len = (size_t)(p - start);
        g_string_append_len(out, start, p - start);
        if (*p == ',' && *++p == '\0')
            return HPC_E_INVAL;
    }
    g_string_append(out, n == 1 ? ",)" : ")");
    return HPC_OK;
}

/* ---- structured dtypes ---------------------------------------------------
 * Readers give a structured type as the Python literal numpy.dtype()
 * accepts: a list of fields, or a dict of names, formats, offsets and
 * itemsize when there are gaps.  numpy writes dtype.descr into the header:
 * a list of fields in offset order with a ('', '|V<n>') field for each gap,
 * nested types converted the same way.  A small literal parser turns the
 * one into the other. */

typedef enum { LIT_STR, LIT_INT, LIT_LIST, LIT_TUPLE, LIT_DICT } lit_type;

typedef struct lit {
    lit_type type;
    char *str;               /* LIT_STR */
    uint64_t num;            /* LIT_INT */
    GPtrArray *items;        /* LIT_LIST, LIT_TUPLE; LIT_DICT: key, value, ... */
} lit;

static void lit_free(gpointer p)
{
    lit *l = p;
    if (!l)
        return;
    g_free(l->str);
    if (l->items)
        g_ptr_array_free(l->items, TRUE);
    g_free(l);
}

static void skip_ws(const char **p)
{
    while (**p == ' ')
        (*p)++;
}

static lit *lit_parse(const char **p, int depth);

static lit *lit_string(const char **p)
{
    char q = *(*p)++;
    GString *v = g_string_new(NULL);
    while (**p && **p != q) {
        if (**p == '\\' && (*p)[1])
            (*p)++;
        g_string_append_c(v, *(*p)++);
    }
    if (**p != q) {
        g_string_free(v, TRUE);
        return NULL;
    }
    (*p)++;
    lit *l = g_new0(lit, 1);
    l->type = LIT_STR;
    l->str = g_string_free(v, FALSE);
    return l;
}

static lit *lit_seq(const char **p, char close, lit_type type, int depth)
{
    lit *l = g_new0(lit, 1);
    l->type = type;
    l->items = g_ptr_array_new_with_free_func(lit_free);
    (*p)++;
    for (;;) {
        skip_ws(p);
        if (**p == close) {
            (*p)++;
            return l;
        }
        lit *item = lit_parse(p, depth + 1);
        if (!item)
            break;
        g_ptr_array_add(l->items, item);
        skip_ws(p);
        if (type == LIT_DICT && l->items->len % 2) {
            if (**p != ':')
                break;
            (*p)++;
            continue;
        }
        if (**p == ',')
            (*p)++;
        else if (**p != close)
            break;
    }
    lit_free(l);
    return NULL;
}

static lit *lit_parse(const char **p, int depth)
{
    skip_ws(p);
    if (depth > 32)
        return NULL;
    switch (**p) {
    case '\'':
    case '"':
        return lit_string(p);
    case '[':
        return lit_seq(p, ']', LIT_LIST, depth);
    case '(':
        return lit_seq(p, ')', LIT_TUPLE, depth);
    case '{':
        return lit_seq(p, '}', LIT_DICT, depth);
    default:
        break;
    }
    if (!g_ascii_isdigit(**p))
        return NULL;
    char *end;
    lit *l = g_new0(lit, 1);
    l->type = LIT_INT;
    l->num = g_ascii_strtoull(*p, &end, 10);
    *p = end;
    return l;
}

static lit *item(const lit *l, guint i)
{
    return l->items && i < l->items->len ? g_ptr_array_index(l->items, i) : NULL;
}

static const lit *dict_get(const lit *d, const char *key, lit_type type)
{
    for (guint i = 0; i + 1 < d->items->len; i += 2) {
        const lit *k = item(d, i), *v = item(d, i + 1);
        if (k->type == LIT_STR && strcmp(k->str, key) == 0)
            return v->type == type ? v : NULL;
    }
    return NULL;
}

/* Python's repr of a str (names and type strings). */
static void repr_str(GString *o, const char *s)
{
    char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
    g_string_append_c(o, q);
    for (; *s; s++) {
        if (*s == '\\' || *s == q)
            g_string_append_c(o, '\\');
        g_string_append_c(o, *s);
    }
    g_string_append_c(o, q);
}

/* A tuple of ints as Python writes it: "(3,)", "(2, 3)". */
static int repr_shape(GString *o, const lit *t, uint64_t *count)
{
    *count = 1;
    if (t->type != LIT_TUPLE || t->items->len == 0)
        return HPC_E_INVAL;
    g_string_append_c(o, '(');
    for (guint i = 0; i < t->items->len; i++) {
        const lit *d = item(t, i);
        if (d->type != LIT_INT || (d->num && *count > G_MAXUINT64 / d->num))
            return HPC_E_INVAL;
        *count *= d->num;
        g_string_append_printf(o, "%s%" G_GUINT64_FORMAT, i ? ", " : "", d->num);
    }
    g_string_append(o, t->items->len == 1 ? ",)" : ")");
    return HPC_OK;
}

static uint64_t plain_size(const char *t)
{
    if (!t[0] || !strchr("<>|=", t[0]) || !g_ascii_isalpha(t[1]) || !g_ascii_isdigit(t[2]))
        return 0;
    uint64_t n = g_ascii_strtoull(t + 2, NULL, 10);
    return t[1] == 'U' ? n * 4 : n;
}

static int descr_of(GString *o, const lit *l, uint64_t *size);

/* One field (name, format) as descr has it: ('name', descr) or
 * ('name', base descr, shape). */
static int field_of(GString *o, const char *name, const lit *fmt, uint64_t *size)
{
    uint64_t count = 1;
    int rc;
    g_string_append_c(o, '(');
    repr_str(o, name);
    g_string_append(o, ", ");
    if (fmt->type == LIT_TUPLE && fmt->items->len == 2) {
        if ((rc = descr_of(o, item(fmt, 0), size)) != HPC_OK)
            return rc;
        g_string_append(o, ", ");
        if ((rc = repr_shape(o, item(fmt, 1), &count)) != HPC_OK)
            return rc;
    } else if ((rc = descr_of(o, fmt, size)) != HPC_OK) {
        return rc;
    }
    g_string_append_c(o, ')');
    if (count && *size > G_MAXUINT64 / count)
        return HPC_E_INVAL;
    *size *= count;
    return HPC_OK;
}

static void pad_field(GString *o, uint64_t n)
{
    g_string_append_printf(o, "('', '|V%" G_GUINT64_FORMAT "')", n);
}

typedef struct dict_field {
    const char *name;
    const lit *fmt;
    uint64_t off;
} dict_field;

static int cmp_off(const void *a, const void *b)
{
    const dict_field *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* {'names', 'formats', 'offsets', 'itemsize'} -> fields in offset order,
 * gaps as padding fields. */
static int dict_descr(GString *o, const lit *d, uint64_t *size)
{
    const lit *names = dict_get(d, "names", LIT_LIST), *fmts = dict_get(d, "formats", LIT_LIST);
    const lit *offs = dict_get(d, "offsets", LIT_LIST), *isz = dict_get(d, "itemsize", LIT_INT);
    if (!names || !fmts || !offs || !isz || names->items->len != fmts->items->len ||
        names->items->len != offs->items->len)
        return HPC_E_INVAL;
    guint n = names->items->len;
    dict_field *f = g_new0(dict_field, n ? n : 1);
    int rc = HPC_OK;
    for (guint i = 0; i < n && rc == HPC_OK; i++) {
        const lit *nm = item(names, i), *of = item(offs, i);
        if (nm->type != LIT_STR || of->type != LIT_INT)
            rc = HPC_E_INVAL;
        f[i] = (dict_field){ nm->str, item(fmts, i), of->num };
    }
    qsort(f, n, sizeof *f, cmp_off);
    uint64_t pos = 0;
    g_string_append_c(o, '[');
    for (guint i = 0; i < n && rc == HPC_OK; i++) {
        uint64_t fs;
        if (f[i].off < pos) {
            rc = HPC_E_INVAL;          /* overlapping fields */
            break;
        }
        if (i || f[i].off > pos)
            g_string_append(o, i ? ", " : "");
        if (f[i].off > pos) {
            pad_field(o, f[i].off - pos);
            g_string_append(o, ", ");
        }
        rc = field_of(o, f[i].name, f[i].fmt, &fs);
        pos = f[i].off + fs;
    }
    if (rc == HPC_OK && isz->num < pos)
        rc = HPC_E_INVAL;
    if (rc == HPC_OK && isz->num > pos) {
        g_string_append(o, n ? ", " : "");
        pad_field(o, isz->num - pos);
    }
    g_string_append_c(o, ']');
    *size = isz->num;
    g_free(f);
    return rc;
}

/* descr of literal l into o; *size its element size in bytes. */
static int descr_of(GString *o, const lit *l, uint64_t *size)
{
    int rc = HPC_OK;
    *size = 0;
    switch (l->type) {
    case LIT_STR:
        *size = plain_size(l->str);
        repr_str(o, l->str);
        return *size || l->str[1] == 'V' ? HPC_OK : HPC_E_INVAL;
    case LIT_DICT:
        return dict_descr(o, l, size);
    case LIT_LIST:
        g_string_append_c(o, '[');
        for (guint i = 0; i < l->items->len && rc == HPC_OK; i++) {
            const lit *f = item(l, i);
            uint64_t fs;
            if (f->type != LIT_TUPLE || f->items->len < 2 || f->items->len > 3 ||
                item(f, 0)->type != LIT_STR)
                return HPC_E_INVAL;
            g_string_append(o, i ? ", " : "");
            if (f->items->len == 3) {
                lit pair = { LIT_TUPLE, NULL, 0, g_ptr_array_new() };
                g_ptr_array_add(pair.items, item(f, 1));
                g_ptr_array_add(pair.items, item(f, 2));
                rc = field_of(o, item(f, 0)->str, &pair, &fs);
                g_ptr_array_free(pair.items, TRUE);
            } else {
                rc = field_of(o, item(f, 0)->str, item(f, 1), &fs);
            }
            *size += fs;
        }
        g_string_append_c(o, ']');
        return rc;
    default:
        return HPC_E_INVAL;
    }
}

/* The descr numpy writes for dtype; *size the element size (0 unknown). */
static int descr_repr(const char *dtype, GString *out, uint64_t *size)
{
    *size = 0;
    if (!*dtype)
        return HPC_E_INVAL;
    if (dtype[0] != '[' && dtype[0] != '{') {
        if (strpbrk(dtype, "'\\\n"))
            return HPC_E_INVAL;
        *size = plain_size(dtype);
        g_string_append_printf(out, "'%s'", dtype);
        return HPC_OK;
    }
    const char *p = dtype;
    lit *l = lit_parse(&p, 0);
    skip_ws(&p);
    int rc = l && !*p && l->type != LIT_STR ? descr_of(out, l, size) : HPC_E_INVAL;
    lit_free(l);
    return rc;
}

int hpc_npy_itemsize(const char *dtype, uint64_t *size)
{
    GString *tmp = g_string_new(NULL);
    int rc = descr_repr(dtype, tmp, size);
    g_string_free(tmp, TRUE);
    return rc == HPC_OK && *size ? HPC_OK : HPC_E_INVAL;
}

/* Latin-1 bytes of UTF-8 text, FALSE when a character is beyond U+00FF. */
static gboolean to_latin1(const GString *text, GString *out)
{
    const char *p = text->str, *end = text->str + text->len;
    while (p < end) {
        gunichar ch = g_utf8_get_char_validated(p, end - p);
        if (ch == (gunichar)-1 || ch == (gunichar)-2 || ch > 0xff)
            return FALSE;
        g_string_append_c(out, (char)ch);
        p = g_utf8_next_char(p);
    }
    return TRUE;
}

/* The length field's value: header, newline and padding. */
static uint64_t wrapped_len(size_t header_len, size_t lenlen)
{
    size_t hlen = header_len + 1;
    return hlen + NPY_ALIGN - (NPY_MAGIC_LEN + lenlen + hlen) % NPY_ALIGN;
}

/* magic, version, length field, header, padding and the newline */
static void wrap(const GString *header, int major, GString *out)
{
    size_t lenlen = major == 1 ? 2 : 4;
    uint64_t total = wrapped_len(header->len, lenlen);
    size_t pad = total - header->len - 1;
    g_string_append_len(out, "\x93NUMPY", 6);
    g_string_append_c(out, (char)major);
    g_string_append_c(out, 0);
    for (size_t i = 0; i < lenlen; i++)
        g_string_append_c(out, (char)((total >> (8 * i)) & 0xff));
    g_string_append_len(out, header->str, header->len);
    for (size_t i = 0; i < pad; i++)
        g_string_append_c(out, ' ');
    g_string_append_c(out, '\n');
}

int hpc_npy_header(const char *dtype, const char *shape, GString *out, GError **err)
{
    GString *text = g_string_new("{'descr': ");
    GString *latin = g_string_new(NULL);
    size_t first_len;
    uint64_t itemsize;
    int rc = descr_repr(dtype, text, &itemsize);
    if (rc == HPC_OK) {
        g_string_append(text, ", 'fortran_order': False, 'shape': ");
        rc = shape_repr(shape, text, &first_len);
    }
    if (rc != HPC_OK) {
        g_set_error(err, HPC_ERROR, HPC_E_INVAL,
                    "no NPY header for dtype '%s' and shape '%s'", dtype, shape);
        goto out;
    }
    g_string_append(text, ", }");
    if (*shape)
        for (size_t i = first_len; i < NPY_GROWTH_DIGITS; i++)
            g_string_append_c(text, ' ');
    if (!to_latin1(text, latin))
        wrap(text, 3, out);
    else if (wrapped_len(latin->len, 2) <= 0xffff)
        wrap(latin, 1, out);
    else
        wrap(latin, 2, out);
out:
    g_string_free(text, TRUE);
    g_string_free(latin, TRUE);
    return rc;
}
