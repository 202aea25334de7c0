/* hpc_rundir_int.h - what the two files of the run directory share: its
 * state, its own nodes and the container slots.  hpc_rundir.c keeps the
 * nodes (probing what a file is), the slots (open on first use, least
 * recently used closed, held by open files) and the ids;
 * hpc_rundir_nodes.c is its implementation of the node interface, each
 * call routed to a node of the run directory or a slot.
 */
#ifndef HPC_RUNDIR_INT_H
#define HPC_RUNDIR_INT_H

#include "hpc_formats.h"
#include "hpc_perm.h"
#include "hpc_rundir.h"

#include <sys/stat.h>

#define SLOT_SHIFT 40
#define INNER_MASK ((UINT64_C(1) << SLOT_SHIFT) - 1)
#define MAX_SLOTS (UINT64_C(1) << 22)
#define BIG_BIT (UINT64_C(1) << 63)
#define DIR_INO_FIRST 16         /* the layer's own ids; 1 root, 2 .info */
#define DIR_TIMEOUT 1.0          /* run directories change while mounted */
#define DIR_BLOCK_SIZE 65536
#define PROBE_HEAD 4096
#define MIN_CONTAINER_CACHE (1u << 20)

typedef enum { NODE_DIR, NODE_FILE, NODE_LINK, NODE_CONTAINER } hpc_rundir_kind;

typedef struct hpc_rundir_node {
    char *rel;                   /* "" for the root */
    hpc_rundir_kind kind;
    int64_t mtime;               /* of the probe */
    uint64_t size;
    uint32_t slot;               /* NODE_CONTAINER */
    uint32_t uid, gid, mode;     /* of the probe (lstat), shown as they are */
} hpc_rundir_node;

typedef struct hpc_rundir_slot {
    uint32_t node;               /* its hpc_rundir_node */
    char *path;                  /* absolute */
    hpc_nodes *c;                /* its container's nodes; NULL while closed */
    char *error;                 /* why it cannot be opened */
    struct stat failed;          /* the file as it was when the open failed */
    int refs;                    /* calls using c now: not evicted meanwhile */
    int stale;                   /* its source changed: reopen when unused */
    GList *lru;                  /* in rd->open while open */
    GMutex open_lock;
} hpc_rundir_slot;

typedef struct hpc_rundir_big_id {
    uint32_t slot;
    hpc_ino inner;
} hpc_rundir_big_id;

/* A container that open files hold (hpc_nodes_hold): it closes when the
 * last one lets go, if its slot let go of it meanwhile. */
typedef struct hpc_rundir_held {
    int count;
    uint32_t slot;
} hpc_rundir_held;

typedef struct hpc_rundir {
    hpc_nodes head;
    char *root;                  /* absolute */
    hpc_options opts;            /* for every container opened */
    unsigned max_open;
    GMutex lock;
    GPtrArray *nodes;            /* hpc_rundir_node *, index = id - DIR_INO_FIRST */
    GHashTable *node_of;         /* rel -> id */
    GPtrArray *slots;            /* slot *, index = slot number - 1 */
    GQueue open;                 /* open slots, most recently used first */
    GArray *big;                 /* hpc_rundir_big_id, index = ino & ~BIG_BIT */
    GHashTable *big_of;          /* "slot:inner" -> index + 1 */
    GHashTable *held;            /* hpc_nodes * -> hpc_rundir_held */
    int64_t mtime;
    uint32_t uid, gid, mode;     /* of root */
    GArray *above;               /* hpc_perm_ref of the directories above root */
    int root_fd;                 /* O_PATH: plain files are opened beneath it */
} hpc_rundir;

/* The absolute path of rel (relative to the run directory). */
char *hpc_rundir_abs_path(hpc_rundir *rd, const char *rel);

/* Split ino into slot (0: the layer's own node) and inner id. */
int hpc_rundir_decode(hpc_rundir *rd, hpc_ino ino, uint32_t *s, hpc_ino *inner);

/* The mount id of inner in slot s (ids above 40 bits get a table entry). */
hpc_ino hpc_rundir_encode(hpc_rundir *rd, uint32_t s, hpc_ino inner);

/* What rel is now: find or make its node, probe it again if it changed.
 * *ino and *st (the directory layer's attributes) are filled. */
int hpc_rundir_node_at(hpc_rundir *rd, const char *rel, hpc_stat *st);

/* The mode a node of the run directory itself shows: its own, with no
 * more read or search bits than the directories above the run directory
 * grant (they are not in the mount, the kernel does not check them). */
uint32_t hpc_rundir_mode(const hpc_rundir *rd, uint32_t uid, uint32_t gid, uint32_t mode);

/* The layer's node of id, or NULL; rd->lock held. */
hpc_rundir_node *hpc_rundir_node_get(hpc_rundir *rd, uint64_t id);

/* The relative path of the layer's node ino (a new string), or NULL. */
char *hpc_rundir_node_rel(hpc_rundir *rd, hpc_ino ino);


/* Take slot number sn for a call: open it if needed.  *c is NULL when it
 * failed to open (then s->error says why).  Pair with hpc_rundir_slot_release. */
int hpc_rundir_slot_acquire(hpc_rundir *rd, uint32_t sn, hpc_rundir_slot **out, hpc_nodes **c);

/* Slot number s, or NULL; rd->lock held. */
hpc_rundir_slot *hpc_rundir_slot_get(hpc_rundir *rd, uint32_t s);

/* End a call on slot s that returned rc (HPC_E_CHANGED marks the slot
 * stale); closes what the LRU evicts.  Returns rc. */
int hpc_rundir_slot_release(hpc_rundir *rd, hpc_rundir_slot *s, int rc);

/* An open file holds c, the container of slot sn (rd->lock held). */
void hpc_rundir_hold(hpc_rundir *rd, hpc_nodes *c, uint32_t sn);

/* An open file lets go of c: TRUE when c is to be closed now, no file
 * holding it and its slot no longer using it (rd->lock held). */
gboolean hpc_rundir_unhold(hpc_rundir *rd, hpc_nodes *c);

/* Fill rd (zeroed) for the run directory root (absolute): its tables,
 * nothing opened.  On failure hpc_rundir_free(rd) all the same. */
int hpc_rundir_init(hpc_rundir *rd, const char *root, const hpc_options *opts, GError **err);

/* Close every container, held or not, and free rd. */
void hpc_rundir_free(hpc_rundir *rd);

#endif
