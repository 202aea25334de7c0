/* hpc_remote_int.h - what the files of the daemon's side of the helper
 * process share: the helper (hpc_helper.c: start, supervise, one request
 * on one channel), the container's remote state and what it remembers of
 * names, attributes, directory batches and damaged objects
 * (hpc_remote_names.c); hpc_remote.c is the open and the proxy format.
 */
#ifndef HPC_REMOTE_INT_H
#define HPC_REMOTE_INT_H

#include "hpc_core.h"
#include "hpc_remote.h"

#define NAMES_MAX (1u << 18)     /* names remembered for messages */

typedef struct hpc_helper {
    gint refs;
    pid_t pid;
    int child;                   /* ours to reap (not started before a fork) */
    int pidfd;                   /* a fork server's child: signalled and awaited by it, or -1 */
    char *map;                   /* control page, then the buffers */
    size_t map_size;
    int fd[HPC_REMOTE_CHANNELS];
    GAsyncQueue *free;           /* channel index + 1 */
    gint dead;                   /* killed or seen gone */
    gint busy;                   /* channels taken */
    int culprit;                 /* channel whose request the supervisor blamed, or -1 */
    int wall;                    /* killed by the wall-clock limit, not for the file */
    char *why;                   /* what the supervisor saw */
    int log_fd;                  /* our end of the helper's log pipe, or -1 */
    pid_t log_pid;               /* the process whose thread forwards it */
} hpc_helper;

typedef struct hpc_remote {
    const hpc_format *real;
    GMutex lock;                 /* cur, broken */
    hpc_helper *cur;
    char *broken;                /* a restart failed: every request fails */
    GMutex tables;               /* the tables below */
    GHashTable *damaged;         /* key -> why */
    gint ndamaged;
    GHashTable *nodes;           /* ino -> hpc_remote_node: names for messages, attributes */
    GHashTable *children;        /* hpc_remote_key -> hpc_remote_node, of the nodes above */
    GHashTable *plussed;         /* "dir/cookie" of batches asked for in full */
    struct dir_batch {           /* readdir answers, for the calls that follow */
        hpc_ino dir;
        uint64_t start;          /* the cookie asked */
        int more;                /* the helper stopped because the batch was full */
        GBytes *data;
    } dirs[16];
    unsigned dir_next;
    GString *notes;              /* .info lines of what the helper could not serve */
    GHashTable *nomap;           /* inos whose map says HPC_E_NOTSUP */
    GHashTable *spaces;          /* helper's cache space -> ours */
    double cpu, wait;
    uint64_t mem;
    void *side;                  /* the reader's remote_side state, or NULL */
} hpc_remote;

/* What went wrong with a request: nothing, or the helper went away. */
typedef enum { GONE_NO, GONE_CULPRIT, GONE_BYSTANDER } hpc_helper_gone;

static inline const char *lib_of(const hpc_remote *r)
{
    return r->real->sandbox_lib ? r->real->sandbox_lib : r->real->name;
}

/* What the daemon learnt of a node: its name under its parent (for
 * messages and lookups), its attributes and its extended attributes (they
 * never change: no live formats here). */
typedef struct hpc_remote_key {
    hpc_ino parent;
    const char *name;
} hpc_remote_key;

typedef struct hpc_remote_node {
    hpc_remote_key key;          /* parent, and name[] below: the key of r->children */
    hpc_stat st;                 /* st.ino: the key of r->nodes */
    int has_st;
    GBytes *xattrs;              /* the helper's answer, or NULL */
    int listed;                  /* seen in a readdir batch ... */
    uint64_t listed_from;        /* ... that started at this cookie */
    char name[];
} hpc_remote_node;

static inline hpc_ctl *hpc_helper_ctl(const hpc_helper *h)
{
    return (hpc_ctl *)h->map;
}

typedef struct hpc_helper_waiter {
    const hpc_remote *r;
    hpc_helper *h;
    int chan;
    int open;                    /* the open: the main thread, CPU from the start */
    gint64 t0;                   /* monotonic us of the request */
    double cpu0;                 /* thread's CPU at the first late tick, or < 0 */
} hpc_helper_waiter;

/* ---- the helper process (hpc_helper.c) ---------------------------------- */

void hpc_helper_unref(hpc_helper *h);

