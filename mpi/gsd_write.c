/* gsd_write.c - the parallel GSD writer (file layer 2.0).
 *
 * Layout (docs/gsd.md, docs/writer.md): a 256-byte header at 0, the index
 * (32-byte entries, sorted by frame and name id, ended by the first entry
 * whose location is 0) and the name list (NUL-separated names, id = position;
 * its size is counted in 64-byte units) anywhere in the file, chunk data
 * anywhere else.  A new file starts as the GSD library starts one: index of
 * 128 entries at 256, name list of 1024 bytes after it.
 *
 * Every rank knows the file's end (f->end, the same on all ranks): a
 * distributed chunk takes the next N * M * size bytes, each rank's rows at
 * the offset its predecessors' rows end (MPI_Exscan).  Rank 0 alone holds
 * the index and the name list and writes them at the end of a frame, after
 * every rank has written its data (gsd_write_tables.c).
 */
#include "config.h"
#include "gsd_write_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small helpers ------------------------------------------------------ */

static void rec_clear(gsd_rec *r)
{
    g_free(r->name);
    g_free(r->data);
}

/* 32-bit FNV-1a: a second hash to compare names between ranks. */
static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static hpc_gsd_file *file_new(MPI_Comm comm)
{
    hpc_gsd_file *f = g_new0(hpc_gsd_file, 1);
    f->comm = comm;
    f->fd = -1;
    MPI_Comm_rank(comm, &f->rank);
    MPI_Comm_size(comm, &f->size);
    f->frame_names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    f->chunks = g_array_new(FALSE, TRUE, sizeof(gsd_rec));
    f->local = g_array_new(FALSE, TRUE, sizeof(gsd_rec));
    g_array_set_clear_func(f->chunks, (GDestroyNotify)rec_clear);
    g_array_set_clear_func(f->local, (GDestroyNotify)rec_clear);
    if (f->rank == 0) {
        f->names = g_byte_array_new();
        f->ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    }
    return f;
}

static void file_free(hpc_gsd_file *f)
{
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    g_hash_table_destroy(f->frame_names);
    g_array_free(f->chunks, TRUE);
    g_array_free(f->local, TRUE);
    g_clear_error(&f->write_err);
    if (f->names)
        g_byte_array_free(f->names, TRUE);
    if (f->ids)
        g_hash_table_destroy(f->ids);
    g_free(f->path);
    g_free(f);
}

/* Forget the frame's chunks (after its end, or when it is dropped). */
static void frame_reset(hpc_gsd_file *f)
{
    g_hash_table_remove_all(f->frame_names);
    g_array_set_size(f->chunks, 0);
    g_array_set_size(f->local, 0);
    g_clear_error(&f->write_err);
}

/* The other ranks open the file rank 0 created or checked; f->end and
 * f->frame come from rank 0. */
static int open_others(hpc_gsd_file *f, GError **err)
{
    GError *local = NULL;
    int rc = HPC_OK;
    uint64_t state[2] = { f->end, f->frame };
    MPI_Bcast(state, 2, MPI_UINT64_T, 0, f->comm);
    f->end = state[0];
    f->frame = state[1];
    if (f->rank != 0) {
        f->fd = open(f->path, O_WRONLY | O_CLOEXEC);
        if (f->fd < 0)
            rc = hpcw_fail(&local, HPC_E_IO, "cannot open %s: %s", f->path, g_strerror(errno));
    }
    return hpcw_agree(f->comm, rc, &local, err);
}

/* ---- create ------------------------------------------------------------- */

static int check_string(const char *what, const char *s, GError **err)
{
    if (!s)
        return hpcw_fail(err, HPC_E_INVAL, "no %s", what);
    if (strlen(s) > HPC_GSD_STRING_MAX)
        return hpcw_fail(err, HPC_E_INVAL, "%s '%s' is longer than %d bytes", what, s,
                         HPC_GSD_STRING_MAX);
    return HPC_OK;
}

