/* hpc_infojson.h - a container's .info text as one JSON object (.info.json).
 *
 * Every reader writes .info as "key: value" lines, blank lines between
 * sections, and tables of tab-separated columns under a header line (and
 * a title line above some of them).  The JSON is made from that text, so
 * that it shows exactly the facts .info shows and never disagrees with it;
 * docs/info-json.md is the schema ("schema": HPC_INFO_JSON_SCHEMA).
 */
#ifndef HPC_INFOJSON_H
#define HPC_INFOJSON_H

#include <glib.h>

/* Raised when a member changes meaning or goes; new members keep it. */
#define HPC_INFO_JSON_SCHEMA 1

/** The JSON object of .info text (NUL-terminated), ending in a newline. */
GString *hpc_info_json(const char *text);

#endif
