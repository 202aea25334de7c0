/* hdf5_diff.c - hdf5_diff OUTDIR: the files of the differential test of the
 * HDF5 reader's own paths (tests/mount/hdf5_diff.sh, tests/mount/hdf5_diff.py).
 *
 * Every file is written twice, with libver bounds earliest (chunked data
 * indexed by v1 B-trees) and latest (single chunk, implicit, fixed array,
 * extensible array and v2 B-tree indexes), <name>_early.h5 and
 * <name>_latest.h5:
 *
 *   index     each chunk index x filter pipelines in several orders
 *             (shuffle, fletcher32 first, middle and last, deflate levels,
 *             n-bit, scale-offset, szip, LZF when the plugin writes), with
 *             and without "don't filter partial edge chunks";
 *   fill      alloc time x fill time x fill value (default, user, undefined)
 *             with chunks never written and contiguous storage never
 *             allocated;
 *   extent    datasets grown, shrunk, shrunk and grown with H5Dset_extent;
 *   types     element types (integers of each size and order, n-bit
 *             precision, floats incl. half, bitfields, opaque, enums,
 *             compounds packed and padded, fixed strings of each padding,
 *             arrays) in compact, contiguous and chunked layouts;
 *   shapes    ranks 1..4, chunks not dividing the extent, chunks larger than
 *             the extent, one-element chunks, a chunk over the reader's
 *             decode limit, elements over 1 MiB;
 *   userblock the fixed-array/v1 B-tree datasets of "index" after a user
 *             block of 1 KiB, v1 B-tree nodes of K=2 (several levels), and
 *             the datasets of "fill" after it (storage never allocated).
 *
 * Data are pseudo-random bytes written with the file type itself (no
 * conversion on write); the expected bytes are what libhdf5 reads back
 * (h5py, tests/mount/hdf5_verify.py).  Combinations libhdf5 refuses at create or
 * write time are left out and listed on stdout ("skip: ...").
 */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { if ((x) < 0) { fprintf(stderr, "hdf5_diff: %s failed at line %d\n", #x, __LINE__); exit(1); } } while (0)
#define MAXR 4
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

enum { W_ALL, W_SOME, W_NONE };

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* n elements of type t at p: valid values of every class */
static void gen(hid_t t, unsigned char *p, size_t n)
{
    size_t sz = H5Tget_size(t);
    H5T_class_t c = H5Tget_class(t);
    memset(p, 0, n * sz);
    if (c == H5T_FLOAT) {
        double *v = malloc(n * (sz > 8 ? sz : 8));
        for (size_t i = 0; i < n; i++)
            v[i] = (double)((int64_t)(rnd() % 4001) - 2000) / 8.0;
        CHECK(H5Tconvert(H5T_NATIVE_DOUBLE, t, n, v, NULL, H5P_DEFAULT));
        memcpy(p, v, n * sz);
        free(v);
    } else if (c == H5T_STRING) {
        H5T_str_t pad = H5Tget_strpad(t);
        for (size_t i = 0; i < n; i++) {
            unsigned char *s = p + i * sz;
            size_t len = rnd() % (sz + 1);
            for (size_t k = 0; k < sz; k++)
                s[k] = k < len ? (unsigned char)('a' + rnd() % 26) : pad == H5T_STR_SPACEPAD ? ' ' :
                       pad == H5T_STR_NULLTERM && k > len ? (unsigned char)('A' + rnd() % 26) : 0;
        }
    } else if (c == H5T_ENUM) {
        int nm = H5Tget_nmembers(t);
        for (size_t i = 0; i < n; i++)
            CHECK(H5Tget_member_value(t, (unsigned)(rnd() % (uint64_t)nm), p + i * sz));
    } else if (c == H5T_COMPOUND) {
        /* padding bytes as C programs leave them: anything */
        int nm = H5Tget_nmembers(t);
        for (size_t i = 0; i < n * sz; i++)
            p[i] = (unsigned char)rnd();
        for (size_t i = 0; i < n; i++)
            for (int m = 0; m < nm; m++) {
                hid_t mt = H5Tget_member_type(t, (unsigned)m);
                gen(mt, p + i * sz + H5Tget_member_offset(t, (unsigned)m), 1);
                H5Tclose(mt);
            }
    } else if (c == H5T_ARRAY) {
        hid_t b = H5Tget_super(t);
        gen(b, p, n * (sz / H5Tget_size(b)));
        H5Tclose(b);
    } else {
        for (size_t i = 0; i < n * sz; i++)
            p[i] = (unsigned char)rnd();
    }
}

/* Apply the pipeline spec (filters separated by ','): s shuffle, f
 * fletcher32, d<N> deflate level N, n n-bit, oi scale-offset int (minbits
 * default), oi<N> int with N bits, of scale-offset float D-scale 2, z szip,
 * l LZF (plugin 32000), e "don't filter partial edge chunks". */
static int pipeline(hid_t dcpl, const char *spec)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int r = 0;
        if (!strcmp(tok, "s"))
            r = H5Pset_shuffle(dcpl);
        else if (!strcmp(tok, "f"))
            r = H5Pset_fletcher32(dcpl);
        else if (tok[0] == 'd')
            r = H5Pset_deflate(dcpl, (unsigned)atoi(tok + 1));
        else if (!strcmp(tok, "n"))
            r = H5Pset_nbit(dcpl);
        else if (!strcmp(tok, "oi"))
            r = H5Pset_scaleoffset(dcpl, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT);
        else if (tok[0] == 'o' && tok[1] == 'i')
            r = H5Pset_scaleoffset(dcpl, H5Z_SO_INT, atoi(tok + 2));
        else if (!strcmp(tok, "of"))
            r = H5Pset_scaleoffset(dcpl, H5Z_SO_FLOAT_DSCALE, 2);
        else if (!strcmp(tok, "z"))
            r = H5Pset_szip(dcpl, H5_SZIP_NN_OPTION_MASK, 8);
        else if (!strcmp(tok, "l"))
            r = H5Pset_filter(dcpl, 32000, H5Z_FLAG_OPTIONAL, 0, NULL);
        else if (!strcmp(tok, "e"))
            r = H5Pset_chunk_opts(dcpl, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
        if (r < 0)
            return -1;
    }
    return 0;
}

static size_t count(int rank, const hsize_t *dims)
{
    size_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= (size_t)dims[k];
    return n;
}

/* Write elements: W_ALL every one, W_SOME the first third of dimension 0
 * and the last element (so that middle chunks stay unwritten). */
static herr_t fill_data(hid_t d, hid_t t, int rank, const hsize_t *dims, int mode)
{
    size_t esz = H5Tget_size(t);
    hid_t fs = H5Dget_space(d);
    hsize_t start[MAXR] = { 0 }, cnt[MAXR], one[MAXR], last[MAXR];
    size_t n = count(rank, dims);
    for (int k = 0; k < rank; k++) {
        cnt[k] = dims[k];
        one[k] = 1;
        last[k] = dims[k] - 1;
    }
    if (mode == W_SOME && rank > 0 && n > 0) {
        cnt[0] = (dims[0] + 2) / 3;
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL));
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_OR, last, NULL, one, NULL));
        n = (size_t)H5Sget_select_npoints(fs);
    }
    unsigned char *buf = malloc(n * esz + 1);
    gen(t, buf, n);
    hsize_t hn = n;
    hid_t ms = rank ? H5Screate_simple(1, &hn, NULL) : H5Screate(H5S_SCALAR);
    herr_t r = n ? H5Dwrite(d, t, ms, mode == W_SOME ? fs : H5S_ALL, H5P_DEFAULT, buf) : 0;
    free(buf);
    H5Sclose(ms);
    H5Sclose(fs);
    return r;
}