int hpc_gsd_create(const char *path, MPI_Comm comm, const char *application,
                   const char *schema, uint32_t schema_version, hpc_gsd_file **out,
                   GError **err)
{
    GError *local = NULL;
    hpc_gsd_file *f = file_new(comm);
    int rc = HPC_OK;
    *out = NULL;
    if (!path || !*path)
        rc = hpcw_fail(&local, HPC_E_INVAL, "no file name");
    else if (check_string("application", application, &local) != HPC_OK ||
             check_string("schema", schema, &local) != HPC_OK)
        rc = HPC_E_INVAL;
    rc = hpcw_agree(comm, rc, &local, err);
    if (rc != HPC_OK)
        goto out;
    f->path = g_strdup(path);
    if (f->rank == 0)
        rc = gsdw_create_file(f, application, schema, schema_version, &local);
    rc = hpcw_agree(comm, rc, &local, err);
    if (rc == HPC_OK)
        rc = open_others(f, err);
    if (rc == HPC_OK) {
        *out = f;
        f = NULL;
    }
out:
    file_free(f);
    return rc;
}

/* ---- open for appending (rank 0 reads the tables) ------------------------ */

int hpc_gsd_open_append(const char *path, MPI_Comm comm, hpc_gsd_file **out, GError **err)
{
    GError *local = NULL;
    hpc_gsd_file *f = file_new(comm);
    int rc = HPC_OK;
    *out = NULL;
    if (!path || !*path)
        rc = hpcw_fail(&local, HPC_E_INVAL, "no file name");
    rc = hpcw_agree(comm, rc, &local, err);
    if (rc != HPC_OK)
        goto out;
    f->path = g_strdup(path);
    if (f->rank == 0)
        rc = gsdw_read_tables(f, &local);
    rc = hpcw_agree(comm, rc, &local, err);
    if (rc == HPC_OK)
        rc = open_others(f, err);
    if (rc == HPC_OK) {
        *out = f;
        f = NULL;
    }
out:
    file_free(f);
    return rc;
}

/* ---- chunks ------------------------------------------------------------- */

/* Checks every rank can make alone; bytes = n * m * size. */
static int check_chunk(const hpc_gsd_file *f, const char *name, hpc_gsd_type type, uint64_t n,
                       uint32_t m, const void *data, uint64_t *bytes, GError **err)
{
    if (f->broken)
        return hpcw_fail(err, HPC_E_IO, "%s: an earlier frame could not be indexed", f->path);
    if (!name || !*name || strlen(name) > HPC_GSD_NAME_MAX)
        return hpcw_fail(err, HPC_E_INVAL, "a chunk name must have 1 to %d bytes",
                         HPC_GSD_NAME_MAX);
    if ((int)type < HPC_GSD_UINT8 || (int)type > HPC_GSD_DOUBLE)
        return hpcw_fail(err, HPC_E_INVAL, "chunk '%s': type %d is not a GSD type (1 to 10)",
                         name, (int)type);
    if (m == 0)
        return hpcw_fail(err, HPC_E_INVAL, "chunk '%s': M must be at least 1", name);
    if (n > 0 && !data)
        return hpcw_fail(err, HPC_E_INVAL, "chunk '%s': %" PRIu64 " rows without data", name, n);
    if (g_hash_table_contains(f->frame_names, name))
        return hpcw_fail(err, HPC_E_INVAL, "chunk '%s' is already in frame %" PRIu64, name,
                         f->frame);
    uint64_t row = (uint64_t)m * gsd_type_size(type);
    if (n > (uint64_t)INT64_MAX / row)
        return hpcw_fail(err, HPC_E_INVAL, "chunk '%s': %" PRIu64 " rows of %" PRIu64
                         " bytes are too many", name, n, row);
    *bytes = n * row;
    return HPC_OK;
}

/*
 * One MPI_Allreduce (sum) per chunk carries the rows (N), whether a rank
 * failed its checks, and the chunk's signature (type, M, length and two
 * hashes of the name, in 16-bit parts s): the ranks agree when for every
 * part size * sum(s^2) == sum(s)^2, which holds only if all s are equal.
 */
#define SIG_PARTS 9
enum { SUM_ROWS, SUM_FAILED, SUM_SIG, SUM_LEN = SUM_SIG + 2 * SIG_PARTS };

