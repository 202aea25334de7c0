/* hpc_formats.c - the table of format readers, in probe order.  Readers
 * built on optional libraries join when configure found them.
 *
 * A reader left out of the build (configure --without-hdf5, or no libhdf5)
 * is replaced by a stand-in that recognises the format's magic number and
 * refuses to open with "HDF5 support not built", so that such a file is
 * not reported as being of an unknown format. */
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

static const hpc_format hpc_format_hdf5_not_built = {
    .name = "hdf5", .probe = hdf5_magic, .open = not_built_open,
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
