/* hpc_perm.h - who may read what through a mount (docs/design.md, "Who may
 * read what").
 *
 * Two halves.  The read bits a node carries over from the files its bytes
 * come from: the kernel enforces them (default_permissions), so a node
 * shows, for its owner, its group and everyone else, read permission only
 * where every such file (and every directory on the way to it) grants it
 * to everyone in that class.  And the owner's credentials: a daemon with
 * more rights than a container file's owner opens what the container names
 * with that owner's filesystem ids and groups, per thread, so that a file
 * the owner cannot read stays unread.
 */
#ifndef HPC_PERM_H
#define HPC_PERM_H

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#define HPC_PERM_ALL 0444u    /* read bits of user, group, other */

/** A user's filesystem identity: uid, primary gid, supplementary groups. */
typedef struct hpc_creds {
    uint32_t uid, gid;
    int ngroups;
    gid_t *groups;
} hpc_creds;

/** The credentials of uid (its passwd entry and group memberships, looked
 *  up once per uid and kept for the process's life); fallback_gid when the
 *  uid has no passwd entry.  Never NULL. */
const hpc_creds *hpc_creds_of(uint32_t uid, uint32_t fallback_gid);

/** Whether opening for uid needs its credentials: the process runs as
 *  root and uid is not root.  An unprivileged daemon reads with its own
 *  rights, which are the mounting user's. */
gboolean hpc_creds_needed(uint32_t uid);

/** What hpc_creds_enter replaced (the thread's previous filesystem ids). */
typedef struct hpc_creds_saved {
    int active;
} hpc_creds_saved;

/** Take cr's filesystem ids and groups on this thread only (cr NULL: no
 *  change).  Returns 0, or -1 (errno set) with nothing changed: the
 *  caller must then not open anything.  A thread started meanwhile
 *  inherits them: start none before hpc_creds_leave. */
int hpc_creds_enter(const hpc_creds *cr, hpc_creds_saved *saved);
/** Back to the process's own ids on this thread. */
void hpc_creds_leave(hpc_creds_saved *saved);

/** The file ids and mode bits of one file that a node depends on. */
typedef struct hpc_perm_ref {
    uint32_t uid, gid, mode;
} hpc_perm_ref;

/**
 * Narrow bits (read bits of a node owned by node_uid:node_gid, whose owner
 * has credentials owner) to what ref grants: its read bits (dir FALSE) or,
 * for a directory on the way to a file, its search bits (dir TRUE).  A
 * class of the node keeps its bit only if every user that class may hold
 * gets it from ref.
 */
uint32_t hpc_perm_narrow(uint32_t bits, const hpc_creds *owner, uint32_t node_uid,
                         uint32_t node_gid, const hpc_perm_ref *ref, gboolean dir);

/** The directories above path (absolute, or relative to "/"), as given
 *  and once symbolic links are resolved: what one must search to reach
 *  it.  NULL when one of them cannot be stat'ed.  Free with g_array_free. */
GArray *hpc_perm_chain(const char *path);

/** Narrow bits by the search bits of every directory of chain (NULL
 *  leaves no bits). */
uint32_t hpc_perm_narrow_chain(uint32_t bits, const hpc_creds *owner, uint32_t node_uid,
                               uint32_t node_gid, const GArray *chain);

/** Narrow bits by path itself (read bits; a directory's search bits too)
 *  and by its chain.  A path that cannot be stat'ed leaves no bits. */
uint32_t hpc_perm_path(uint32_t bits, const hpc_creds *owner, uint32_t node_uid,
                       uint32_t node_gid, const char *path);

/** mode (S_IFMT and permission bits) with its read bits narrowed to bits
 *  and, for a directory, its search bits to the same classes; write and
 *  special bits cleared; symbolic links unchanged. */
uint32_t hpc_perm_mode(uint32_t mode, uint32_t bits);

#endif