/* Create loc/name (type t, rank, dims, maxdims or NULL, dcpl) and write it
 * (mode).  Returns the open dataset, or -1 (listed as skipped) when
 * libhdf5 refuses the combination. */
static hid_t mk(hid_t loc, const char *name, hid_t t, int rank, const hsize_t *dims,
                const hsize_t *maxdims, hid_t dcpl, int mode)
{
    hid_t sp = rank ? H5Screate_simple(rank, dims, maxdims) : H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(sp);
    if (d < 0) {
        printf("skip: %s: create refused\n", name);
        return -1;
    }
    if (mode != W_NONE && fill_data(d, t, rank, dims, mode) < 0) {
        printf("skip: %s: write refused\n", name);
        H5Dclose(d);
        H5Ldelete(loc, name, H5P_DEFAULT);
        return -1;
    }
    return d;
}

static void put(hid_t loc, const char *name, hid_t t, int rank, const hsize_t *dims,
                const hsize_t *maxdims, hid_t dcpl, int mode)
{
    hid_t d = mk(loc, name, t, rank, dims, maxdims, dcpl, mode);
    if (d >= 0)
        H5Dclose(d);
}

/* A chunked dcpl: chunk dims ch, pipeline spec (NULL: none). */
static hid_t chunked(int rank, const hsize_t *ch, const char *spec)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, rank, ch));
    if (spec && pipeline(dcpl, spec) < 0) {
        H5Pclose(dcpl);
        return -1;
    }
    return dcpl;
}