static void signature(const char *name, hpc_gsd_type type, uint32_t m, int64_t *s)
{
    uint32_t h1 = g_str_hash(name), h2 = fnv1a(name);
    uint32_t w[5] = { (uint32_t)type, m, h1, h2, (uint32_t)strlen(name) };
    for (int i = 0; i < SIG_PARTS; i++)
        s[i] = (w[i / 2] >> (16 * (i % 2))) & 0xffff;
}

static int sums_agree(const hpc_gsd_file *f, const int64_t *sum)
{
    for (int i = 0; i < SIG_PARTS; i++) {
        __int128 total = sum[SUM_SIG + i];
        if ((__int128)f->size * sum[SUM_SIG + SIG_PARTS + i] != total * total)
            return 0;
    }
    return 1;
}

int hpc_gsd_write_chunk(hpc_gsd_file *f, const char *name, hpc_gsd_type type,
                        uint64_t n_local, uint32_t m, const void *data, GError **err)
{
    GError *local = NULL;
    uint64_t bytes = 0, before = 0;
    int64_t v[SUM_LEN] = { 0 }, sum[SUM_LEN];
    int rc = check_chunk(f, name, type, n_local, m, data, &bytes, &local);
    if (rc == HPC_OK) {
        v[SUM_ROWS] = (int64_t)n_local;
        signature(name, type, m, v + SUM_SIG);
        for (int i = 0; i < SIG_PARTS; i++)
            v[SUM_SIG + SIG_PARTS + i] = v[SUM_SIG + i] * v[SUM_SIG + i];
    }
    v[SUM_FAILED] = rc != HPC_OK;
    MPI_Allreduce(v, sum, SUM_LEN, MPI_INT64_T, MPI_SUM, f->comm);
    if (sum[SUM_FAILED] > 0)    /* every rank takes this path: the message */
        return hpcw_agree(f->comm, rc, &local, err);
    if (!sums_agree(f, sum))
        return hpcw_fail(err, HPC_E_INVAL, "chunk '%s' of frame %" PRIu64 ": the ranks "
                         "pass different names, types or M", name, f->frame);
    uint64_t total = (uint64_t)sum[SUM_ROWS], row = (uint64_t)m * gsd_type_size(type);
    if (sum[SUM_ROWS] < 0 || total > ((uint64_t)INT64_MAX - f->end) / row)
        return hpcw_fail(err, HPC_E_INVAL, "chunk '%s': %" PRIu64 " rows do not fit in a file",
                         name, total);
    MPI_Exscan(&n_local, &before, 1, MPI_UINT64_T, MPI_SUM, f->comm);
    if (f->rank == 0)
        before = 0;             /* Exscan leaves rank 0's result undefined */
    uint64_t where = f->end;
    f->end += total * row;
    g_hash_table_add(f->frame_names, g_strdup(name));
    if (f->rank == 0) {
        gsd_rec r = { .name = g_strdup(name), .type = (uint8_t)type, .m = m, .n = total,
                      .location = where };
        g_array_append_val(f->chunks, r);
    }
    if (f->write_err) {         /* an earlier chunk of the frame failed here */
        if (err)
            *err = g_error_copy(f->write_err);
        return HPC_E_IO;
    }
    if (bytes == 0)
        return HPC_OK;
    if (hpcw_pwrite(f->fd, data, (size_t)bytes, where + before * row) != 0) {
        hpcw_fail(&f->write_err, HPC_E_IO, "%s: write of %" PRIu64 " bytes of chunk '%s' at %"
                  PRIu64 ": %s", f->path, bytes, name, where + before * row, g_strerror(errno));
        if (err)
            *err = g_error_copy(f->write_err);
        return HPC_E_IO;
    }
    return HPC_OK;
}

