/* gsd_int.h - what the files of the GSD reader share (src/formats/gsd/):
 * limits, node-id layout, the index entry, the name tree, the snapshot of
 * a live file, and the calls one file makes into another.  Not installed;
 * only the reader's own files include it. */
#ifndef GSD_INT_H
#define GSD_INT_H

#include "gsd_layout.h"
#include "hpc_bytes.h"
#include "hpc_format.h"
#include "hpc_tree.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NODE_BITS 20
#define MAX_NODES (UINT32_C(1) << NODE_BITS)
#define NO_NODE UINT32_MAX
#define INO_FRAMES HPC_INO_FIRST      /* /frames */
#define INO_NODE_BASE (HPC_INO_FIRST + 16)  /* + (frame << NODE_BITS | node) */
#define MAX_FRAME (UINT64_C(1) << 43) /* frame numbers that still fit an inode */
#define MAX_FRAME_GAP 4096            /* a bad entry this close after a frame starts a new one */
#define FULL_CHECK 65536              /* indexes this small are checked whole at mount */
#define WINDOW 4096                   /* else: the first and last entries */
#define MAX_FRAME_ENTRIES 131072      /* entries one frame may have (2 * 65536 ids) */
#define INFO_MAX_FRAMES 10000         /* .info lists per-frame counts up to here */
#define BATCH 256                     /* entries read per cache call when scanning */
#define NGROUPS 7                     /* hoomd particle and topology groups */
#define NFIRST (NGROUPS + 2)          /* and their N, configuration/{step,dimensions} */
#define INO_SERIES_BASE (INO_NODE_BASE + (MAX_FRAME << NODE_BITS)) /* + node: /series/<name> */
#define INO_SERIES_FRAMES (INO_SERIES_BASE + MAX_NODES)            /* + node: <name>.frames */
#define MAX_RUNS 4096                 /* runs of frames a series may occupy */
#define MAX_ALL_RUNS 262144           /* and all series together (8 MiB) */
#define SCAN_BATCH 4096               /* entries read at once by the series scan */

typedef struct gsd_entry {
    uint64_t frame, N;
    int64_t location;
    uint32_t M;
    uint16_t id;
    uint8_t type, flags;
} gsd_entry;

typedef struct gsd_node {
    const char *name;         /* path component; "" for the frame directory */
    uint32_t parent, depth;
    uint32_t first_kid, nkids; /* into kids[], sorted by name */
    uint32_t pos;             /* own place among the parent's kids */
    int32_t chunk;            /* name id, -1 for directories */
} gsd_node;

/* What a snapshot reads the file through. */
typedef struct gsd_fill {
    const hpc_source *src;
    uint64_t size;
} gsd_fill;

typedef struct gsd_series_set gsd_series_set;   /* below */

/* One consistent view of the file. */
typedef struct gsd_state {
    hpc_cache *cache;
    uint64_t space;           /* cache space of this snapshot's bytes */
    gsd_fill fill;            /* fill.size: the file size it was built from */
    uint64_t index_location, index_allocated, namelist_location, namelist_allocated;
    uint64_t index_usable;    /* allocated entries that lie inside the file */
    uint32_t gsd_version, schema_version;
    char application[GSD_NAME_FIELD + 1], schema[GSD_NAME_FIELD + 1];
    uint64_t nentries;        /* valid index entries, served */
    uint64_t seen;            /* entries before the first with location 0 */
    uint64_t nframes;
    int checked_all;          /* every served entry was checked at build */
    GString *damage;          /* what was skipped and why; empty: nothing */
    GString *warnings;        /* names that could not be shown */
    GStringChunk *strings;
    uint32_t nnames;
    char **names;             /* by id */
    uint32_t *leaf;           /* id -> file node, NO_NODE if not shown */
    gsd_node *nodes;          /* node 0: a frame directory */
    uint32_t nnodes;
    uint32_t *kids;
    int continued;            /* validation went on from prev's entries */
    /* hoomd schema: chunks frame 0 lends to frames that lack them */
    int hoomd;
    uint32_t nlend;
    uint16_t *lend_id;        /* names frame 0 holds and lends */
    int8_t *lend_group;       /* -1: always; else the group whose N must match */
    int32_t n_id[NGROUPS];    /* id of "<group>/N", -1 if none */
    int n0_ok;                /* frame 0's N values are usable */
    int32_t first_id[NFIRST]; /* names gsd.hoomd takes element 0 of, -1 if none */
    uint16_t *log_need;       /* log/ names frame 0 lacks: gsd.hoomd cannot */
    uint32_t nlog_need;       /* read a frame that lacks one of them either */
    long double n0[NGROUPS];  /* frame 0's N of each group (0 when absent) */
    /* /series, computed on first use (series_lock) */
    GMutex series_lock;
    gsd_series_set *series, *series_seed;
} gsd_state;

typedef struct gsd {
    hpc_source *src;
    GMutex lock;              /* guards cur */
    gsd_state *cur;           /* g_atomic_rc_box */
    hpc_refresh refresh;      /* when to build a new snapshot */
    int warned;               /* read-time damage already logged */
} gsd;

/* /series (gsd_series.c): */
/* Frames holding one name, as arithmetic runs: frames first, first+stride,
 * ... (count of them); ord: how many frames the runs before hold. */