static hid_t group(hid_t f, const char *name)
{
    hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(g);
    return g;
}

/* ---- index: every chunk index x pipelines ------------------------------ */

static const char *pipes[] = {
    "", "s", "d1", "d9", "f", "s,d6", "d6,s", "d4,f", "f,d4", "s,f,d6", "f,s,d6", "s,d6,f",
    "d6,f,s", "d1,d9", "s,s", "n", "n,d6", "oi", "oi,d6", "s,oi", "oi5", "z", "s,z", "z,f",
    "l", "s,l", "e,s", "e,d6", "e,f", "e,s,f,d6", "e,s,d6,f", "e,n", "e,oi", "e,d6,f,s",
};

/* pipelines also written in part (chunks never written) */
static int with_some(const char *spec)
{
    static const char *some[] = { "", "s", "d1", "f", "s,d6", "s,f,d6", "s,d6,f", "n", "oi",
                                  "z", "l", "e,s", "e,d6", "e,s,f,d6" };
    for (size_t i = 0; i < NELEMS(some); i++)
        if (!strcmp(spec, some[i]))
            return 1;
    return 0;
}

/* The shapes that make libhdf5 choose each index (latest format; the
 * earliest one uses v1 B-trees for all).  An implicit index needs no
 * filters (with filters, early allocation gives a fixed array). */
static void index_kind(hid_t f, const char *kind, hid_t t, int some)
{
    hsize_t dims[2] = { 23, 37 }, ch[2] = { 5, 8 }, unl[2] = { H5S_UNLIMITED, H5S_UNLIMITED };
    hsize_t ext[2] = { H5S_UNLIMITED, 37 }, big[2] = { 100, 100 };
    const hsize_t *maxdims = NULL;
    int implicit = !strcmp(kind, "implicit");
    if (!strcmp(kind, "single"))
        ch[0] = dims[0], ch[1] = dims[1];
    else if (!strcmp(kind, "fixed"))
        maxdims = big;
    else if (!strcmp(kind, "ext"))
        maxdims = ext;
    else if (!strcmp(kind, "bt2"))
        maxdims = unl;
    hid_t g = group(f, kind);
    for (size_t i = 0; i < (implicit ? 1 : NELEMS(pipes)); i++) {
        hid_t dcpl = chunked(2, ch, pipes[i]);
        if (dcpl < 0) {
            printf("skip: %s/%s: pipeline refused\n", kind, pipes[i]);
            continue;
        }
        if (implicit)
            CHECK(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
        char name[64];
        snprintf(name, sizeof name, "p_%s", *pipes[i] ? pipes[i] : "none");
        put(g, name, t, 2, dims, maxdims, dcpl, W_ALL);
        /* chunks never written: the fill value */
        snprintf(name, sizeof name, "some_%s", *pipes[i] ? pipes[i] : "none");
        if (some && with_some(pipes[i]))
            put(g, name, t, 2, dims, maxdims, dcpl, W_SOME);
        H5Pclose(dcpl);
    }
    H5Gclose(g);
}

static void file_index(hid_t f)
{
    const char *kinds[] = { "single", "implicit", "fixed", "ext", "bt2" };
    for (size_t i = 0; i < NELEMS(kinds); i++)
        index_kind(f, kinds[i], H5T_STD_I32LE, 1);
    /* 8-byte floats and 2-byte big-endian integers through the same indexes */
    hid_t g = group(f, "f64");
    index_kind(g, "ext", H5T_IEEE_F64LE, 0);
    H5Gclose(g);
    g = group(f, "i16be");
    index_kind(g, "fixed", H5T_STD_I16BE, 0);
    H5Gclose(g);
}

/* ---- fill: alloc time x fill time x fill value ------------------------- */

static void file_fill(hid_t f)
{
    const H5D_alloc_time_t at[] = { H5D_ALLOC_TIME_EARLY, H5D_ALLOC_TIME_LATE, H5D_ALLOC_TIME_INCR };
    const H5D_fill_time_t ft[] = { H5D_FILL_TIME_IFSET, H5D_FILL_TIME_ALLOC, H5D_FILL_TIME_NEVER };
    const char *atn[] = { "early", "late", "incr" }, *ftn[] = { "ifset", "alloc", "never" };
    const char *fvn[] = { "default", "user", "undef" };
    const char *lay[] = { "contig", "chunk", "chunk_d6", "chunk_s_f", "chunk_be" };
    hsize_t dims[2] = { 19, 13 }, ch[2] = { 4, 5 };
    int32_t fill = 0x1d3c5b7a;
    hid_t g = group(f, "fill");
    for (size_t l = 0; l < NELEMS(lay); l++)
        for (size_t a = 0; a < NELEMS(at); a++)
            for (size_t t = 0; t < NELEMS(ft); t++)
                for (size_t v = 0; v < NELEMS(fvn); v++)
                    for (int mode = W_SOME; mode <= W_NONE; mode++) {
                        int contig = l == 0;
                        hid_t ty = l == 4 ? H5T_STD_I32BE : H5T_STD_I32LE;
                        hid_t dcpl = contig ? H5Pcreate(H5P_DATASET_CREATE) :
                                     chunked(2, ch, l == 2 ? "d6" : l == 3 ? "s,f" : "");
                        CHECK(H5Pset_alloc_time(dcpl, at[a]));
                        CHECK(H5Pset_fill_time(dcpl, ft[t]));
                        if (v == 1)
                            CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_INT32, &fill));
                        else if (v == 2)
                            CHECK(H5Pset_fill_value(dcpl, ty, NULL));
                        char name[96];
                        snprintf(name, sizeof name, "%s_%s_%s_%s_%s", lay[l], atn[a], ftn[t],
                                 fvn[v], mode == W_SOME ? "some" : "none");
                        put(g, name, ty, 2, dims, NULL, dcpl, mode);
                        H5Pclose(dcpl);
                    }
    H5Gclose(g);
}

