/* sion_write.c - the parallel SION writer (SIONlib file format 5).
 *
 * Layout (src/formats/sion/sion_layout.h): META1 at 0, the data from start_of_data =
 * roundup(1088 + 16n, fsblksize) on, block j of local task i at
 * startptr[i] + j * globalskip, META2 at start_of_data + maxchunks *
 * globalskip.  Local rank 0 of each physical file writes its metadata; every
 * rank writes its own data with pwrite, so the ranks never exchange data.
 * All integers are written in the host's byte order, as SIONlib does.
 */
#include "config.h"
#include "hpc_write.h"
#include "hpc_write_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "hpc_bytes.h"
#include "sion_layout.h"

struct hpc_sion_file {
    MPI_Comm comm, lcomm;
    int rank, size;             /* in comm */
    int filenumber, lrank, lsize, nfiles;
    int fd;
    char *path;                 /* this rank's physical file */
    int32_t fsblksize;
    int keyvalue, sync;
    int64_t chunksize;          /* rounded up to fsblksize */
    uint64_t start;             /* startptr of this rank */
    uint64_t end_of_header, start_of_data, globalskip;
    GArray *blocks;             /* int64_t bytes used in each block so far */
    uint64_t written;
};

/* ---- helpers ----------------------------------------------------------- */

static void put32(unsigned char *p, int32_t v)
{
    memcpy(p, &v, 4);
}

static void put64(unsigned char *p, int64_t v)
{
    memcpy(p, &v, 8);
}

/* The block size of the file system that will hold path. */
static int32_t fs_blksize(const char *path)
{
    char *dir = g_path_get_dirname(path);
    struct statvfs vfs;
    int32_t bs = -1;
    if (statvfs(dir, &vfs) == 0 && vfs.f_bsize > 0 && vfs.f_bsize <= INT32_MAX)
        bs = (int32_t)vfs.f_bsize;
    g_free(dir);
    return bs;
}

static void file_free(hpc_sion_file *f)
{
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    if (f->lcomm != MPI_COMM_NULL)
        MPI_Comm_free(&f->lcomm);
    if (f->blocks)
        g_array_free(f->blocks, TRUE);
    g_free(f->path);
    g_free(f);
}

/* META1 with maxchunks 0 and start_of_varheader 0: what a killed job leaves. */
static int write_meta1(hpc_sion_file *f, const char *prefix, const int64_t *ranks,
                       const int64_t *chunks, GError **err)
{
    uint64_t n = (uint64_t)f->lsize;
    size_t len = SION_META1_FIXED + 16 * n + SION_META1_TAIL;
    unsigned char *h = g_malloc0(len);
    memcpy(h, SION_MAGIC, SION_MAGIC_LEN);
    /* bytes 0 and 3: byte order of the metadata, 1-2: of the user data */
    if (G_BYTE_ORDER == G_BIG_ENDIAN)
        memset(h + SION_OFF_ENDIAN, 1, 4);
    put32(h + SION_OFF_VERSION, HPC_SION_VERSION);
    put32(h + SION_OFF_PATCHLEVEL, HPC_SION_PATCHLEVEL);
    put32(h + SION_OFF_FILEFORMAT, HPC_SION_FILEFORMAT);
    put32(h + SION_OFF_FSBLKSIZE, f->fsblksize);
    put32(h + SION_OFF_NTASKS, f->lsize);
    put32(h + SION_OFF_NFILES, f->nfiles);
    put32(h + SION_OFF_FILENUMBER, f->filenumber);
    put64(h + SION_OFF_FLAG1,
          (int64_t)(f->keyvalue ? SION_KV_INLINE : SION_KV_NONE) << SION_KV_SHIFT);
    put64(h + SION_OFF_FLAG2, 0);
    /* NUL padded, like SIONlib */
    strncpy((char *)h + SION_OFF_PREFIX, prefix, SION_PREFIX_LEN);
    for (uint64_t i = 0; i < n; i++) {
        put64(h + SION_META1_FIXED + 8 * i, ranks[i]);
        put64(h + SION_META1_FIXED + 8 * n + 8 * i, chunks[i]);
    }
    int rc = HPC_OK;
    if (hpcw_pwrite(f->fd, h, len, 0) != 0)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot write META1: %s", f->path, g_strerror(errno));
    g_free(h);
    return rc;
}

/* ---- open -------------------------------------------------------------- */

