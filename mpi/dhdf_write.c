/* dhdf_write.c - the parallel distributed-HDF writer (docs/dhdf-format.md).
 *
 * Every rank writes its piece of each global array as a sub-SDS of its
 * associated file (AHF); ranks that share an AHF take turns, since HDF4
 * files have one writer at a time.  Rank 0 collects the pieces' origins and
 * sizes and, at the close, writes the main file (MHF): the set's attributes,
 * File_Info, and per array an SDS without data plus its chunk table.
 */
#include "config.h"
#include "hpc_write.h"
#include "hpc_write_mpi.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mfhdf.h>

#include "dhdf_layout.h"

#define STRW DHDF_STR_WIDTH     /* string field width the convention asks for */
#define MAXRANK DHDF_MAX_RANK
#define NAMEMAX 64              /* HDF4's VSNAMELENMAX: N is a vdata name too */

typedef struct dhdf_piece {     /* one chunk table record, as gathered */
    int32_t has, fileid;
    int32_t size[MAXRANK], origin[MAXRANK];
} dhdf_piece;

typedef struct dhdf_desc {      /* the whole array, the same on every rank */
    char name[NAMEMAX + 1];
    int32_t nt, rank, dims[MAXRANK];
} dhdf_desc;

typedef struct dhdf_array {
    dhdf_desc d;
    int npieces;
    dhdf_piece *pieces;         /* rank 0: in rank order, only has != 0 */
} dhdf_array;

struct hpc_dhdf_file {
    MPI_Comm comm, gcomm;       /* all ranks; the ranks sharing my AHF */
    int rank, size, grank, gsize;
    int fileid, nahf;           /* my AHF's id (1..nahf) */
    char *mhf, *ahf, *dir;      /* paths */
    char setid[256];
    char host[STRW + 1], host0[STRW + 1];   /* mine, rank 0's (the MHF's) */
    GArray *arrays;             /* rank 0: dhdf_array */
    char (*hosts)[STRW + 1];    /* rank 0: host of each AHF's leader */
};

/* ---- helpers ----------------------------------------------------------- */

/* AHF k of main file "dir/run.hdf" is "run_k.hdf" (base name, same dir). */
static char *ahf_name(const char *mhf, int k)
{
    char *base = g_path_get_basename(mhf);
    size_t n = strlen(base);
    if (n > 4 && g_str_has_suffix(base, ".hdf"))
        base[n - 4] = '\0';
    char *r = g_strdup_printf("%s_%d.hdf", base, k);
    g_free(base);
    return r;
}

static int valid_nt(int32_t nt)
{
    switch (nt) {
    case DFNT_CHAR8: case DFNT_UCHAR8: case DFNT_INT8: case DFNT_UINT8:
    case DFNT_INT16: case DFNT_UINT16: case DFNT_INT32: case DFNT_UINT32:
    case DFNT_FLOAT32: case DFNT_FLOAT64:
        return 1;
    default:
        return 0;
    }
}

/* File attributes of every file of the set. */
static int set_attrs(int32 sd, const char *setid, int32 fileid)
{
    if (SDsetattr(sd, DHDF_ATTR_SETID, DFNT_CHAR8, (int32)strlen(setid), setid) == FAIL ||
        SDsetattr(sd, DHDF_ATTR_FILEID, DFNT_INT32, 1, &fileid) == FAIL)
        return -1;
    return 0;
}

/* The File_Info vdata: records (id, name, host), packed 4 + 255 + 255. */
static int write_file_info(const char *path, int n, const int32_t *ids, char **names,
                           char hosts[][STRW + 1])
{
    int32 f = Hopen(path, DFACC_RDWR, 0);
    if (f == FAIL)
        return -1;
    int rc = -1;
    int32 vs = FAIL;
    size_t rl = 4 + 2 * STRW;
    unsigned char *buf = g_malloc0(rl * (size_t)n);
    if (Vstart(f) == FAIL)
        goto out;
    vs = VSattach(f, -1, "w");
    if (vs == FAIL || VSsetname(vs, DHDF_VD_FILEINFO) == FAIL ||
        VSsetclass(vs, DHDF_CLASS_FILEINFO) == FAIL ||
        VSfdefine(vs, DHDF_FIELD_FILEID, DFNT_INT32, 1) == FAIL ||
        VSfdefine(vs, DHDF_FIELD_FILENAME, DFNT_CHAR8, STRW) == FAIL ||
        VSfdefine(vs, DHDF_FIELD_HOSTNAME, DFNT_CHAR8, STRW) == FAIL ||
        VSsetfields(vs, DHDF_FIELD_FILEID "," DHDF_FIELD_FILENAME "," DHDF_FIELD_HOSTNAME) == FAIL)
        goto out;
    for (int i = 0; i < n; i++) {
        unsigned char *r = buf + rl * (size_t)i;
        memcpy(r, &ids[i], 4);
        strncpy((char *)r + 4, names[i], STRW);
        strncpy((char *)r + 4 + STRW, hosts[i], STRW);
    }
    rc = VSwrite(vs, buf, n, FULL_INTERLACE) == n ? 0 : -1;
out:
    if (vs != FAIL)
        VSdetach(vs);
    Vend(f);
    if (Hclose(f) == FAIL)
        rc = -1;
    g_free(buf);
    return rc;
}