/* ---- extent: grown, shrunk, shrunk and grown --------------------------- */

static void extent_case(hid_t g, const char *name, int rank, const hsize_t *d0,
                        const hsize_t *d1, const hsize_t *d2, const hsize_t *ch,
                        const hsize_t *maxdims, const char *spec, int user_fill, int write_after)
{
    hid_t dcpl = chunked(rank, ch, spec);
    int32_t fill = -7;
    if (user_fill)
        CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_INT32, &fill));
    hid_t d = mk(g, name, H5T_STD_I32LE, rank, d0, maxdims, dcpl, W_ALL);
    H5Pclose(dcpl);
    if (d < 0)
        return;
    CHECK(H5Dset_extent(d, d1));
    if (write_after)
        CHECK(fill_data(d, H5T_STD_I32LE, rank, d1, W_SOME));
    if (d2)
        CHECK(H5Dset_extent(d, d2));
    H5Dclose(d);
}

static void file_extent(hid_t f)
{
    const char *specs[] = { "", "d6", "s,f,d6", "e,s,d6" };
    hsize_t unl[3] = { H5S_UNLIMITED, H5S_UNLIMITED, H5S_UNLIMITED };
    hsize_t one[2] = { H5S_UNLIMITED, 13 };
    hsize_t a[2] = { 10, 7 }, b[2] = { 25, 13 }, c[2] = { 11, 5 }, s[2] = { 3, 2 };
    hsize_t ch[2] = { 4, 3 }, ch8[2] = { 8, 8 }, a1[2] = { 10, 13 };
    hsize_t r3a[3] = { 9, 8, 7 }, r3b[3] = { 4, 3, 9 }, r3c[3] = { 12, 10, 9 }, ch3[3] = { 3, 4, 5 };
    hid_t g = group(f, "extent");
    for (size_t i = 0; i < NELEMS(specs); i++)
        for (int uf = 0; uf < 2; uf++) {
            char n[96];
            const char *sp = *specs[i] ? specs[i] : "none";
#define NAME(what) (snprintf(n, sizeof n, "%s_%s_%s", what, sp, uf ? "fill" : "nofill"), n)
            extent_case(g, NAME("grow"), 2, a, b, NULL, ch, unl, specs[i], uf, 0);
            extent_case(g, NAME("grow1"), 2, a1, b, NULL, ch, one, specs[i], uf, 0);
            extent_case(g, NAME("shrink"), 2, b, c, NULL, ch, unl, specs[i], uf, 0);
            extent_case(g, NAME("shrink1"), 2, b, a1, NULL, ch, one, specs[i], uf, 0);
            extent_case(g, NAME("shrink_grow"), 2, b, c, b, ch, unl, specs[i], uf, 0);
            extent_case(g, NAME("shrink_grow1"), 2, b, a1, b, ch, one, specs[i], uf, 0);
            extent_case(g, NAME("grow_write_shrink"), 2, a, b, c, ch, unl, specs[i], uf, 1);
            extent_case(g, NAME("tiny_big_chunk"), 2, b, s, NULL, ch8, unl, specs[i], uf, 0);
            extent_case(g, NAME("r3_shrink_grow"), 3, r3a, r3b, r3c, ch3, unl, specs[i], uf, 0);
#undef NAME
        }
    H5Gclose(g);
}

