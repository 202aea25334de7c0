/* hpc_npyview.h - the -o npy view, above the container.
 *
 * With -o npy the mount layer puts it over every container: every regular
 * file that holds an array (it has user.dtype and user.shape, and its size
 * is what they say) is shown as NAME.npy: the NPY header numpy writes
 * (hpc_npy.h) followed by exactly the raw bytes.
 * The raw name is not listed (it still resolves, for symlinks).  The view
 * implements the node interface (hpc_nodes.h) by wrapping another
 * implementation of it, a container's or any other; the references
 * describe raw bytes, so its chunks call finds none.
 */
#ifndef HPC_NPYVIEW_H
#define HPC_NPYVIEW_H

#include "hpc_nodes.h"

/** The view over below; it owns below (closing the view closes below). */
hpc_nodes *hpc_npyview_new(hpc_nodes *below);

#endif
