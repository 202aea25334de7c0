/* hpcwrite.c - MPI tool: write a deterministic pattern into a SION file set,
 * a GSD trajectory, a distributed HDF set (or, for comparison, one POSIX
 * file per rank) and report the bandwidth.
 *
 *   mpirun -np N hpcwrite --format gsd --particles N[,N...] --frames F [--append] OUT
 *   mpirun -np N hpcwrite --format sion|dhdf|posix --bytes-per-rank SIZE[,SIZE...]
 *          [--chunk SIZE[,...]] [--nfiles K] [--fsblksize B] [--write-size SIZE[,...]]
 *          [--records] [--kv-keys K --kv-records R] [--sync] [--abort-at WHEN]
 *          [--ranks-per-file G] [--dtype f8|f4|i4|i2|u1] [--cols C] OUT
 *
 * Data pattern (the fixtures' one, see docs/writer.md): byte k of stream s is
 * '\n' when k % 64 == 63, else ALPH[(7s + 3(k/64) + k%64) % 62] with
 * ALPH = 0-9a-zA-Z; s is the rank (key-value: s = rank*16 + key, k the offset
 * in that key's data).  dhdf: array "rows" (dtype, [sum of rows, C]) split by
 * rows in rank order, element (i, j) = i*C + j converted to the dtype (C
 * casts, integers wrap), and array "cube" (int16, [4, 6, 2N]) with rank r's
 * piece at [0, 0, 2r] of size [4, 6, 2], element = its C-order index.
 * gsd: particle i (global, rank order) in frame f has position component c
 * (3i + c + 7f) mod 2^20, velocity -position/4, typeid i mod 4; see
 * docs/writer.md for the chunks.
 */
#include "config.h"
#include "hpc_write.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char ALPH[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* Line L of stream s is line[(7s + 3L) % 62]: 62 distinct 64-byte lines. */
static char line[62][64];

static void pattern_init(void)
{
    for (int o = 0; o < 62; o++) {
        for (int j = 0; j < 63; j++)
            line[o][j] = ALPH[(o + j) % 62];
        line[o][63] = '\n';
    }
}

/* Bytes [k, k+len) of stream s of the pattern. */
static void pattern(char *buf, uint64_t s, uint64_t k, size_t len)
{
    while (len > 0) {
        uint64_t in = k % 64;
        size_t take = (size_t)MIN(64 - in, len);
        memcpy(buf, line[(7 * (s % 62) + 3 * ((k / 64) % 62)) % 62] + in, take);
        buf += take;
        k += take;
        len -= take;
    }
}

typedef struct opts {
    char *format, *bytes, *chunk, *wsize, *abort_at, *dtype, *particles;
    int nfiles, fsblksize, records, kv_keys, kv_records, sync, quiet, ranks_per_file, cols;
    int frames, append;
    /* the values of the per-rank lists for this rank */
    uint64_t nbytes, nchunk, nwsize, abort_after, nparticles;
} opts;

#ifdef HAVE_HDF4
/* dtype name -> HDF4 number type and element size */
static const struct { const char *name; int32_t nt; int size; } dtypes[] = {
    { "f8", 6, 8 }, { "f4", 5, 4 }, { "i4", 24, 4 }, { "i2", 22, 2 }, { "u1", 21, 1 },
};

/* Element idx of the pattern as dtype t, native order, into p. */
static void dhdf_value(int t, uint64_t idx, unsigned char *p)
{
    double d = (double)idx;
    float fl = (float)idx;
    uint32_t u4 = (uint32_t)idx;
    uint16_t u2 = (uint16_t)idx;
    uint8_t u1 = (uint8_t)idx;
    switch (t) {
    case 0: memcpy(p, &d, 8); break;
    case 1: memcpy(p, &fl, 4); break;
    case 2: memcpy(p, &u4, 4); break;
    case 3: memcpy(p, &u2, 2); break;
    default: memcpy(p, &u1, 1); break;
    }
}

