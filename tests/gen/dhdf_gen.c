/* dhdf_gen.c - write distributed HDF sets with the HDF4 C API for the tests.
 *
 *   dhdf_gen DIR CASE
 *
 * writes DIR/main.hdf and DIR/ahf<k>.hdf following docs/dhdf-format.md,
 * and, as the tests' oracle, DIR/<array>.expect (the whole array in C
 * order, little-endian, computed here from the same formula the pieces
 * were cut from, never read back) and DIR/<array>.pieces/<chunk>.expect.
 *
 * CASE: tile2d (2-D tiling in both dimensions, uneven tiles, plus a plain
 * SDS and a compressed and a chunked piece), grid (equal pieces on a
 * regular grid, for references), cube3d (3-D), types (one array
 * per HDF4 number type, big- and little-endian storage), and the broken
 * sets missing, foreign, fileid, overlap, holes, exceed, shape, noname,
 * notable (see the comments of each below); many (40 AHFs); big (64 MiB, for the
 * benchmark); plain (an HDF4 file that is no DHDF set); unwritten (a plain
 * HDF4 file of SDSs with no or partial data: its .expect files are what
 * SDreaddata returns for them, the library being the oracle there).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mfhdf.h>

#define W 255                    /* string field width the convention recommends */
#define MAXP 64

typedef struct piece {
    int fileid;
    int32 size[4], origin[4];    /* rank 4: dhdf_diffgen.c */
} piece;

typedef struct array {
    const char *name;
    int32 nt;                    /* as given to SDcreate (may be DFNT_L*) */
    int32 rank, dims[4];
    int npieces;
    piece p[MAXP];
    int chunk_table;             /* 1: write its chunk table */
    int no_sds;                  /* 1: no SDS in the main file (broken "notable") */
    int even;                    /* 1: equal tiles, every piece contiguous ("grid") */
} array;

typedef struct set {
    const char *dir;
    int nahf;
    array a[16];
    int narrays;
    const char *foreign_setid;   /* written to ahf1 instead of the set id */
    int wrong_fileid;            /* ahf1 claims another id */
    int rename_piece;            /* the first piece's SDS gets another name */
    int wrong_shape;             /* the first piece's SDS gets another shape */
    int plain;                   /* add a plain SDS to the main file */
} set;

static const char *SETID = "20261121T060000Z:main.hdf:0";

static int esize(int32 nt)
{
    return DFKNTsize((nt & DFNT_MASK) | DFNT_NATIVE);
}

/* Elements of a box of the given rank and sizes. */
static uint64_t nelems(int32 rank, const int32 *size)
{
    uint64_t n = 1;
    for (int32 d = 0; d < rank; d++)
        n *= (uint64_t)size[d];
    return n;
}

/* Element i of an array as native bytes: a formula that exercises signs,
 * every byte and fractions. */
static void value(int32 nt, uint64_t i, int salt, unsigned char *out)
{
    int64_t v = (int64_t)(i * 2654435761u % 1000003u) - 500000 + salt;
    switch (nt & DFNT_MASK) {
    case DFNT_CHAR8: case DFNT_INT8: { int8_t x = (int8_t)v; memcpy(out, &x, 1); break; }
    case DFNT_UCHAR8: case DFNT_UINT8: { uint8_t x = (uint8_t)v; memcpy(out, &x, 1); break; }
    case DFNT_INT16: { int16_t x = (int16_t)v; memcpy(out, &x, 2); break; }
    case DFNT_UINT16: { uint16_t x = (uint16_t)v; memcpy(out, &x, 2); break; }
    case DFNT_INT32: { int32_t x = (int32_t)(v * 4099); memcpy(out, &x, 4); break; }
    case DFNT_UINT32: { uint32_t x = (uint32_t)(v * 4099); memcpy(out, &x, 4); break; }
    case DFNT_FLOAT32: { float x = (float)v / 8.0f; memcpy(out, &x, 4); break; }
    case DFNT_FLOAT64: { double x = (double)v / 3.0; memcpy(out, &x, 8); break; }
    default: abort();
    }
}

