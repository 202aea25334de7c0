/* hpc_json.h - JSON text for the references (src/refs) and for the readers
 * that describe their nodes to them (the HDF5 reader's attributes): strings
 * in ASCII, numbers that read back exactly. */
#ifndef HPC_JSON_H
#define HPC_JSON_H

#include <glib.h>

/** Append s as a JSON string in ASCII, so that any reader's locale
 *  decodes it: characters beyond ASCII become \u escapes (surrogate pairs
 *  above U+FFFF), a byte that is no UTF-8 becomes its Latin-1 character. */
void hpc_json_str(GString *o, const char *s);

/** How a number that is no finite value is written. */
typedef enum {
    HPC_JSON_NAN_STRING,   /* "NaN", "Infinity", "-Infinity": zarr v2's fill_value */
    HPC_JSON_NAN_BARE,     /* NaN, Infinity, -Infinity: what zarr-python writes in
                              .zattrs and Python's json reads as floats */
} hpc_json_nan;

/** Append x as the shortest decimal that reads back as the same double,
 *  with a ".0" when it would otherwise read as an integer. */
void hpc_json_double(GString *o, double x, hpc_json_nan nan);

/** Append x as the text form of a real in the readers' xattrs: the
 *  fewest %g digits that read back as the same value (as the same float
 *  when single), nan, inf and -inf as NumPy prints them. */
void hpc_json_real_text(GString *o, double x, int single);

#endif
