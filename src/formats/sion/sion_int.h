/* sion_int.h - what the two files of the SION reader share: the parsed
 * state of a set (its physical files, tasks, keys) and the metadata
 * parsers of one physical file (sion_meta.c).
 */
#ifndef SION_INT_H
#define SION_INT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1           /* SEEK_DATA, SEEK_HOLE (salvage) */
#endif
#include "hpc_bytes.h"
#include "hpc_format.h"
#include "hpc_tree.h"

#include "sion_layout.h"        /* META1 sizes and key-value modes, shared with the writer */

#define KEY_INO_BASE (UINT64_C(1) << 62)
#define MAX_FILES 65536         /* SIONlib sets use far fewer */
#define SALVAGE_MAX_BLOCKS (UINT64_C(1) << 24)   /* task x block entries */

/* How a salvaged task's length was inferred (sion_task.how). */
enum { HOW_EMPTY, HOW_FULL, HOW_HOLE, HOW_ZEROS, HOW_EOF };
extern const char *const sion_how_name[];

typedef struct sion_task {
    uint64_t start;             /* startptr in its file */
    uint64_t length;            /* logical length */
    int64_t globalrank;
    uint32_t file, local;
    uint32_t blockcount;
    uint8_t how;                /* salvage: how the length was inferred (HOW_*) */
} sion_task;

typedef struct sion_file {
    hpc_source *src;
    int big;                    /* metadata is big-endian */
    int32_t version, patchlevel, fileformat, fsblksize, ntasks, nfiles, filenumber;
    int32_t maxchunks;
    int64_t flag1, flag2, sov;
    uint64_t end_of_header, start_of_data, globalskip;
    uint32_t first_task;        /* index of its local task 0 in file order */
    sion_task *tasks;           /* its tasks while opening */
    int64_t *blocksizes;        /* [maxchunks][ntasks], <= 0 already set to 0 */
    int salvaged;               /* no META2 (killed writer): blocks inferred */
} sion_file;

typedef struct sion_key {
    int64_t key;
    uint64_t length;
    uint32_t task;
    uint32_t first_seg, nseg;
} sion_key;

typedef struct sion_seg {
    uint64_t off, len;          /* in the task's stream */
} sion_seg;

typedef struct sion {
    sion_file *files;
    uint32_t nfiles;
    sion_task *tasks;           /* in global task order */
    uint32_t ntasks;
    uint32_t *by_rank;          /* task indices sorted by globalrank; NULL if rank == index */
    int by_index;               /* global ranks repeat: name tasks task-<index> */
    int kvmode;
    uint32_t *first_key;        /* key-value mode: task i's keys are [first_key[i], first_key[i+1]) */
    sion_key *keys;
    uint32_t nkeys;
    sion_seg *segs;
    uint32_t nsegs;
    int salvaged;               /* some file had no META2 */
    int map_inferred;           /* multi-file set without mapping: file order */
} sion;

/* SIONlib's metadata integers are signed, in the writer's byte order */
static inline int32_t rd32(const unsigned char *p, int big)
{
    return (int32_t)hpc_load_uint(p, 4, big);
}

static inline int64_t rd64(const unsigned char *p, int big)
{
    return (int64_t)hpc_load_uint(p, 8, big);
}

/* Parse META1; fills f and f->tasks (globalrank, start). */
int sion_parse_meta1(sion_file *f, GError **err);

/* Parse META2 of a file whose META1 (and task starts) are known. */
int sion_parse_meta2(sion_file *f, int salvage, GError **err);

#endif
