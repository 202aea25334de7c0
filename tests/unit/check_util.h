/* check_util.h - helpers shared by the Check unit tests. */
#ifndef HPC_CHECK_UTIL_H
#define HPC_CHECK_UTIL_H

#include <check.h>

#include "hpc_container.h"

/** Run every test of suite s; the exit status for main(). */
int test_run_suite(Suite *s);

/** Directory of the test data (tests/data under top_srcdir). */
const char *test_data_dir(void);

/** Open path (format NULL: detect); fails the test with the error message. */
hpc_container *test_open(const char *path, const char *format);
/** test_open, with inproc 1: readers of libhdf5/libhdf4 in this process
 *  (a filter or hook the test registers must be seen by the library). */
hpc_container *test_open_in(const char *path, const char *format, int inproc);

/** sha256 hex of a file node's bytes, read in pieces of `step` bytes; the
 *  number of bytes read goes to *len.  NULL if a read fails. */
char *test_sha256_node(hpc_container *c, hpc_ino ino, size_t step, uint64_t *len);

/** Resolve path in c and return its sha256 as above (NULL if missing). */
char *test_sha256_path(hpc_container *c, const char *path, uint64_t *len);

#endif
