/* hdf4_cases.c - plain HDF4 files of what the SD interface (and the older
 * DFSD one) writes, for tests/mount/dhdf_cases.sh, which compares every
 * SDS through a mount and hpcdump with tests/gen/hdf4_oracle.
 *
 *   hdf4_cases DIR
 *
 * One file per theme in DIR: every number type in big-endian, native and
 * little-endian storage with attributes of each; compression (RLE,
 * skipping Huffman, deflate, n-bit), written whole, in part or not at
 * all; chunked SDSs with and without compression, written whole, in part,
 * by SDwritechunk or not at all; unlimited dimensions appended to in
 * several calls and sessions, with gaps and linked blocks; ranks 1 to 8;
 * fill values of every type, NOFILL mode; _FillValue attributes of another
 * type or count than the SDS (fillattr.hdf: `short` is never written and
 * its _FillValue is shorter than an element: what libhdf4 returns is
 * undefined, the mount must fail the read); external data
 * (SDsetexternalfile; ext_missing.dat is deliberately not written);
 * rank 0; dimension scales named like SDSs, coordinate variables of every
 * kind libhdf4 writes; SDSs in a Vgroup; names that
 * repeat, hold UTF-8 or are no file names; DFSD data sets and an 8-bit
 * raster beside them; NaN and infinity in big-endian floats.
 * Exit 0, or 1 with one line when the library refuses a call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mfhdf.h>

static const char *dir;

static void die(const char *what)
{
    fprintf(stderr, "hdf4_cases: %s failed\n", what);
    exit(1);
}

static void ck(intn rc, const char *what)
{
    if (rc == FAIL)
        die(what);
}

static const char *at(const char *name)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static int esize(int32 nt)
{
    return DFKNTsize((nt & DFNT_MASK) | DFNT_NATIVE);
}

/* n values of type nt (native order) from a formula that touches signs,
 * every byte and fractions. */
static void values(int32 nt, void *buf, long n, int salt)
{
    unsigned char *p = buf;
    int es = esize(nt);
    for (long i = 0; i < n; i++, p += es) {
        long v = (long)((i * 2654435761u + (unsigned)salt * 977u) % 1000003u) - 500000;
        switch (nt & DFNT_MASK) {
        case DFNT_INT16: case DFNT_UINT16: { int16_t x = (int16_t)(v * 13); memcpy(p, &x, 2); break; }
        case DFNT_INT32: case DFNT_UINT32: { int32_t x = (int32_t)(v * 4099); memcpy(p, &x, 4); break; }
        case DFNT_FLOAT32: { float x = (float)v / 7.0f; memcpy(p, &x, 4); break; }
        case DFNT_FLOAT64: { double x = (double)v / 7.0; memcpy(p, &x, 8); break; }
        default: *p = (unsigned char)(v * 7 + i); break;
        }
    }
}

static long count(int32 rank, const int32 *dims)
{
    long n = 1;
    for (int32 d = 0; d < rank; d++)
        n *= dims[d];
    return n;
}

/* SDwritedata of the box (start, edge) with values of salt. */
static void put(int32 id, int32 nt, int32 rank, const int32 *start, const int32 *edge, int salt)
{
    long n = count(rank, edge);
    void *b = calloc((size_t)(n ? n : 1), 8);
    values(nt, b, n, salt);
    ck(SDwritedata(id, (int32 *)start, NULL, (int32 *)edge, b), "SDwritedata");
    free(b);
}

static void put_all(int32 id, int32 nt, int32 rank, const int32 *dims, int salt)
{
    int32 start[H4_MAX_VAR_DIMS] = { 0 };
    put(id, nt, rank, start, dims, salt);
}

static int32 create(int32 sd, const char *name, int32 nt, int32 rank, const int32 *dims)
{
    int32 id = SDcreate(sd, name, nt, rank, (int32 *)dims);
    if (id == FAIL)
        die(name);
    return id;
}

static int32 start(const char *file, int32 mode)
{
    int32 sd = SDstart(at(file), mode);
    if (sd == FAIL)
        die(file);
    return sd;
}

/* Every number type, in big-endian, native and little-endian storage,
 * with an attribute of its type. */
