/* hpc_json.c - JSON text (hpc_json.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "hpc_json.h"

/* A byte that is no UTF-8 becomes U+DC80..U+DCFF, as Python's
 * surrogateescape decodes it: json.loads then os.fsencode give the byte
 * back, and no valid UTF-8 text escapes to the same string. */
void hpc_json_str(GString *o, const char *s)
{
    g_string_append_c(o, '"');
    for (const char *p = s; *p;) {
        unsigned char b = (unsigned char)*p;
        gunichar u = b < 0x80 ? b : g_utf8_get_char_validated(p, -1);
        int bad = u == (gunichar)-1 || u == (gunichar)-2;
        if (b == '"' || b == '\\')
            g_string_append_printf(o, "\\%c", b);
        else if (b >= 0x20 && b < 0x80)
            g_string_append_c(o, (char)b);
        else if (bad || u < 0x10000)
            g_string_append_printf(o, "\\u%04x", bad ? 0xdc00u + b : u);
        else
            g_string_append_printf(o, "\\u%04x\\u%04x", 0xd800 + ((u - 0x10000) >> 10),
                                   0xdc00 + ((u - 0x10000) & 0x3ff));
        p = bad || b < 0x80 ? p + 1 : g_utf8_next_char(p);
    }
    g_string_append_c(o, '"');
}

void hpc_json_double(GString *o, double x, hpc_json_nan nan)
{
    const char *q = nan == HPC_JSON_NAN_STRING ? "\"" : "";
    if (isnan(x) || isinf(x)) {
        g_string_append_printf(o, "%s%s%s", q, isnan(x) ? "NaN" : x > 0 ? "Infinity"
                               : "-Infinity", q);
        return;
    }
    /* the fewest digits that give x back: 0.1 rather than 0.10000000000000001 */
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int prec = 15; prec <= 17; prec++) {
        char fmt[8];
        g_snprintf(fmt, sizeof fmt, "%%.%dg", prec);
        g_ascii_formatd(buf, sizeof buf, fmt, x);
        if (g_ascii_strtod(buf, NULL) == x)
            break;
    }
    g_string_append(o, buf);
    if (!strpbrk(buf, ".eE"))      /* a float stays a float in Python */
        g_string_append(o, ".0");
}

void hpc_json_real_text(GString *o, double x, int single)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (isnan(x) || isinf(x)) {
        g_string_append(o, isnan(x) ? "nan" : x < 0 ? "-inf" : "inf");
        return;
    }
    for (int prec = single ? 6 : 15; prec <= 17; prec++) {
        char fmt[8];
        g_snprintf(fmt, sizeof fmt, "%%.%dg", prec);
        g_ascii_formatd(buf, sizeof buf, fmt, x);
        double back = g_ascii_strtod(buf, NULL);
        if (single ? (float)back == (float)x : back == x)
            break;
    }
    g_string_append(o, buf);
}