/* Native element to little-endian in place. */
static void to_le(unsigned char *p, int es)
{
    if (G_BYTE_ORDER == G_BIG_ENDIAN)
        for (int k = 0; k < es / 2; k++) {
            unsigned char t = p[k];
            p[k] = p[es - 1 - k];
            p[es - 1 - k] = t;
        }
}

static void die(const char *what)
{
    fprintf(stderr, "dhdf_gen: %s failed\n", what);
    exit(1);
}

static void set_attrs(int32 sd, const char *setid, int32 fileid)
{
    if (SDsetattr(sd, "DHDF_SetId", DFNT_CHAR8, (int32)strlen(setid), setid) == FAIL ||
        SDsetattr(sd, "DHDF_FileId", DFNT_INT32, 1, &fileid) == FAIL)
        die("SDsetattr");
}

/* File_Info with records for ids[0..n). */
static void write_fileinfo(const char *path, const int *ids, int n)
{
    int32 f = Hopen(path, DFACC_RDWR, 0);
    if (f == FAIL)
        die("Hopen");
    Vstart(f);
    int32 vs = VSattach(f, -1, "w");
    VSsetname(vs, "File_Info");
    VSsetclass(vs, "DHDF_FileInfo");
    if (VSfdefine(vs, "DHDF_FileId", DFNT_INT32, 1) == FAIL ||
        VSfdefine(vs, "FileName", DFNT_CHAR8, W) == FAIL ||
        VSfdefine(vs, "HostName", DFNT_CHAR8, W) == FAIL ||
        VSsetfields(vs, "DHDF_FileId,FileName,HostName") == FAIL)
        die("VSfdefine File_Info");
    size_t rs = 4 + 2 * W;
    unsigned char *buf = calloc((size_t)n, rs);
    for (int i = 0; i < n; i++) {
        int32 id = ids[i];
        memcpy(buf + i * rs, &id, 4);
        if (id == 0)
            strcpy((char *)buf + i * rs + 4, "main.hdf");
        else
            snprintf((char *)buf + i * rs + 4, W, "ahf%d.hdf", id);
        snprintf((char *)buf + i * rs + 4 + W, W, "node%03d", id);
    }
    if (VSwrite(vs, buf, n, FULL_INTERLACE) != n)
        die("VSwrite File_Info");
    free(buf);
    VSdetach(vs);
    Vend(f);
    Hclose(f);
}

static void write_file(const char *path, const void *buf, size_t len)
{
    GError *e = NULL;
    if (!g_file_set_contents(path, buf, (gssize)len, &e))
        die(e->message);
}

/* Writes piece pi of array ai of s into the AHF opened as sd. */
typedef void (*piece_writer)(const set *s, int32 sd, int ai, int pi, void *ctx);

/* The AHFs: each with the set's attributes, its pieces written by fn, and
 * its File_Info. */
static void write_ahfs_with(const set *s, piece_writer fn, void *ctx)
{
    char path[4096];
    for (int k = 1; k <= s->nahf; k++) {
        snprintf(path, sizeof path, "%s/ahf%d.hdf", s->dir, k);
        int32 sd = SDstart(path, DFACC_CREATE);
        if (sd == FAIL)
            die("SDstart ahf");
        set_attrs(sd, k == 1 && s->foreign_setid ? s->foreign_setid : SETID,
                  k == 1 && s->wrong_fileid ? 7 : k);
        for (int ai = 0; ai < s->narrays; ai++)
            for (int pi = 0; pi < s->a[ai].npieces; pi++)
                if (s->a[ai].p[pi].fileid == k)
                    fn(s, sd, ai, pi, ctx);
        SDend(sd);
        int ids[2] = { 0, k };
        write_fileinfo(path, ids, 2);
    }
}

/* A piece with the formula's data (piece 1 compressed, piece 2 chunked);
 * *first (ctx) marks the set's first piece, which the broken cases
 * rename or reshape. */