/* ---- types ------------------------------------------------------------- */

typedef struct { const char *name; hid_t t; } named_type;

static hid_t str_type(size_t n, H5T_str_t pad)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    CHECK(H5Tset_size(t, n));
    CHECK(H5Tset_strpad(t, pad));
    return t;
}

static hid_t prec_type(hid_t base, size_t prec, size_t off)
{
    hid_t t = H5Tcopy(base);
    CHECK(H5Tset_precision(t, prec));
    CHECK(H5Tset_offset(t, off));
    return t;
}

static hid_t enum_type(hid_t base)
{
    hid_t t = H5Tenum_create(base);
    for (int i = 0; i < 5; i++) {
        char nm[8];
        long long v = i * 37 - 60;
        unsigned char raw[8];
        snprintf(nm, sizeof nm, "m%d", i);
        memcpy(raw, &v, 8);
        CHECK(H5Tconvert(H5T_NATIVE_LLONG, base, 1, raw, NULL, H5P_DEFAULT));
        CHECK(H5Tenum_insert(t, nm, raw));
    }
    return t;
}

static hid_t half_type(void)
{
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    CHECK(H5Tset_fields(t, 15, 10, 5, 0, 10));
    CHECK(H5Tset_precision(t, 16));
    CHECK(H5Tset_size(t, 2));
    CHECK(H5Tset_ebias(t, 15));
    return t;
}

/* A compound of size bytes with three members named by the letters of
 * names, at offsets o1..o3 of types t1..t3. */
static hid_t cmp3(size_t size, const char *names, size_t o1, hid_t t1, size_t o2, hid_t t2,
                  size_t o3, hid_t t3)
{
    hid_t c = H5Tcreate(H5T_COMPOUND, size);
    const size_t off[3] = { o1, o2, o3 };
    const hid_t t[3] = { t1, t2, t3 };
    for (int i = 0; i < 3; i++) {
        char nm[2] = { names[i], 0 };
        CHECK(H5Tinsert(c, nm, off[i], t[i]));
    }
    return c;
}