int hpc_gsd_write_local(hpc_gsd_file *f, const char *name, hpc_gsd_type type, uint64_t n,
                        uint32_t m, const void *data, GError **err)
{
    uint64_t bytes = 0;
    int rc = check_chunk(f, name, type, n, m, data, &bytes, err);
    if (rc != HPC_OK)
        return rc;
    if (bytes > G_MAXSIZE)
        return hpcw_fail(err, HPC_E_INVAL, "chunk '%s': too large to hold", name);
    gsd_rec r = { .name = g_strdup(name), .type = (uint8_t)type, .m = m, .n = n,
                  .data = bytes ? g_memdup2(data, (gsize)bytes) : NULL };
    g_array_append_val(f->local, r);
    g_hash_table_add(f->frame_names, g_strdup(name));
    return HPC_OK;
}

uint64_t hpc_gsd_frame(const hpc_gsd_file *f)
{
    return f->frame;
}

/* ---- end of a frame ------------------------------------------------------ */

/* Every rank writes its local chunks after the distributed ones, at offsets
 * agreed with MPI_Exscan; *mine is their size. */
static int write_locals(hpc_gsd_file *f, uint64_t *mine, GError **err)
{
    uint64_t before = 0;
    *mine = 0;
    for (guint i = 0; i < f->local->len; i++) {
        gsd_rec *r = &g_array_index(f->local, gsd_rec, i);
        *mine += r->n * r->m * gsd_type_size(r->type);
    }
    MPI_Exscan(mine, &before, 1, MPI_UINT64_T, MPI_SUM, f->comm);
    if (f->rank == 0)
        before = 0;
    uint64_t at = f->end + before;
    if (f->write_err) {
        g_propagate_error(err, f->write_err);
        f->write_err = NULL;
        return HPC_E_IO;
    }
    for (guint i = 0; i < f->local->len; i++) {
        gsd_rec *r = &g_array_index(f->local, gsd_rec, i);
        uint64_t bytes = r->n * r->m * gsd_type_size(r->type);
        r->location = at;
        if (bytes && hpcw_pwrite(f->fd, r->data, (size_t)bytes, at) != 0)
            return hpcw_fail(err, HPC_E_IO, "%s: write of %" PRIu64 " bytes of chunk '%s' at %"
                             PRIu64 ": %s", f->path, bytes, r->name, at, g_strerror(errno));
        at += bytes;
    }
    return HPC_OK;
}

/* A local chunk's entry on the way to rank 0: fixed part, then the name. */
typedef struct wire_rec {
    uint64_t n, location;
    uint32_t m, namelen;
    uint8_t type;
    uint8_t pad[7];
} wire_rec;

/* This rank's local chunks as entries for rank 0 (name, type, N, M,
 * location). */
static GByteArray *wire_locals(const hpc_gsd_file *f)
{
    GByteArray *out = g_byte_array_new();
    for (guint i = 0; i < f->local->len; i++) {
        gsd_rec *r = &g_array_index(f->local, gsd_rec, i);
        wire_rec w = { .n = r->n, .location = r->location, .m = r->m,
                       .namelen = (uint32_t)strlen(r->name), .type = r->type };
        g_byte_array_append(out, (const guint8 *)&w, sizeof w);
        g_byte_array_append(out, (const guint8 *)r->name, w.namelen);
    }
    return out;
}

/* Rank 0 receives every rank's local chunks (all ranks call; total is the
 * sum of the wire lengths, < INT_MAX); returns them on rank 0. */
static GArray *gather_locals(hpc_gsd_file *f, GByteArray *out, int64_t total)
{
    GArray *recs = NULL;
    int *lens = NULL, *displ = NULL, len = (int)out->len;
    unsigned char *all = NULL;
    if (f->rank == 0) {
        recs = g_array_new(FALSE, TRUE, sizeof(gsd_rec));
        g_array_set_clear_func(recs, (GDestroyNotify)rec_clear);
    }
    if (total == 0)
        return recs;
    if (f->rank == 0) {
        lens = g_new(int, f->size);
        displ = g_new(int, f->size);
        all = g_malloc((size_t)total);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, f->comm);
    for (int i = 0, at = 0; f->rank == 0 && i < f->size; i++) {
        displ[i] = at;
        at += lens[i];
    }
    MPI_Gatherv(out->data, len, MPI_BYTE, all, lens, displ, MPI_BYTE, 0, f->comm);
    for (size_t p = 0; f->rank == 0 && p + sizeof(wire_rec) <= (size_t)total;) {
        wire_rec w;
        memcpy(&w, all + p, sizeof w);
        p += sizeof w;
        gsd_rec r = { .name = g_strndup((const char *)all + p, w.namelen), .type = w.type,
                      .m = w.m, .n = w.n, .location = w.location };
        p += w.namelen;
        g_array_append_val(recs, r);
    }
    g_free(lens);
    g_free(displ);
    g_free(all);
    return recs;
}

