/* hpc_options.c - the table of container options and its parser. */
#include "hpc_options.h"
#include "hpc_error.h"
#include "hpc_rankname.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define FIELD(f) offsetof(hpc_options, f), sizeof(((hpc_options *)0)->f)

static int check_rankname(hpc_options *o, const char *v, GError **err)
{
    (void)o;
    hpc_rankname rn;
    return hpc_rankname_compile(v, &rn, err);
}

/* Seconds from min to a day, into *out. */
static int parse_seconds(const char *name, const char *v, double min, double *out, GError **err)
{
    char *end = NULL;
    double s = v ? g_ascii_strtod(v, &end) : -1;
    if (!v || end == v || *end != '\0' || !(s >= min) || s > 86400)
        return hpc_fail(err, HPC_E_INVAL, name, NULL, 0,
                        "'%s' is not a number of seconds from %g to 86400", v ? v : "", min);
    *out = s;
    return HPC_OK;
}

static int set_helper_cpu(hpc_options *o, const char *v, GError **err)
{
    return parse_seconds("helper_cpu", v, 0.01, &o->helper_cpu, err);
}

static int set_helper_wait(hpc_options *o, const char *v, GError **err)
{
    return parse_seconds("helper_wait", v, 0.1, &o->helper_wait, err);
}

/* The option of the former trial open: its CPU limit now; 0: in process. */
static int set_open_timeout(hpc_options *o, const char *v, GError **err)
{
    double s = 0;
    int rc = parse_seconds("open_timeout", v, 0, &s, err);
    if (rc == HPC_OK && s == 0)
        o->inproc = 1;
    else if (rc == HPC_OK)
        o->helper_cpu = s;
    return rc;
}

static int print_seconds(const hpc_options *o, const char *name, char **out)
{
    double s = strcmp(name, "helper_cpu") == 0 ? o->helper_cpu
             : strcmp(name, "helper_wait") == 0 ? o->helper_wait : 0;
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    *out = s > 0 ? g_strdup_printf("%s=%s", name, g_ascii_dtostr(buf, sizeof buf, s)) : NULL;
    return HPC_OK;
}

const hpc_option_def hpc_option_defs[] = {
    { "cache_size", "SIZE", "block cache size (default " G_STRINGIFY(HPC_DEFAULT_CACHE_MB) "M)",
      HPC_OPT_SIZE, FIELD(cache_size), 4096, 0, NULL, HPC_OPT_TUNING },
    { "blocksize", "SIZE", "cache block size (default: the container's)",
      HPC_OPT_SIZE, FIELD(blocksize), 512, 64u << 20, NULL, HPC_OPT_TUNING },
    { "format", "NAME", "force a format instead of detecting it",
      HPC_OPT_STRING, FIELD(format), 0, 0, NULL, HPC_OPT_BASIC },
    { "rankname", "FORMAT", "printf name of per-rank files (default rank-%06d)",
      HPC_OPT_STRING, FIELD(rankname), 0, 0, check_rankname, HPC_OPT_BASIC },
    { "nocheck", NULL, "serve data whose checksums fail",
      HPC_OPT_FLAG, FIELD(nocheck), 0, 0, NULL, HPC_OPT_BASIC },
    { "allowholes", NULL, "serve holes of distributed arrays as zeros",
      HPC_OPT_FLAG, FIELD(allowholes), 0, 0, NULL, HPC_OPT_BASIC },
    { "salvage", NULL, "serve files of writers killed before close",
      HPC_OPT_FLAG, FIELD(salvage), 0, 0, NULL, HPC_OPT_BASIC },
    /* the readers' own rows (hpc_format.options), in the readers' order */
    { "", NULL, NULL, HPC_OPT_READERS, 0, 0, 0, 0, NULL, HPC_OPT_BASIC },
    { "inproc", NULL, "run the HDF5/HDF4 libraries in this process, not\n"
                      "in the supervised helper (for tests and measuring)",
      HPC_OPT_FLAG, FIELD(inproc), 0, 0, NULL, HPC_OPT_TUNING },
    { "helper_cpu", "SECS", "CPU seconds the helper may spend on one request or\n"
                            "on the open (default " G_STRINGIFY(HPC_DEFAULT_HELPER_CPU) ")",
      HPC_OPT_CUSTOM, 0, 0, 0, 0, set_helper_cpu, HPC_OPT_TUNING },
    { "helper_wait", "SECS", "seconds a helper may neither compute nor answer\n"
                             "(default " G_STRINGIFY(HPC_DEFAULT_HELPER_WAIT) ")",
      HPC_OPT_CUSTOM, 0, 0, 0, 0, set_helper_wait, HPC_OPT_TUNING },
    { "helper_mem", "SIZE", "memory a helper may hold (default "
                            G_STRINGIFY(HPC_DEFAULT_HELPER_MEM_MB) "M plus\n"
                            "twice cache_size and the reader's caches)",
      HPC_OPT_SIZE, FIELD(helper_mem), 64u << 20, 0, NULL, HPC_OPT_TUNING },
    { "open_timeout", "SECS", "former name of helper_cpu (0: inproc)",
      HPC_OPT_CUSTOM, 0, 0, 0, 0, set_open_timeout, HPC_OPT_TUNING },
    { "npy", NULL, "show array files as NAME.npy with a NumPy header",
      HPC_OPT_FLAG, FIELD(npy), 0, 0, NULL, HPC_OPT_BASIC },
    { "max_containers", "N", "run directories: containers open at once (default "
                            G_STRINGIFY(HPC_DEFAULT_MAX_CONTAINERS) ")",
      HPC_OPT_COUNT, FIELD(max_containers), 1, 65536, NULL, HPC_OPT_TUNING },
    { "rundir", NULL, "a directory is a run directory even if a reader claims it",
      HPC_OPT_FLAG, FIELD(rundir), 0, 0, NULL, HPC_OPT_BASIC },
    { "noexpand", NULL, "run directories: recognised files shown as plain files",
      HPC_OPT_FLAG, FIELD(noexpand), 0, 0, NULL, HPC_OPT_BASIC },
    { NULL, NULL, NULL, HPC_OPT_FLAG, 0, 0, 0, 0, NULL, HPC_OPT_BASIC },
};