static void types(void)
{
    static const int32 nts[] = { DFNT_CHAR8, DFNT_UCHAR8, DFNT_INT8, DFNT_UINT8, DFNT_INT16,
                                 DFNT_UINT16, DFNT_INT32, DFNT_UINT32, DFNT_FLOAT32, DFNT_FLOAT64 };
    static const struct { int32 mod; const char *file; } st[] = {
        { 0, "types_be.hdf" }, { DFNT_NATIVE, "types_native.hdf" }, { DFNT_LITEND, "types_le.hdf" } };
    int32 dims[2] = { 5, 7 };
    for (size_t m = 0; m < sizeof st / sizeof *st; m++) {
        int32 sd = start(st[m].file, DFACC_CREATE);
        for (size_t i = 0; i < sizeof nts / sizeof *nts; i++) {
            char name[32];
            unsigned char av[24];
            snprintf(name, sizeof name, "t%d", (int)nts[i]);
            int32 id = create(sd, name, nts[i] | st[m].mod, 2, dims);
            put_all(id, nts[i], 2, dims, (int)i);
            values(nts[i], av, 3, 5);
            /* SDsetattr takes no DFNT_NATIVE type */
            ck(SDsetattr(id, "a", nts[i] | (st[m].mod & DFNT_LITEND), 3, av), "SDsetattr");
            SDendaccess(id);
        }
        SDend(sd);
    }
}

/* Compressed SDSs (not chunked: one stream each), whole, partly, never. */
static void compressed(void)
{
    int32 sd = start("comp.hdf", DFACC_CREATE), dims[2] = { 40, 33 };
    static const struct { const char *name; comp_coder_t c; int32 nt; } cs[] = {
        { "rle", COMP_CODE_RLE, DFNT_INT16 }, { "rle8", COMP_CODE_RLE, DFNT_UINT8 },
        { "huff", COMP_CODE_SKPHUFF, DFNT_INT32 }, { "deflate", COMP_CODE_DEFLATE, DFNT_FLOAT64 },
        { "deflate_le", COMP_CODE_DEFLATE, DFNT_LINT32 } };
    comp_info ci;
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        int32 id = create(sd, cs[i].name, cs[i].nt, 2, dims);
        memset(&ci, 0, sizeof ci);
        ci.skphuff.skp_size = esize(cs[i].nt);
        if (cs[i].c == COMP_CODE_DEFLATE)
            ci.deflate.level = 6;
        ck(SDsetcompress(id, cs[i].c, &ci), cs[i].name);
        put_all(id, cs[i].nt, 2, dims, (int)i);
        SDendaccess(id);
    }
    static const struct { const char *name; int32 nt; intn bit, len, sign, one; } nb[] = {
        { "nbit32", DFNT_INT32, 20, 12, 1, 0 }, { "nbit16u", DFNT_UINT16, 10, 8, 0, 1 },
        { "nbit8", DFNT_INT8, 5, 4, 1, 0 } };
    for (size_t i = 0; i < sizeof nb / sizeof *nb; i++) {
        int32 id = create(sd, nb[i].name, nb[i].nt, 2, dims);
        ck(SDsetnbitdataset(id, nb[i].bit, nb[i].len, nb[i].sign, nb[i].one), nb[i].name);
        put_all(id, nb[i].nt, 2, dims, 9);
        SDendaccess(id);
    }
    int32 id = create(sd, "deflate_part", DFNT_INT16, 2, dims), st[2] = { 0, 0 }, ed[2] = { 10, 33 };
    memset(&ci, 0, sizeof ci);
    ci.deflate.level = 1;
    ck(SDsetcompress(id, COMP_CODE_DEFLATE, &ci), "deflate_part");
    put(id, DFNT_INT16, 2, st, ed, 1);
    SDendaccess(id);
    int16 fv = 77;
    id = create(sd, "deflate_none", DFNT_INT16, 2, dims);
    ck(SDsetfillvalue(id, &fv), "SDsetfillvalue");
    ck(SDsetcompress(id, COMP_CODE_DEFLATE, &ci), "deflate_none");
    SDendaccess(id);
    SDend(sd);
}