static void file_free(hpc_dhdf_file *f)
{
    if (!f)
        return;
    if (f->gcomm != MPI_COMM_NULL)
        MPI_Comm_free(&f->gcomm);
    if (f->arrays) {
        for (guint i = 0; i < f->arrays->len; i++)
            g_free(g_array_index(f->arrays, dhdf_array, i).pieces);
        g_array_free(f->arrays, TRUE);
    }
    g_free(f->hosts);
    g_free(f->mhf);
    g_free(f->ahf);
    g_free(f->dir);
    g_free(f);
}

/* ---- open -------------------------------------------------------------- */

int hpc_dhdf_open(const char *path, MPI_Comm comm, int ranks_per_file, hpc_dhdf_file **out,
                  GError **err)
{
    GError *local = NULL;
    hpc_dhdf_file *f = g_new0(hpc_dhdf_file, 1);
    int rc = HPC_OK;
    f->comm = comm;
    f->gcomm = MPI_COMM_NULL;
    *out = NULL;
    MPI_Comm_rank(comm, &f->rank);
    MPI_Comm_size(comm, &f->size);
    int g = ranks_per_file <= 0 ? 1 : ranks_per_file, lo, hi;
    MPI_Allreduce(&g, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&g, &hi, 1, MPI_INT, MPI_MAX, comm);
    if (!path || !*path)
        rc = hpcw_fail(&local, HPC_E_INVAL, "no file name");
    else if (lo != hi)
        rc = hpcw_fail(&local, HPC_E_INVAL, "ranks per file differ between ranks (%d..%d)", lo, hi);
    else if (g > f->size)
        rc = hpcw_fail(&local, HPC_E_INVAL, "%d ranks per file, but only %d ranks", g, f->size);
    rc = hpcw_agree(comm, rc, &local, err);
    if (rc != HPC_OK)
        goto out;

    f->nahf = (f->size + g - 1) / g;
    f->fileid = f->rank / g + 1;
    MPI_Comm_split(comm, f->fileid, f->rank, &f->gcomm);
    MPI_Comm_rank(f->gcomm, &f->grank);
    MPI_Comm_size(f->gcomm, &f->gsize);
    f->mhf = g_strdup(path);
    f->dir = g_path_get_dirname(path);
    char *an = ahf_name(path, f->fileid);
    f->ahf = g_build_filename(f->dir, an, NULL);
    g_free(an);
    if (gethostname(f->host, sizeof f->host - 1) != 0)
        g_strlcpy(f->host, "unknown", sizeof f->host);
    if (f->rank == 0) {
        /* <UTC time>:<base name of the MHF>:<rank that created the set> */
        char ts[32];
        time_t now = time(NULL);
        struct tm tmv;
        strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tmv));
        char *base = g_path_get_basename(path);
        g_snprintf(f->setid, sizeof f->setid, "%s:%s:0", ts, base);
        g_free(base);
        f->arrays = g_array_new(FALSE, TRUE, sizeof(dhdf_array));
        f->hosts = g_malloc0((size_t)(f->nahf + 1) * sizeof *f->hosts);
    }
    MPI_Bcast(f->setid, sizeof f->setid, MPI_CHAR, 0, comm);
    memcpy(f->host0, f->host, sizeof f->host0);
    MPI_Bcast(f->host0, sizeof f->host0, MPI_CHAR, 0, comm);
    /* rank 0 learns the host of each AHF's writer for File_Info */
    char *all = f->rank == 0 ? g_malloc((size_t)f->size * (STRW + 1)) : NULL;
    MPI_Gather(f->host, STRW + 1, MPI_CHAR, all, STRW + 1, MPI_CHAR, 0, comm);
    if (f->rank == 0) {
        g_strlcpy(f->hosts[0], f->host, STRW + 1);
        for (int k = 1; k <= f->nahf; k++)
            g_strlcpy(f->hosts[k], all + (size_t)(k - 1) * g * (STRW + 1), STRW + 1);
    }
    g_free(all);

    /* each group's first rank creates its AHF */
    if (f->grank == 0) {
        int32 sd = SDstart(f->ahf, DFACC_CREATE);
        if (sd == FAIL)
            rc = hpcw_fail(&local, HPC_E_IO, "cannot create %s", f->ahf);
        else if (set_attrs(sd, f->setid, f->fileid) != 0 || SDend(sd) == FAIL)
            rc = hpcw_fail(&local, HPC_E_IO, "%s: cannot write the file attributes", f->ahf);
    }
    rc = hpcw_agree(comm, rc, &local, err);
    if (rc != HPC_OK)
        goto out;
    *out = f;
    f = NULL;
