/* hpc_npyview.h - the -o npy view, inside the core.
 *
 * With opts.npy, every regular file that holds an array (it has user.dtype
 * and user.shape, and its size is what they say) is shown as NAME.npy: the
 * NPY header numpy writes (hpc_npy.h) followed by exactly the raw bytes.
 * The raw name is not listed (it still resolves, for symlinks).  The core's public calls dispatch here when
 * the option is on; the view asks the core's raw calls below it.
 */
#ifndef HPC_NPYVIEW_H
#define HPC_NPYVIEW_H

#include "hpc_container.h"

/* The core's calls without the view (hpc_container.c). */
int hpc_raw_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st);
int hpc_raw_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st);
int hpc_raw_read(hpc_container *c, hpc_ino ino, void *buf, size_t len,
                 uint64_t off, size_t *nread);
int hpc_raw_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                hpc_extent *ext, unsigned max, unsigned *n);

/** Lookup NAME.npy as the array NAME; the raw name, not listed, resolves
 *  to the same node (symlinks to raw names keep working). */
int hpc_npyview_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st);
/** getattr: arrays are larger by their header. */
int hpc_npyview_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st);
/** A directory entry as the view shows it: arrays get ".npy" and their
 *  header's size; *name_out is name or a new string the caller frees. */
int hpc_npyview_dirent(hpc_container *c, const char *name, hpc_stat *st, char **name_out);
/** Header bytes, then the raw bytes. */
int hpc_npyview_read(hpc_container *c, hpc_ino ino, void *buf, size_t len,
                     uint64_t off, size_t *nread);
/** Body extents shifted by the header; HPC_E_NOTSUP for a range that
 *  starts inside the header (the copy path serves it). */
int hpc_npyview_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                    hpc_extent *ext, unsigned max, unsigned *n);
/** Free the view's header cache (hpc_container_close). */
void hpc_npyview_free(hpc_container *c);

#endif
