/* sion_meta.c - the metadata of one physical SION file: META1 (format,
 * block size, the tasks' ranks and chunk sizes) and META2 (the blocks
 * each task wrote), or, for a file whose writer was killed before the
 * close, the blocks inferred from where its data end (-o salvage).
 */
#include "config.h"
#include "sion_int.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

const char *const sion_how_name[] = { "empty", "full", "hole", "zeros", "eof" };

static uint64_t roundup_u64(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

/* The fixed part of META1: byte order, format, block size, task count;
 * *ranks_at gets where the per-task arrays start. */
static int parse_meta1_head(sion_file *f, uint64_t *ranks_at, GError **err)
{
    const char *path = f->src->path;
    unsigned char h[SION_META1_FIXED];
    int rc = hpc_source_pread_field(f->src, h, sizeof h, 0, "META1", err);
    if (rc != HPC_OK)
        return rc;
    if (memcmp(h, "sion", 4) != 0)
        return hpc_fail(err, HPC_E_CORRUPT, path, "magic", 0, "not a SIONlib file");
    /* bytes 0 and 3 of the word at 4 hold the writer's byte order */
    f->big = h[SION_OFF_ENDIAN] != 0 && h[SION_OFF_ENDIAN + 3] != 0;
    int32_t ff = rd32(h + SION_OFF_FILEFORMAT, f->big);
    if (ff < 1 || ff > 9) {          /* safety net: take the order that makes sense */
        int32_t other = rd32(h + SION_OFF_FILEFORMAT, !f->big);
        if (other >= 1 && other <= 9) {
            f->big = !f->big;
            ff = other;
        }
    }
    f->version = rd32(h + SION_OFF_VERSION, f->big);
    f->patchlevel = rd32(h + SION_OFF_PATCHLEVEL, f->big);
    f->fileformat = ff;
    if (ff < 2 || ff > 5)
        return hpc_fail(err, HPC_E_UNSUPPORTED, path, "fileformat", SION_OFF_FILEFORMAT,
                        "SIONlib file format %d is not supported (2 to 5 are)", ff);
    f->fsblksize = rd32(h + SION_OFF_FSBLKSIZE, f->big);
    f->ntasks = rd32(h + SION_OFF_NTASKS, f->big);
    f->nfiles = rd32(h + SION_OFF_NFILES, f->big);
    uint64_t ranks_off;
    if (ff >= 3) {
        f->filenumber = rd32(h + SION_OFF_FILENUMBER, f->big);
        f->flag1 = rd64(h + SION_OFF_FLAG1, f->big);
        f->flag2 = rd64(h + SION_OFF_FLAG2, f->big);
        ranks_off = SION_META1_FIXED;
    } else {
        f->filenumber = 0;
        f->flag1 = f->flag2 = 0;
        ranks_off = SION_META1_FIXED_V2;
    }
    if (f->fsblksize < 1)
        return hpc_fail(err, HPC_E_CORRUPT, path, "fsblksize", SION_OFF_FSBLKSIZE,
                        "%d is not a valid block size", f->fsblksize);
    if (f->nfiles < 1 || f->nfiles > MAX_FILES)
        return hpc_fail(err, HPC_E_CORRUPT, path, "nfiles", SION_OFF_NFILES, "%d files", f->nfiles);
    uint64_t n = f->ntasks > 0 ? (uint64_t)f->ntasks : 0;
    f->end_of_header = ranks_off + 16 * n + 12;
    if (f->ntasks < 1 || 16 * n > f->src->size || f->end_of_header > f->src->size)
        return hpc_fail(err, HPC_E_CORRUPT, path, "ntasks", SION_OFF_NTASKS,
                        "%d tasks cannot fit in a file of %" PRIu64 " bytes",
                        f->ntasks, f->src->size);
    *ranks_at = ranks_off;
    return HPC_OK;
}

/* The per-task arrays of META1 (global ranks and chunk sizes) and its
 * tail: fills f->tasks with each task's first chunk. */
static int parse_meta1_tasks(sion_file *f, uint64_t ranks_off, GError **err)
{
    const char *path = f->src->path;
    uint64_t n = (uint64_t)f->ntasks;
    int32_t ff = f->fileformat;
    unsigned char *arr = g_malloc(16 * n + 12);
    f->tasks = g_new0(sion_task, n);
    int rc = hpc_source_pread_field(f->src, arr, 16 * n + 12, ranks_off, "globalrank", err);
    if (rc != HPC_OK)
        goto out;
    f->maxchunks = rd32(arr + 16 * n, f->big);
    f->sov = rd64(arr + 16 * n + 4, f->big);
    /* a killed writer's file ends where its data end: chunks may lie beyond */
    int killed = f->maxchunks == 0 && f->sov == 0;
    uint64_t ptr = 0;           /* task starts relative to the data, placed later */
    for (uint64_t i = 0; i < n; i++) {
        int64_t cs = rd64(arr + 8 * n + 8 * i, f->big);
        if (cs < 0) {
            rc = hpc_fail(err, HPC_E_CORRUPT, path, "chunksize", ranks_off + 8 * n + 8 * i,
                          "task %" PRIu64 " has negative chunk size %" PRId64, i, cs);
            goto out;
        }
        uint64_t lsize = ff >= 4 ? (uint64_t)cs : roundup_u64((uint64_t)cs, (uint64_t)f->fsblksize);
        if (lsize > f->src->size && !killed) {
            rc = hpc_fail(err, HPC_E_CORRUPT, path, "chunksize", ranks_off + 8 * n + 8 * i,
                          "chunk size %" PRId64 " of task %" PRIu64 " exceeds the file size",
                          cs, i);
            goto out;
        }
        f->tasks[i].globalrank = rd64(arr + 8 * i, f->big);
        f->tasks[i].start = ptr;
        if (!hpc_add_u64(ptr, lsize, &ptr) || (ptr > f->src->size && !killed)) {
            rc = hpc_fail(err, HPC_E_CORRUPT, path, "chunksize", ranks_off + 8 * n + 8 * i,
                          "the chunks of tasks 0..%" PRIu64 " end beyond the end of the file", i);
            goto out;
        }
    }
    f->globalskip = ptr;
out:
    g_free(arr);
    return rc;
}

/* Where the data of f begin.  SIONlib computes it from the size of a
 * format >= 3 header, SION_META1_SIZE(n), rounded up to fsblksize, also
 * for format 2 files, whose header is 20 bytes shorter; the writer puts
 * META2 right after the last block: start_of_varheader = start_of_data +
 * maxchunks * globalskip.  That equation decides between the two for
 * format 2 and proves the arithmetic for every file; a file it does not
 * hold for (another rule, a damaged field) is refused, not guessed. */
static int place_data(sion_file *f, int killed, GError **err)
{
    uint64_t n = (uint64_t)f->ntasks, bs = (uint64_t)f->fsblksize, want = 0;
    uint64_t rule = roundup_u64(SION_META1_SIZE(n), bs), own = roundup_u64(f->end_of_header, bs);
    int proof = !killed && f->maxchunks >= 1 && f->sov > 0 &&
        hpc_mul_u64((uint64_t)f->maxchunks, f->globalskip, &want) && (uint64_t)f->sov >= want;
    want = proof ? (uint64_t)f->sov - want : 0;
    if (proof && (want == rule || (f->fileformat == 2 && want == own)))
        f->start_of_data = want;
    else if (!proof && (rule == own || f->fileformat > 2))
        f->start_of_data = rule;    /* META2's own checks, or salvage, decide */
    else if (!proof)
        return hpc_fail(err, HPC_E_UNSUPPORTED, f->src->path, "start_of_varheader",
                        f->end_of_header - 8, "format 2 file without a usable META2: its data "
                        "start at %" PRIu64 " or at %" PRIu64 ", nothing tells which",
                        own, rule);
    else
        return hpc_fail(err, HPC_E_CORRUPT, f->src->path, "start_of_varheader",
                        f->end_of_header - 8, "%" PRId64 " is not start_of_data %" PRIu64
                        "%s + maxchunks %d x globalskip %" PRIu64 ", where SIONlib puts META2",
                        f->sov, rule, f->fileformat == 2 && own != rule ? " (or the format 2 "
                        "header's own end)" : "", f->maxchunks, f->globalskip);
    /* a killed writer's chunk sizes are not checked against the file: a
     * start that wraps past 2^64 would point back into the header */
    for (uint64_t i = 0; i < n; i++)
        if (!hpc_add_u64(f->tasks[i].start, f->start_of_data, &f->tasks[i].start))
            return hpc_fail(err, HPC_E_CORRUPT, f->src->path, "chunksize", f->end_of_header - 12
                            - 8 * n + 8 * (i - 1), "task %" PRIu64 " starts beyond 2^64 bytes", i);
    uint64_t end;
    if (!killed && (!hpc_add_u64(f->start_of_data, f->globalskip, &end) || end > f->src->size))
        return hpc_fail(err, HPC_E_CORRUPT, f->src->path, "chunksize", f->end_of_header - 12
                        - 8 * n, "the chunks of the %" PRIu64 " tasks end beyond the end of "
                        "the file", n);
    return HPC_OK;
}

/* Parse META1; fills f and f->tasks (globalrank, start). */
int sion_parse_meta1(sion_file *f, GError **err)
{
    uint64_t ranks_off;
    int rc = parse_meta1_head(f, &ranks_off, err);
    if (rc == HPC_OK)
        rc = parse_meta1_tasks(f, ranks_off, err);
    return rc == HPC_OK ? place_data(f, f->maxchunks == 0 && f->sov == 0, err) : rc;
}

/* End of the written data in [b0, b1) of the source: the end of the last
 * data extent (SEEK_DATA/SEEK_HOLE; all of it where holes are not
 * reported), then back over zero bytes, which is what unwritten parts of
 * allocated file system blocks hold.  *trimmed tells whether zeros were cut. */
static int data_end(const hpc_source *src, uint64_t b0, uint64_t b1, uint64_t *end, int *trimmed)
{
    uint64_t pos = b0, e = b0;
    while (pos < b1) {
        off_t d = lseek(src->fd, (off_t)pos, SEEK_DATA);
        if (d < 0 && errno == ENXIO)
            break;                      /* only holes from pos on */
        if (d < 0) {                    /* no SEEK_DATA here: all is data */
            e = b1;
            break;
        }
        if ((uint64_t)d >= b1)
            break;
        off_t h = lseek(src->fd, d, SEEK_HOLE);
        e = (h < 0 || (uint64_t)h > b1) ? b1 : (uint64_t)h;
        pos = e;
    }
    unsigned char buf[65536];
    *trimmed = 0;
    while (e > b0) {
        uint64_t take = MIN(e - b0, sizeof buf);
        int rc = hpc_source_pread(src, buf, (size_t)take, e - take);
        if (rc != HPC_OK)
            return rc;
        uint64_t k = take;
        while (k > 0 && buf[k - 1] == 0)
            k--;
        if (k < take)
            *trimmed = 1;
        e -= take - k;
        if (k > 0)
            break;
    }
    *end = e;
    return HPC_OK;
}

/* No META2: each task's blocks lie where META1 says; serve each block up to
 * where its data end, and a task's blocks up to its last non-empty one. */
static int salvage_meta2(sion_file *f, GError **err)
{
    sion_task *t = f->tasks;
    const char *path = f->src->path;
    uint64_t n = (uint64_t)f->ntasks, size = f->src->size, maxchunks = 1;
    /* rounded up without adding globalskip: a killed writer's chunk sizes
     * are not checked against the file, and a globalskip near 2^64 would
     * wrap the sum to 0 blocks */
    if (f->globalskip > 0 && size > f->start_of_data)
        maxchunks = (size - f->start_of_data - 1) / f->globalskip + 1;
    if (maxchunks > INT32_MAX || maxchunks > SALVAGE_MAX_BLOCKS / n)
        return hpc_fail(err, HPC_E_UNSUPPORTED, path, "ntasks", SION_OFF_NTASKS,
                        "%" PRIu64 " tasks with up to %" PRIu64 " blocks each are too many "
                        "to salvage", n, maxchunks);
    f->salvaged = 1;
    f->maxchunks = (int32_t)maxchunks;
    f->blocksizes = g_new0(int64_t, n * maxchunks);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t next = i + 1 < n ? t[i + 1].start : f->start_of_data + f->globalskip;
        uint64_t lsize = next - t[i].start, last = 0;
        int any = 0, how = HOW_EMPTY;
        t[i].length = 0;
        for (uint64_t j = 0; lsize > 0 && j < maxchunks; j++) {
            uint64_t b0, end;
            if (!hpc_mul_u64(j, f->globalskip, &b0) || !hpc_add_u64(b0, t[i].start, &b0) || b0 >= size)
                break;
            uint64_t b1 = lsize > size - b0 ? size : b0 + lsize;
            int trimmed, rc = data_end(f->src, b0, b1, &end, &trimmed);
            if (rc != HPC_OK)
                return hpc_fail(err, rc, path, "data", b0, "cannot read task %" PRIu64
                                " block %" PRIu64, i, j);
            if (end > b0) {
                f->blocksizes[j * n + i] = (int64_t)(end - b0);
                any = 1;
                last = j;
                how = end - b0 == lsize ? HOW_FULL : trimmed ? HOW_ZEROS
                      : end == size ? HOW_EOF : HOW_HOLE;
            }
        }
        t[i].blockcount = any ? (uint32_t)last + 1 : 1;
        t[i].how = (uint8_t)how;
        for (uint64_t j = 0; j < t[i].blockcount; j++)
            t[i].length += (uint64_t)f->blocksizes[j * n + i];
    }
    return HPC_OK;
}