/* Chunked SDSs of 4x3x5 chunks over 9x10x11 (edge chunks cut). */
static void chunked(void)
{
    int32 sd = start("chunk.hdf", DFACC_CREATE), dims[3] = { 9, 10, 11 };
    HDF_CHUNK_DEF cd;
    for (int k = 0; k < 8; k++) {
        char name[16];
        int32 nt = k % 2 ? DFNT_FLOAT32 : DFNT_INT16, flags = HDF_CHUNK;
        snprintf(name, sizeof name, "ch%d", k);
        int32 id = create(sd, name, nt, 3, dims);
        unsigned char fv[8];
        values(nt, fv, 1, 40 + k);
        if (k >= 2)
            ck(SDsetfillvalue(id, fv), "SDsetfillvalue");
        memset(&cd, 0, sizeof cd);
        cd.comp.chunk_lengths[0] = 4;
        cd.comp.chunk_lengths[1] = 3;
        cd.comp.chunk_lengths[2] = 5;
        if (k % 4 == 1 || k % 4 == 3) {
            flags |= HDF_COMP;
            cd.comp.comp_type = k % 4 == 1 ? COMP_CODE_DEFLATE : COMP_CODE_RLE;
            cd.comp.cinfo.deflate.level = 5;
        }
        ck(SDsetchunk(id, cd, flags), name);
        if (k < 4) {
            put_all(id, nt, 3, dims, k);
        } else if (k < 6) {
            int32 st[3] = { 2, 3, 4 }, ed[3] = { 3, 4, 5 };
            put(id, nt, 3, st, ed, k);
        } else if (k == 6) {
            int32 org[3] = { 1, 1, 1 };
            int16 b[60];
            values(nt, b, 60, k);
            ck(SDwritechunk(id, org, (VOIDP)b), "SDwritechunk");
        }
        SDendaccess(id);
    }
    /* a fill value set after SDsetchunk; n-bit and skipping Huffman chunks */
    int32 id = create(sd, "fill_after", DFNT_INT32, 3, dims), fv = 4242, one[3] = { 1, 1, 1 };
    memset(&cd, 0, sizeof cd);
    cd.chunk_lengths[0] = 4;
    cd.chunk_lengths[1] = 3;
    cd.chunk_lengths[2] = 5;
    ck(SDsetchunk(id, cd, HDF_CHUNK), "fill_after");
    ck(SDsetfillvalue(id, &fv), "SDsetfillvalue");
    put(id, DFNT_INT32, 3, (int32[3]){ 0, 0, 0 }, one, 3);
    SDendaccess(id);
    int32 d2[2] = { 7, 5 };
    id = create(sd, "nbit_chunk", DFNT_INT16, 2, d2);
    memset(&cd, 0, sizeof cd);
    cd.nbit.chunk_lengths[0] = 3;
    cd.nbit.chunk_lengths[1] = 2;
    cd.nbit.start_bit = 9;
    cd.nbit.bit_len = 7;
    cd.nbit.sign_ext = 1;
    ck(SDsetchunk(id, cd, HDF_CHUNK | HDF_NBIT), "nbit_chunk");
    put_all(id, DFNT_INT16, 2, d2, 4);
    SDendaccess(id);
    id = create(sd, "huff_chunk", DFNT_UINT32, 2, d2);
    memset(&cd, 0, sizeof cd);
    cd.comp.chunk_lengths[0] = 3;
    cd.comp.chunk_lengths[1] = 2;
    cd.comp.comp_type = COMP_CODE_SKPHUFF;
    cd.comp.cinfo.skphuff.skp_size = 4;
    ck(SDsetchunk(id, cd, HDF_CHUNK | HDF_COMP), "huff_chunk");
    put_all(id, DFNT_UINT32, 2, d2, 5);
    SDendaccess(id);
    SDend(sd);
}

