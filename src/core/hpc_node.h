/* hpc_node.h - what a node of a container is: its id, its attributes and
 * the callbacks that list entries and extended attributes.  Core (the
 * in-memory tree, hpc_tree.h) and every layer above share these types;
 * the container's calls on nodes are hpc_container.h's.
 *
 * Nodes are addressed by 64-bit ids used directly as FUSE inode numbers:
 *   HPC_INO_ROOT (1)  the root directory
 *   HPC_INO_INFO (2)  the hidden "/.info" text file, served by the core
 *   HPC_INO_INFO_JSON (3)  "/.info.json", the same facts as JSON (hpc_infojson.h)
 *   >= HPC_INO_FIRST  the format's own nodes, encoded as the format likes
 */
#ifndef HPC_NODE_H
#define HPC_NODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

typedef uint64_t hpc_ino;

#define HPC_INO_ROOT 1
#define HPC_INO_INFO 2
#define HPC_INO_INFO_JSON 3
/* the core's text nodes: .info and .info.json */
#define HPC_INO_IS_TEXT(ino) ((ino) == HPC_INO_INFO || (ino) == HPC_INO_INFO_JSON)
#define HPC_INO_FIRST 16

#define HPC_MODE_DIR (S_IFDIR | 0555)
#define HPC_MODE_FILE (S_IFREG | 0444)
#define HPC_MODE_LINK (S_IFLNK | 0777)

/** Attributes of a node.  mtime 0 means "the container's". */
typedef struct hpc_stat {
    hpc_ino ino;
    uint32_t mode;
    uint32_t nlink;
    uint64_t size;
    int64_t mtime;
    int partial;           /* readdir only: size not known yet, ask getattr */
} hpc_stat;

/**
 * Directory entry callback.  next_cookie is the cookie that resumes after
 * this entry.  Returns non-zero when the caller cannot take the entry (its
 * buffer is full); the format must then stop and return HPC_OK.
 */
typedef int (*hpc_dirent_fn)(void *ctx, const char *name, const hpc_stat *st,
                             uint64_t next_cookie);

/** Extended attribute callback: one call per attribute of the node. */
typedef int (*hpc_xattr_fn)(void *ctx, const char *name, const void *value, size_t len);

#endif