/* 1. Parameters: checked on every rank, the shared ones compared. */
static int open_params(hpc_sion_file *f, const char *path, const hpc_sion_params *p,
                       GError **err)
{
    GError *local = NULL;
    int rc = HPC_OK;
    int32_t nfiles = p->nfiles == 0 ? 1 : p->nfiles;
    int mine[3] = { nfiles, p->fsblksize <= 0 ? -1 : p->fsblksize, p->keyvalue != 0 };
    int lo[3], hi[3];
    MPI_Allreduce(mine, lo, 3, MPI_INT, MPI_MIN, f->comm);
    MPI_Allreduce(mine, hi, 3, MPI_INT, MPI_MAX, f->comm);
    if (!path || !*path)
        rc = hpcw_fail(&local, HPC_E_INVAL, "no file name");
    else if (p->chunksize < 0)
        rc = hpcw_fail(&local, HPC_E_INVAL, "chunk size %" PRId64 " is negative", p->chunksize);
    else if (nfiles < 1 || nfiles > f->size)
        rc = hpcw_fail(&local, HPC_E_INVAL, "%d files for %d ranks: need 1 to %d files",
                  nfiles, f->size, f->size);
    else if (memcmp(lo, hi, sizeof lo) != 0)
        rc = hpcw_fail(&local, HPC_E_INVAL, "nfiles, fsblksize or keyvalue differ between ranks "
                  "(nfiles %d..%d, fsblksize %d..%d)", lo[0], hi[0], lo[1], hi[1]);
    f->nfiles = nfiles;
    f->keyvalue = p->keyvalue != 0;
    f->sync = p->sync;
    return hpcw_agree(f->comm, rc, &local, err);
}

/* 2. The block size (rank 0 asks the file system) and the chunk size
 * rounded up to it. */
static int open_blocksize(hpc_sion_file *f, const char *path, const hpc_sion_params *p,
                          GError **err)
{
    GError *local = NULL;
    int rc = HPC_OK;
    int32_t bs = p->fsblksize;
    if (bs <= 0 && f->rank == 0) {
        bs = fs_blksize(path);
        if (bs <= 0)
            rc = hpcw_fail(&local, HPC_E_IO, "%s: cannot find the file system block size: %s",
                      path, g_strerror(errno));
    }
    MPI_Bcast(&bs, 1, MPI_INT32_T, 0, f->comm);
    f->fsblksize = bs;
    if (rc == HPC_OK && bs > 0) {
        uint64_t up;    /* chunksize >= 0 was checked in step 1 */
        if (!hpc_add_u64((uint64_t)p->chunksize, (uint64_t)bs - 1, &up) || up > INT64_MAX)
            rc = hpcw_fail(&local, HPC_E_INVAL, "chunk size %" PRId64 " is too large", p->chunksize);
        else
            f->chunksize = (int64_t)(up / (uint64_t)bs * (uint64_t)bs);
    }
    return hpcw_agree(f->comm, rc, &local, err);     /* bs <= 0 only when rank 0 failed */
}

/* 3. Files: size/nfiles ranks each in rank order, the rest in the last;
 * 4. positions: chunks of the lower local ranks come first. */
static int open_layout(hpc_sion_file *f, const char *path, GError **err)
{
    GError *local = NULL;
    int rc = HPC_OK;
    int per = f->size / f->nfiles;
    uint64_t bs = (uint64_t)f->fsblksize;
    f->filenumber = f->rank >= f->nfiles * per ? f->nfiles - 1 : f->rank / per;
    f->lrank = f->rank - f->filenumber * per;
    MPI_Comm_split(f->comm, f->filenumber, f->rank, &f->lcomm);
    MPI_Comm_size(f->lcomm, &f->lsize);
    f->path = f->filenumber == 0 ? g_strdup(path)
                                 : g_strdup_printf("%s.%06d", path, f->filenumber);
    uint64_t n = (uint64_t)f->lsize, before = 0, cs = (uint64_t)f->chunksize;
    MPI_Exscan(&cs, &before, 1, MPI_UINT64_T, MPI_SUM, f->lcomm);
    if (f->lrank == 0)
        before = 0;             /* Exscan leaves rank 0's result undefined */
    MPI_Allreduce(&cs, &f->globalskip, 1, MPI_UINT64_T, MPI_SUM, f->lcomm);
    f->end_of_header = SION_META1_FIXED + 16 * n + SION_META1_TAIL;
    f->start_of_data = (f->end_of_header + bs - 1) / bs * bs;
    f->start = f->start_of_data + before;
    if (f->globalskip > (uint64_t)INT64_MAX / 4)
        rc = hpcw_fail(&local, HPC_E_INVAL, "the chunks of file %d add up to %" PRIu64 " bytes",
                  f->filenumber, f->globalskip);
    return hpcw_agree(f->comm, rc, &local, err);
}

/* 5. Local rank 0 creates its file with META1 (the global ranks and chunk
 * sizes of its local ranks); the others open it once it exists. */