void hpc_options_init(hpc_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->cache_size = HPC_DEFAULT_CACHE_SIZE;
}

void hpc_options_clear(hpc_options *opts)
{
    for (const hpc_option_def *d = hpc_option_defs; d->name; d++) {
        if (d->kind == HPC_OPT_STRING) {
            char **p = (char **)((char *)opts + d->offset);
            g_free(*p);
            *p = NULL;
        }
    }
    g_strfreev(opts->more);
    opts->more = NULL;
}

void hpc_options_copy(hpc_options *dst, const hpc_options *src)
{
    *dst = *src;
    for (const hpc_option_def *d = hpc_option_defs; d->name; d++) {
        if (d->kind == HPC_OPT_STRING) {
            char **p = (char **)((char *)dst + d->offset);
            *p = g_strdup(*p);
        }
    }
    dst->more = g_strdupv(src->more);
}

/* Parse "64M" style sizes (K, M, G; optional "i", "iB" or "B"); refuses
 * what does not fit in 64 bits rather than clamping it. */
static int parse_size(const char *v, uint64_t *out)
{
    char *end;
    if (!v || !g_ascii_isdigit(*v))
        return -1;
    errno = 0;
    guint64 n = g_ascii_strtoull(v, &end, 10);
    if (errno == ERANGE)
        return -1;
    int shift = 0;
    switch (g_ascii_toupper(*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B')
        end += *end == 'i' ? (end[1] == 'B' ? 2 : 1) : 1;
    if (*end != '\0' || n > (G_MAXUINT64 >> shift))
        return -1;
    *out = n << shift;
    return 0;
}

static uint64_t machine_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : G_MAXUINT64;
}

static void store_uint(hpc_options *o, const hpc_option_def *d, uint64_t n)
{
    char *p = (char *)o + d->offset;
    if (d->width == sizeof(uint32_t)) {
        uint32_t v = (uint32_t)n;
        memcpy(p, &v, sizeof v);
    } else {
        memcpy(p, &n, sizeof n);
    }
}

/* The entry of a reader's row in o->more ("name=value" or "name"), or NULL. */
static char **more_find(const hpc_options *o, const char *name)
{
    size_t n = strlen(name);
    for (char **p = o->more; p && *p; p++)
        if (strncmp(*p, name, n) == 0 && ((*p)[n] == '=' || (*p)[n] == '\0'))
            return p;
    return NULL;
}

/* Keep text (owned) as row d's value, in place of an earlier one. */
static void more_put(hpc_options *o, const hpc_option_def *d, char *text)
{
    char **p = more_find(o, d->name);
    if (p) {
        g_free(*p);
        *p = text;
        return;
    }
    guint n = o->more ? g_strv_length(o->more) : 0;
    o->more = g_renew(char *, o->more, n + 2);
    o->more[n] = text;
    o->more[n + 1] = NULL;
}

/* A SIZE or COUNT value inside [min, max] (max 0: the machine's memory). */
static int set_number(hpc_options *o, const hpc_option_def *d, const char *v, GError **err)
{
    uint64_t n, max = d->max ? d->max : machine_memory();
    if (d->width == sizeof(uint32_t))
        max = MIN(max, (uint64_t)G_MAXUINT32);
    const char *end = v;
    while (d->kind == HPC_OPT_COUNT && end && g_ascii_isdigit(*end))
        end++;
    if (parse_size(v, &n) != 0 || (d->kind == HPC_OPT_COUNT && *end) || n < d->min || n > max)
        return hpc_fail(err, HPC_E_INVAL, d->name, NULL, 0,
                        "'%s' is not a %s from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT "%s",
                        v ? v : "", d->kind == HPC_OPT_SIZE ? "size" : "number",
                        (guint64)d->min, (guint64)max,
                        d->kind == HPC_OPT_SIZE ? " bytes (K, M, G suffixes)" : "");
    if (d->width)
        store_uint(o, d, n);
    else
        more_put(o, d, g_strdup_printf("%s=%" G_GUINT64_FORMAT, d->name, (guint64)n));
    return HPC_OK;
}

static void set_string(hpc_options *o, const hpc_option_def *d, const char *v)
{
    if (!d->width) {
        more_put(o, d, g_strdup_printf("%s=%s", d->name, v));
        return;
    }
    char **p = (char **)((char *)o + d->offset);
    g_free(*p);
    *p = g_strdup(v);
}

static int set_one(hpc_options *o, const hpc_option_def *d, const char *v, GError **err)
{
    if (d->kind == HPC_OPT_CUSTOM)
        return d->parse(o, v, err);
    if (d->kind == HPC_OPT_FLAG) {
        if (v)
            return hpc_fail(err, HPC_E_INVAL, d->name, NULL, 0, "takes no value");
        if (d->width)
            *(int *)((char *)o + d->offset) = 1;
        else
            more_put(o, d, g_strdup(d->name));
        return HPC_OK;
    }
    if (!v || !*v)
        return hpc_fail(err, HPC_E_INVAL, d->name, NULL, 0, "needs a value (%s=%s)", d->name, d->value);
    if (d->kind != HPC_OPT_STRING)
        return set_number(o, d, v, err);
    int rc = d->parse ? d->parse(o, v, err) : HPC_OK;
    if (rc == HPC_OK)
        set_string(o, d, v);
    return rc;
}

int hpc_option_set(hpc_options *opts, const hpc_option_def *d, const char *arg, GError **err)
{
    const char *eq = strchr(arg, '=');
    size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (d->kind == HPC_OPT_READERS || strlen(d->name) != nlen || strncmp(arg, d->name, nlen) != 0)
        return HPC_E_NOENT;
    return set_one(opts, d, eq ? eq + 1 : NULL, err);
}

uint64_t hpc_options_number(const hpc_options *opts, const hpc_option_def *d)
{
    char **p = more_find(opts, d->name);
    uint64_t n = 0;
    if (p && d->kind == HPC_OPT_FLAG)
        return 1;
    if (p)                /* set_number wrote it, in decimal */
        (void)parse_size(*p + strlen(d->name) + 1, &n);
    return n;
}

const char *hpc_options_text(const hpc_options *opts, const hpc_option_def *d)
{
    char **p = more_find(opts, d->name);
    return p && (*p)[strlen(d->name)] == '=' ? *p + strlen(d->name) + 1 : NULL;
}

/* One of the core's options as "name=value" (NULL when it has its default). */
static char *option_string(const hpc_options *o, const hpc_option_def *d)
{
    const char *p = (const char *)o + d->offset;
    char *out = NULL;
    if (d->kind == HPC_OPT_READERS) {
        out = NULL;
    } else if (d->kind == HPC_OPT_CUSTOM) {
        print_seconds(o, d->name, &out);
    } else if (d->kind == HPC_OPT_FLAG) {
        out = *(const int *)p ? g_strdup(d->name) : NULL;
    } else if (d->kind == HPC_OPT_STRING) {
        const char *v = *(char *const *)p;
        out = v ? g_strdup_printf("%s=%s", d->name, v) : NULL;
    } else {
        uint64_t n = 0;
        if (d->width == sizeof(uint32_t)) {
            uint32_t v;
            memcpy(&v, p, sizeof v);
            n = v;
        } else {
            memcpy(&n, p, sizeof n);
        }
        out = n ? g_strdup_printf("%s=%" G_GUINT64_FORMAT, d->name, (guint64)n) : NULL;
    }
    return out;
}

char **hpc_options_to_strv(const hpc_options *opts)
{
    GPtrArray *a = g_ptr_array_new();
    for (const hpc_option_def *d = hpc_option_defs; d->name; d++) {
        char *s = option_string(opts, d);
        if (s)
            g_ptr_array_add(a, s);
    }
    for (char **p = opts->more; p && *p; p++)
        g_ptr_array_add(a, g_strdup(*p));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

void hpc_option_help(GString *out, const hpc_option_def *d, int all)
{
    if (d->kind == HPC_OPT_READERS || (d->level == HPC_OPT_TUNING && !all))
        return;
    char *head = d->value ? g_strdup_printf("%s=%s", d->name, d->value) : g_strdup(d->name);
    gchar **lines = g_strsplit(d->help, "\n", -1);
    g_string_append_printf(out, "    -o %-19s %s\n", head, lines[0]);
    for (gchar **l = lines + 1; *l; l++)
        g_string_append_printf(out, "    %-22s %s\n", "", *l);
    g_strfreev(lines);
    g_free(head);
}