static size_t types_list(named_type *o)
{
    size_t n = 0;
#define T(nm, ty) (o[n].name = (nm), o[n].t = (ty), n++)
    T("i8", H5Tcopy(H5T_STD_I8LE));
    T("u8", H5Tcopy(H5T_STD_U8LE));
    T("i16le", H5Tcopy(H5T_STD_I16LE));
    T("i16be", H5Tcopy(H5T_STD_I16BE));
    T("u16be", H5Tcopy(H5T_STD_U16BE));
    T("i32le", H5Tcopy(H5T_STD_I32LE));
    T("i32be", H5Tcopy(H5T_STD_I32BE));
    T("u32le", H5Tcopy(H5T_STD_U32LE));
    T("i64le", H5Tcopy(H5T_STD_I64LE));
    T("i64be", H5Tcopy(H5T_STD_I64BE));
    T("u64be", H5Tcopy(H5T_STD_U64BE));
    T("f16le", half_type());
    T("f32le", H5Tcopy(H5T_IEEE_F32LE));
    T("f32be", H5Tcopy(H5T_IEEE_F32BE));
    T("f64le", H5Tcopy(H5T_IEEE_F64LE));
    T("f64be", H5Tcopy(H5T_IEEE_F64BE));
    T("prec_i16le_9_3", prec_type(H5T_STD_I16LE, 9, 3));
    T("prec_u32be_13_7", prec_type(H5T_STD_U32BE, 13, 7));
    T("prec_u8_5_0", prec_type(H5T_STD_U8LE, 5, 0));
    /* libhdf5 reads a big-endian 1-byte type of offset 0 into the native
     * one with its bits above the precision kept, into a big-endian one
     * without them */
    T("prec_u8be_5_0", prec_type(H5T_STD_U8BE, 5, 0));
    T("prec_i8be_5_0", prec_type(H5T_STD_I8BE, 5, 0));
    T("prec_i8be_3_4", prec_type(H5T_STD_I8BE, 3, 4));
    T("b8", H5Tcopy(H5T_STD_B8LE));
    T("b16be", H5Tcopy(H5T_STD_B16BE));
    T("b32le", H5Tcopy(H5T_STD_B32LE));
    hid_t op = H5Tcreate(H5T_OPAQUE, 7);
    CHECK(H5Tset_tag(op, "diff opaque"));
    T("opaque7", op);
    T("enum_i8", enum_type(H5T_STD_I8LE));
    T("enum_i16be", enum_type(H5T_STD_I16BE));
    T("str5_nullpad", str_type(5, H5T_STR_NULLPAD));
    T("str6_nullterm", str_type(6, H5T_STR_NULLTERM));
    T("str7_spacepad", str_type(7, H5T_STR_SPACEPAD));
    T("cmp_packed_le", cmp3(7, "abc", 0, H5T_STD_I16LE, 2, H5T_IEEE_F32LE, 6, H5T_STD_U8LE));
    T("cmp_padded_be", cmp3(24, "abc", 0, H5T_STD_I8LE, 8, H5T_IEEE_F64BE, 16, H5T_STD_I16BE));
    T("cmp_padded_le", cmp3(16, "abc", 0, H5T_STD_I8LE, 4, H5T_IEEE_F32LE, 12, H5T_STD_U16LE));
    T("cmp_rgb", cmp3(3, "rgb", 0, H5T_STD_U8LE, 1, H5T_STD_U8LE, 2, H5T_STD_U8LE));
    hsize_t ad[2] = { 2, 3 }, ad1 = 4;
    T("arr_i32le_2x3", H5Tarray_create2(H5T_STD_I32LE, 2, ad));
    T("arr_f64be_4", H5Tarray_create2(H5T_IEEE_F64BE, 1, &ad1));
    hid_t c = H5Tcreate(H5T_COMPOUND, 4 + 8 * 4);
    CHECK(H5Tinsert(c, "n", 0, H5T_STD_U32LE));
    hid_t at = H5Tarray_create2(H5T_IEEE_F64LE, 1, &ad1);
    CHECK(H5Tinsert(c, "v", 4, at));
    H5Tclose(at);
    T("cmp_arr_le", c);
#undef T
    return n;
}

static void file_types(hid_t f)
{
    named_type ts[48];
    size_t nt = types_list(ts);
    hsize_t dims[2] = { 29, 11 }, ch[2] = { 6, 4 };
    const char *specs[] = { "", "s,d6", "s,f,d6", "e,s,d6", "n", "oi", "of" };
    hid_t g = group(f, "types");
    for (size_t i = 0; i < nt; i++) {
        char n[96];
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        snprintf(n, sizeof n, "%s_contig", ts[i].name);
        put(g, n, ts[i].t, 2, dims, NULL, dcpl, W_ALL);
        CHECK(H5Pset_layout(dcpl, H5D_COMPACT));
        snprintf(n, sizeof n, "%s_compact", ts[i].name);
        put(g, n, ts[i].t, 2, dims, NULL, dcpl, W_ALL);
        snprintf(n, sizeof n, "%s_scalar", ts[i].name);
        put(g, n, ts[i].t, 0, dims, NULL, H5P_DEFAULT, W_ALL);
        H5Pclose(dcpl);
        for (size_t s = 0; s < NELEMS(specs); s++) {
            dcpl = chunked(2, ch, specs[s]);
            if (dcpl < 0)
                continue;
            snprintf(n, sizeof n, "%s_chunk_%s", ts[i].name, *specs[s] ? specs[s] : "none");
            put(g, n, ts[i].t, 2, dims, NULL, dcpl, s == 0 || s == 2 ? W_SOME : W_ALL);
            H5Pclose(dcpl);
        }
        /* a user fill value of the type itself, chunks never written */
        dcpl = chunked(2, ch, "s,d6");
        unsigned char fv[64];
        gen(ts[i].t, fv, 1);
        if (H5Pset_fill_value(dcpl, ts[i].t, fv) >= 0) {
            snprintf(n, sizeof n, "%s_fill", ts[i].name);
            put(g, n, ts[i].t, 2, dims, NULL, dcpl, W_SOME);
        }
        H5Pclose(dcpl);
        H5Tclose(ts[i].t);
    }
    H5Gclose(g);
}

