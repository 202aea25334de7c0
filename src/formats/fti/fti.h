/* fti.h - state and internal calls of the FTI-FF reader (fmt_fti.c and the
 * fti_*.c files it is split into; nothing outside the reader includes it).
 *
 *   fti_meta.c      file meta and layouts, parsing one checkpoint file,
 *                   the one rollback path (fti_snap)
 *   fti_discover.c  file names, the directory walk, config.fti / Topology.fti
 *   fti_check.c     chunk MD5 checks, once per variable
 *   fti_topo.c      groups from config.fti and Topology.fti
 *   fti_recover.c   lost ranks: L2 partner copies, L3 rebuilds
 *   fti_rs.c        GF(2^16) Reed-Solomon arithmetic
 *   fmt_fti.c       open / close / read / map / tree / .info
 *
 * docs/fti.md describes the on-disk facts and the behaviour.
 */
#ifndef FTI_H
#define FTI_H

#include "hpc_format.h"
#include "hpc_tree.h"
#include "fti_rs.h"

#include <stdint.h>

#define FTI_MAX_META 110          /* largest file meta of all layouts */
#define FTI_MAX_RANK 100000000    /* ranks beyond this are not FTI ranks */
#define FTI_WALK_DEPTH 12
#define FTI_WALK_MAX 200000       /* directory entries looked at */
#define FTI_PROBE_MAX 4000
#define FTI_RS_STEP (128u << 10)   /* bytes a rebuild decodes per pass */
#define FTI_CHECK_STEP (256u << 10) /* bytes an MD5 check reads per pass */
#define FTI_RS_BLOCK (512u << 10)  /* st_blksize of a mount with rebuilt ranks */
/* Below this many variable bytes, every MD5 is checked at mount so that
 * .info can list damaged variables before anything is read. */
#define FTI_VERIFY_AT_OPEN (64ull << 20)

/* ---- layouts and file meta ---------------------------------------------- */

typedef struct fti_layout {
    const char *name;
    uint32_t meta;        /* bytes of the file meta */
    uint32_t w;           /* width of size fields: 8 or 4 */
    uint32_t tsw;         /* width of the timestamp */
    uint32_t hdr;         /* block header */
    uint32_t rec;         /* chunk record */
    uint32_t idx;         /* record has an i32 idx after id (v1.3) */
} fti_layout;

typedef struct fti_meta {
    const fti_layout *lay;
    char checksum[33];
    int hash_ok;              /* myHash verified */
    int32_t ckpt_id;
    int64_t ckpt_size, meta_size, data_size, fs, max_fs, pt_fs;
    uint64_t timestamp;
} fti_meta;

/* ---- state ---------------------------------------------------------------- */

/** Kinds of file names. */
typedef enum { FTI_K_RANK, FTI_K_PCOF, FTI_K_RSED, FTI_K_DCP } fti_kind;

/** Where a rank's bytes come from. */
typedef enum { FTI_O_FILE, FTI_O_PARTNER, FTI_O_RS, FTI_O_DCP } fti_origin;

/** Checkpoint level, from the files present. */
typedef enum { FTI_L1, FTI_L2, FTI_L3, FTI_L4, FTI_LDCP, FTI_LFILE } fti_level;

/** Name of a level as .info shows it. */
const char *fti_level_name(fti_level l);

/** MD5 state of a variable. */
enum { FTI_V_UNKNOWN = 0, FTI_V_OK = 1, FTI_V_BAD = 2 };

typedef struct fti_chunk {
    uint64_t fptr, dptr, len;
    uint8_t md5[16];
    uint64_t rec_off;         /* where its record lies, for messages */
} fti_chunk;

typedef struct fti_var {
    int32_t id;
    uint32_t rank;            /* index into ranks */
    uint64_t size;
    uint32_t first, n;        /* chunks[first .. first+n), sorted by dptr */
    gint state;               /* FTI_V_*, set by the first verification */
    gint busy;                /* a thread is checking it (fti_check.c) */
    gint queued;              /* waiting for a check thread */
    uint64_t bad_fptr;        /* file offset of the first bad chunk */
} fti_var;

typedef struct fti_piece {
    const hpc_source *src;
    uint64_t fs;              /* data piece: real size; parity: maxFs */
    int parity;
    uint16_t coef;
} fti_piece;