/* --format dhdf: arrays "rows" and "cube"; returns the exit status. */
static int run_dhdf(const opts *o, const char *out, MPI_Comm comm, int rank, int size,
                    uint64_t bytes)
{
    GError *e = NULL;
    int t = -1, status = 0;
    for (unsigned i = 0; i < G_N_ELEMENTS(dtypes); i++)
        if (strcmp(o->dtype ? o->dtype : "f8", dtypes[i].name) == 0)
            t = (int)i;
    uint64_t rowbytes = (uint64_t)(o->cols > 0 ? o->cols : 0) * (t >= 0 ? dtypes[t].size : 1);
    int bad = t < 0 || rowbytes == 0 || bytes % rowbytes != 0 || bytes / rowbytes > INT32_MAX ||
              2 * (int64_t)size > INT32_MAX, anybad = 0;
    if (bad)
        fprintf(stderr, "hpcwrite: rank %d: --dtype must be f8, f4, i4, i2 or u1, --cols > 0, "
                "and --bytes-per-rank (%" PRIu64 ") whole rows of --cols elements\n", rank, bytes);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (anybad) {
        if (!bad)
            fprintf(stderr, "hpcwrite: rank %d: stopping: another rank rejected its arguments\n",
                    rank);
        return 2;
    }
    int32_t rows = (int32_t)(bytes / rowbytes), before = 0, total = 0;
    MPI_Exscan(&rows, &before, 1, MPI_INT32_T, MPI_SUM, comm);
    if (rank == 0)
        before = 0;
    MPI_Allreduce(&rows, &total, 1, MPI_INT32_T, MPI_SUM, comm);
    int es = dtypes[t].size;
    unsigned char *buf = g_malloc((size_t)bytes + 1);
    for (uint64_t i = 0; i < (uint64_t)rows; i++)
        for (uint64_t j = 0; j < (uint64_t)o->cols; j++)
            dhdf_value(t, ((uint64_t)before + i) * (uint64_t)o->cols + j,
                       buf + (i * (uint64_t)o->cols + j) * (uint64_t)es);
    int16_t cube[4 * 6 * 2];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 2; k++)
                cube[(i * 6 + j) * 2 + k] = (int16_t)((i * 6 + j) * 2 * size + 2 * rank + k);

    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    hpc_dhdf_file *f = NULL;
    int rc = hpc_dhdf_open(out, comm, o->ranks_per_file, &f, &e);
    if (rc != HPC_OK) {
        fprintf(stderr, "hpcwrite: rank %d: open failed: %s\n", rank, e->message);
        g_clear_error(&e);
        g_free(buf);
        return 1;
    }
    int32_t dims[2] = { total, o->cols }, org[2] = { before, 0 }, sz[2] = { rows, o->cols };
    int32_t cdims[3] = { 4, 6, 2 * size }, corg[3] = { 0, 0, 2 * rank }, csz[3] = { 4, 6, 2 };
    rc = hpc_dhdf_write(f, "rows", dtypes[t].nt, 2, dims, org, sz, buf, &e);
    if (rc == HPC_OK)
        rc = hpc_dhdf_write(f, "cube", 22, 3, cdims, corg, csz, cube, &e);
    if (rc != HPC_OK) {
        fprintf(stderr, "hpcwrite: rank %d: write failed: %s\n", rank, e->message);
        g_clear_error(&e);
        status = 1;
    }
    if (hpc_dhdf_close(f, &e) != HPC_OK) {
        fprintf(stderr, "hpcwrite: rank %d: close failed: %s\n", rank, e->message);
        g_clear_error(&e);
        status = 1;
    }
    MPI_Barrier(comm);
    double t1 = MPI_Wtime();
    uint64_t all = 0;
    MPI_Reduce(&bytes, &all, 1, MPI_UINT64_T, MPI_SUM, 0, comm);
    if (rank == 0 && !o->quiet && status == 0)
        printf("hpcwrite: dhdf ranks %d files %d bytes %" PRIu64 " total %.6f s "
               "bandwidth %.2f MiB/s\n", size,
               1 + (size + MAX(o->ranks_per_file, 1) - 1) / MAX(o->ranks_per_file, 1), all,
               t1 - t0, t1 > t0 ? (double)all / (t1 - t0) / 1048576.0 : 0.0);
    g_free(buf);
    return status;
}
#endif

