/* hpc_formats.c - the table of format readers, in probe order.  Readers
 * built on optional libraries join when configure found them.
 *
 * A reader left out of the build (configure --without-hdf5, or no libhdf5)
 * is replaced by a stand-in that recognises the format's magic number and
 * refuses to open with "HDF5 support not built", so that such a file is
 * not reported as being of an unknown format.
 *
 * The table also lists the -o options: the core's, with each reader's own
 * (hpc_format.options) where the core's table says. */
#include "config.h"

#include <string.h>

#include "hpc_formats.h"

#if !defined(HAVE_HDF5) || !defined(HAVE_HDF4)
static int not_built_open(hpc_container *c, GError **err)
{
    const char *what = strcmp(c->format->name, "hdf5") == 0 ? "HDF5" : "HDF4 (distributed HDF)";
    return hpc_fail(err, HPC_E_UNSUPPORTED, c->path, NULL, 0,
                    "%s support not built (this build was configured without it)", what);
}
#endif

#ifndef HAVE_HDF5
/* the HDF5 superblock signature, at 0 or after a user block of 512 * 2^k */
static int hdf5_magic(const char *path, const unsigned char *head, size_t len)
{
    (void)path;
    static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
    for (size_t at = 0; head && at + sizeof sig <= len; at = at ? at * 2 : 512)
        if (memcmp(head + at, sig, sizeof sig) == 0)
            return 100;
    return 0;
}

/* with the reader's options, which a build without it still accepts */
static const hpc_format hpc_format_hdf5_not_built = {
    .name = "hdf5", .probe = hdf5_magic, .open = not_built_open,
    .options = hpc_hdf5_options,
};
#endif

#ifndef HAVE_HDF4
/* the HDF4 magic number, at 0 */
static int hdf4_magic(const char *path, const unsigned char *head, size_t len)
{
    (void)path;
    static const unsigned char sig[4] = { 0x0e, 0x03, 0x13, 0x01 };
    return head && len >= sizeof sig && memcmp(head, sig, sizeof sig) == 0 ? 100 : 0;
}

static const hpc_format hpc_format_dhdf_not_built = {
    .name = "dhdf", .probe = hdf4_magic, .open = not_built_open,
};
#endif

const hpc_format *const hpc_formats[] = {
    &hpc_format_sion,
    &hpc_format_gsd,
    &hpc_format_fti,
    &hpc_format_netcdf3,
#ifdef HAVE_HDF5
    &hpc_format_hdf5,
#else
    &hpc_format_hdf5_not_built,
#endif
#ifdef HAVE_HDF4
    &hpc_format_dhdf,
#else
    &hpc_format_dhdf_not_built,
#endif
    NULL,
};

int hpc_format_built(const hpc_format *f)
{
#if !defined(HAVE_HDF5) || !defined(HAVE_HDF4)
    return f->open != not_built_open;
#else
    (void)f;
    return 1;
#endif
}

void hpc_formats_describe(GString *out)
{
    g_string_append(out, "formats:");
    for (const hpc_format *const *f = hpc_formats; *f; f++)
        if (hpc_format_built(*f))
            g_string_append_printf(out, " %s", (*f)->name);
    const char *sep = " (not built:";
    for (const hpc_format *const *f = hpc_formats; *f; f++)
        if (!hpc_format_built(*f)) {
            g_string_append_printf(out, "%s %s", sep, (*f)->name);
            sep = "";
        }
    if (!*sep)
        g_string_append(out, ")");
}

/* The readers' own option rows, in probe order. */
static int readers_options_each(hpc_option_fn fn, void *ctx)
{
    for (const hpc_format *const *f = hpc_formats; *f; f++) {
        for (const hpc_option_def *d = (*f)->options; d && d->name; d++) {
            int rc = fn(d, ctx);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int hpc_formats_options_each(hpc_option_fn fn, void *ctx)
{
    for (const hpc_option_def *d = hpc_option_defs; d->name; d++) {
        int rc = d->kind == HPC_OPT_READERS ? readers_options_each(fn, ctx) : fn(d, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

typedef struct {
    hpc_options *opts;
    const char *arg;
    GError **err;
    int rc;
} fmt_set_ctx;

static int set_row(const hpc_option_def *d, void *ctx)
{
    fmt_set_ctx *s = ctx;
    s->rc = hpc_option_set(s->opts, d, s->arg, s->err);
    return s->rc != HPC_E_NOENT;
}

int hpc_formats_option_set(hpc_options *opts, const char *arg, GError **err)
{
    fmt_set_ctx s = { opts, arg, err, HPC_E_NOENT };
    hpc_formats_options_each(set_row, &s);
    return s.rc;
}

typedef struct {
    GString *out;
    int all;
} fmt_help_ctx;

static int help_row(const hpc_option_def *d, void *ctx)
{
    fmt_help_ctx *h = ctx;
    hpc_option_help(h->out, d, h->all);
    return 0;
}

void hpc_formats_options_help(GString *out, int all)
{
    fmt_help_ctx h = { out, all };
    hpc_formats_options_each(help_row, &h);
}

const hpc_format *hpc_format_by_name(const char *name)
{
    for (const hpc_format *const *f = hpc_formats; *f; f++)
        if (g_ascii_strcasecmp((*f)->name, name) == 0)
            return *f;
    return NULL;
}

const hpc_format *hpc_format_best(const char *path, const unsigned char *head, size_t len)
{
    const hpc_format *best = NULL;
    int best_score = 0;
    for (const hpc_format *const *f = hpc_formats; *f; f++) {
        int sc = (*f)->probe(path, len ? head : NULL, len);
        if (sc > best_score) {
            best_score = sc;
            best = *f;
        }
    }
    return best;
}