/* How to rebuild one rank's Rank file from its group. */
typedef struct fti_rsjob {
    uint64_t max_fs;
    uint64_t fs;              /* rebuilt file's size (from its last 8 bytes) */
    unsigned npieces;
    fti_piece pieces[2 * FTI_RS_MAX_GROUP];
} fti_rsjob;

typedef struct fti_rank {
    int32_t ckpt, rank;
    fti_origin origin;
    const hpc_source *src;    /* NULL when rebuilt */
    fti_rsjob *rs;
    uint64_t size;
    fti_meta meta;
    const char *sum_rule;     /* which file-checksum rule matched, or NULL */
    uint32_t nblocks;
    uint32_t first_var, nvars;
    char *path;               /* the file the bytes come from */
    char *note;               /* how it was found */
} fti_rank;

typedef struct fti_ckpt {
    int32_t id;
    fti_level level;
    uint32_t nranks_seen;     /* highest rank number seen + 1 */
    uint32_t group;           /* L2/L3 group size used, 0 if none */
    char *topo;               /* how the groups were found, or why not */
} fti_ckpt;

/* A rank of an L2/L3 checkpoint that could not be served: its directory
 * is shown, and looking into it fails with EIO and a log line. */
typedef struct fti_lost {
    int32_t ckpt, rank;
    char *why;
} fti_lost;

/* Tree data of a lost rank's directory: this bit | index into lost. */
#define FTI_LOST_DIR (1ull << 62)

typedef struct fti {
    int single;
    GArray *ranks;            /* fti_rank */
    GArray *vars;             /* fti_var */
    GArray *chunks;           /* fti_chunk */
    GArray *ckpts;            /* fti_ckpt */
    GPtrArray *warnings;      /* char * */
    GHashTable *srcs;         /* path -> hpc_source *, each file opened once */
    GArray *lost;             /* fti_lost */
    struct fti_checker *checker;   /* MD5 check threads, once open */
    char *config, *topology;  /* files found (config: or -o fticonfig), or NULL */
    int cfg_group, cfg_node, cfg_head;   /* [basic] of config.fti, -1 if absent */
    uint64_t total_bytes;
} fti;

/* Reads of a file being parsed: a source, or a rank rebuilt from its group. */
typedef struct fti_reader {
    const hpc_source *src;
    fti_rsjob *rs;
    uint64_t size;
    const char *path;
} fti_reader;

/* A file found below SOURCE. */
typedef struct fti_found {
    fti_kind kind;
    int32_t ckpt, rank;
    char *path;
} fti_found;

/* Per-checkpoint view of the files found. */
typedef struct fti_ck_files {
    uint32_t nranks;
    const fti_found **rank, **pcof, **rsed;   /* by rank number */
    int32_t *have;                            /* index into f->ranks, -1 if none */
} fti_ck_files;

/* What a failed step undoes: everything appended after the snapshot. */
typedef struct fti_snap {
    guint ranks, vars, chunks, warnings;
    uint64_t total_bytes;
} fti_snap;

/* ---- fti_meta.c ------------------------------------------------------------ */

/** A little-endian field of w (4 or 8) bytes, sign-extended (unsigned
 *  loads: hpc_load_uint of hpc_bytes.h). */
int64_t fti_les(const unsigned char *p, unsigned w);