/* Unlimited dimensions: appends, a gap, linked blocks, a second session. */
static void unlimited(void)
{
    int32 sd = start("unlim.hdf", DFACC_CREATE), dims[2] = { SD_UNLIMITED, 6 }, d1[1] = { SD_UNLIMITED };
    int32 id = create(sd, "appended", DFNT_INT32, 2, dims);
    for (int r = 0; r < 5; r++)
        put(id, DFNT_INT32, 2, (int32[2]){ r * 3, 0 }, (int32[2]){ 3, 6 }, r);
    SDendaccess(id);
    float fv = -9.5f;
    for (int k = 0; k < 2; k++) {
        id = create(sd, k ? "gap_fill" : "gap", k ? DFNT_FLOAT32 : DFNT_INT16, 2, dims);
        if (k)
            ck(SDsetfillvalue(id, &fv), "SDsetfillvalue");
        put(id, k ? DFNT_FLOAT32 : DFNT_INT16, 2, (int32[2]){ 0, 0 }, (int32[2]){ 2, 6 }, 0);
        put(id, k ? DFNT_FLOAT32 : DFNT_INT16, 2, (int32[2]){ 7, 2 }, (int32[2]){ 2, 3 }, 2);
        SDendaccess(id);
    }
    id = create(sd, "rank1", DFNT_FLOAT64, 1, d1);
    for (int r = 0; r < 4; r++)
        put(id, DFNT_FLOAT64, 1, (int32[1]){ r * 10 }, (int32[1]){ 10 }, r);
    SDendaccess(id);
    id = create(sd, "blocks", DFNT_INT16, 2, dims);
    ck(SDsetblocksize(id, 64), "SDsetblocksize");
    for (int r = 0; r < 6; r++)
        put(id, DFNT_INT16, 2, (int32[2]){ r * 2, 0 }, (int32[2]){ 2, 6 }, r);
    SDendaccess(id);
    SDend(sd);
    sd = start("unlim.hdf", DFACC_WRITE);
    id = SDselect(sd, SDnametoindex(sd, "appended"));
    put(id, DFNT_INT32, 2, (int32[2]){ 15, 0 }, (int32[2]){ 4, 6 }, 99);
    SDendaccess(id);
    SDend(sd);
}

/* Ranks 1 to 8, and rank 0 (one element, SDreaddata reads it). */
static void ranks(void)
{
    int32 sd = start("ranks.hdf", DFACC_CREATE);
    for (int32 r = 0; r <= 8; r++) {
        int32 dims[8] = { 1 };
        char name[16];
        for (int32 i = 0; i < r; i++)
            dims[i] = 2 + (i + r) % 3;
        snprintf(name, sizeof name, "r%d", (int)r);
        int32 id = create(sd, name, DFNT_UINT16, r, dims);
        int16 v[2] = { 4242, 0 };
        if (r == 0)
            ck(SDwritedata(id, (int32[1]){ 0 }, NULL, (int32[1]){ 1 }, v), "SDwritedata r0");
        else
            put_all(id, DFNT_UINT16, r, dims, (int)r);
        SDendaccess(id);
    }
    SDend(sd);
}

/* Fill values of every type: none written, partly written, with and
 * without _FillValue; NOFILL mode. */
static void fills(void)
{
    static const int32 nts[] = { DFNT_CHAR8, DFNT_UCHAR8, DFNT_INT8, DFNT_UINT8, DFNT_INT16,
                                 DFNT_UINT16, DFNT_INT32, DFNT_UINT32, DFNT_FLOAT32, DFNT_FLOAT64 };
    int32 sd = start("fill.hdf", DFACC_CREATE), dims[2] = { 6, 5 }, st[2] = { 2, 1 }, ed[2] = { 2, 2 };
    for (size_t i = 0; i < sizeof nts / sizeof *nts; i++) {
        char name[32];
        unsigned char fv[8];
        snprintf(name, sizeof name, "none%d", (int)nts[i]);
        SDendaccess(create(sd, name, nts[i], 2, dims));
        snprintf(name, sizeof name, "part%d", (int)nts[i]);
        int32 id = create(sd, name, nts[i] | DFNT_LITEND, 2, dims);
        put(id, nts[i], 2, st, ed, 1);
        SDendaccess(id);
        snprintf(name, sizeof name, "fv%d", (int)nts[i]);
        id = create(sd, name, nts[i], 2, dims);
        values(nts[i], fv, 1, 33);
        ck(SDsetfillvalue(id, fv), "SDsetfillvalue");
        put(id, nts[i], 2, st, ed, 1);
        SDendaccess(id);
    }
    SDend(sd);
    sd = start("nofill.hdf", DFACC_CREATE);
    SDsetfillmode(sd, SD_NOFILL);
    int32 id = create(sd, "part", DFNT_INT32, 2, dims);
    put(id, DFNT_INT32, 2, st, ed, 2);
    SDendaccess(id);
    SDendaccess(create(sd, "none", DFNT_INT32, 2, dims));
    int16 fs = 31;
    id = create(sd, "fv", DFNT_INT16, 2, dims);
    ck(SDsetfillvalue(id, &fs), "SDsetfillvalue");
    put(id, DFNT_INT16, 2, (int32[2]){ 4, 0 }, (int32[2]){ 1, 5 }, 3);
    SDendaccess(id);
    SDend(sd);
}

