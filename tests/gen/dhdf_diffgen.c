/* dhdf_diffgen.c - random distributed HDF sets for the differential test
 * of the DHDF reader (tests/mount/dhdf_diff.sh), written with the HDF4 C API.
 *
 *   dhdf_diffgen DIR SEED
 *
 * writes DIR/main.hdf and DIR/ahf<k>.hdf (docs/dhdf-format.md) with 2-4
 * arrays of random number types (big- and little-endian storage), ranks
 * 1-4, shapes and piece grids, each piece stored at random contiguous,
 * deflate, RLE, skipping Huffman, n-bit (integers), chunked (with or
 * without deflate), in an external file beside the AHF (SDsetexternalfile,
 * at an offset), or not written at all or only in part (with or without a
 * fill value).
 * The oracle is libhdf4 itself: every piece is read back with SDreaddata
 * (into a buffer set to 0xa5 first) and written, little-endian, to
 * DIR/<array>.pieces/<chunk>.expect, and the pieces placed at their
 * origins make DIR/<array>.expect.  DIR/layout.txt has one line per array
 * (`array NAME DTYPE SHAPE`) and per piece (`piece NAME CHUNK ORIGIN SIZE`,
 * comma-separated) for the checker.
 *
 * The set, File_Info and chunk-table writing is tests/gen/dhdf_gen.c's.
 */
#define DHDF_GEN_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"
#include "dhdf_gen.c"
#pragma GCC diagnostic warning "-Wunused-function"

enum { ST_PLAIN, ST_DEFLATE, ST_RLE, ST_SKPHUFF, ST_NBIT, ST_CHUNK, ST_CHUNK_DEFLATE,
       ST_NONE, ST_PART, ST_CHUNK_PART, ST_EXTERNAL, ST_N };

static const struct { int32 nt; const char *dtype; } TYPES[] = {
    { DFNT_CHAR8, "|S1" }, { DFNT_UCHAR8, "|u1" }, { DFNT_INT8, "|i1" }, { DFNT_UINT8, "|u1" },
    { DFNT_INT16, "<i2" }, { DFNT_UINT16, "<u2" }, { DFNT_INT32, "<i4" }, { DFNT_UINT32, "<u4" },
    { DFNT_FLOAT32, "<f4" }, { DFNT_FLOAT64, "<f8" }, { DFNT_LINT16, "<i2" },
    { DFNT_LUINT32, "<u4" }, { DFNT_LFLOAT32, "<f4" }, { DFNT_LFLOAT64, "<f8" },
};

/* Cut dimension d of a into t tiles at distinct random points. */
static int cuts(GRand *r, int32 len, int t, int32 *cut)
{
    t = MIN(t, len);
    cut[0] = 0;
    cut[t] = len;
    for (int k = 1; k < t; k++) {
        int32 c;
        int dup;
        do {
            c = g_rand_int_range(r, 1, len);
            dup = 0;
            for (int j = 1; j < k; j++)
                dup |= cut[j] == c;
        } while (dup);
        cut[k] = c;
    }
    for (int i = 1; i < t; i++)            /* sort the inner cuts */
        for (int j = i; j > 1 && cut[j - 1] > cut[j]; j--) {
            int32 x = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = x;
        }
    return t;
}

/* A random array: type, rank 1-4, shape, a grid of at most MAXP pieces. */
static void random_array(GRand *r, array *a, int ai, int nahf, char *name, size_t namelen)
{
    static const int32 maxlen[] = { 0, 60000, 300, 50, 16 };
    int ti = g_rand_int_range(r, 0, (gint32)G_N_ELEMENTS(TYPES));
    int32 cut[4][MAXP + 1];
    int t[4], total = 1;
    memset(a, 0, sizeof *a);
    a->rank = g_rand_int_range(r, 1, 5);
    a->nt = TYPES[ti].nt;
    snprintf(name, namelen, "a%d_t%d_r%d", ai, ti, (int)a->rank);
    a->name = name;
    for (int d = 0; d < a->rank; d++) {
        a->dims[d] = g_rand_int_range(r, 1, maxlen[a->rank] + 1);
        t[d] = cuts(r, a->dims[d], g_rand_int_range(r, 1, total >= 16 ? 2 : 5), cut[d]);
        total *= t[d];
    }
    for (int i = 0; i < total; i++) {
        piece *p = &a->p[a->npieces++];
        for (int d = a->rank - 1, q = i; d >= 0; d--) {
            int k = q % t[d];
            q /= t[d];
            p->origin[d] = cut[d][k];
            p->size[d] = cut[d][k + 1] - cut[d][k];
        }
        p->fileid = g_rand_int_range(r, 1, nahf + 1);
    }
    a->chunk_table = 1;
}

