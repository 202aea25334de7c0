/* hpc_rundir.h - a run directory as an implementation of the node
 * interface (hpc_nodes.h), and how the mount layer opens a container.
 *
 * A run directory is shown read-only as it is on disk, with every file or
 * directory that a reader recognises shown as a directory holding that
 * container's tree.  Containers are probed by magic when their directory
 * entry is first seen, opened on first access inside them (each with the
 * npy view over it when asked: hpc_rundir_open_nodes), and closed again
 * when more than max_containers are open and they are the least recently
 * used.  A container an open file holds (hpc_nodes_hold) stays open for
 * that file until it lets go, closed by the LRU or not: the file reads the
 * container it opened.  One that failed to open shows as an empty
 * directory with a .info that says why.
 *
 * Node ids: the run directory's own nodes are small numbers; a
 * container's node n in slot s is (s << 40) | n when n < 2^40, else an
 * entry of a translation table with bit 63 set.  Ids never change while
 * open, so a container may be closed and opened again at will.
 */
#ifndef HPC_RUNDIR_H
#define HPC_RUNDIR_H

#include "hpc_container.h"
#include "hpc_formats.h"

/** Open the run directory root (absolute) with opts: nothing inside is
 *  opened yet.  On failure *err holds the one-line reason. */
int hpc_rundir_open(const char *root, const hpc_options *opts, hpc_nodes **out,
                    GError **err);

/** Open the container at path as nodes, with the npy view over it when
 *  opts->npy: how the mount layer opens every container. */
int hpc_rundir_open_nodes(const char *path, const hpc_options *opts, hpc_nodes **out,
                          GError **err);

/** Does dir hold (directly, among its first entries) a file that a reader
 *  other than f claims?  (Then it is a run directory around them.) */
gboolean hpc_rundir_holds_other_format(const char *dir, const hpc_format *f);

#endif