/* Task i's blockcount and block sizes from META2 (read into m). */
static int task_blocks(sion_file *f, const unsigned char *m, uint64_t i, GError **err)
{
    sion_task *t = f->tasks;
    uint64_t n = (uint64_t)f->ntasks, sov = (uint64_t)f->sov;
    int64_t bc = rd64(m + 8 * i, f->big);
    if (bc < 0 || bc > f->maxchunks)
        return hpc_fail(err, HPC_E_CORRUPT, f->src->path, "blockcount", sov + 8 * i,
                        "task %" PRIu64 " has %" PRId64 " blocks, maxchunks is %d",
                        i, bc, f->maxchunks);
    t[i].blockcount = (uint32_t)bc;
    t[i].length = 0;
    uint64_t next = i + 1 < n ? t[i + 1].start : f->start_of_data + f->globalskip;
    uint64_t lsize = next - t[i].start;
    for (uint64_t j = 0; j < (uint64_t)f->maxchunks; j++) {
        uint64_t at = sov + 8 * n + 8 * (j * n + i);
        int64_t bs = j < (uint64_t)bc ? rd64(m + 8 * n + 8 * (j * n + i), f->big) : 0;
        /* entries past blockcount are unused (0 today, -1 in old files);
         * SIONlib reads a used one as it is, so a negative one is damage */
        if (bs < 0 || (uint64_t)bs > lsize)
            return hpc_fail(err, HPC_E_CORRUPT, f->src->path, "blocksize", at,
                            "block %" PRIu64 " of task %" PRIu64 " holds %" PRId64
                            " bytes but its chunk is %" PRIu64 " bytes%s", j, i, bs, lsize,
                            bs < 0 ? "" : ": blocks overlap");
        f->blocksizes[j * n + i] = bs;
        t[i].length += (uint64_t)bs;
    }
    return HPC_OK;
}