/* "123", "4k", "2M", "1G" (powers of 1024). */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!g_ascii_isdigit(*s))
        return -1;
    guint64 v = g_ascii_strtoull(s, &end, 10);
    uint64_t mul = 1;
    switch (g_ascii_tolower(*end)) {
    case 'k': mul = 1024; end++; break;
    case 'm': mul = 1024 * 1024; end++; break;
    case 'g': mul = 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (errno || *end || v > INT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

/* This rank's value of a list "A" (all ranks) or "A,B,..." (one per rank). */
static int list_value(const char *name, const char *list, int rank, int size,
                      uint64_t *out, GError **err)
{
    gchar **v = g_strsplit(list, ",", -1);
    guint n = g_strv_length(v);
    int rc = 0;
    if (n != 1 && n != (guint)size)
        rc = -1, g_set_error(err, HPC_WRITE_ERROR, HPC_E_INVAL,
                             "--%s has %u values for %d ranks (give 1 or %d)", name, n, size, size);
    else if (parse_size(v[n == 1 ? 0 : rank], out) != 0)
        rc = -1, g_set_error(err, HPC_WRITE_ERROR, HPC_E_INVAL, "--%s: '%s' is not a size",
                             name, v[n == 1 ? 0 : rank]);
    g_strfreev(v);
    return rc;
}

static void die(int rank, const char *what, GError *e)
{
    fprintf(stderr, "hpcwrite: rank %d: %s%s%s\n", rank, what, e ? ": " : "", e ? e->message : "");
}

/* A command-line error, kept in why: once all ranks have checked their
 * arguments, the lowest rank that found one prints it (one line per
 * error, not one per rank). */
static void arg_fail(GString *why, int rank, const char *what, GError *e)
{
    if (!why->len)
        g_string_printf(why, "hpcwrite: rank %d: %s%s%s", rank, what, e ? ": " : "",
                        e ? e->message : "");
}

/* Write the whole stream of this rank: plain mode. */
static int write_stream(hpc_sion_file *sf, int posix_fd, int rank, uint64_t bytes,
                        uint64_t wsize, uint64_t chunk, int records, uint64_t abort_after,
                        GError **err)
{
    char *buf = g_malloc((size_t)MAX(MIN(wsize, bytes), 1));   /* no more than needed */
    uint64_t k = 0;
    int rc = HPC_OK;
    while (k < bytes && rc == HPC_OK) {
        size_t n = (size_t)MIN(wsize, bytes - k);
        if (abort_after != UINT64_MAX && k + n > abort_after)
            n = (size_t)(abort_after - k);
        pattern(buf, (uint64_t)rank, k, n);
        if (posix_fd >= 0) {
            if (write(posix_fd, buf, n) != (ssize_t)n)
                rc = HPC_E_IO, g_set_error(err, HPC_WRITE_ERROR, rc, "write: %s", g_strerror(errno));
        } else {
            /* --records: a write that fits in a chunk is kept in one block */
            if (records && n <= chunk)
                rc = hpc_sion_ensure_free_space(sf, n, err);
            if (rc == HPC_OK)
                rc = hpc_sion_write(sf, buf, n, err);
        }
        k += n;
        if (k == abort_after)
            break;
    }
    g_free(buf);
    return rc;
}

/* Key-value mode: record i of rank r has key 1 + i % K and 100 + 13r + 37i
 * bytes, the continuation of that key's pattern stream r*16 + key. */
static int write_records(hpc_sion_file *sf, int rank, int keys, int nrec, GError **err)
{
    uint64_t *done = g_new0(uint64_t, (size_t)keys + 1);
    int rc = HPC_OK;
    for (int i = 0; i < nrec && rc == HPC_OK; i++) {
        int key = 1 + i % keys;
        size_t len = 100 + 13 * (size_t)rank + 37 * (size_t)i;
        char *buf = g_malloc(len);
        pattern(buf, (uint64_t)rank * 16 + (uint64_t)key, done[key], len);
        done[key] += len;
        rc = hpc_sion_write_key(sf, key, buf, len, err);
        g_free(buf);
    }
    g_free(done);
    return rc;
}

static void maybe_abort(const char *when, const char *at, MPI_Comm comm, int rank)
{
    if (at && strcmp(at, when) == 0) {
        MPI_Barrier(comm);      /* everyone got this far: a reproducible state */
        if (rank == 0) {
            fprintf(stderr, "hpcwrite: aborting at '%s' as asked\n", when);
            MPI_Abort(comm, 3);
        }
        MPI_Barrier(comm);      /* the others wait to be killed */
    }
}

/* ---- --format gsd ------------------------------------------------------- */

/* Component c of particle i's position in frame fr: an integer below 2^20,
 * exact in float32; the velocity is -position / 4 (exact too). */
static float gsd_pos(uint64_t i, unsigned c, uint64_t fr)
{
    return (float)((3 * i + c + 7 * fr) % (UINT64_C(1) << 20));
}

typedef struct gsd_run {
    hpc_gsd_file *f;
    MPI_Comm comm;
    int rank, size;
    uint64_t n, before, total;  /* this rank's particles, those of lower ranks, all */
    float *pos, *vel;
    uint64_t written, abort_after;   /* this rank's bytes of distributed chunks */
    int append;
    double io;                  /* seconds inside the library (barrier to barrier) */
} gsd_run;

/* --abort-at SIZE: stop the job before a chunk that takes any rank past SIZE. */
static void gsd_maybe_abort(gsd_run *g, uint64_t bytes)
{
    if (g->abort_after == UINT64_MAX)
        return;
    int over = g->written + bytes > g->abort_after, any = 0;
    MPI_Allreduce(&over, &any, 1, MPI_INT, MPI_MAX, g->comm);
    if (any) {
        MPI_Barrier(g->comm);
        if (g->rank == 0) {
            fprintf(stderr, "hpcwrite: aborting after %" PRIu64 " bytes per rank as asked\n",
                    g->abort_after);
            MPI_Abort(g->comm, 3);
        }
        MPI_Barrier(g->comm);
    }
    g->written += bytes;
}

/* The chunks only one rank holds, in the first frame of a run (particles/N
 * in every frame of an appending run): particles/N and particles/types by
 * rank 0, configuration/box by the last rank. */
static int gsd_first_locals(gsd_run *g, int first, GError **err)
{
    int rc = HPC_OK;
    if (g->rank == 0) {
        uint32_t n = (uint32_t)g->total;
        static const int8_t types[4][2] = { { 'A', 0 }, { 'B', 0 }, { 'C', 0 }, { 'D', 0 } };
        rc = hpc_gsd_write_local(g->f, "particles/N", HPC_GSD_UINT32, 1, 1, &n, err);
        if (rc == HPC_OK && first)
            rc = hpc_gsd_write_local(g->f, "particles/types", HPC_GSD_INT8, 4, 2, types, err);
    }
    if (rc == HPC_OK && first && g->rank == g->size - 1) {
        float box[6] = { 100, 100, 100, 0, 0, 0 };
        rc = hpc_gsd_write_local(g->f, "configuration/box", HPC_GSD_FLOAT, 6, 1, box, err);
    }
    return rc;
}

/* One frame: configuration/step (rank 0), position and velocity (and in the
 * run's first frame typeid) from every rank, then the frame's end.  An
 * appending run writes particles/N and typeid in every frame: the hoomd
 * schema takes chunks missing from a frame from frame 0, whose N differs. */
static int gsd_frame(gsd_run *g, uint64_t fr, int first, GError **err)
{
    int ids = first || g->append;
    for (uint64_t j = 0; j < g->n; j++)
        for (unsigned c = 0; c < 3; c++) {
            g->pos[3 * j + c] = gsd_pos(g->before + j, c, fr);
            g->vel[3 * j + c] = -g->pos[3 * j + c] / 4;
        }
    uint32_t *typeid = NULL;
    if (ids) {
        typeid = g_new(uint32_t, g->n + 1);
        for (uint64_t j = 0; j < g->n; j++)
            typeid[j] = (uint32_t)((g->before + j) % 4);
    }
    uint64_t step = 1000 * fr, vec = 12 * g->n;
    MPI_Barrier(g->comm);
    double t0 = MPI_Wtime();
    int rc = ids ? gsd_first_locals(g, first, err) : HPC_OK;
    if (rc == HPC_OK && g->rank == 0)
        rc = hpc_gsd_write_local(g->f, "configuration/step", HPC_GSD_UINT64, 1, 1, &step, err);
    /* a rank that failed alone still takes part in the collective calls */
    gsd_maybe_abort(g, vec);
    int rc2 = hpc_gsd_write_chunk(g->f, "particles/position", HPC_GSD_FLOAT, g->n, 3, g->pos,
                                  rc == HPC_OK ? err : NULL);
    rc = rc != HPC_OK ? rc : rc2;
    gsd_maybe_abort(g, vec);
    rc2 = hpc_gsd_write_chunk(g->f, "particles/velocity", HPC_GSD_FLOAT, g->n, 3, g->vel,
                              rc == HPC_OK ? err : NULL);
    rc = rc != HPC_OK ? rc : rc2;
    if (ids) {
        gsd_maybe_abort(g, 4 * g->n);
        rc2 = hpc_gsd_write_chunk(g->f, "particles/typeid", HPC_GSD_UINT32, g->n, 1, typeid,
                                  rc == HPC_OK ? err : NULL);
        rc = rc != HPC_OK ? rc : rc2;
    }
    rc2 = hpc_gsd_end_frame(g->f, rc == HPC_OK ? err : NULL);
    rc = rc != HPC_OK ? rc : rc2;
    MPI_Barrier(g->comm);
    g->io += MPI_Wtime() - t0;
    g_free(typeid);
    return rc;
}

/* --format gsd: --frames frames of --particles particles per rank, in a new
 * file or (--append) after the frames of an existing one. */
static int run_gsd(const opts *o, const char *out, MPI_Comm comm, int rank, int size,
                   uint64_t n, uint64_t abort_after)
{
    gsd_run g = { .comm = comm, .rank = rank, .size = size, .n = n,
                  .abort_after = abort_after, .append = o->append };
    GError *e = NULL;
    int status = 0, rc;
    MPI_Exscan(&n, &g.before, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (rank == 0)
        g.before = 0;
    MPI_Allreduce(&n, &g.total, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (g.total > UINT32_MAX || o->frames < 0) {
        if (rank == 0)
            fprintf(stderr, "hpcwrite: rank 0: --particles add up to %" PRIu64 " (at most "
                    "2^32-1) or --frames is negative\n", g.total);
        return 2;
    }
    g.pos = g_new(float, 3 * n + 1);
    g.vel = g_new(float, 3 * n + 1);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    if (o->append)
        rc = hpc_gsd_open_append(out, comm, &g.f, &e);
    else
        rc = hpc_gsd_create(out, comm, "hpcwrite " PACKAGE_VERSION, "hoomd",
                            HPC_GSD_VERSION(1, 4), &g.f, &e);
    g.io = MPI_Wtime() - t0;
    if (rc != HPC_OK) {
        die(rank, "open failed", e);
        g_clear_error(&e);
        g_free(g.pos);
        g_free(g.vel);
        return 1;
    }
    maybe_abort("open", o->abort_at, comm, rank);
    uint64_t first = hpc_gsd_frame(g.f);
    for (int k = 0; k < o->frames && status == 0; k++)
        if (gsd_frame(&g, first + (uint64_t)k, k == 0, &e) != HPC_OK) {
            die(rank, "write failed", e);
            g_clear_error(&e);
            status = 1;     /* collective failure: every rank stops here */
        }
    maybe_abort("close", o->abort_at, comm, rank);
    t0 = MPI_Wtime();
    if (hpc_gsd_close(g.f, &e) != HPC_OK) {
        die(rank, "close failed", e);
        g_clear_error(&e);
        status = 1;
    }
    MPI_Barrier(comm);
    g.io += MPI_Wtime() - t0;
    /* bytes of every chunk: 24 per particle and frame, 4 more (typeid) in the
     * first (every one when appending); step 8 per frame; N 4, types 8 and
     * box 24 once (N every frame when appending) */
    uint64_t fr = (uint64_t)o->frames, idf = o->append ? fr : 1;
    uint64_t bytes = fr > 0 ? g.total * (24 * fr + 4 * idf) + 8 * fr + 4 * idf + 32 : 0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (rank == 0 && !o->quiet && status == 0)
        printf("hpcwrite: gsd ranks %d frames %d particles %" PRIu64 " bytes %" PRIu64
               " total %.6f s bandwidth %.2f MiB/s rank0_maxrss %ld KiB\n", size, o->frames,
               g.total, bytes, g.io, g.io > 0 ? (double)bytes / g.io / 1048576.0 : 0.0,
               ru.ru_maxrss);
    g_free(g.pos);
    g_free(g.vel);
    return status;
}

/* The formats this build writes, as --version and the usage error say. */
#ifdef HAVE_HDF4
#define FORMATS_BUILT " dhdf"
#define FORMATS_LEFT_OUT ""
#else
#define FORMATS_BUILT ""
#define FORMATS_LEFT_OUT " (not built: dhdf)"
#endif

static gboolean format_known(const char *f)
{
    return strcmp(f, "sion") == 0 || strcmp(f, "posix") == 0 || strcmp(f, "gsd") == 0 ||
           (*FORMATS_BUILT && strcmp(f, "dhdf") == 0);
}

/* Check the parsed options on this rank: 0, or 2 with *why set. */
static int check_args(opts *o, int argc, int rank, int size, GString *why)
{
    GError *e = NULL;
    if (argc != 2 || !o->format || (strcmp(o->format, "gsd") == 0 ? !o->particles : !o->bytes)) {
        arg_fail(why, rank, "usage: hpcwrite --format sion|dhdf|posix --bytes-per-rank SIZE [options] OUT, "
                 "or hpcwrite --format gsd --particles N --frames F [options] OUT", NULL);
    } else if (!format_known(o->format)) {
        char *m = g_strdup_printf("unknown --format '%s' (sion, gsd, posix%s)", o->format,
                                  *FORMATS_BUILT ? ", dhdf" : "");
        arg_fail(why, rank, m, NULL);
        g_free(m);
    } else if ((o->bytes && list_value("bytes-per-rank", o->bytes, rank, size, &o->nbytes, &e) != 0) ||
               (o->particles && list_value("particles", o->particles, rank, size, &o->nparticles, &e) != 0) ||
               (o->chunk && list_value("chunk", o->chunk, rank, size, &o->nchunk, &e) != 0) ||
               (o->wsize && list_value("write-size", o->wsize, rank, size, &o->nwsize, &e) != 0)) {
        arg_fail(why, rank, "bad arguments", e);
        g_clear_error(&e);
    } else if (o->nwsize == 0 || (o->kv_keys > 0) != (o->kv_records > 0) || o->kv_keys < 0 ||
               o->kv_keys > 15 || o->kv_records < 0) {
        arg_fail(why, rank, "--write-size must be > 0; --kv-keys 1..15 and --kv-records go together", NULL);
    } else if (o->abort_at && strcmp(o->abort_at, "open") != 0 && strcmp(o->abort_at, "close") != 0 &&
               parse_size(o->abort_at, &o->abort_after) != 0) {
        arg_fail(why, rank, "--abort-at takes open, close or a size", NULL);
    } else {
        return 0;
    }
    return 2;
}

/* Arguments may be bad on some ranks only (per-rank lists): all stop, and
 * the lowest failing rank says why. */
static int agree_args(MPI_Comm comm, int rank, int size, int status, const GString *why)
{
    int any = 0;
    MPI_Allreduce(&status, &any, 1, MPI_INT, MPI_MAX, comm);
    int first = status ? rank : size, lowest = size;
    MPI_Allreduce(&first, &lowest, 1, MPI_INT, MPI_MIN, comm);
    if (status && rank == lowest)
        fprintf(stderr, "%s\n", why->str);
    return status ? status : any;
}

/* Every rank creates OUT.%06d; a failure anywhere fails all. */
static int posix_open(const char *out, MPI_Comm comm, int rank, int *fd, GError **e)
{
    char *p = g_strdup_printf("%s.%06d", out, rank);
    *fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (*fd < 0)
        g_set_error(e, HPC_WRITE_ERROR, HPC_E_IO, "%s: %s", p, g_strerror(errno));
    g_free(p);
    int bad = *fd < 0, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (anybad && !bad)
        g_set_error(e, HPC_WRITE_ERROR, HPC_E_IO, "another rank could not create its file");
    return anybad ? HPC_E_IO : HPC_OK;
}

/* --abort-at SIZE: every rank wrote SIZE bytes; rank 0 aborts the job. */
static void abort_after_bytes(const opts *o, MPI_Comm comm, int rank)
{
    if (o->abort_after == UINT64_MAX)
        return;
    MPI_Barrier(comm);
    if (rank == 0) {
        fprintf(stderr, "hpcwrite: aborting after %" PRIu64 " bytes per rank as asked\n",
                o->abort_after);
        MPI_Abort(comm, 3);
    }
    MPI_Barrier(comm);
}

/* --format sion or posix: one stream (or key-value records) per rank. */
static int run_stream(const opts *o, const char *out, MPI_Comm comm, int rank, int size)
{
    int posix = strcmp(o->format, "posix") == 0, status = 0, fd = -1, rc;
    uint64_t chunk = o->chunk ? o->nchunk : o->nbytes;
    hpc_sion_file *sf = NULL;
    GError *e = NULL;
    MPI_Barrier(comm);
    double t0 = MPI_Wtime(), t1, t2, t3;
    if (posix) {
        rc = posix_open(out, comm, rank, &fd, &e);
    } else {
        hpc_sion_params sp = { (int64_t)chunk, o->fsblksize, o->nfiles, o->kv_keys > 0, o->sync };
        rc = hpc_sion_open(out, comm, &sp, &sf, &e);
    }
    if (rc != HPC_OK) {
        die(rank, "open failed", e);
        g_clear_error(&e);
        if (fd >= 0)
            close(fd);
        return 1;
    }
    t1 = MPI_Wtime();
    maybe_abort("open", o->abort_at, comm, rank);
    if (o->kv_keys > 0)
        rc = write_records(sf, rank, o->kv_keys, o->kv_records, &e);
    else
        rc = write_stream(sf, fd, rank, o->nbytes, o->nwsize, chunk, o->records, o->abort_after, &e);
    if (rc != HPC_OK) {
        die(rank, "write failed", e);
        g_clear_error(&e);
        status = 1;
    }
    abort_after_bytes(o, comm, rank);
    maybe_abort("close", o->abort_at, comm, rank);
    t2 = MPI_Wtime();
    if (posix) {
        if ((o->sync && fsync(fd) != 0) || close(fd) != 0) {
            die(rank, "close failed", NULL);
            status = 1;
        }
    } else if (hpc_sion_close(sf, &e) != HPC_OK) {
        die(rank, "close failed", e);
        g_clear_error(&e);
        status = 1;
    }
    MPI_Barrier(comm);
    t3 = MPI_Wtime();
    uint64_t total = 0, mine = posix || o->kv_keys == 0 ? o->nbytes : 0;
    MPI_Reduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, 0, comm);
    if (rank == 0 && !o->quiet && status == 0 && o->kv_keys == 0)
        printf("hpcwrite: %s ranks %d files %d bytes %" PRIu64 " open %.6f write %.6f close %.6f "
               "total %.6f s bandwidth %.2f MiB/s\n",
               o->format, size, posix ? size : o->nfiles, total, t1 - t0, t2 - t1, t3 - t2, t3 - t0,
               t3 > t0 ? (double)total / (t3 - t0) / 1048576.0 : 0.0);
    return status;
}

static void opts_clear(opts *o)
{
    g_free(o->format);
    g_free(o->bytes);
    g_free(o->chunk);
    g_free(o->wsize);
    g_free(o->abort_at);
    g_free(o->dtype);
    g_free(o->particles);
}

/* Parse the command line into o: 0, 2 (bad; *why says why), or -1 when
 * --help or --version was answered. */
static int parse_args(opts *o, int *argc, char ***argv, int rank, int size, GString *why)
{
    gboolean help = FALSE, version = FALSE;
    GOptionEntry entries[] = {
        { "format", 0, 0, G_OPTION_ARG_STRING, &o->format, "sion, gsd, dhdf, or posix (one file OUT.%06d per rank)", "F" },
        { "particles", 0, 0, G_OPTION_ARG_STRING, &o->particles, "gsd: particles per rank: one number or one per rank", "N[,...]" },
        { "frames", 0, 0, G_OPTION_ARG_INT, &o->frames, "gsd: frames to write (default 1)", "F" },
        { "append", 0, 0, G_OPTION_ARG_NONE, &o->append, "gsd: append the frames to an existing file", NULL },
        { "ranks-per-file", 0, 0, G_OPTION_ARG_INT, &o->ranks_per_file, "dhdf: ranks sharing an associated file (default 1)", "G" },
        { "dtype", 0, 0, G_OPTION_ARG_STRING, &o->dtype, "dhdf: f8 (default), f4, i4, i2, u1", "T" },
        { "cols", 0, 0, G_OPTION_ARG_INT, &o->cols, "dhdf: elements per row (default 256)", "C" },
        { "bytes-per-rank", 0, 0, G_OPTION_ARG_STRING, &o->bytes, "stream length: one size or one per rank", "SIZE[,...]" },
        { "chunk", 0, 0, G_OPTION_ARG_STRING, &o->chunk, "chunk size asked for (default: the stream length)", "SIZE[,...]" },
        { "nfiles", 0, 0, G_OPTION_ARG_INT, &o->nfiles, "physical files (default 1)", "K" },
        { "fsblksize", 0, 0, G_OPTION_ARG_INT, &o->fsblksize, "alignment (default: the file system's)", "B" },
        { "write-size", 0, 0, G_OPTION_ARG_STRING, &o->wsize, "bytes per write call (default 1M)", "SIZE[,...]" },
        { "records", 0, 0, G_OPTION_ARG_NONE, &o->records, "keep each write that fits in a chunk in one block", NULL },
        { "kv-keys", 0, 0, G_OPTION_ARG_INT, &o->kv_keys, "key-value mode with keys 1..K", "K" },
        { "kv-records", 0, 0, G_OPTION_ARG_INT, &o->kv_records, "key-value records per rank", "R" },
        { "sync", 0, 0, G_OPTION_ARG_NONE, &o->sync, "fsync before closing", NULL },
        { "abort-at", 0, 0, G_OPTION_ARG_STRING, &o->abort_at, "MPI_Abort at open, close, or after SIZE bytes per rank (tests)", "WHEN" },
        { "quiet", 'q', 0, G_OPTION_ARG_NONE, &o->quiet, "no bandwidth report", NULL },
        { "help", 'h', 0, G_OPTION_ARG_NONE, &help, "this help", NULL },
        { "version", 'V', 0, G_OPTION_ARG_NONE, &version, "the version and the formats built in", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("OUT - write a SION file set, a GSD trajectory or a distributed HDF set with MPI");
    g_option_context_add_main_entries(ctx, entries, NULL);
    /* --help by hand: GLib's would exit() without MPI_Finalize, on every rank */
    g_option_context_set_help_enabled(ctx, FALSE);
    g_option_context_set_description(ctx, "Exit status: 0 written, 1 an open, write or close failed, "
                                           "2 bad command line (as hpcmount and hpcdump).");
    GError *e = NULL;
    int status = 0;
    if (!g_option_context_parse(ctx, argc, argv, &e)) {
        arg_fail(why, rank, "bad arguments", e);
        g_clear_error(&e);
        status = 2;
    } else if (help && rank == 0) {
        char *h = g_option_context_get_help(ctx, TRUE, NULL);
        fputs(h, stdout);
        g_free(h);
    } else if (version && rank == 0) {
        printf("hpcwrite %s\nformats: sion gsd posix%s%s\n", PACKAGE_VERSION, FORMATS_BUILT,
               FORMATS_LEFT_OUT);
    }
    if (status == 0)
        status = help || version ? -1 : check_args(o, *argc, rank, size, why);
    g_option_context_free(ctx);
    return status;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    pattern_init();
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    opts o = { .nfiles = 1, .fsblksize = -1, .ranks_per_file = 1, .cols = 256, .frames = 1,
               .nwsize = 1024 * 1024, .abort_after = UINT64_MAX };
    GString *why = g_string_new(NULL);
    int status = parse_args(&o, &argc, &argv, rank, size, why);
    if (status >= 0)
        status = agree_args(comm, rank, size, status, why);
    if (status != 0)
        goto out;
    if (strcmp(o.format, "gsd") == 0)
        status = run_gsd(&o, argv[1], comm, rank, size, o.nparticles, o.abort_after);
#ifdef HAVE_HDF4
    else if (strcmp(o.format, "dhdf") == 0)
        status = run_dhdf(&o, argv[1], comm, rank, size, o.nbytes);
#endif
    else
        status = run_stream(&o, argv[1], comm, rank, size);
out:
    g_string_free(why, TRUE);
    opts_clear(&o);
    /* a failed rank must not leave the others in a collective: all agree */
    int worst = 0;
    if (status < 0)
        status = 0;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, comm);
    MPI_Finalize();
    return status ? status : (worst ? 1 : 0);
}