/* SDS NAME (6 x 5 of type NT) with a _FillValue attribute of type AT and
 * count N; SALT > 0 writes a 2 x 2 block at (2, 1), 0 writes nothing. */
static void fill_attr_sds(int32 sd, const char *name, int32 nt, int32 at, int32 n,
                          const void *fill, int salt)
{
    int32 dims[2] = { 6, 5 }, st[2] = { 2, 1 }, ed[2] = { 2, 2 };
    int32 id = create(sd, name, nt, 2, dims);
    ck(SDsetattr(id, "_FillValue", at, n, fill), "SDsetattr");
    if (salt)
        put(id, nt, 2, st, ed, salt);
    SDendaccess(id);
}

/* _FillValue attributes of another type or count than the SDS. */
static void fill_attrs(void)
{
    int32 sd = start("fillattr.hdf", DFACC_CREATE);
    double fd = 3.25;
    char fc[200];
    int16 fs = 7;
    int32 f2[2] = { 11, 12 };
    memset(fc, 'x', sizeof fc);
    fill_attr_sds(sd, "double_on_float", DFNT_FLOAT32, DFNT_FLOAT64, 1, &fd, 1);
    fill_attr_sds(sd, "double_on_float_none", DFNT_FLOAT32, DFNT_FLOAT64, 1, &fd, 0);
    fill_attr_sds(sd, "long_text", DFNT_INT16, DFNT_CHAR8, 200, fc, 2);
    fill_attr_sds(sd, "long_text_none", DFNT_INT16, DFNT_CHAR8, 200, fc, 0);
    fill_attr_sds(sd, "two", DFNT_INT32, DFNT_INT32, 2, f2, 3);
    fill_attr_sds(sd, "short", DFNT_INT32, DFNT_INT16, 1, &fs, 0);
    SDend(sd);
}

/* External data: beside the file, at an offset, and missing. */
static void external(void)
{
    int32 sd = start("ext.hdf", DFACC_CREATE), dims[2] = { 6, 5 };
    static const struct { const char *name, *file; int32 nt, off; } ex[] = {
        { "ext", "ext_a.dat", DFNT_INT32, 0 }, { "ext_offset", "ext_b.dat", DFNT_FLOAT64, 100 },
        { "ext_missing", "ext_missing.dat", DFNT_INT16, 0 } };
    ck(HXsetcreatedir(dir), "HXsetcreatedir");
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        int32 id = create(sd, ex[i].name, ex[i].nt, 2, dims);
        ck(SDsetexternalfile(id, ex[i].file, ex[i].off), ex[i].name);
        put_all(id, ex[i].nt, 2, dims, (int)i);
        SDendaccess(id);
    }
    int32 id = create(sd, "inside", DFNT_INT16, 2, dims);
    put_all(id, DFNT_INT16, 2, dims, 7);
    SDendaccess(id);
    SDend(sd);
    ck(HXsetcreatedir(NULL), "HXsetcreatedir");
    if (remove(at("ext_missing.dat")) != 0)
        die("remove ext_missing.dat");
}

/* Dimension scales (coordinate variables, not served) named like SDSs,
 * with attributes, and SDSs named like dimensions. */