/* 1 when SDS id holds floating-point numbers. */
static int nt_float(int32 id)
{
    char name[H4_MAX_NC_NAME + 1];
    int32 rank, dims[H4_MAX_VAR_DIMS], nt, nattr;
    if (SDgetinfo(id, name, &rank, dims, &nt, &nattr) == FAIL)
        die("SDgetinfo");
    nt &= DFNT_MASK;
    return nt == DFNT_FLOAT32 || nt == DFNT_FLOAT64;
}

/* Storage of one piece as its mode says, and at random a fill value. */
static void piece_storage(GRand *r, int32 id, int mode, int rank, const int32 *sz, int es)
{
    unsigned char fill[8];
    comp_info ci;
    HDF_CHUNK_DEF cd;
    memset(&ci, 0, sizeof ci);
    memset(&cd, 0, sizeof cd);
    if ((mode >= ST_NONE || g_rand_boolean(r)) && g_rand_boolean(r)) {
        for (int k = 0; k < es; k++)
            fill[k] = (unsigned char)g_rand_int(r);
        if (SDsetfillvalue(id, fill) == FAIL)
            die("SDsetfillvalue");
    }
    if (mode == ST_DEFLATE) {
        ci.deflate.level = 6;
        if (SDsetcompress(id, COMP_CODE_DEFLATE, &ci) == FAIL)
            die("SDsetcompress deflate");
    } else if (mode == ST_RLE) {
        if (SDsetcompress(id, COMP_CODE_RLE, &ci) == FAIL)
            die("SDsetcompress rle");
    } else if (mode == ST_SKPHUFF) {
        ci.skphuff.skp_size = es;
        if (SDsetcompress(id, COMP_CODE_SKPHUFF, &ci) == FAIL)
            die("SDsetcompress skphuff");
    } else if (mode == ST_NBIT && !(nt_float(id))) {
        /* a bit field of each integer; the other bits read as sign or 0 */
        intn start = g_rand_int_range(r, 0, 8 * es);
        if (SDsetnbitdataset(id, start, g_rand_int_range(r, 1, start + 2), g_rand_boolean(r),
                             FALSE) == FAIL)
            die("SDsetnbitdataset");
    } else if (mode == ST_EXTERNAL) {
        /* a file of its own beside the AHF (HXsetcreatedir), at an offset */
        char name[H4_MAX_NC_NAME + 8];
        int32 rank_, dims_[H4_MAX_VAR_DIMS], nt_, nattr_;
        if (SDgetinfo(id, name, &rank_, dims_, &nt_, &nattr_) == FAIL)
            die("SDgetinfo");
        strcat(name, ".ext");
        if (SDsetexternalfile(id, name, g_rand_int_range(r, 0, 300)) == FAIL)
            die("SDsetexternalfile");
    } else if (mode == ST_CHUNK || mode == ST_CHUNK_DEFLATE || mode == ST_CHUNK_PART) {
        for (int d = 0; d < rank; d++)
            cd.comp.chunk_lengths[d] = g_rand_int_range(r, 1, sz[d] + 1);
        int32 flags = HDF_CHUNK;
        if (mode == ST_CHUNK_DEFLATE) {
            flags |= HDF_COMP;
            cd.comp.comp_type = COMP_CODE_DEFLATE;
            cd.comp.cinfo.deflate.level = 1;
        }
        if (SDsetchunk(id, cd, flags) == FAIL)
            die("SDsetchunk");
    }
}

/* A piece with random storage and data, or none (ctx: the GRand). */
static void random_piece(const set *s, int32 sd, int ai, int pi, void *ctx)
{
    GRand *r = ctx;
    const array *a = &s->a[ai];
    const piece *p = &a->p[pi];
    int es = esize(a->nt), mode = g_rand_int_range(r, 0, ST_N);
    char name[128];
    snprintf(name, sizeof name, "%s_chunk%d", a->name, pi);
    int32 sz[4] = { p->size[0], p->size[1], p->size[2], p->size[3] };
    int32 id = SDcreate(sd, name, a->nt, a->rank, sz);
    if (id == FAIL)
        die("SDcreate piece");
    piece_storage(r, id, mode, a->rank, sz, es);
    int32 start[4] = { 0 }, edge[4];
    size_t n = 1;
    for (int d = 0; d < a->rank; d++) {
        int part = mode == ST_PART || mode == ST_CHUNK_PART;
        start[d] = part ? g_rand_int_range(r, 0, sz[d]) : 0;
        edge[d] = part ? g_rand_int_range(r, 1, sz[d] - start[d] + 1) : sz[d];
        n *= (size_t)edge[d];
    }
    unsigned char *buf = g_malloc(n * (size_t)es);
    for (size_t b = 0; b < n * (size_t)es; b++)
        buf[b] = (unsigned char)g_rand_int(r);
    if (mode != ST_NONE && SDwritedata(id, start, NULL, edge, buf) == FAIL)
        die("SDwritedata");
    g_free(buf);
    SDendaccess(id);
}