static void formula_piece(const set *s, int32 sd, int ai, int pi, void *ctx)
{
    int *first = ctx;
    const array *a = &s->a[ai];
    const piece *p = &a->p[pi];
    int es = esize(a->nt);
    char name[128];
    snprintf(name, sizeof name, "%s_chunk%d", a->name, pi);
    int32 sz[3] = { p->size[0], p->size[1], p->size[2] };
    if (*first && s->rename_piece)
        strcat(name, "_renamed");
    if (*first && s->wrong_shape)
        sz[0] += 1;
    *first = 0;
    int32 id = SDcreate(sd, name, a->nt, a->rank, sz);
    if (id == FAIL)
        die("SDcreate piece");
    /* storage variety: piece 1 compressed, piece 2 chunked */
    if (a->even) {
        ;
    } else if (pi == 1) {
        comp_info ci;
        ci.deflate.level = 6;
        if (SDsetcompress(id, COMP_CODE_DEFLATE, &ci) == FAIL)
            die("SDsetcompress");
    } else if (pi == 2) {
        HDF_CHUNK_DEF cd;
        memset(&cd, 0, sizeof cd);
        for (int d = 0; d < a->rank; d++)
            cd.chunk_lengths[d] = sz[d] > 2 ? sz[d] / 2 : 1;
        if (SDsetchunk(id, cd, HDF_CHUNK) == FAIL)
            die("SDsetchunk");
    }
    int64_t n = 1;
    for (int d = 0; d < a->rank; d++)
        n *= sz[d];
    unsigned char *buf = calloc((size_t)n, (size_t)es);
    int32 idx[3] = { 0, 0, 0 };
    for (int64_t e = 0; e < n; e++) {
        uint64_t lin = 0;
        for (int d = 0; d < a->rank; d++)
            lin = lin * (uint64_t)a->dims[d] + (uint64_t)(p->origin[d] + idx[d]);
        value(a->nt, lin, ai, buf + e * es);
        for (int d = a->rank - 1; d >= 0; d--) {
            if (++idx[d] < sz[d])
                break;
            idx[d] = 0;
        }
    }
    int32 start[3] = { 0, 0, 0 };
    if (SDwritedata(id, start, NULL, sz, buf) == FAIL)
        die("SDwritedata");
    free(buf);
    char ln[160];
    snprintf(ln, sizeof ln, "piece %d of %s", pi, a->name);
    SDsetattr(id, "long_name", DFNT_CHAR8, (int32)strlen(ln), ln);
    SDendaccess(id);
}