static void coords(void)
{
    int32 sd = start("coords.hdf", DFACC_CREATE), dims[2] = { 4, 3 }, d1[1] = { 4 }, d5[1] = { 5 };
    float lat[4] = { 1, 2, 3, 4 };
    int32 lon[3] = { 10, 20, 30 };
    int32 id = create(sd, "temp", DFNT_FLOAT32, 2, dims);
    put_all(id, DFNT_FLOAT32, 2, dims, 1);
    ck(SDsetattr(id, "units", DFNT_CHAR8, 1, "K"), "SDsetattr");
    int32 dim = SDgetdimid(id, 0);
    ck(SDsetdimname(dim, "lat"), "SDsetdimname");
    ck(SDsetdimscale(dim, 4, DFNT_FLOAT32, lat), "SDsetdimscale");
    ck(SDsetdimstrs(dim, "latitude", "degrees", NULL), "SDsetdimstrs");
    dim = SDgetdimid(id, 1);
    ck(SDsetdimname(dim, "temp"), "SDsetdimname");
    ck(SDsetdimscale(dim, 3, DFNT_INT32, lon), "SDsetdimscale");
    SDendaccess(id);
    id = create(sd, "lat", DFNT_FLOAT64, 1, d1);     /* after the scale "lat" */
    put_all(id, DFNT_FLOAT64, 1, d1, 7);
    ck(SDsetattr(id, "units", DFNT_CHAR8, 2, "mm"), "SDsetattr");
    SDendaccess(id);
    id = create(sd, "lev", DFNT_INT16, 1, d5);       /* its dimension has its name */
    ck(SDsetdimname(SDgetdimid(id, 0), "lev"), "SDsetdimname");
    put_all(id, DFNT_INT16, 1, d5, 3);
    SDendaccess(id);
    SDend(sd);
}

/* Coordinate variables as libhdf4 writes them: dimension scales set with
 * SDsetdimscale (one dimension shared by two SDSs, one of an unlimited
 * dimension), a dimension with attributes but no scale (a coordinate
 * variable with no data written), one named with SDsetdimname only (no
 * coordinate variable), and a scale named like an SDS written before it. */
static void coordvars(void)
{
    int32 sd = start("coordvars.hdf", DFACC_CREATE), d34[2] = { 3, 4 }, d4[1] = { 4 };
    int32 d22[2] = { 2, 2 }, d5[1] = { 5 }, drec[1] = { SD_UNLIMITED }, st[1] = { 0 }, ed[1] = { 6 };
    double y[3] = { -1.5, 0, 2.25 };
    int16 x[4] = { 10, 20, -30, 40 };
    int32 t[5] = { 0, 10, 20, 30, 40 };
    float rv[6] = { 1, 2, 3, 4, 5, 6 }, tv[6] = { 0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f };
    int32 id = create(sd, "t", DFNT_INT32, 2, d22);  /* before the scale "t" */
    put_all(id, DFNT_INT32, 2, d22, 11);
    ck(SDsetattr(id, "units", DFNT_CHAR8, 3, "own"), "SDsetattr");
    SDendaccess(id);
    id = create(sd, "data", DFNT_FLOAT32, 2, d34);
    put_all(id, DFNT_FLOAT32, 2, d34, 12);
    int32 dim = SDgetdimid(id, 0);
    ck(SDsetdimname(dim, "y"), "SDsetdimname");
    ck(SDsetdimscale(dim, 3, DFNT_FLOAT64, y), "SDsetdimscale");
    ck(SDsetdimstrs(dim, "northing", "km", NULL), "SDsetdimstrs");
    dim = SDgetdimid(id, 1);
    ck(SDsetdimname(dim, "x"), "SDsetdimname");
    ck(SDsetdimscale(dim, 4, DFNT_INT16, x), "SDsetdimscale");
    SDendaccess(id);
    id = create(sd, "other", DFNT_INT16, 1, d4);     /* shares dimension x */
    put_all(id, DFNT_INT16, 1, d4, 13);
    ck(SDsetdimname(SDgetdimid(id, 0), "x"), "SDsetdimname");
    SDendaccess(id);
    id = create(sd, "series", DFNT_INT32, 1, d5);
    put_all(id, DFNT_INT32, 1, d5, 14);
    dim = SDgetdimid(id, 0);
    ck(SDsetdimname(dim, "t"), "SDsetdimname");
    ck(SDsetdimscale(dim, 5, DFNT_INT32, t), "SDsetdimscale");
    SDendaccess(id);
    id = create(sd, "named", DFNT_UINT8, 1, d5);
    put_all(id, DFNT_UINT8, 1, d5, 15);
    ck(SDsetdimname(SDgetdimid(id, 0), "only_named"), "SDsetdimname");
    SDendaccess(id);
    id = create(sd, "described", DFNT_FLOAT64, 1, d4);
    put_all(id, DFNT_FLOAT64, 1, d4, 16);
    dim = SDgetdimid(id, 0);
    ck(SDsetdimname(dim, "no_scale"), "SDsetdimname");
    ck(SDsetdimstrs(dim, "described only", NULL, NULL), "SDsetdimstrs");
    SDendaccess(id);
    id = create(sd, "rec", DFNT_FLOAT32, 1, drec);
    ck(SDwritedata(id, st, NULL, ed, rv), "SDwritedata");
    dim = SDgetdimid(id, 0);
    ck(SDsetdimname(dim, "time"), "SDsetdimname");
    ck(SDsetdimscale(dim, 6, DFNT_FLOAT32, tv), "SDsetdimscale");
    SDendaccess(id);
    SDend(sd);
}