/* Rank 0's outcome (code, file end, broken) to every rank, with its
 * message when it failed. */
static int from_rank0(hpc_gsd_file *f, int rc, GError **local, GError **err)
{
    int64_t v[3] = { rc, (int64_t)f->end, f->broken };
    MPI_Bcast(v, 3, MPI_INT64_T, 0, f->comm);
    f->end = (uint64_t)v[1];
    f->broken = (int)v[2];
    if (v[0] == HPC_OK) {
        g_clear_error(local);
        return HPC_OK;
    }
    char msg[512] = "";
    if (f->rank == 0)
        g_snprintf(msg, sizeof msg, "rank 0: %s",
                   *local ? (*local)->message : hpc_write_strerror(rc));
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, f->comm);
    msg[sizeof msg - 1] = '\0';
    g_clear_error(local);
    g_set_error_literal(err, HPC_WRITE_ERROR, (int)v[0], msg);
    return (int)v[0];
}

/*
 * Collectives: MPI_Exscan (local chunks' offsets), one MPI_Allreduce (their
 * total size, any failed data write, the entries' total size), the gather
 * of the local chunks' entries to rank 0 (when there are any), one
 * MPI_Bcast of rank 0's outcome.
 */
int hpc_gsd_end_frame(hpc_gsd_file *f, GError **err)
{
    GError *local = NULL;
    uint64_t mine = 0;
    int rc = f->broken ? hpcw_fail(&local, HPC_E_IO, "%s: an earlier frame could not be "
                                   "indexed", f->path) : HPC_OK;
    int wrc = write_locals(f, &mine, rc == HPC_OK ? &local : NULL);
    rc = rc != HPC_OK ? rc : wrc;
    GByteArray *out = wire_locals(f);
    int64_t v[3] = { (int64_t)mine, rc != HPC_OK, (int64_t)out->len }, sum[3];
    MPI_Allreduce(v, sum, 3, MPI_INT64_T, MPI_SUM, f->comm);
    f->end += (uint64_t)sum[0];
    if (sum[1] == 0 && sum[2] >= INT_MAX)
        rc = hpcw_fail(&local, HPC_E_INVAL, "frame %" PRIu64 ": the local chunks' entries "
                       "exceed 2 GiB", f->frame);
    if (sum[1] > 0 || rc != HPC_OK) {   /* the same on every rank */
        rc = hpcw_agree(f->comm, rc, &local, err);
        goto out;
    }
    gsdw_test_abort(f, "data");      /* every rank's data are written */
    GArray *locals = gather_locals(f, out, sum[2]);
    if (f->rank == 0) {
        rc = gsdw_index_frame(f, locals, &local);
        /* a failed index write leaves the tables unknown: no more frames */
        f->broken = rc == HPC_E_IO;
        g_array_free(locals, TRUE);
    }
    rc = from_rank0(f, rc, &local, err);
    if (rc == HPC_OK)
        f->frame++;
out:
    g_byte_array_free(out, TRUE);
    frame_reset(f);
    return rc;
}

/* ---- close -------------------------------------------------------------- */

int hpc_gsd_close(hpc_gsd_file *f, GError **err)
{
    GError *local = NULL;
    int rc = HPC_OK;
    if (close(f->fd) != 0)
        rc = hpcw_fail(&local, HPC_E_IO, "%s: close: %s", f->path, g_strerror(errno));
    f->fd = -1;
    rc = hpcw_agree(f->comm, rc, &local, err);
    file_free(f);
    return rc;
}
