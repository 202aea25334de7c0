/* hpc_npyview.h - the -o npy view, above the container.
 *
 * With opts.npy, every regular file that holds an array (it has user.dtype
 * and user.shape, and its size is what they say) is shown as NAME.npy: the
 * NPY header numpy writes (hpc_npy.h) followed by exactly the raw bytes.
 * The raw name is not listed (it still resolves, for symlinks).  The view
 * is a set of hooks (hpc_view, hpc_container.h) that the container's calls
 * go through; it asks the container's raw calls below it.
 */
#ifndef HPC_NPYVIEW_H
#define HPC_NPYVIEW_H

#include "hpc_container.h"

/**
 * Open SOURCE as hpc_container_open does and, with opts->npy, put the view
 * over it: the call the mount layer opens containers with.
 */
int hpc_npyview_open(const char *source, const hpc_options *opts, hpc_container **out,
                     GError **err);

#endif