/* A 1-D SDS of 4 int32 values of seed under name, its dimension named
 * dim and given a scale: a coordinate variable named dim. */
static void scaled(int32 sd, const char *name, const char *dim, int seed)
{
    int32 dims[1] = { 4 }, scale[4] = { 5, 6, 7, 8 };
    int32 id = create(sd, name, DFNT_INT32, 1, dims);
    put_all(id, DFNT_INT32, 1, dims, seed);
    int32 d = SDgetdimid(id, 0);
    ck(SDsetdimname(d, dim), "SDsetdimname");
    ck(SDsetdimscale(d, 4, DFNT_INT32, scale), "SDsetdimscale");
    SDendaccess(id);
}

/* Names: repeated, UTF-8, and names that are no file names: empty, '.',
 * '..', holding '/', the mount's .info (an empty one, which SDcreate
 * makes "DataSet"), one like the alias of a repeated
 * name ("dup~1"), names of 255 bytes repeated (their aliases are cut, one
 * before a UTF-8 character), and coordinate variables named like an SDS
 * (a dimension "dup") or of 255 bytes.  No name is longer: libhdf4 writes
 * an SDS name of 256 bytes but crashes reading it, and overflows a buffer
 * of its own writing a dimension name of 256. */
static void names(void)
{
    static char n255[256], u255[256], d255[256];
    memset(n255, 'n', 255);
    u255[0] = 'x';
    for (int i = 0; i < 127; i++)
        memcpy(u255 + 1 + 2 * i, "\xc3\xbc", 2);
    memset(d255, 'D', 255);
    const char *const n[] = { "dup", "dup", "a/b", ".", "..", ".info", "x.pieces", "sp ace",
                              "\xc3\xbc\x6e\xc3\xaf", "dup", "dup~1", "", n255, n255, u255,
                              u255 };
    int32 sd = start("names.hdf", DFACC_CREATE), dims[1] = { 4 };
    for (size_t i = 0; i < sizeof n / sizeof *n; i++) {
        int32 id = create(sd, n[i], DFNT_INT32, 1, dims);
        put_all(id, DFNT_INT32, 1, dims, (int)i);
        SDendaccess(id);
    }
    scaled(sd, "grid", "dup", 20);
    scaled(sd, "longdim", d255, 21);
    SDend(sd);
}

/* An SDS in a Vgroup; a GR image and an SDS in one file; NaN, infinity,
 * -0 and subnormals in big- and little-endian floats. */