static int open_files(hpc_sion_file *f, const char *path, GError **err)
{
    GError *local = NULL;
    int rc = HPC_OK;
    int64_t gr = f->rank, *ranks = NULL, *chunks = NULL;
    if (f->lrank == 0) {
        ranks = g_new(int64_t, (size_t)f->lsize);
        chunks = g_new(int64_t, (size_t)f->lsize);
    }
    MPI_Gather(&gr, 1, MPI_INT64_T, ranks, 1, MPI_INT64_T, 0, f->lcomm);
    MPI_Gather(&f->chunksize, 1, MPI_INT64_T, chunks, 1, MPI_INT64_T, 0, f->lcomm);
    if (f->lrank == 0) {
        f->fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (f->fd < 0)
            rc = hpcw_fail(&local, HPC_E_IO, "cannot create %s: %s", f->path, g_strerror(errno));
        else
            rc = write_meta1(f, path, ranks, chunks, &local);
    }
    g_free(ranks);
    g_free(chunks);
    rc = hpcw_agree(f->comm, rc, &local, err);
    if (rc != HPC_OK)
        return rc;
    if (f->lrank != 0) {
        f->fd = open(f->path, O_WRONLY | O_CLOEXEC);
        if (f->fd < 0)
            rc = hpcw_fail(&local, HPC_E_IO, "cannot open %s: %s", f->path, g_strerror(errno));
    }
    return hpcw_agree(f->comm, rc, &local, err);
}

int hpc_sion_open(const char *path, MPI_Comm comm, const hpc_sion_params *p,
                  hpc_sion_file **out, GError **err)
{
    hpc_sion_file *f = g_new0(hpc_sion_file, 1);
    f->fd = -1;
    f->lcomm = MPI_COMM_NULL;
    f->comm = comm;
    *out = NULL;
    MPI_Comm_rank(comm, &f->rank);
    MPI_Comm_size(comm, &f->size);
    int rc = open_params(f, path, p, err);
    if (rc == HPC_OK)
        rc = open_blocksize(f, path, p, err);
    if (rc == HPC_OK)
        rc = open_layout(f, path, err);
    if (rc == HPC_OK)
        rc = open_files(f, path, err);
    if (rc != HPC_OK) {
        file_free(f);
        return rc;
    }
    f->blocks = g_array_new(FALSE, TRUE, sizeof(int64_t));
    g_array_set_size(f->blocks, 1);
    *out = f;
    return HPC_OK;
}

/* ---- writing ----------------------------------------------------------- */

int hpc_sion_write(hpc_sion_file *f, const void *buf, size_t len, GError **err)
{
    const char *p = buf;
    if (len > 0 && f->chunksize == 0)
        return hpcw_fail(err, HPC_E_INVAL, "rank %d: cannot write %zu bytes with chunk size 0",
                    f->rank, len);
    while (len > 0) {
        int64_t *used = &g_array_index(f->blocks, int64_t, f->blocks->len - 1);
        uint64_t room = (uint64_t)(f->chunksize - *used);
        if (room == 0) {
            g_array_set_size(f->blocks, f->blocks->len + 1);
            continue;
        }
        size_t take = len < room ? len : (size_t)room;
        uint64_t off = f->start + (uint64_t)(f->blocks->len - 1) * f->globalskip + (uint64_t)*used;
        if (hpcw_pwrite(f->fd, p, take, off) != 0)
            return hpcw_fail(err, HPC_E_IO, "rank %d: %s: write of %zu bytes at %" PRIu64 ": %s",
                        f->rank, f->path, take, off, g_strerror(errno));
        *used += (int64_t)take;
        f->written += take;
        p += take;
        len -= take;
    }
    return HPC_OK;
}

int hpc_sion_ensure_free_space(hpc_sion_file *f, uint64_t n, GError **err)
{
    if (n > (uint64_t)f->chunksize)
        return hpcw_fail(err, HPC_E_INVAL, "rank %d: %" PRIu64 " bytes do not fit in a chunk of %"
                    PRId64, f->rank, n, f->chunksize);
    int64_t used = g_array_index(f->blocks, int64_t, f->blocks->len - 1);
    if ((uint64_t)(f->chunksize - used) < n)
        g_array_set_size(f->blocks, f->blocks->len + 1);
    return HPC_OK;
}

int hpc_sion_write_key(hpc_sion_file *f, int64_t key, const void *buf, size_t len,
                       GError **err)
{
    if (!f->keyvalue)
        return hpcw_fail(err, HPC_E_INVAL, "rank %d: key-value record in a file opened without "
                    "key-value mode", f->rank);
    unsigned char h[16];
    put64(h, key);
    put64(h + 8, (int64_t)len);
    int rc = hpc_sion_write(f, h, sizeof h, err);
    return rc == HPC_OK ? hpc_sion_write(f, buf, len, err) : rc;
}