/* The MHF: descriptions, attributes, File_Info and chunk tables. */
static void write_main(const set *s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/main.hdf", s->dir);
    int32 sd = SDstart(path, DFACC_CREATE);
    if (sd == FAIL)
        die("SDstart main");
    set_attrs(sd, SETID, 0);
    const char *title = "dhdf_gen test set";
    SDsetattr(sd, "title", DFNT_CHAR8, (int32)strlen(title), title);
    for (int ai = 0; ai < s->narrays; ai++) {
        const array *a = &s->a[ai];
        if (a->no_sds)
            continue;
        int32 id = SDcreate(sd, a->name, a->nt, a->rank, (int32 *)a->dims);
        if (id == FAIL)
            die("SDcreate main");
        SDsetattr(id, "units", DFNT_CHAR8, 6, "meters");
        float scale = 0.5f;
        SDsetattr(id, "scale", DFNT_FLOAT32, 1, &scale);
        int16 range[2] = { -3, 9 };
        SDsetattr(id, "valid_range", DFNT_INT16, 2, range);
        SDendaccess(id);
    }
    if (s->plain) {
        int32 dims[2] = { 5, 6 };
        int32 id = SDcreate(sd, "plain", DFNT_INT16, 2, dims);
        int16 v[30];
        for (int i = 0; i < 30; i++)
            v[i] = (int16)(i * 1000 - 7);
        int32 start[2] = { 0, 0 };
        SDwritedata(id, start, NULL, dims, v);
        SDendaccess(id);
        unsigned char le[60];
        for (int i = 0; i < 30; i++) {
            le[2 * i] = (unsigned char)((uint16_t)v[i] & 0xff);
            le[2 * i + 1] = (unsigned char)((uint16_t)v[i] >> 8);
        }
        char ep[4096];
        snprintf(ep, sizeof ep, "%s/plain.expect", s->dir);
        write_file(ep, le, sizeof le);
    }
    SDend(sd);
    int ids[64];
    ids[0] = 0;
    for (int k = 1; k <= s->nahf; k++)
        ids[k] = k;
    write_fileinfo(path, ids, s->nahf + 1);

    int32 f = Hopen(path, DFACC_RDWR, 0);
    Vstart(f);
    for (int ai = 0; ai < s->narrays; ai++) {
        const array *a = &s->a[ai];
        if (!a->chunk_table)
            continue;
        int32 vs = VSattach(f, -1, "w");
        VSsetname(vs, a->name);
        VSsetclass(vs, "Distributed_SDS_Chunk_Table");
        if (VSfdefine(vs, "DHDF_FileId", DFNT_INT32, 1) == FAIL ||
            VSfdefine(vs, "ChunkName", DFNT_CHAR8, W) == FAIL ||
            VSfdefine(vs, "DimSizes", DFNT_INT32, 32) == FAIL ||
            VSfdefine(vs, "Origins", DFNT_INT32, 32) == FAIL ||
            VSsetfields(vs, "DHDF_FileId,ChunkName,DimSizes,Origins") == FAIL)
            die("VSfdefine chunk table");
        size_t rs = 4 + W + 128 + 128;
        unsigned char *buf = calloc((size_t)a->npieces, rs);
        for (int pi = 0; pi < a->npieces; pi++) {
            unsigned char *r = buf + pi * rs;
            int32 fid = a->p[pi].fileid;
            memcpy(r, &fid, 4);
            snprintf((char *)r + 4, W, "%s_chunk%d", a->name, pi);
            for (int d = 0; d < a->rank; d++) {
                memcpy(r + 4 + W + 4 * d, &a->p[pi].size[d], 4);
                memcpy(r + 4 + W + 128 + 4 * d, &a->p[pi].origin[d], 4);
            }
        }
        if (a->npieces && VSwrite(vs, buf, a->npieces, FULL_INTERLACE) != a->npieces)
            die("VSwrite chunk table");
        free(buf);
        VSdetach(vs);
    }
    Vend(f);
    Hclose(f);
}

/* The oracle: whole arrays (holes as zeros) and each piece, from the
 * formula the pieces were cut from. */
static void write_oracle(const set *s)
{
    for (int ai = 0; ai < s->narrays; ai++) {
        const array *a = &s->a[ai];
        int es = esize(a->nt);
        uint64_t n = nelems(a->rank, a->dims);
        unsigned char *all = calloc(n, (size_t)es);
        uint8_t *cov = calloc(n, 1);
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s.pieces", s->dir, a->name);
        g_mkdir_with_parents(dir, 0755);
        for (int pi = 0; pi < a->npieces; pi++) {
            const piece *p = &a->p[pi];
            uint64_t m = 1;
            for (int d = 0; d < a->rank; d++)
                m *= (uint64_t)p->size[d];
            unsigned char *pb = calloc(m, (size_t)es);
            int32 idx[3] = { 0, 0, 0 };
            for (uint64_t e = 0; e < m; e++) {
                uint64_t lin = 0;
                for (int d = 0; d < a->rank; d++)
                    lin = lin * (uint64_t)a->dims[d] + (uint64_t)(p->origin[d] + idx[d]);
                if (lin < n) {
                    value(a->nt, lin, ai, all + lin * es);
                    to_le(all + lin * es, es);
                    cov[lin] = 1;
                }
                value(a->nt, lin, ai, pb + e * es);
                to_le(pb + e * es, es);
                for (int d = a->rank - 1; d >= 0; d--) {
                    if (++idx[d] < p->size[d])
                        break;
                    idx[d] = 0;
                }
            }
            char pp[4200];
            snprintf(pp, sizeof pp, "%s/%s_chunk%d.expect", dir, a->name, pi);
            write_file(pp, pb, m * es);
            free(pb);
        }
        char ep[4200];
        snprintf(ep, sizeof ep, "%s/%s.expect", s->dir, a->name);
        write_file(ep, all, n * es);
        free(all);
        free(cov);
    }
}