/* Parse META2 of a file whose META1 (and task starts) are known. */
int sion_parse_meta2(sion_file *f, int salvage, GError **err)
{
    const char *path = f->src->path;
    uint64_t n = (uint64_t)f->ntasks, size = f->src->size, data_end;
    uint64_t sov = (uint64_t)f->sov;
    if (f->maxchunks == 0 && f->sov == 0 && salvage)
        return salvage_meta2(f, err);
    if (f->maxchunks == 0 && f->sov == 0)
        return hpc_fail(err, HPC_E_CORRUPT, path, "start_of_varheader", f->end_of_header - 8,
                        "0 with maxchunks 0: the writer was killed before closing the file "
                        "(no META2); mount with -o salvage to serve what was written");
    if (f->maxchunks < 1 || !hpc_mul_u64((uint64_t)f->maxchunks, f->globalskip, &data_end) ||
        !hpc_add_u64(data_end, f->start_of_data, &data_end) || data_end > size)
        return hpc_fail(err, HPC_E_CORRUPT, path, "maxchunks", f->end_of_header - 12,
                        "%d blocks of %" PRIu64 " bytes cannot fit in a file of %" PRIu64 " bytes",
                        f->maxchunks, f->globalskip, size);
    if (f->sov < 0 || sov < data_end || sov > size || (size - sov) / 8 < n ||
        (size - sov - 8 * n) / 8 / n < (uint64_t)f->maxchunks)
        return hpc_fail(err, HPC_E_CORRUPT, path, "start_of_varheader", f->end_of_header - 8,
                        "META2 at %" PRId64 " (%" PRIu64 " + %" PRIu64 " bytes) does not lie "
                        "between the data end %" PRIu64 " and the file end %" PRIu64,
                        f->sov, 8 * n, 8 * n * (uint64_t)f->maxchunks, data_end, size);
    uint64_t nbs = n * (uint64_t)f->maxchunks;
    unsigned char *m = g_malloc(8 * (n + nbs));
    int rc = hpc_source_pread_field(f->src, m, 8 * (n + nbs), sov, "META2", err);
    if (rc != HPC_OK)
        goto out;
    f->blocksizes = g_new(int64_t, nbs);
    for (uint64_t i = 0; i < n && rc == HPC_OK; i++)
        rc = task_blocks(f, m, i, err);
out:
    g_free(m);
    return rc;
}