/* ---- shapes: ranks, odd chunks, tiny and huge chunks, large elements ---- */

typedef struct {
    const char *name;
    int rank;
    hsize_t dims[MAXR], ch[MAXR];
    int unlimited;
} shape_case;

static const shape_case shapes[] = {
    { "r1", 1, { 1001 }, { 64 }, 0 },
    { "r1_one", 1, { 1 }, { 1 }, 0 },
    { "r1_chunk1", 1, { 3001 }, { 1 }, 0 },
    { "r1_bigchunk", 1, { 100 }, { 4096 }, 1 },
    { "r2_col", 2, { 40, 33 }, { 40, 1 }, 0 },
    { "r2_row", 2, { 41, 33 }, { 1, 33 }, 0 },
    { "r3", 3, { 7, 6, 5 }, { 3, 4, 2 }, 0 },
    { "r3_whole_tail", 3, { 7, 6, 5 }, { 2, 6, 5 }, 0 },
    { "r3_part_tail", 3, { 7, 6, 5 }, { 3, 6, 4 }, 0 },
    { "r3_ones", 3, { 7, 6, 5 }, { 1, 1, 5 }, 0 },
    { "r3_chunk1", 3, { 5, 4, 3 }, { 1, 1, 1 }, 0 },
    { "r3_unit_dims", 3, { 1, 17, 1 }, { 1, 5, 1 }, 0 },
    { "r3_over", 3, { 5, 3, 4 }, { 8, 8, 8 }, 1 },
    { "r4", 4, { 3, 4, 5, 6 }, { 2, 3, 2, 4 }, 0 },
    { "r4_whole_tail", 4, { 3, 4, 5, 6 }, { 2, 4, 5, 6 }, 0 },
    { "r4_mid_whole", 4, { 5, 4, 5, 7 }, { 2, 4, 5, 3 }, 0 },
    { "r4_all", 4, { 3, 4, 5, 6 }, { 3, 4, 5, 6 }, 0 },
    { "big_2m", 2, { 1300, 1100 }, { 500, 1100 }, 0 },
    /* 4.2 MB chunks: more than a shard of the mount's chunk cache */
    { "big_4m", 2, { 1030, 1030 }, { 1030, 1030 }, 0 },
};

