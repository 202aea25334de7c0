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

/* Python's repr of the descr: a type string in quotes, a structured
 * type's literal as it is (the readers write it as Python's repr). */
static int descr_repr(const char *dtype, GString *out)
{
    if (!*dtype)
        return HPC_E_INVAL;
    if (dtype[0] == '[') {
        g_string_append(out, dtype);
        return HPC_OK;
    }
    if (strpbrk(dtype, "'\\\n"))
        return HPC_E_INVAL;
    g_string_append_printf(out, "'%s'", dtype);
    return HPC_OK;
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
    int rc = descr_repr(dtype, text);
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