static void groups_and_specials(void)
{
    int32 sd = start("vgroup.hdf", DFACC_CREATE), dims[2] = { 3, 3 };
    int32 id = create(sd, "in_vgroup", DFNT_INT32, 2, dims);
    put_all(id, DFNT_INT32, 2, dims, 1);
    int32 ref = SDidtoref(id);
    SDendaccess(id);
    SDend(sd);
    int32 f = Hopen(at("vgroup.hdf"), DFACC_RDWR, 0);
    if (f == FAIL || Vstart(f) == FAIL)
        die("Hopen vgroup.hdf");
    int32 vg = Vattach(f, -1, "w");
    ck(Vsetname(vg, "grp"), "Vsetname");
    ck(Vaddtagref(vg, DFTAG_NDG, ref), "Vaddtagref");
    Vdetach(vg);
    Vend(f);
    Hclose(f);
    f = Hopen(at("gr.hdf"), DFACC_CREATE, 0);
    int32 gr = GRstart(f), gd[2] = { 5, 4 };
    int32 ri = GRcreate(gr, "img", 3, DFNT_UINT8, MFGR_INTERLACE_PIXEL, gd);
    uint8 img[60];
    values(DFNT_UINT8, img, 60, 1);
    ck(GRwriteimage(ri, (int32[2]){ 0, 0 }, NULL, gd, img), "GRwriteimage");
    GRendaccess(ri);
    GRend(gr);
    Hclose(f);
    static const uint32_t f32[8] = { 0x7fc00001, 0x7f800000, 0xff800000, 0x80000000,
                                     0x00000001, 0x7fbfffff, 0xffffffff, 0x3f800000 };
    int32 d8[1] = { 8 };
    sd = start("gr.hdf", DFACC_WRITE);
    for (int k = 0; k < 2; k++) {
        id = create(sd, k ? "f32le" : "f32be", k ? DFNT_LFLOAT32 : DFNT_FLOAT32, 1, d8);
        ck(SDwritedata(id, (int32[1]){ 0 }, NULL, d8, (VOIDP)f32), "SDwritedata");
        SDendaccess(id);
    }
    uint32_t nan = 0x7fc00abc;
    id = create(sd, "nan_fill", DFNT_FLOAT32, 1, d8);
    ck(SDsetfillvalue(id, &nan), "SDsetfillvalue");
    SDendaccess(id);
    SDend(sd);
}

/* DFSD data sets (the SD interface reads them), calibrated, by slabs. */
static void dfsd(void)
{
    int32 dims[2] = { 4, 6 }, d3[3] = { 3, 4, 5 }, fv = -77;
    float fl[24];
    int16 sh[24];
    uint8 u8[24];
    values(DFNT_FLOAT32, fl, 24, 1);
    values(DFNT_INT16, sh, 24, 2);
    values(DFNT_UINT8, u8, 24, 3);
    ck(DFSDsetdims(2, dims), "DFSDsetdims");
    ck(DFSDsetNT(DFNT_FLOAT32), "DFSDsetNT");
    ck(DFSDadddata(at("dfsd.hdf"), 2, dims, fl), "DFSDadddata");
    ck(DFSDsetNT(DFNT_INT16), "DFSDsetNT");
    ck(DFSDsetfillvalue(&sh[3]), "DFSDsetfillvalue");
    ck(DFSDadddata(at("dfsd.hdf"), 2, dims, sh), "DFSDadddata");
    ck(DFSDsetNT(DFNT_UINT8), "DFSDsetNT");
    ck(DFSDsetcal(2.0, 0.1, 3.0, 0.2, DFNT_UINT8), "DFSDsetcal");
    ck(DFSDadddata(at("dfsd.hdf"), 2, dims, u8), "DFSDadddata");
    DFSDclear();
    ck(DFSDsetdims(3, d3), "DFSDsetdims");
    ck(DFSDsetNT(DFNT_INT32), "DFSDsetNT");
    ck(DFSDsetfillvalue(&fv), "DFSDsetfillvalue");
    ck(DFSDstartslab(at("dfsd.hdf")), "DFSDstartslab");
    int32 b[6] = { 1, 2, 3, 4, 5, 6 };
    ck(DFSDwriteslab((int32[3]){ 2, 1, 1 }, (int32[3]){ 1, 1, 1 }, (int32[3]){ 1, 2, 3 }, b),
       "DFSDwriteslab");
    ck(DFSDendslab(), "DFSDendslab");
    ck(DFR8addimage(at("dfsd.hdf"), u8, 6, 4, 0), "DFR8addimage");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hdf4_cases DIR\n");
        return 2;
    }
    dir = argv[1];
    types();
    compressed();
    chunked();
    unlimited();
    ranks();
    fills();
    fill_attrs();
    external();
    coords();
    coordvars();
    names();
    groups_and_specials();
    dfsd();
    return 0;
}