out:
    file_free(f);
    return rc;
}

/* ---- one array --------------------------------------------------------- */

static int check_name(const char *name, GError **err)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 1 || n > NAMEMAX || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
        g_str_has_suffix(name, ".pieces"))
        return hpcw_fail(err, HPC_E_INVAL, "array name '%s': 1 to %d bytes, no '/', not . or .., "
                    "not ending in .pieces", name ? name : "", NAMEMAX);
    return HPC_OK;
}

/* Rank 0: pieces must not overlap (boxes are compared pairwise). */
static int check_overlap(const dhdf_array *a, GError **err)
{
    for (int p = 0; p < a->npieces; p++)
        for (int q = p + 1; q < a->npieces; q++) {
            const dhdf_piece *x = &a->pieces[p], *y = &a->pieces[q];
            int apart = 0;
            for (int d = 0; d < a->d.rank && !apart; d++)
                apart = x->origin[d] + x->size[d] <= y->origin[d] ||
                        y->origin[d] + y->size[d] <= x->origin[d];
            if (!apart)
                return hpcw_fail(err, HPC_E_INVAL, "array %s: pieces %d and %d overlap", a->d.name,
                            p, q);
        }
    return HPC_OK;
}

/* Check this rank's arguments and fill a's description and mine. */
static int check_piece(const char *name, int32_t nt, int rank, const int32_t *dims,
                       const int32_t *origin, const int32_t *size, const void *data,
                       dhdf_array *a, dhdf_piece *mine, GError **err)
{
    int rc = check_name(name, err);
    if (rc != HPC_OK)
        return rc;
    if (!valid_nt(nt))
        return hpcw_fail(err, HPC_E_INVAL, "array %s: %d is not an HDF4 number type the "
                         "convention allows", name, nt);
    if (rank < 1 || rank > MAXRANK)
        return hpcw_fail(err, HPC_E_INVAL, "array %s: rank %d (1 to %d)", name, rank, MAXRANK);
    g_strlcpy(a->d.name, name, sizeof a->d.name);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        a->d.dims[d] = dims[d];
        mine->size[d] = size ? size[d] : 0;
        mine->origin[d] = origin ? origin[d] : 0;
        n *= mine->size[d];
        if (dims[d] < 1 && rc == HPC_OK)
            rc = hpcw_fail(err, HPC_E_INVAL, "array %s: dimension %d has size %d", name, d,
                           dims[d]);
    }
    mine->has = n > 0;
    for (int d = 0; d < rank && mine->has && rc == HPC_OK; d++)
        if (mine->size[d] < 0 || mine->origin[d] < 0 ||
            (int64_t)mine->origin[d] + mine->size[d] > dims[d])
            rc = hpcw_fail(err, HPC_E_INVAL, "array %s: piece at %d, %d elements, lies "
                           "outside dimension %d of %d", name, mine->origin[d], mine->size[d], d,
                           dims[d]);
    if (rc == HPC_OK && mine->has && !data)
        rc = hpcw_fail(err, HPC_E_INVAL, "array %s: no data", name);
    return rc;
}

/* Rank 0 gathers the pieces and checks them before anything is written;
 * *k gets this rank's piece number among those with data. */