/* Write the whole set. */
static void write_set(const set *s)
{
    int first = 1;
    write_ahfs_with(s, formula_piece, &first);
    write_main(s);
    write_oracle(s);
}

/* A regular tiling of dims into t[d] tiles per dimension (uneven sizes),
 * tiles dealt to AHFs round-robin. */
static void tile(array *a, const int *t, int nahf)
{
    int32 cut[3][MAXP + 1];
    for (int d = 0; d < a->rank; d++) {
        cut[d][0] = 0;
        for (int k = 1; k < t[d]; k++)       /* uneven: tiles grow */
            cut[d][k] = a->even ? a->dims[d] / t[d] * k
                        : (int32)((int64_t)a->dims[d] * k * (k + 1) / (t[d] * (t[d] + 1)));
        cut[d][t[d]] = a->dims[d];
    }
    int total = 1;
    for (int d = 0; d < a->rank; d++)
        total *= t[d];
    a->npieces = 0;
    for (int i = 0; i < total; i++) {
        piece *p = &a->p[a->npieces];
        int r = i;
        for (int d = a->rank - 1; d >= 0; d--) {
            int k = r % t[d];
            r /= t[d];
            p->origin[d] = cut[d][k];
            p->size[d] = cut[d][k + 1] - cut[d][k];
        }
        p->fileid = 1 + a->npieces % nahf;
        a->npieces++;
    }
    a->chunk_table = 1;
}

/* DIR/main.hdf: SDSs never (or partly) written, with and without
 * _FillValue, contiguous, compressed and chunked; then DIR/<name>.expect
 * from SDreaddata of each, into a buffer set to 0xa5 first (bytes the
 * library left alone would show). */
static void write_unwritten(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/main.hdf", dir);
    int32 sd = SDstart(path, DFACC_CREATE), d2[2] = { 4, 5 }, d1[1] = { 7 }, d6[2] = { 6, 6 };
    if (sd == FAIL)
        die("SDstart unwritten");
    int32 id = SDcreate(sd, "nofill", DFNT_INT32, 2, d2);
    SDendaccess(id);
    float ff = -7.5f;
    id = SDcreate(sd, "fill", DFNT_FLOAT32, 2, d2);
    SDsetfillvalue(id, &ff);
    SDendaccess(id);
    int16 fs = 99, v[2] = { 5, 6 };
    int32 st[2] = { 1, 1 }, ed[2] = { 1, 2 };
    id = SDcreate(sd, "part", DFNT_INT16, 2, d2);
    SDsetfillvalue(id, &fs);
    if (SDwritedata(id, st, NULL, ed, v) == FAIL)
        die("SDwritedata part");
    SDendaccess(id);
    comp_info ci;
    ci.deflate.level = 6;
    id = SDcreate(sd, "zip", DFNT_INT32, 1, d1);
    SDsetcompress(id, COMP_CODE_DEFLATE, &ci);
    SDendaccess(id);
    HDF_CHUNK_DEF cd;
    memset(&cd, 0, sizeof cd);
    cd.chunk_lengths[0] = cd.chunk_lengths[1] = 2;
    int32 fc = 5;
    id = SDcreate(sd, "chunked", DFNT_INT32, 2, d6);
    SDsetchunk(id, cd, HDF_CHUNK);
    SDsetfillvalue(id, &fc);
    SDendaccess(id);
    id = SDcreate(sd, "bytes", DFNT_UINT8, 1, d1);
    SDendaccess(id);
    id = SDcreate(sd, "doubles", DFNT_FLOAT64, 1, d1);
    SDendaccess(id);
    /* an unlimited dimension without a record: SDgetinfo says 0 x 3 */
    int32 du[2] = { SD_UNLIMITED, 3 };
    id = SDcreate(sd, "norecords", DFNT_INT16, 2, du);
    SDendaccess(id);
    SDend(sd);

    sd = SDstart(path, DFACC_READ);
    int32 nds, na;
    if (sd == FAIL || SDfileinfo(sd, &nds, &na) == FAIL)
        die("SDstart unwritten (read)");
    for (int32 i = 0; i < nds; i++) {
        char name[H4_MAX_NC_NAME + 1];
        int32 rank, dims[H4_MAX_VAR_DIMS], nt, nat, start[H4_MAX_VAR_DIMS] = { 0 };
        id = SDselect(sd, i);
        SDgetinfo(id, name, &rank, dims, &nt, &nat);
        int es = esize(nt);
        size_t n = 1;
        for (int32 d = 0; d < rank; d++)
            n *= (size_t)dims[d];
        unsigned char *buf = malloc(n ? n * (size_t)es : 1);
        memset(buf, 0xa5, n * (size_t)es);
        if (n > 0 && SDreaddata(id, start, NULL, dims, buf) == FAIL)
            die("SDreaddata unwritten");
        for (size_t k = 0; k < n; k++)
            to_le(buf + k * (size_t)es, es);
        snprintf(path, sizeof path, "%s/%s.expect", dir, name);
        write_file(path, buf, n * (size_t)es);
        free(buf);
        SDendaccess(id);
    }
    SDend(sd);
}