/* End the process (once); *why says what the supervisor saw, or NULL. */
void hpc_helper_kill(hpc_helper *h, int culprit, const char *why);

/* Start a helper process for c; the open's answer is read by the caller. */
int hpc_helper_start(hpc_container *c, const hpc_remote *r, hpc_helper **out, GError **err);

/* Forward h's log lines to the daemon's log from this process (caller
 * holds r->lock).  The thread is started on first use in each process: hpcmount opens the
 * container before it forks into the daemon, and threads do not cross a
 * fork (the helper writes without blocking, so lines are only ever
 * dropped, never waited for). */
void hpc_helper_log_follow(hpc_helper *h);

/* Send rq (and name) on channel w->chan and receive the answer: *rp and
 * its payload (g_free it).  -1 when the helper went away. */
int hpc_helper_exchange(hpc_helper_waiter *w, const hpc_rq *rq, const char *name, hpc_rp *rp,
                        char **payload);

/* The helper went away during a request on channel chan: was the request
 * the cause?  The supervisor's verdict, else the crash report's thread. */
hpc_helper_gone hpc_helper_blame(hpc_helper *h, int chan, int alone, char **why);

/* Receive exactly len bytes, supervising the helper while it is late. */
int hpc_helper_recv_all(hpc_helper_waiter *w, int fd, void *buf, size_t len);

/* ---- names, attributes, batches, damaged objects (hpc_remote_names.c) ---- */

/* The remembered readdir batch of dir that holds cookie, if any. */
int hpc_remote_batch_find(hpc_remote *r, hpc_ino dir, uint64_t cookie, struct dir_batch *out);

/* A lookup the daemon can answer from names and attributes it saw. */
int hpc_remote_cached_lookup(hpc_remote *r, hpc_ino parent, const char *name, hpc_stat *st);

/* Attributes of ino from an earlier answer, if complete. */
int hpc_remote_cached_stat(hpc_remote *r, hpc_ino ino, hpc_stat *st);

/* The extended attributes of ino from an earlier answer, or NULL. */
GBytes *hpc_remote_cached_xattrs(hpc_remote *r, hpc_ino ino);

/* The next entry of a readdir batch at *at: its header and name. */
int hpc_remote_dirent_at(const char *p, size_t len, size_t *at, hpc_wire_dirent *d, const char **name);

/* This thread builds .info (on) or is done (off): the changes it causes
 * do not mark .info stale. */
void hpc_remote_building_info(int on);

/* .info must be built again (not while this thread builds it). */
void hpc_remote_info_stale(hpc_container *c);

/* The object of key killed a helper before: fail at once. */
int hpc_remote_is_damaged(hpc_remote *r, const char *key);

/* Keep the helper's xattrs answer b for ino. */
void hpc_remote_keep_xattrs(hpc_remote *r, hpc_ino ino, GBytes *b);

/* The helper went away serving this request: log, .info, and (unless
 * only the wall clock ran out) remember the object as damaged. */
int hpc_remote_lost(hpc_container *c, const hpc_rq *rq, const char *name, const char *key,
                    const char *why, int remember_it);

/* The object a request is about: the key of the damaged table. */
char *hpc_remote_object_key(const hpc_rq *rq, const char *name);

/* The cookie of the readdir batch that listed name of dir without its
 * attributes, if that batch was not yet asked for in full (marked now). */
int hpc_remote_plus_start(hpc_remote *r, hpc_ino dir, const char *name, uint64_t *start);

/* Take a "plus" batch: entries with full attributes and xattrs. */
int hpc_remote_plus_take(hpc_remote *r, hpc_ino dir, const char *p, size_t len);

/* Free a hpc_remote_node (the nodes table's value). */
void hpc_remote_rec_free(gpointer p);

/* The tables of node_recs, keys inside the records (one allocation per
 * node: a find over 10^5 datasets remembers each). */
GHashTable *hpc_remote_nodes_new(void);
GHashTable *hpc_remote_children_new(void);

/* Note a node seen outside a readdir batch. */
void hpc_remote_remember(hpc_remote *r, hpc_ino parent, const char *name, const hpc_stat *st);

/* Note a node (from: the cookie of the readdir batch it came in, or NULL). */
void hpc_remote_remember_from(hpc_remote *r, hpc_ino parent, const char *name, const hpc_stat *st,
                              const uint64_t *from);

#endif