/** Append a warning line for .info. */
void fti_warn(fti *f, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/** Bytes [off, off+len) of the file r. */
int fti_reader_pread(const fti_reader *r, void *buf, size_t len, uint64_t off);

/** Find the layout whose myHash verifies (with nocheck, the first whose
 *  sizes agree with the file). */
int fti_meta_detect(const fti_reader *r, int nocheck, fti_meta *out, GError **err);

/** Read the meta of a file that is only looked at (Pcof, RSed). */
int fti_peek_meta(const char *path, fti_meta *m, uint64_t *size);

/** Parse file r as rank rk (meta known): blocks, records, variables.  On
 *  failure the caller rolls back with fti_snap_restore. */
int fti_parse_rank(hpc_container *c, fti *f, const fti_reader *r, fti_rank *rk, GError **err);

/** The container's source of path, opened on first use. */
const hpc_source *fti_source(hpc_container *c, fti *f, const char *path, GError **err);

/** Open path, read its meta, parse it and append a rank; on failure nothing
 *  is left appended. */
int fti_add_file(hpc_container *c, fti *f, const char *path, int32_t ckpt, int32_t rank,
                 fti_origin origin, const char *note, GError **err);

/** Remember / restore the lengths of the reader's arrays (ranks appended
 *  after the snapshot are freed; cf, when given, forgets them). */
void fti_snap_take(const fti *f, fti_snap *s);
void fti_snap_restore(fti *f, const fti_snap *s, fti_ck_files *cf);

/** Free what a rank owns. */
void fti_rank_clear(fti_rank *rk);

/* ---- fti_discover.c -------------------------------------------------------- */

/** Recognise FTI-FF file names; returns 1 and fills kind/ckpt/rank. */
int fti_parse_name(const char *name, fti_kind *kind, int32_t *ckpt, int32_t *rank);

/** Every FTI file below dir (and the first config.fti / Topology.fti);
 *  FTI's staging directories (<execId>/tmp beside l1..l4) are counted in
 *  staged, not entered. */
typedef struct fti_walk_ctx {
    GArray *found;          /* fti_found */
    char *config, *topology;
    unsigned staged;        /* checkpoint files in FTI's staging dirs, skipped */
    char *staged_dir;       /* the first such directory */
    unsigned seen;
    int stop_at_first;      /* probe */
} fti_walk_ctx;
void fti_walk(fti_walk_ctx *w, const char *dir, int depth);
void fti_walk_clear(fti_walk_ctx *w);

/** Order: checkpoint, rank, kind, path. */
int fti_cmp_found(const void *a, const void *b);

/** config.fti and Topology.fti above SOURCE, when not found below it. */
void fti_find_above(fti *f, const char *dir);

/** group_size, node_size and head from f->config (-1 when absent). */
void fti_load_config(fti *f);

/** hpc_format.probe. */
int fti_probe(const char *path, const unsigned char *head, size_t len);

/* ---- fti_topo.c ------------------------------------------------------------ */

/* The groups of one checkpoint.  FTI places global rank r (heads
 * included) on node r / S at position r % S; with head = 1 position 0 is
 * the node's head, which writes no checkpoint file. */
typedef struct fti_topo {
    uint32_t nranks;          /* processes of the run, heads included */
    uint32_t nnodes, node_size, group, head;
    char *how;                /* for .info, when established */
    char *why;                /* why not, else NULL */
} fti_topo;

/** Groups of checkpoint cf from config.fti (node_size, group_size, head),
 *  Topology.fti (one line per node) and the node directories the files
 *  lie in.  0 when established, or with t->why set when unknown (no or
 *  unusable config.fti); a negative hpc_err with err set (one line naming
 *  file, field and offset) when they contradict each other. */
int fti_topo_build(const fti *f, const fti_ck_files *cf, fti_topo *t, GError **err);
void fti_topo_free(fti_topo *t);

/** 1 when rank r is a head (writes no checkpoint file). */
int fti_topo_is_head(const fti_topo *t, uint32_t r);

/** The members of rank r's group in group-rank order and r's group rank;
 *  0 when r is in no complete group. */
int fti_topo_group(const fti_topo *t, int32_t r, int32_t *mem, uint32_t *gpos);

/* ---- fti_check.c ----------------------------------------------------------- */

/** Check every chunk MD5 of v once (waiting if another thread is at it)
 *  and hand the next variables to the check threads; FTI_V_OK, FTI_V_BAD
 *  or an hpc_err.  A source that changed makes the state unknown again. */
int fti_var_verify(hpc_container *c, fti_var *v);

/** Start / stop the check threads (c->priv must be set). */
int fti_check_start(hpc_container *c);
void fti_check_stop(fti *f);

/** Check every variable, in parallel, and wait. */
void fti_check_all(hpc_container *c);

/* ---- fti_rebuild.c --------------------------------------------------------- */

/** Rebuild bytes [off, off+len) of a lost file from its RS group. */
int fti_rs_decode(fti_rsjob *job, void *out, size_t len, uint64_t off);

/** Bytes [off, off+len) of a rank's file: its own file through the block
 *  cache, a rebuilt one decoded from its group (bounded by its size). */
int fti_rank_read(hpc_container *c, const fti_rank *rk, void *buf, size_t len, uint64_t off);

/* ---- fti_recover.c --------------------------------------------------------- */

/** Serve the lost ranks of checkpoint ck (cf->have[r] < 0) from their
 *  L2/L3 groups; warnings say what was done.  Fails (err set) only when
 *  the topology contradicts itself or the files. */
int fti_recover_ckpt(hpc_container *c, fti *f, fti_ck_files *cf, fti_ckpt *ck, GError **err);

#endif
