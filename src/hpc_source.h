/* hpc_source.h - the physical files behind a container.
 *
 * A source is one open, read-only file with its size as of open (or of the
 * last hpc_source_refresh).  Every read is bounds-checked against that size,
 * so a format reader never reads past what the file really holds.
 */
#ifndef HPC_SOURCE_H
#define HPC_SOURCE_H

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct hpc_source {
    int fd;
    char *path;          /* as opened, for messages */
    uint64_t size;       /* file size in bytes */
    uint32_t blksize;    /* st_blksize */
    int64_t mtime;       /* st_mtime, seconds */
    uint32_t uid, gid;
    uint64_t id;         /* unique id: the block cache's space of this file */
} hpc_source;

/** Open path read-only and stat it.  Fills *out (caller-owned memory). */
int hpc_source_open(const char *path, hpc_source *out, GError **err);

/** Close the file and free the path. Safe on a zeroed or closed source. */
void hpc_source_close(hpc_source *src);

/**
 * Read exactly len bytes at off, looping over short reads.
 * Returns HPC_E_CORRUPT without reading if [off, off+len) is not inside the
 * file, HPC_E_IO if the read fails or the file shrank.
 */
int hpc_source_pread(const hpc_source *src, void *buf, size_t len, uint64_t off);

/**
 * Like hpc_source_pread, but a file that ends early (it shrank) is no error:
 * *got says how many bytes were read; HPC_E_IO only if none could be.
 */
int hpc_source_pread_upto(const hpc_source *src, void *buf, size_t len, uint64_t off,
                          size_t *got);

/**
 * Like hpc_source_pread, but on failure also fills *err with
 * "PATH: field FIELD at offset OFF: ..." for mount-time metadata reads.
 */
int hpc_source_pread_field(const hpc_source *src, void *buf, size_t len,
                           uint64_t off, const char *field, GError **err);

/** True when [off, off+len) lies inside the file (no overflow). */
gboolean hpc_source_contains(const hpc_source *src, uint64_t off, uint64_t len);

/**
 * Re-stat the file (for containers still being written).  Sets *changed to
 * TRUE when the size or mtime differ from what the source held.
 */
int hpc_source_refresh(hpc_source *src, gboolean *changed);

#endif