static int gather_pieces(hpc_dhdf_file *f, dhdf_array *a, dhdf_piece *mine, int *k,
                         GError **err)
{
    GError *local = NULL;
    int rc = HPC_OK, has = mine->has;
    mine->fileid = f->fileid;
    dhdf_piece *all = f->rank == 0 ? g_new(dhdf_piece, f->size) : NULL;
    MPI_Gather(mine, sizeof *mine, MPI_BYTE, all, sizeof *mine, MPI_BYTE, 0, f->comm);
    *k = 0;
    MPI_Exscan(&has, k, 1, MPI_INT, MPI_SUM, f->comm);
    if (f->rank == 0) {
        *k = 0;
        for (int r = 0; r < f->size; r++)
            if (all[r].has)
                all[a->npieces++] = all[r];
        a->pieces = all;
        rc = check_overlap(a, &local);
    }
    rc = hpcw_agree(f->comm, rc, &local, err);
    if (rc != HPC_OK) {
        g_free(all);
        return rc;
    }
    if (f->rank == 0)
        g_array_append_val(f->arrays, *a);
    return HPC_OK;
}

/* Write this rank's piece as SDS chunk into its AHF. */
static int write_piece(hpc_dhdf_file *f, const char *chunk, int32_t nt, int rank,
                       const dhdf_piece *mine, const void *data, GError **err)
{
    int rc = HPC_OK;
    int32 sd = SDstart(f->ahf, DFACC_WRITE), start[MAXRANK] = { 0 }, edges[MAXRANK];
    for (int d = 0; d < rank; d++)
        edges[d] = mine->size[d];
    int32 s = sd == FAIL ? FAIL : SDcreate(sd, chunk, nt, rank, edges);
    if (s == FAIL || SDwritedata(s, start, NULL, edges, (void *)data) == FAIL)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot write piece %s", f->ahf, chunk);
    if (s != FAIL)
        SDendaccess(s);
    if (sd != FAIL && SDend(sd) == FAIL && rc == HPC_OK)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot close after piece %s", f->ahf, chunk);
    return rc;
}

int hpc_dhdf_write(hpc_dhdf_file *f, const char *name, int32_t nt, int rank,
                   const int32_t *dims, const int32_t *origin, const int32_t *size,
                   const void *data, GError **err)
{
    GError *local = NULL;
    dhdf_array a = { .d.nt = nt, .d.rank = rank };
    dhdf_piece mine = { 0 };
    int rc = check_piece(name, nt, rank, dims, origin, size, data, &a, &mine, &local);
    /* the whole array's description must be the same everywhere */
    dhdf_desc root = a.d;
    MPI_Bcast(&root, sizeof root, MPI_BYTE, 0, f->comm);
    if (rc == HPC_OK && memcmp(&root, &a.d, sizeof root) != 0)
        rc = hpcw_fail(&local, HPC_E_INVAL, "array %s: name, type or dimensions differ from rank 0's "
                  "(%s)", name, root.name);
    rc = hpcw_agree(f->comm, rc, &local, err);
    int k;
    if (rc == HPC_OK)
        rc = gather_pieces(f, &a, &mine, &k, err);
    if (rc != HPC_OK)
        return rc;
    /* the ranks of an AHF write their pieces in turn */
    char chunk[NAMEMAX + 32];
    g_snprintf(chunk, sizeof chunk, "%s_chunk%d", name, k);
    for (int turn = 0; turn < f->gsize; turn++) {
        if (turn == f->grank && mine.has && rc == HPC_OK)
            rc = write_piece(f, chunk, nt, rank, &mine, data, &local);
        MPI_Barrier(f->gcomm);
    }
    return hpcw_agree(f->comm, rc, &local, err);
}

/* ---- close: File_Info of the AHFs, then the MHF ------------------------ */

