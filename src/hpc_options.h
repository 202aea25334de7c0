/* hpc_options.h - the one table of container options (-o name=value).
 *
 * Every option hpcmount and hpcdump accept for the container is a row of
 * hpc_option_defs: its name, the placeholder of its value (NULL for a
 * flag), its help text, and how the value is checked and stored in
 * hpc_options (hpc_container.h).  hpc_options_set() parses through the
 * table, hpcmount builds its fuse_opt list and its --help from it, and
 * hpcdump its --help; docs/hpcmount.1 lists the same rows.  Adding an
 * option is adding a field to hpc_options and a row here.
 */
#ifndef HPC_OPTIONS_H
#define HPC_OPTIONS_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

struct hpc_options;

typedef enum {
    HPC_OPT_FLAG,      /* int field set to 1; no value */
    HPC_OPT_SIZE,      /* "64M" style size into a uint32_t or uint64_t field */
    HPC_OPT_COUNT,     /* a plain number into a uint32_t or uint64_t field */
    HPC_OPT_STRING,    /* a non-empty string, owned by the options */
    HPC_OPT_CUSTOM,    /* parse() checks and stores */
} hpc_opt_kind;

typedef struct hpc_option_def {
    const char *name;
    const char *value;         /* "SIZE", "N", ...; NULL for a flag */
    const char *help;          /* one line; a '\n' starts a continuation */
    hpc_opt_kind kind;
    size_t offset, width;      /* the field in hpc_options */
    uint64_t min, max;         /* SIZE and COUNT; max 0: this machine's memory */
    /** CUSTOM, or an extra check after the kind's own: HPC_OK or an
     *  hpc_err with *err set. */
    int (*parse)(struct hpc_options *o, const char *v, GError **err);
} hpc_option_def;

/** The rows, ended by one whose name is NULL. */
extern const hpc_option_def hpc_option_defs[];

/** *dst = *src with copies of the strings (hpc_options_clear frees them). */
void hpc_options_copy(struct hpc_options *dst, const struct hpc_options *src);

/** Append "    -o name=VALUE   help" lines for every row to out. */
void hpc_options_help(GString *out);

#endif
