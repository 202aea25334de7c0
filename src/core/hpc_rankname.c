/* hpc_rankname.c - validated printf formats for per-rank names. */
#include "hpc_rankname.h"
#include "hpc_error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append literal text [s, e) to dst folding "%%"; fail on any other '%'. */
static int copy_literal(const char *s, const char *e, char *dst, size_t cap)
{
    size_t n = 0;
    while (s < e) {
        if (*s == '%') {
            if (s + 1 >= e || s[1] != '%')
                return -1;
            s++;
        }
        if (n + 1 >= cap)
            return -1;
        dst[n++] = *s++;
    }
    dst[n] = '\0';
    return 0;
}

int hpc_rankname_compile(const char *fmt, hpc_rankname *out, GError **err)
{
    memset(out, 0, sizeof *out);
    if (!fmt)
        fmt = HPC_RANKNAME_DEFAULT;
    /* find the single conversion: the first '%' not followed by '%' */
    const char *p = fmt;
    while ((p = strchr(p, '%')) != NULL && p[1] == '%')
        p += 2;
    if (!p)
        goto bad;
    const char *q = p + 1;
    char flags[8] = "";
    size_t nf = 0;
    while (*q && strchr("-0+ #", *q)) {
        if (nf + 1 >= sizeof flags)
            goto bad;
        flags[nf++] = *q++;
    }
    flags[nf] = '\0';
    int width = 0;
    while (*q >= '0' && *q <= '9') {
        width = width * 10 + (*q++ - '0');
        if (width > 64)
            goto bad;
    }
    while (*q == 'l' || *q == 'h' || *q == 'j' || *q == 'z' || *q == 't')
        q++;     /* length modifiers are replaced by ll below */
    char c = *q;
    if (c == '\0' || !strchr("diuxXo", c))
        goto bad;
    out->base = (c == 'x' || c == 'X') ? 16 : c == 'o' ? 8 : 10;
    out->is_unsigned = (c != 'd' && c != 'i');
    /* "%.0d" prints nothing for width 0 */
    g_snprintf(out->conv, sizeof out->conv, "%%%s%.0dll%c", flags, width, c);
    if (copy_literal(fmt, p, out->prefix, sizeof out->prefix) != 0 ||
        copy_literal(q + 1, q + 1 + strlen(q + 1), out->suffix, sizeof out->suffix) != 0)
        goto bad;
    if (strchr(out->prefix, '/') || strchr(out->suffix, '/'))
        goto bad;
    return HPC_OK;
bad:
    return hpc_fail(err, HPC_E_INVAL, "rankname", NULL, 0,
                    "'%s' must be a printf format with exactly one integer conversion "
                    "(e.g. rank-%%06d) and no '/'", fmt);
}

int hpc_rankname_format(const hpc_rankname *rn, int64_t rank, char *buf, size_t len)
{
    char num[80];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if (rn->is_unsigned)
        snprintf(num, sizeof num, rn->conv, (unsigned long long)rank);
    else
        snprintf(num, sizeof num, rn->conv, (long long)rank);
#pragma GCC diagnostic pop
    int n = snprintf(buf, len, "%s%s%s", rn->prefix, num, rn->suffix);
    return (n < 0 || (size_t)n >= len) ? HPC_E_RANGE : HPC_OK;
}

int hpc_rankname_parse(const hpc_rankname *rn, const char *name, int64_t *rank)
{
    size_t lp = strlen(rn->prefix), ls = strlen(rn->suffix), ln = strlen(name);
    if (ln <= lp + ls || strncmp(name, rn->prefix, lp) != 0 ||
        strcmp(name + ln - ls, rn->suffix) != 0 || ln - lp - ls >= 80)
        return HPC_E_NOENT;
    char num[80];
    memcpy(num, name + lp, ln - lp - ls);
    num[ln - lp - ls] = '\0';
    /* skip padding the format may have added, then parse */
    const char *s = num;
    while (*s == ' ')
        s++;
    if (rn->base == 16 && (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
        s += 2;
    if (*s == '\0')
        return HPC_E_NOENT;
    char *end;
    errno = 0;
    long long v = rn->is_unsigned ? (long long)strtoull(s, &end, rn->base)
                                  : strtoll(s, &end, rn->base);
    while (*end == ' ')
        end++;
    if (errno != 0 || *end != '\0')
        return HPC_E_NOENT;
    char again[HPC_RANKNAME_MAX * 2 + 80];
    if (hpc_rankname_format(rn, v, again, sizeof again) != HPC_OK || strcmp(again, name) != 0)
        return HPC_E_NOENT;
    *rank = v;
    return HPC_OK;
}