/* Rank 0: the main file. */
static int write_mhf(hpc_dhdf_file *f, GError **err)
{
    int32 sd = SDstart(f->mhf, DFACC_CREATE);
    if (sd == FAIL)
        return hpcw_fail(err, HPC_E_IO, "cannot create %s", f->mhf);
    int rc = set_attrs(sd, f->setid, 0) == 0 ? HPC_OK
             : hpcw_fail(err, HPC_E_IO, "%s: cannot write the file attributes", f->mhf);
    for (guint i = 0; i < f->arrays->len && rc == HPC_OK; i++) {
        dhdf_array *a = &g_array_index(f->arrays, dhdf_array, i);
        int32 dims[MAXRANK];
        for (int d = 0; d < a->d.rank; d++)
            dims[d] = a->d.dims[d];
        int32 s = SDcreate(sd, a->d.name, a->d.nt, a->d.rank, dims);   /* no data: by design */
        if (s == FAIL)
            rc = hpcw_fail(err, HPC_E_IO, "%s: cannot create SDS %s", f->mhf, a->d.name);
        else
            SDendaccess(s);
    }
    if (SDend(sd) == FAIL && rc == HPC_OK)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot close", f->mhf);
    if (rc != HPC_OK)
        return rc;

    int n = f->nahf + 1;
    int32_t *ids = g_new(int32_t, n);
    char **names = g_new0(char *, n + 1);
    for (int k = 0; k < n; k++) {
        ids[k] = k;
        names[k] = k == 0 ? g_path_get_basename(f->mhf) : ahf_name(f->mhf, k);
    }
    if (write_file_info(f->mhf, n, ids, names, f->hosts) != 0)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot write File_Info", f->mhf);
    g_free(ids);
    g_strfreev(names);
    if (rc != HPC_OK)
        return rc;

    int32 h = Hopen(f->mhf, DFACC_RDWR, 0);
    if (h == FAIL || Vstart(h) == FAIL)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot reopen for the chunk tables", f->mhf);
    size_t rl = 4 + STRW + 4 * MAXRANK * 2;
    for (guint i = 0; i < f->arrays->len && rc == HPC_OK; i++) {
        dhdf_array *a = &g_array_index(f->arrays, dhdf_array, i);
        int32 vs = VSattach(h, -1, "w");
        unsigned char *buf = g_malloc0(rl * (size_t)MAX(a->npieces, 1));
        for (int p = 0; p < a->npieces; p++) {
            unsigned char *r = buf + rl * (size_t)p;
            memcpy(r, &a->pieces[p].fileid, 4);
            g_snprintf((char *)r + 4, STRW, "%s_chunk%d", a->d.name, p);
            memcpy(r + 4 + STRW, a->pieces[p].size, 4 * MAXRANK);
            memcpy(r + 4 + STRW + 4 * MAXRANK, a->pieces[p].origin, 4 * MAXRANK);
        }
        if (vs == FAIL || VSsetname(vs, a->d.name) == FAIL ||
            VSsetclass(vs, DHDF_CLASS_CHUNKS) == FAIL ||
            VSfdefine(vs, DHDF_FIELD_FILEID, DFNT_INT32, 1) == FAIL ||
            VSfdefine(vs, DHDF_FIELD_CHUNKNAME, DFNT_CHAR8, STRW) == FAIL ||
            VSfdefine(vs, DHDF_FIELD_DIMSIZES, DFNT_INT32, MAXRANK) == FAIL ||
            VSfdefine(vs, DHDF_FIELD_ORIGINS, DFNT_INT32, MAXRANK) == FAIL ||
            VSsetfields(vs, DHDF_FIELD_FILEID "," DHDF_FIELD_CHUNKNAME "," DHDF_FIELD_DIMSIZES
                                "," DHDF_FIELD_ORIGINS) == FAIL ||
            (a->npieces > 0 && VSwrite(vs, buf, a->npieces, FULL_INTERLACE) != a->npieces))
            rc = hpcw_fail(err, HPC_E_IO, "%s: cannot write the chunk table of %s", f->mhf,
                      a->d.name);
        if (vs != FAIL)
            VSdetach(vs);
        g_free(buf);
    }
    if (h != FAIL) {
        Vend(h);
        if (Hclose(h) == FAIL && rc == HPC_OK)
            rc = hpcw_fail(err, HPC_E_IO, "%s: cannot close", f->mhf);
    }
    return rc;
}

int hpc_dhdf_close(hpc_dhdf_file *f, GError **err)
{
    GError *local = NULL;
    int rc = HPC_OK;
    if (f->grank == 0) {
        int32_t ids[2] = { 0, f->fileid };
        char *names[2] = { g_path_get_basename(f->mhf), ahf_name(f->mhf, f->fileid) };
        char hosts[2][STRW + 1];
        g_strlcpy(hosts[0], f->host0, sizeof hosts[0]);
        g_strlcpy(hosts[1], f->host, sizeof hosts[1]);
        if (write_file_info(f->ahf, 2, ids, names, hosts) != 0)
            rc = hpcw_fail(&local, HPC_E_IO, "%s: cannot write File_Info", f->ahf);
        g_free(names[0]);
        g_free(names[1]);
    }
    rc = hpcw_agree(f->comm, rc, &local, err);
    if (rc == HPC_OK) {
        /* the MHF last: a set whose MHF exists is complete */
        if (f->rank == 0)
            rc = write_mhf(f, &local);
        rc = hpcw_agree(f->comm, rc, &local, err);
    }
    file_free(f);
    return rc;
}
