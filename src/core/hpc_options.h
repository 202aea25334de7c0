/* hpc_options.h - the container options (-o name=value): their rows and
 * the struct that holds their values.
 *
 * Every option hpcmount and hpcdump accept for the container is a row: its
 * name, the placeholder of its value (NULL for a flag), its help text, and
 * how the value is checked and stored.  The core's rows are
 * hpc_option_defs, with a field each in hpc_options; a reader's rows are
 * its hpc_format.options (hpc_format.h), which the core does not know:
 * their values are kept as text in hpc_options.more and the reader reads
 * them with hpc_options_number / hpc_options_text.  The container walks
 * both (hpc_formats_option_set, hpc_formats_options_help in
 * hpc_container.h); hpcmount builds its fuse_opt list and its --help from
 * that walk, hpcdump its --help; docs/hpcmount.1 lists the same rows.
 * --help shows the HPC_OPT_BASIC rows a first mount may need, --help-all
 * every row.  Adding an option is adding a row (and, for the core, a field).
 */
#ifndef HPC_OPTIONS_H
#define HPC_OPTIONS_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* The defaults of options left out, written once: the code uses them and
 * the --help texts print them (sizes in MiB, so the texts can show them). */
#define HPC_DEFAULT_CACHE_MB 64           /* -o cache_size */
#define HPC_DEFAULT_CACHE_SIZE ((uint64_t)HPC_DEFAULT_CACHE_MB << 20)
#define HPC_DEFAULT_HELPER_CPU 60         /* -o helper_cpu, seconds */
#define HPC_DEFAULT_HELPER_WAIT 300       /* -o helper_wait, seconds */
#define HPC_DEFAULT_HELPER_MEM_MB 768     /* -o helper_mem, plus the caches */
#define HPC_DEFAULT_MAX_CONTAINERS 16     /* -o max_containers */

/** Options shared by hpcmount and hpcdump (-o name=value); each field has
 *  its row in hpc_option_defs, which parses and documents it; the readers'
 *  options are in more. */
typedef struct hpc_options {
    uint64_t cache_size;   /* bytes of the block cache; 0: HPC_DEFAULT_CACHE_SIZE */
    uint32_t blocksize;    /* cache block size; 0: from the container */
    char *format;          /* force a format by name; NULL: detect */
    char *rankname;        /* printf format for rank names; NULL: rank-%06d */
    int nocheck;           /* serve data whose checksums fail */
    int allowholes;        /* serve holes in distributed arrays as zeros */
    int salvage;           /* serve files of killed writers */
    int inproc;            /* run every reader in this process, no helper (hpc_remote.h) */
    double helper_cpu;     /* CPU seconds of one helper request; 0: default */
    double helper_wait;    /* wall seconds of a helper that neither computes nor answers; 0: default */
    uint64_t helper_mem;   /* bytes a helper may hold; 0: from the cache options */
    int npy;               /* show array files as NAME.npy (hpc_npyview.h) */
    uint32_t max_containers; /* run directories: containers open at once; 0: HPC_DEFAULT_MAX_CONTAINERS */
    int rundir;            /* a directory is a run directory even if a reader claims it */
    int noexpand;          /* run directories: recognised files shown as plain files */
    char **more;           /* the readers' options set, as "name=value" or
                              "name" (flags), checked by their rows; NULL: none */
} hpc_options;

typedef enum {
    HPC_OPT_FLAG,      /* int field set to 1; no value */
    HPC_OPT_SIZE,      /* "64M" style size into a uint32_t or uint64_t field */
    HPC_OPT_COUNT,     /* a plain number into a uint32_t or uint64_t field */
    HPC_OPT_STRING,    /* a non-empty string, owned by the options */
    HPC_OPT_CUSTOM,    /* parse() checks and stores (the core's rows only) */
    HPC_OPT_READERS,   /* no option: where the readers' rows are listed */
} hpc_opt_kind;

/* Which help shows a row: tuning knobs only in --help-all (and the man page). */
typedef enum {
    HPC_OPT_BASIC,
    HPC_OPT_TUNING,
} hpc_opt_level;

typedef struct hpc_option_def {
    const char *name;
    const char *value;         /* "SIZE", "N", ...; NULL for a flag */
    const char *help;          /* one line; a '\n' starts a continuation */
    hpc_opt_kind kind;
    size_t offset, width;      /* the field in hpc_options; width 0 (a
                                  reader's row): the value is kept in more */
    uint64_t min, max;         /* SIZE and COUNT; max 0: this machine's memory */
    /** CUSTOM, or an extra check after the kind's own: HPC_OK or an
     *  hpc_err with *err set. */
    int (*parse)(hpc_options *o, const char *v, GError **err);
    hpc_opt_level level;
} hpc_option_def;

/** What a walk over option rows calls for each (nonzero: stop). */
typedef int (*hpc_option_fn)(const hpc_option_def *d, void *ctx);

/** The core's rows, ended by one whose name is NULL.  One row of kind
 *  HPC_OPT_READERS says where the readers' rows are listed among them. */
extern const hpc_option_def hpc_option_defs[];

/** Fill opts with defaults. */
void hpc_options_init(hpc_options *opts);

/** Free strings held by opts. */
void hpc_options_clear(hpc_options *opts);

/**
 * Apply one option "name=value" or "name" if it is row d's.  Sizes take
 * K, M, G suffixes.  HPC_E_NOENT when arg names another option,
 * HPC_E_INVAL with *err set for a bad value.
 */
int hpc_option_set(hpc_options *opts, const hpc_option_def *d, const char *arg, GError **err);

/** A reader's row d as set in opts: its number (a flag: 1), 0 when not
 *  set (the reader's default applies). */
uint64_t hpc_options_number(const hpc_options *opts, const hpc_option_def *d);

/** A reader's STRING row d as set in opts, or NULL. */
const char *hpc_options_text(const hpc_options *opts, const hpc_option_def *d);

/** *dst = *src with copies of the strings (hpc_options_clear frees them). */
void hpc_options_copy(hpc_options *dst, const hpc_options *src);

/** The options as "name=value" strings (NULL-terminated, g_strfreev it),
 *  which hpc_formats_option_set takes back: what a helper process gets. */
char **hpc_options_to_strv(const hpc_options *opts);

/** Append row d's "    -o name=VALUE   help" lines to out, if all is set
 *  or d is an HPC_OPT_BASIC row. */
void hpc_option_help(GString *out, const hpc_option_def *d, int all);

#endif