typedef struct gsd_run {
    uint64_t first, stride, count, ord;
} gsd_run;

typedef struct gsd_series {
    uint64_t count;           /* frames holding the name */
    uint64_t last;            /* the last of them */
    uint64_t N;
    uint32_t M;
    uint8_t type;
    const char *why;          /* not offered: why (static text); NULL: offered */
    uint64_t why_frame;       /* the frame that made it so */
    GArray *runs;             /* gsd_run; NULL once not offered */
} gsd_series;

/* Every name's series as of the first `scanned` index entries. */
struct gsd_series_set {
    uint64_t scanned;
    uint64_t runs;            /* of all series */
    uint32_t nnames;
    gsd_series *by_id;
    gsd_entry last;           /* entry scanned-1 */
    char *problem;            /* an invalid entry stopped the scan: no series */
    double seconds;           /* time the scan took */
    uint8_t *shown;           /* by node: an offered series is at or below it */
    uint32_t nnodes;
};

/* ---- live snapshots (fmt_gsd.c) */
void gsd_state_unref(gsd_state *s);
gsd_state *gsd_state_get(gsd *g);
void gsd_maybe_refresh(hpc_container *c);
/* Build a snapshot of the file as it is now (prev: the one it follows,
 * or NULL at open). */
int gsd_state_build(hpc_container *c, gsd *g, const gsd_state *prev, gsd_state **out,
                    GError **err);

/* ---- index entries: decoding, reads through a snapshot, frames (gsd_index.c) */
void gsd_decode_entry(const unsigned char *p, gsd_entry *e);
int gsd_is_v2(const gsd_state *s);
gboolean gsd_entry_bytes(const gsd_entry *e, uint64_t *n);
int gsd_snap_read(const gsd_state *s, void *buf, size_t len, uint64_t off);
int gsd_read_entries(const gsd_state *s, uint64_t first, uint64_t n, gsd_entry *out);
int gsd_read_entry(const gsd_state *s, uint64_t i, gsd_entry *e);
const char *gsd_entry_problem(const gsd_state *s, const gsd_entry *e, const gsd_entry *prev);
int gsd_lower_bound(const gsd_state *s, uint64_t f, uint64_t *out);
int gsd_frame_entries(hpc_container *c, const gsd_state *s, uint64_t f, gsd_entry **out,
                      uint64_t *n);

/* ---- the name tree (gsd_names.c) */
int gsd_read_names(gsd_state *s, const char *path, GError **err);

/* ---- hoomd: what frame 0 lends (gsd_hoomd.c) */
int gsd_hoomd_setup(hpc_container *c, gsd_state *s);
int gsd_frame_lent(const gsd_state *s, uint64_t f, const gsd_entry *es, uint64_t k,
                   uint16_t **out, uint32_t *n);
char *gsd_lend_target(const gsd_state *s, uint32_t n);
void gsd_hoomd_info(const gsd_state *s, GString *o);

/* ---- /series: one chunk name over all frames (gsd_series.c) */
int gsd_series_usable(const gsd_series_set *set);
uint64_t gsd_series_scanned(const gsd_series_set *set);
void gsd_series_set_free(gsd_series_set *set);
gsd_series_set *gsd_series_set_copy(const gsd_series_set *set, uint32_t nnames);
int gsd_series_compute(hpc_container *c, const gsd_state *cs, int notify,
                       const gsd_series_set **out);
int gsd_series_get(hpc_container *c, const gsd_state *cs, const gsd_series_set **out);
int gsd_series_extents(const gsd *g, const gsd_state *s, const gsd_series *x, uint16_t id,
                       uint64_t off, uint64_t len, hpc_extent *ext, unsigned max, unsigned *n);
void gsd_series_frames_bytes(const gsd_series *x, unsigned char *buf, size_t len, uint64_t off,
                             size_t *nread);
int gsd_is_series_ino(hpc_ino ino);
int gsd_series_decode(const gsd_state *s, const gsd_series_set *set, hpc_ino ino, uint32_t *n,
                      int *frames);
const gsd_series *gsd_node_series(const gsd_state *s, const gsd_series_set *set, uint32_t n);
void gsd_series_stat(const gsd_state *s, const gsd_series_set *set, uint32_t n, int frames,
                     hpc_stat *st);
uint32_t gsd_kid_named(const gsd_state *s, uint32_t d, const char *name);
int gsd_series_lookup(const gsd_state *s, const gsd_series_set *set, uint32_t d,
                      const char *name, hpc_stat *st);
int gsd_series_readdir(const gsd_state *s, const gsd_series_set *set, uint32_t d,
                       uint64_t cookie, hpc_dirent_fn fn, void *ctx);
void gsd_series_info(const gsd_state *s, GString *o);

/* A name-tree node that is a chunk (a file of the tree), not a directory. */
static inline int gsd_is_file_node(const gsd_state *s, uint32_t n)
{
    return s->nodes[n].nkids == 0 && s->nodes[n].chunk >= 0;
}

/* ---- the tree and the data: the reader's calls (gsd_tree.c) */
int gsd_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st);
int gsd_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st);
int gsd_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx);
int gsd_readlink(hpc_container *c, hpc_ino ino, char **target);
int gsd_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
             size_t *nread);
int gsd_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
            hpc_extent *ext, unsigned max, unsigned *n);
int gsd_xattrs(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx);

#endif