uint64_t hpc_sion_bytes_written(const hpc_sion_file *f)
{
    return f->written;
}

void hpc_sion_where(const hpc_sion_file *f, int *filenumber, int *localrank, int64_t *chunksize)
{
    *filenumber = f->filenumber;
    *localrank = f->lrank;
    *chunksize = f->chunksize;
}

/* ---- close ------------------------------------------------------------- */

/* Local rank 0: META2 (and the mapping), then the final META1 fields. */
static int write_meta2(hpc_sion_file *f, const int64_t *count, const int *displ,
                       const int64_t *sizes, const int32_t *mapping, GError **err)
{
    uint64_t n = (uint64_t)f->lsize, maxchunks = 0;
    for (uint64_t i = 0; i < n; i++)
        maxchunks = MAX(maxchunks, (uint64_t)count[i]);
    if (maxchunks > INT32_MAX)
        return hpcw_fail(err, HPC_E_INVAL, "%s: %" PRIu64 " blocks", f->path, maxchunks);
    uint64_t sov = f->start_of_data + maxchunks * f->globalskip;
    int with_map = f->nfiles > 1 && f->filenumber == 0;
    size_t len = 8 * n * (1 + maxchunks) + (with_map ? 4 + 8 * (size_t)f->size : 0);
    unsigned char *m = g_malloc0(len);
    for (uint64_t i = 0; i < n; i++) {
        put64(m + 8 * i, count[i]);
        for (int64_t j = 0; j < count[i]; j++)    /* block-major, unused stay 0 */
            put64(m + 8 * n + 8 * ((uint64_t)j * n + i), sizes[displ[i] + j]);
    }
    if (with_map) {
        unsigned char *q = m + 8 * n * (1 + maxchunks);
        put32(q, f->size);
        for (int g = 0; g < 2 * f->size; g++)
            put32(q + 4 + 4 * (size_t)g, mapping[g]);
    }
    unsigned char tail[12];
    put32(tail, (int32_t)maxchunks);
    put64(tail + 4, (int64_t)sov);
    int rc = HPC_OK;
    if (hpcw_pwrite(f->fd, m, len, sov) != 0 ||
        hpcw_pwrite(f->fd, tail, sizeof tail, f->end_of_header - SION_META1_TAIL) != 0)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot write META2: %s", f->path, g_strerror(errno));
    else if (ftruncate(f->fd, (off_t)(sov + len)) != 0)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot set the file size: %s", f->path, g_strerror(errno));
    g_free(m);
    return rc;
}

int hpc_sion_close(hpc_sion_file *f, GError **err)
{
    GError *local = NULL;
    int rc = HPC_OK;
    int64_t *count = NULL, *sizes = NULL;
    int *counts = NULL, *displ = NULL;
    int32_t *mapping = NULL;
    MPI_Comm comm = f->comm;

    if (f->sync && fsync(f->fd) != 0)
        rc = hpcw_fail(&local, HPC_E_IO, "%s: fsync: %s", f->path, g_strerror(errno));
    int64_t bc = f->blocks->len;
    int nb = (int)f->blocks->len;
    if (f->lrank == 0) {
        count = g_new(int64_t, f->lsize);
        counts = g_new(int, f->lsize);
        displ = g_new(int, f->lsize);
    }
    MPI_Gather(&bc, 1, MPI_INT64_T, count, 1, MPI_INT64_T, 0, f->lcomm);
    MPI_Gather(&nb, 1, MPI_INT, counts, 1, MPI_INT, 0, f->lcomm);
    int total = 0;
    if (f->lrank == 0) {
        for (int i = 0; i < f->lsize; i++) {
            displ[i] = total;
            total += counts[i];
        }
        sizes = g_new(int64_t, total);
    }
    MPI_Gatherv(f->blocks->data, nb, MPI_INT64_T, sizes, counts, displ, MPI_INT64_T, 0,
                f->lcomm);
    if (f->nfiles > 1) {
        int32_t where[2] = { f->filenumber, f->lrank };
        if (f->rank == 0)
            mapping = g_new(int32_t, 2 * (size_t)f->size);
        MPI_Gather(where, 2, MPI_INT32_T, mapping, 2, MPI_INT32_T, 0, comm);
    }
    if (f->lrank == 0 && rc == HPC_OK)
        rc = write_meta2(f, count, displ, sizes, mapping, &local);
    if (close(f->fd) != 0 && rc == HPC_OK)
        rc = hpcw_fail(&local, HPC_E_IO, "%s: close: %s", f->path, g_strerror(errno));
    f->fd = -1;
    rc = hpcw_agree(comm, rc, &local, err);
    g_free(count);
    g_free(counts);
    g_free(displ);
    g_free(sizes);
    g_free(mapping);
    file_free(f);
    return rc;
}