#ifndef DHDF_GEN_NO_MAIN
int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dhdf_gen DIR CASE\n");
        return 2;
    }
    set s;
    memset(&s, 0, sizeof s);
    s.dir = argv[1];
    const char *c = argv[2];
    g_mkdir_with_parents(s.dir, 0755);
    if (strcmp(c, "tile2d") == 0 || strcmp(c, "missing") == 0 || strcmp(c, "foreign") == 0 ||
        strcmp(c, "fileid") == 0 || strcmp(c, "overlap") == 0 || strcmp(c, "holes") == 0 ||
        strcmp(c, "exceed") == 0 || strcmp(c, "shape") == 0 || strcmp(c, "noname") == 0 ||
        strcmp(c, "notable") == 0) {
        s.nahf = 3;
        s.plain = 1;
        array *a = &s.a[s.narrays++];
        *a = (array){ .name = "temp", .nt = DFNT_INT16, .rank = 2, .dims = { 37, 53 } };
        tile(a, (int[]){ 3, 4 }, s.nahf);
        if (strcmp(c, "missing") == 0)
            ;                         /* the test deletes ahf2.hdf afterwards */
        else if (strcmp(c, "foreign") == 0)
            s.foreign_setid = "20250101T000000Z:other.hdf:3";
        else if (strcmp(c, "fileid") == 0)
            s.wrong_fileid = 1;
        else if (strcmp(c, "overlap") == 0)
            a->p[5].origin[1] -= 1;   /* reaches into its left neighbour */
        else if (strcmp(c, "holes") == 0) {
            a->p[5].size[1] -= 2;     /* shrink: two columns of it uncovered */
            a->p[5].size[0] -= 1;
        } else if (strcmp(c, "exceed") == 0)
            a->p[a->npieces - 1].size[0] += 1;
        else if (strcmp(c, "shape") == 0)
            s.wrong_shape = 1;
        else if (strcmp(c, "noname") == 0)
            s.rename_piece = 1;
        else if (strcmp(c, "notable") == 0) {
            /* a chunk table without an SDS of its name */
            array *b = &s.a[s.narrays++];
            *b = *a;
            b->name = "orphan";
            b->no_sds = 1;
        }
    } else if (strcmp(c, "grid") == 0) {
        /* equal pieces on a regular grid: references give one chunk each */
        s.nahf = 3;
        array *a = &s.a[s.narrays++];
        *a = (array){ .name = "tiles", .nt = DFNT_FLOAT32, .rank = 2, .dims = { 40, 60 },
                      .even = 1 };
        tile(a, (int[]){ 2, 3 }, s.nahf);
        array *b = &s.a[s.narrays++];
        *b = (array){ .name = "little", .nt = DFNT_LINT32, .rank = 1, .dims = { 1000 },
                      .even = 1 };
        tile(b, (int[]){ 4 }, s.nahf);
    } else if (strcmp(c, "cube3d") == 0) {
        s.nahf = 4;
        array *a = &s.a[s.narrays++];
        *a = (array){ .name = "cube", .nt = DFNT_FLOAT64, .rank = 3, .dims = { 7, 11, 13 } };
        tile(a, (int[]){ 2, 2, 3 }, s.nahf);
        array *b = &s.a[s.narrays++];
        *b = (array){ .name = "line", .nt = DFNT_UINT32, .rank = 1, .dims = { 100000 } };
        tile(b, (int[]){ 5 }, s.nahf);
    } else if (strcmp(c, "types") == 0) {
        static const struct { const char *name; int32 nt; } ty[] = {
            { "char8", DFNT_CHAR8 }, { "uchar8", DFNT_UCHAR8 }, { "int8", DFNT_INT8 },
            { "uint8", DFNT_UINT8 }, { "int16", DFNT_INT16 }, { "uint16", DFNT_UINT16 },
            { "int32", DFNT_INT32 }, { "uint32", DFNT_UINT32 }, { "float32", DFNT_FLOAT32 },
            { "float64", DFNT_FLOAT64 }, { "lint32", DFNT_LINT32 }, { "lfloat64", DFNT_LFLOAT64 },
            { "luint16", DFNT_LUINT16 },
        };
        s.nahf = 2;
        for (size_t i = 0; i < G_N_ELEMENTS(ty); i++) {
            array *a = &s.a[s.narrays++];
            *a = (array){ .name = ty[i].name, .nt = ty[i].nt, .rank = 2, .dims = { 19, 23 } };
            tile(a, (int[]){ 2, 2 }, s.nahf);
        }
    } else if (strcmp(c, "many") == 0) {
        /* more AHFs (40) than the reader keeps open (16): files are closed
         * and reopened while reading */
        s.nahf = 40;
        array *a = &s.a[s.narrays++];
        *a = (array){ .name = "wide", .nt = DFNT_INT32, .rank = 2, .dims = { 3, 4000 } };
        tile(a, (int[]){ 1, 40 }, s.nahf);
    } else if (strcmp(c, "big") == 0) {
        /* for bench/dhdf_bench.sh: 64 MiB of float32 in 4x4 tiles, 8 AHFs */
        s.nahf = 8;
        array *a = &s.a[s.narrays++];
        *a = (array){ .name = "field", .nt = DFNT_FLOAT32, .rank = 2, .dims = { 4096, 4096 } };
        tile(a, (int[]){ 4, 4 }, s.nahf);
    } else if (strcmp(c, "unwritten") == 0) {
        write_unwritten(s.dir);
        return 0;
    } else if (strcmp(c, "plain") == 0) {
        /* an HDF4 file without DHDF attributes: DIR/main.hdf with one SDS */
        char path[4096];
        snprintf(path, sizeof path, "%s/main.hdf", s.dir);
        int32 sd = SDstart(path, DFACC_CREATE), dims[1] = { 1000 }, start[1] = { 0 };
        int32 id = SDcreate(sd, "counts", DFNT_UINT16, 1, dims);
        unsigned char v[2000], le[2000];
        for (int i = 0; i < 1000; i++) {
            value(DFNT_UINT16, (uint64_t)i, 0, v + 2 * i);
            memcpy(le + 2 * i, v + 2 * i, 2);
            to_le(le + 2 * i, 2);
        }
        if (id == FAIL || SDwritedata(id, start, NULL, dims, v) == FAIL)
            die("plain SDS");
        SDendaccess(id);
        SDend(sd);
        snprintf(path, sizeof path, "%s/counts.expect", s.dir);
        write_file(path, le, sizeof le);
        return 0;
    } else {
        fprintf(stderr, "dhdf_gen: unknown case %s\n", c);
        return 2;
    }
    write_set(&s);
    return 0;
}
#endif