/* The oracle: each piece as SDreaddata returns it, little-endian, and the
 * pieces placed in the whole array. */
static void read_back(const set *s, FILE *layout, const char *const *dtypes)
{
    char path[4096];
    for (int ai = 0; ai < s->narrays; ai++) {
        const array *a = &s->a[ai];
        int es = esize(a->nt);
        uint64_t n = nelems(a->rank, a->dims);
        unsigned char *all = g_malloc0(n * (uint64_t)es);
        fprintf(layout, "array %s %s %d", a->name, dtypes[ai], (int)a->dims[0]);
        for (int d = 1; d < a->rank; d++)
            fprintf(layout, ",%d", (int)a->dims[d]);
        fputc('\n', layout);
        snprintf(path, sizeof path, "%s/%s.pieces", s->dir, a->name);
        g_mkdir_with_parents(path, 0755);
        for (int pi = 0; pi < a->npieces; pi++) {
            const piece *p = &a->p[pi];
            char name[128];
            snprintf(name, sizeof name, "%s_chunk%d", a->name, pi);
            snprintf(path, sizeof path, "%s/ahf%d.hdf", s->dir, p->fileid);
            int32 sd = SDstart(path, DFACC_READ);
            int32 id = sd == FAIL ? FAIL : SDselect(sd, SDnametoindex(sd, name));
            int32 start[4] = { 0 }, sz[4] = { p->size[0], p->size[1], p->size[2], p->size[3] };
            uint64_t m = nelems(a->rank, p->size);
            unsigned char *pb = g_malloc(m * (uint64_t)es);
            memset(pb, 0xa5, m * (uint64_t)es);
            if (id == FAIL || SDreaddata(id, start, NULL, sz, pb) == FAIL)
                die("SDreaddata piece");
            SDendaccess(id);
            SDend(sd);
            int32 idx[4] = { 0 };
            for (uint64_t e = 0; e < m; e++) {
                uint64_t lin = 0;
                to_le(pb + e * es, es);
                for (int d = 0; d < a->rank; d++)
                    lin = lin * (uint64_t)a->dims[d] + (uint64_t)(p->origin[d] + idx[d]);
                memcpy(all + lin * es, pb + e * es, (size_t)es);
                for (int d = a->rank - 1; d >= 0 && ++idx[d] >= p->size[d]; d--)
                    idx[d] = 0;
            }
            snprintf(path, sizeof path, "%s/%s.pieces/%s.expect", s->dir, a->name, name);
            write_file(path, pb, m * es);
            g_free(pb);
            fprintf(layout, "piece %s %s %d", a->name, name, (int)p->origin[0]);
            for (int d = 1; d < a->rank; d++)
                fprintf(layout, ",%d", (int)p->origin[d]);
            fprintf(layout, " %d", (int)p->size[0]);
            for (int d = 1; d < a->rank; d++)
                fprintf(layout, ",%d", (int)p->size[d]);
            fputc('\n', layout);
        }
        snprintf(path, sizeof path, "%s/%s.expect", s->dir, a->name);
        write_file(path, all, n * es);
        g_free(all);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dhdf_diffgen DIR SEED\n");
        return 2;
    }
    GRand *r = g_rand_new_with_seed((guint32)strtoul(argv[2], NULL, 10));
    set s;
    char names[16][64];
    const char *dtypes[16];
    memset(&s, 0, sizeof s);
    s.dir = argv[1];
    s.nahf = g_rand_int_range(r, 1, 6);
    s.narrays = g_rand_int_range(r, 2, 5);
    g_mkdir_with_parents(s.dir, 0755);
    /* external data are written to and read from the set's directory */
    if (HXsetcreatedir(s.dir) == FAIL || HXsetdir(s.dir) == FAIL)
        die("HXsetcreatedir");
    for (int ai = 0; ai < s.narrays; ai++) {
        random_array(r, &s.a[ai], ai, s.nahf, names[ai], sizeof names[ai]);
        for (size_t t = 0; t < G_N_ELEMENTS(TYPES); t++)
            if (TYPES[t].nt == s.a[ai].nt)
                dtypes[ai] = TYPES[t].dtype;
    }
    write_ahfs_with(&s, random_piece, r);
    write_main(&s);
    char lp[4096];
    snprintf(lp, sizeof lp, "%s/layout.txt", s.dir);
    FILE *layout = fopen(lp, "w");
    if (!layout)
        die("fopen layout.txt");
    read_back(&s, layout, dtypes);
    if (fclose(layout) != 0)
        die("fclose layout.txt");
    g_rand_free(r);
    return 0;
}