static void file_shapes(hid_t f)
{
    const char *specs[] = { "", "s,d6", "f,s,d1", "e,s,f" };
    hid_t types[] = { H5T_STD_I32LE, H5T_STD_I16BE };
    hsize_t unl[MAXR] = { H5S_UNLIMITED, H5S_UNLIMITED, H5S_UNLIMITED, H5S_UNLIMITED };
    hid_t rgb = cmp3(3, "rgb", 0, H5T_STD_U8LE, 1, H5T_STD_U8LE, 2, H5T_STD_U8LE);
    hid_t g = group(f, "shapes");
    for (size_t i = 0; i < NELEMS(shapes); i++) {
        const shape_case *c = &shapes[i];
        for (size_t s = 0; s < NELEMS(specs); s++)
            for (size_t t = 0; t < 3; t++) {
                hid_t ty = t < 2 ? types[t] : rgb;
                if (!strncmp(c->name, "big_", 4) && (t != 0 || s == 2 || (c->name[4] == '4' && s != 1)))
                    continue;
                hid_t dcpl = chunked(c->rank, c->ch, specs[s]);
                char n[96];
                snprintf(n, sizeof n, "%s_%s_%s", c->name, t == 0 ? "i32" : t == 1 ? "i16be" : "rgb",
                         *specs[s] ? specs[s] : "none");
                put(g, n, ty, c->rank, c->dims, c->unlimited ? unl : NULL, dcpl,
                    s == 1 ? W_SOME : W_ALL);
                H5Pclose(dcpl);
            }
    }
    H5Tclose(rgb);
    /* empty extent */
    hsize_t z[2] = { 0, 5 }, zc[2] = { 4, 5 };
    hid_t dcpl = chunked(2, zc, "s,d6");
    put(g, "empty", H5T_STD_I32LE, 2, z, unl, dcpl, W_NONE);
    H5Pclose(dcpl);
    /* one chunk of 72 MiB: over the reader's decode limit (64 MiB) */
    hsize_t hd = 1000, hc = 18u << 20;
    dcpl = chunked(1, &hc, "d1");
    put(g, "chunk_72m", H5T_STD_I32LE, 1, &hd, unl, dcpl, W_ALL);
    H5Pclose(dcpl);
    H5Gclose(g);
}

/* elements of 1.5 MiB: chunked (decoded), contiguous big-endian (H5Dread) */
static void file_bigelem(hid_t f)
{
    hsize_t ad = 196613, n = 3, c1 = 1, c2 = 2;
    hid_t le = H5Tarray_create2(H5T_IEEE_F64LE, 1, &ad), be = H5Tarray_create2(H5T_STD_I64BE, 1, &ad);
    hid_t g = group(f, "bigelem");
    hid_t dcpl = chunked(1, &c1, "d1");
    put(g, "le_chunk1_d1", le, 1, &n, NULL, dcpl, W_ALL);
    H5Pclose(dcpl);
    dcpl = chunked(1, &c2, "s,f");
    put(g, "le_chunk2_s_f", le, 1, &n, NULL, dcpl, W_ALL);
    H5Pclose(dcpl);
    dcpl = chunked(1, &c2, "");
    put(g, "be_chunk2_some", be, 1, &n, NULL, dcpl, W_SOME);
    H5Pclose(dcpl);
    put(g, "be_contig", be, 1, &n, NULL, H5P_DEFAULT, W_ALL);
    put(g, "le_contig", le, 1, &n, NULL, H5P_DEFAULT, W_ALL);
    H5Gclose(g);
    H5Tclose(le);
    H5Tclose(be);
}

/* chunk addresses count from the superblock: after a user block of 1 KiB,
 * with small v1 B-tree nodes (many levels); and storage never allocated,
 * whose undefined address libhdf5 1.10's H5Dget_offset shifts by the user
 * block's size into the file */
static void file_userblock(hid_t f)
{
    index_kind(f, "fixed", H5T_STD_I32LE, 1);
    file_fill(f);
}

static void write_file(const char *dir, const char *name, int latest, void (*fn)(hid_t))
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_%s.h5", dir, name, latest ? "latest" : "early");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE);
    CHECK(H5Pset_libver_bounds(fapl, latest ? H5F_LIBVER_LATEST : H5F_LIBVER_EARLIEST,
                               H5F_LIBVER_LATEST));
    if (fn == file_userblock) {
        CHECK(H5Pset_userblock(fcpl, 1024));
        CHECK(H5Pset_istore_k(fcpl, 2));
    }
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    CHECK(f);
    fn(f);
    CHECK(H5Fclose(f));
    H5Pclose(fapl);
    H5Pclose(fcpl);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: hdf5_diff OUTDIR [FILE...]\n");
        return 2;
    }
    static const struct { const char *name; void (*fn)(hid_t); } files[] = {
        { "index", file_index }, { "fill", file_fill }, { "extent", file_extent },
        { "types", file_types }, { "shapes", file_shapes }, { "bigelem", file_bigelem },
        { "userblock", file_userblock },
    };
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    for (size_t i = 0; i < NELEMS(files); i++) {
        int want = argc == 2;
        for (int a = 2; a < argc; a++)
            want |= !strcmp(argv[a], files[i].name);
        if (!want)
            continue;
        for (int latest = 0; latest < 2; latest++)
            write_file(argv[1], files[i].name, latest, files[i].fn);
    }
    return 0;
}
