/* hpc_rankname.h - names of per-rank files: "rank-000017" or a user format.
 *
 * A rank name format is a printf format with exactly one integer conversion
 * (d, i, u, x, X or o, with optional flags, width and length modifier) and
 * no other conversions but "%%".  Names are parsed back by matching the
 * literal prefix and suffix, reading the number and checking that printing
 * it again gives the same name, so lookups are exact and O(1).
 */
#ifndef HPC_RANKNAME_H
#define HPC_RANKNAME_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define HPC_RANKNAME_DEFAULT "rank-%06d"
#define HPC_RANKNAME_MAX 256

typedef struct hpc_rankname {
    char prefix[HPC_RANKNAME_MAX];   /* literal text, "%%" already folded */
    char suffix[HPC_RANKNAME_MAX];
    char conv[32];                   /* e.g. "%06lld" */
    int base;                        /* 10, 16 or 8 */
    int is_unsigned;
} hpc_rankname;

/** Compile fmt (NULL: the default).  *err says what is wrong with fmt. */
int hpc_rankname_compile(const char *fmt, hpc_rankname *out, GError **err);

/** Print rank into buf (size len); returns HPC_E_RANGE if it does not fit. */
int hpc_rankname_format(const hpc_rankname *rn, int64_t rank, char *buf, size_t len);

/** Parse name; HPC_E_NOENT unless it is exactly what format would print. */
int hpc_rankname_parse(const hpc_rankname *rn, const char *name, int64_t *rank);

#endif
