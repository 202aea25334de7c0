/* hdf5_gen.c - hdf5_gen OUTDIR: the HDF5 test files h5py cannot write.
 *
 *   capi.h5  superblock 2 (libver 1.8): n-bit filter, a compound with padding
 *            and big-endian members, an array type, a big-endian enum, an
 *            opaque type, a compact big-endian dataset, variable-length
 *            sequences and object references (no byte image), a committed
 *            datatype, an external link, a group hard-linked into itself,
 *            raw data in an external file below a subdirectory.
 *   sb1.h5   superblock 1 (non-default chunk B-tree K), chunked, fill value.
 *   values.h5 values that need a conversion to match h5py: n-bit signed and
 *            unsigned integers at a bit offset, scale-offset integers and
 *            floats, fixed-length strings with space padding and bytes after
 *            the NUL, 80-bit long doubles stored in 16 and in 12 bytes;
 *            bit fields: standard ones (served), and with padding bits, at
 *            a bit offset or inside a compound (h5py converts none of
 *            these: EIO), an HDF5 time type (no NumPy type: EIO).
 *   bigelem.h5 one element of 72 MiB (an array type), gzip-compressed.
 *   edges.h5 (libver latest) partial edge chunks stored unfiltered
 *            (H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) under deflate and
 *            fletcher32; contiguous storage never allocated with
 *            H5D_FILL_TIME_NEVER (as netcdf-c's f03tst_open_mem.nc /var2);
 *            n-bit and scale-offset chunks with edges and unwritten chunks;
 *            elements of 1.5 MiB in chunks, some never written.
 *
 * The expected bytes come from h5py reading these files (hdf5_verify.py).
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHECK(x) do { if ((x) < 0) { fprintf(stderr, "hdf5_gen: %s failed at line %d\n", #x, __LINE__); exit(1); } } while (0)

struct padded {
    char a;
    double b;
    short c;
};

static void put(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int rank,
                const hsize_t *dims, hid_t dcpl, const void *data)
{
    hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(d);
    if (data)
        CHECK(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
    H5Dclose(d);
    H5Sclose(sp);
}

/* A new file DIR/NAME written in the format of libhdf5 version `ver`. */
static hid_t create(const char *dir, const char *name, H5F_libver_t ver)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(H5Pset_libver_bounds(fapl, ver, ver));
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f);
    H5Pclose(fapl);
    return f;
}

static void capi(const char *dir)
{
    hid_t f = create(dir, "capi.h5", H5F_LIBVER_V18);

    /* n-bit: 12 significant bits of unsigned 32-bit integers */
    {
        static unsigned v[5000];
        hsize_t n = 5000, ch = 700;
        for (unsigned i = 0; i < n; i++)
            v[i] = (i * 37u) & 0xfff;
        hid_t t = H5Tcopy(H5T_STD_U32LE);
        CHECK(H5Tset_precision(t, 12));
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        CHECK(H5Pset_chunk(dcpl, 1, &ch));
        CHECK(H5Pset_nbit(dcpl));
        put(f, "nbit", t, H5T_NATIVE_UINT, 1, &n, dcpl, v);
        H5Pclose(dcpl);
        H5Tclose(t);
    }
    /* compound with padding (C layout), big-endian members */
    {
        struct padded p[7];
        memset(p, 0, sizeof p);
        for (int i = 0; i < 7; i++) {
            p[i].a = (char)('A' + i);
            p[i].b = i * 1.25 - 3;
            p[i].c = (short)(i * -1000);
        }
        hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(struct padded));
        H5Tinsert(mt, "a", HOFFSET(struct padded, a), H5T_NATIVE_CHAR);
        H5Tinsert(mt, "b", HOFFSET(struct padded, b), H5T_NATIVE_DOUBLE);
        H5Tinsert(mt, "c", HOFFSET(struct padded, c), H5T_NATIVE_SHORT);
        hid_t ft = H5Tcreate(H5T_COMPOUND, sizeof(struct padded));
        H5Tinsert(ft, "a", HOFFSET(struct padded, a), H5T_STD_I8BE);
        H5Tinsert(ft, "b", HOFFSET(struct padded, b), H5T_IEEE_F64BE);
        H5Tinsert(ft, "c", HOFFSET(struct padded, c), H5T_STD_I16BE);
        hsize_t n = 7;
        put(f, "padded_be", ft, mt, 1, &n, H5P_DEFAULT, p);
        H5Tclose(ft);
        H5Tclose(mt);
    }
    /* array type: 5 elements of int32 BE [2][3] */
    {
        int v[5][2][3];
        for (int i = 0; i < 30; i++)
            (&v[0][0][0])[i] = i * i - 100;
        hsize_t ad[2] = { 2, 3 }, n = 5;
        hid_t ft = H5Tarray_create2(H5T_STD_I32BE, 2, ad), mt = H5Tarray_create2(H5T_NATIVE_INT, 2, ad);
        put(f, "array_be", ft, mt, 1, &n, H5P_DEFAULT, v);
        H5Tclose(ft);
        H5Tclose(mt);
    }
    /* big-endian enum */
    {
        short v[6] = { 3, 1, 2, 3, -4, 1 };
        hid_t ft = H5Tenum_create(H5T_STD_I16BE), mt = H5Tenum_create(H5T_NATIVE_SHORT);
        const char *names[] = { "ONE", "TWO", "THREE", "MINUS_FOUR" };
        short vals[] = { 1, 2, 3, -4 };
        for (int i = 0; i < 4; i++) {
            short be = (short)(((unsigned short)vals[i] >> 8) | ((unsigned short)vals[i] << 8));
            H5Tenum_insert(ft, names[i], &be);
            H5Tenum_insert(mt, names[i], &vals[i]);
        }
        hsize_t n = 6;
        put(f, "enum_be", ft, mt, 1, &n, H5P_DEFAULT, v);
        H5Tclose(ft);
        H5Tclose(mt);
    }
    /* opaque */
    {
        unsigned char v[4 * 9];
        for (int i = 0; i < 36; i++)
            v[i] = (unsigned char)(i * 7);
        hid_t t = H5Tcreate(H5T_OPAQUE, 4);
        H5Tset_tag(t, "four bytes");
        hsize_t n = 9;
        put(f, "opaque", t, t, 1, &n, H5P_DEFAULT, v);
        H5Tclose(t);
    }
    /* compact, big-endian double */
    {
        double v[4][5];
        for (int i = 0; i < 20; i++)
            (&v[0][0])[i] = i / 3.0;
        hsize_t d[2] = { 4, 5 };
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        CHECK(H5Pset_layout(dcpl, H5D_COMPACT));
        put(f, "compact_be", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, 2, d, dcpl, v);
        H5Pclose(dcpl);
    }
    /* no byte image: variable-length sequences and object references */
    {
        hvl_t v[3];
        int a[6] = { 1, 2, 3, 4, 5, 6 };
        v[0].len = 1; v[0].p = a;
        v[1].len = 2; v[1].p = a + 1;
        v[2].len = 3; v[2].p = a + 3;
        hid_t ft = H5Tvlen_create(H5T_STD_I32LE), mt = H5Tvlen_create(H5T_NATIVE_INT);
        hsize_t n = 3;
        put(f, "vlen_int", ft, mt, 1, &n, H5P_DEFAULT, v);
        H5Tclose(ft);
        H5Tclose(mt);
        hobj_ref_t r[2];
        CHECK(H5Rcreate(&r[0], f, "/opaque", H5R_OBJECT, -1));
        CHECK(H5Rcreate(&r[1], f, "/enum_be", H5R_OBJECT, -1));
        n = 2;
        put(f, "refs", H5T_STD_REF_OBJ, H5T_STD_REF_OBJ, 1, &n, H5P_DEFAULT, r);
    }
    /* a committed datatype and a dataset of it */
    {
        hid_t t = H5Tcopy(H5T_IEEE_F32BE);
        CHECK(H5Tcommit2(f, "mytype", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        float v[3] = { 1.5f, -2.5f, 1e30f };
        hsize_t n = 3;
        put(f, "of_mytype", t, H5T_NATIVE_FLOAT, 1, &n, H5P_DEFAULT, v);
        H5Tclose(t);
    }
    /* raw data in raw/ext.bin at two places */
    {
        char sub[4096], ext[4096];
        snprintf(sub, sizeof sub, "%s/raw", dir);
        mkdir(sub, 0755);
        snprintf(ext, sizeof ext, "%s/raw/ext.bin", dir);
        FILE *e = fopen(ext, "wb");
        if (!e)
            exit(1);
        long long v[64];
        for (int i = 0; i < 64; i++)
            v[i] = (long long)i * 1000003LL;
        fwrite("pad!", 1, 4, e);
        fwrite(v + 32, 8, 32, e);
        fwrite(v, 8, 32, e);
        fclose(e);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        CHECK(H5Pset_external(dcpl, "raw/ext.bin", 4 + 256, 256));
        CHECK(H5Pset_external(dcpl, "raw/ext.bin", 4, 256));
        hsize_t n = 64;
        put(f, "external_i8", H5T_STD_I64LE, H5T_NATIVE_LLONG, 1, &n, dcpl, NULL);
        H5Pclose(dcpl);
    }
    /* links */
    {
        hid_t g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        int v[3] = { 7, 8, 9 };
        hsize_t n = 3;
        put(g, "inner", H5T_STD_I32LE, H5T_NATIVE_INT, 1, &n, H5P_DEFAULT, v);
        CHECK(H5Lcreate_hard(f, "/grp", g, "self", H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Lcreate_external("basic.h5", "/types/le_i4", f, "extlink", H5P_DEFAULT, H5P_DEFAULT));
        hid_t s = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(g, "answer", H5T_STD_I64BE, s, H5P_DEFAULT, H5P_DEFAULT);
        long long x = 42;
        H5Awrite(a, H5T_NATIVE_LLONG, &x);
        H5Aclose(a);
        H5Sclose(s);
        H5Gclose(g);
    }
    H5Fclose(f);
}

static void sb1(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/sb1.h5", dir);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    CHECK(H5Pset_istore_k(fcpl, 64));
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    CHECK(f);
    hsize_t d[2] = { 100, 90 }, ch[2] = { 9, 8 }, start[2] = { 20, 10 }, cnt[2] = { 30, 40 };
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int fill = -1;
    CHECK(H5Pset_chunk(dcpl, 2, ch));
    CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill));
    CHECK(H5Pset_deflate(dcpl, 3));
    hid_t sp = H5Screate_simple(2, d, NULL);
    hid_t ds = H5Dcreate2(f, "partial", H5T_STD_I32BE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(ds);
    static int v[30][40];
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 40; j++)
            v[i][j] = i * 100 + j;
    hid_t ms = H5Screate_simple(2, cnt, NULL);
    CHECK(H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, cnt, NULL));
    CHECK(H5Dwrite(ds, H5T_NATIVE_INT, ms, sp, H5P_DEFAULT, v));
    H5Sclose(ms);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Fclose(f);
    H5Pclose(fcpl);
}

/* n-bit: signed 16-bit integers with 11 significant bits at bit offset 5,
 * unsigned 32-bit ones with 13 bits at offset 7 */
static void values_nbit(hid_t f)
{
    static short s[3000];
    static unsigned u[3000];
    hsize_t n = 3000, ch = 512;
    for (int i = 0; i < 3000; i++) {
        s[i] = (short)((i % 2048) - 1024);
        u[i] = (unsigned)(i * 13) % 8192;
    }
    s[0] = -1;
    hid_t ts = H5Tcopy(H5T_STD_I16LE), tu = H5Tcopy(H5T_STD_U32BE);
    CHECK(H5Tset_precision(ts, 11));
    CHECK(H5Tset_offset(ts, 5));
    CHECK(H5Tset_precision(tu, 13));
    CHECK(H5Tset_offset(tu, 7));
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, 1, &ch));
    CHECK(H5Pset_nbit(dcpl));
    put(f, "nbit_i16", ts, H5T_NATIVE_SHORT, 1, &n, dcpl, s);
    put(f, "nbit_u32be", tu, H5T_NATIVE_UINT, 1, &n, dcpl, u);
    /* the same types without the filter: the padding bits still differ */
    put(f, "prec_i16", ts, H5T_NATIVE_SHORT, 1, &n, H5P_DEFAULT, s);
    H5Pclose(dcpl);
    H5Tclose(ts);
    H5Tclose(tu);
}

static void values_scaleoffset(hid_t f)
{
    static int iv[2000];
    static double dv[2000];
    hsize_t n = 2000, ch = 300;
    for (int i = 0; i < 2000; i++) {
        iv[i] = 100000 + (i * 7919) % 3000 - 1500;
        dv[i] = (i % 97) * 0.123456 - 5;
    }
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, 1, &ch));
    CHECK(H5Pset_scaleoffset(dcpl, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT));
    put(f, "so_int", H5T_STD_I32BE, H5T_NATIVE_INT, 1, &n, dcpl, iv);
    H5Pclose(dcpl);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, 1, &ch));
    CHECK(H5Pset_scaleoffset(dcpl, H5Z_SO_FLOAT_DSCALE, 3));
    put(f, "so_double", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &n, dcpl, dv);
    H5Pclose(dcpl);
}

/* fixed-length strings of 8 bytes in each padding, with bytes after the
 * first NUL and trailing spaces */
static void values_strings(hid_t f)
{
    static const char v[5][8] = { "ab  \0xy", "abcdefgh", "   \0\0\0\0\0", "x\0\0\0\0\0\0z",
                                  "sp ace  " };
    const H5T_str_t pads[] = { H5T_STR_SPACEPAD, H5T_STR_NULLTERM, H5T_STR_NULLPAD };
    const char *names[] = { "str_spacepad", "str_nullterm", "str_nullpad" };
    hsize_t n = 5;
    for (int i = 0; i < 3; i++) {
        hid_t t = H5Tcopy(H5T_C_S1);
        CHECK(H5Tset_size(t, 8));
        CHECK(H5Tset_strpad(t, pads[i]));
        /* written with the file's own type: the bytes are stored as given */
        put(f, names[i], t, t, 1, &n, H5P_DEFAULT, v);
        hid_t s = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(f, names[i], t, s, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(a);
        CHECK(H5Awrite(a, t, v[0]));
        H5Aclose(a);
        H5Sclose(s);
        H5Tclose(t);
    }
}

/* long doubles: the native 16-byte layout and a 12-byte (96-bit) one */
static void values_ldouble(hid_t f)
{
    long double v[6] = { 1.0L / 3, -2.5L, 1e300L * 1e300L, 0.0L, 1e-4000L, 3.14159265358979323846L };
    hsize_t n = 6;
    hid_t t12 = H5Tcopy(H5T_NATIVE_LDOUBLE);
    CHECK(H5Tset_size(t12, 12));
    put(f, "ldouble", H5T_NATIVE_LDOUBLE, H5T_NATIVE_LDOUBLE, 1, &n, H5P_DEFAULT, v);
    put(f, "ldouble96", t12, H5T_NATIVE_LDOUBLE, 1, &n, H5P_DEFAULT, v);
    H5Tclose(t12);
}

/* bit fields h5py reads (HDF5's standard ones) and those it has no
 * conversion for; a time type */
static void values_bitfields(hid_t f)
{
    /* 24 bytes: the three 8-byte compound elements read all of them */
    static const unsigned short v[12] = { 0xffff, 0x1234, 0x0020, 0x8000, 0x7fe0, 0x0001,
                                          0x00ff, 0x0f0f, 0x4321, 0x0102, 0x7fff, 0x0003 };
    hsize_t n = 6;
    hid_t b11 = H5Tcopy(H5T_STD_B16LE), b3 = H5Tcopy(H5T_STD_B8LE), b16 = H5Tcopy(H5T_STD_B16LE);
    CHECK(H5Tset_precision(b11, 11));
    CHECK(H5Tset_offset(b11, 5));
    CHECK(H5Tset_precision(b3, 3));
    CHECK(H5Tset_offset(b3, 2));
    CHECK(H5Tset_pad(b3, H5T_PAD_ONE, H5T_PAD_ONE));
    CHECK(H5Tset_pad(b16, H5T_PAD_ONE, H5T_PAD_ONE));
    put(f, "bf_b16be", H5T_STD_B16BE, H5T_STD_B16LE, 1, &n, H5P_DEFAULT, v);
    put(f, "bf_b64le", H5T_STD_B64LE, H5T_STD_B16LE, 1, &n, H5P_DEFAULT, v);
    /* h5py cannot read this one (no conversion to NumPy's u1) */
    put(f, "bf_b8be", H5T_STD_B8BE, H5T_STD_B8BE, 1, &n, H5P_DEFAULT, "\x81\x42\x00\xff\x10\x01");
    put(f, "bf_prec11_off5", b11, b11, 1, &n, H5P_DEFAULT, v);
    put(f, "bf8_prec3_pad_one", b3, b3, 1, &n, H5P_DEFAULT, v);
    put(f, "bf16_pad_one", b16, b16, 1, &n, H5P_DEFAULT, v);
    hid_t c = H5Tcreate(H5T_COMPOUND, 8);
    CHECK(H5Tinsert(c, "bits", 0, b11));
    CHECK(H5Tinsert(c, "n", 4, H5T_STD_I32LE));
    hsize_t three = 3;
    put(f, "cmp_bf_prec11", c, c, 1, &three, H5P_DEFAULT, v);
    H5Tclose(c);
    c = H5Tcreate(H5T_COMPOUND, 8);
    CHECK(H5Tinsert(c, "bits", 0, H5T_STD_B16BE));
    CHECK(H5Tinsert(c, "n", 4, H5T_STD_I32LE));
    put(f, "cmp_bf_b16be", c, c, 1, &three, H5P_DEFAULT, v);
    H5Tclose(c);
    put(f, "time_d32", H5T_UNIX_D32LE, H5T_UNIX_D32LE, 1, &three, H5P_DEFAULT, v);
    H5Tclose(b11);
    H5Tclose(b3);
    H5Tclose(b16);
}

static void values(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/values.h5", dir);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f);
    values_nbit(f);
    values_scaleoffset(f);
    values_strings(f);
    values_ldouble(f);
    values_bitfields(f);
    H5Fclose(f);
}

/* one element of 72 MiB: an array type of 18 Mi 32-bit integers */
static void bigelem(const char *dir)
{
    char path[4096];
    hsize_t ad = 18u << 20, one = 1;
    int *v = malloc(ad * sizeof *v);
    if (!v)
        exit(1);
    for (hsize_t i = 0; i < ad; i++)
        v[i] = (int)(i / 4096) * 7 + (int)(i % 5);
    snprintf(path, sizeof path, "%s/bigelem.h5", dir);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f);
    hid_t ft = H5Tarray_create2(H5T_STD_I32BE, 1, &ad), mt = H5Tarray_create2(H5T_NATIVE_INT, 1, &ad);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, 1, &one));
    CHECK(H5Pset_deflate(dcpl, 1));
    put(f, "big", ft, mt, 1, &one, dcpl, v);
    H5Pclose(dcpl);
    H5Tclose(ft);
    H5Tclose(mt);
    H5Fclose(f);
    free(v);
}

/* a region [lo, hi) of a 1-D or 2-D dataset written with H5Dwrite */
static void put_box(hid_t d, hid_t mtype, int rank, const hsize_t *start, const hsize_t *count,
                    const void *data)
{
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(rank, count, NULL);
    CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
    CHECK(H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, data));
    H5Sclose(ms);
    H5Sclose(fs);
}

static hid_t make(hid_t f, const char *name, hid_t ftype, int rank, const hsize_t *dims, hid_t dcpl)
{
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(f, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(d);
    H5Sclose(sp);
    return d;
}

/* partial edge chunks stored unfiltered, written whole and in parts */
static void edges_partial(hid_t f)
{
    static float v[12 * 7];
    hsize_t dims[2] = { 12, 7 }, ch[2] = { 5, 3 }, at[2] = { 0, 0 }, part[2] = { 5, 3 };
    for (int i = 0; i < 12 * 7; i++)
        v[i] = (float)i * 0.5f - 3;
    const char *names[] = { "partial_raw_deflate", "partial_raw_fletcher_deflate" };
    for (int k = 0; k < 2; k++) {
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        CHECK(H5Pset_chunk(dcpl, 2, ch));
        CHECK(H5Pset_chunk_opts(dcpl, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS));
        if (k)
            CHECK(H5Pset_fletcher32(dcpl));
        CHECK(H5Pset_deflate(dcpl, 9));
        put(f, names[k], H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, dims, dcpl, v);
        H5Pclose(dcpl);
    }
    /* one whole chunk and one edge chunk written, the rest never */
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    float fill = -1.5f;
    CHECK(H5Pset_chunk(dcpl, 2, ch));
    CHECK(H5Pset_chunk_opts(dcpl, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS));
    CHECK(H5Pset_shuffle(dcpl));
    CHECK(H5Pset_deflate(dcpl, 1));
    CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill));
    hid_t d = make(f, "partial_raw_sparse", H5T_IEEE_F32LE, 2, dims, dcpl);
    put_box(d, H5T_NATIVE_FLOAT, 2, at, part, v);
    at[0] = 10;
    at[1] = 6;
    part[0] = 2;
    part[1] = 1;
    put_box(d, H5T_NATIVE_FLOAT, 2, at, part, v + 20);
    H5Dclose(d);
    H5Pclose(dcpl);
}

/* contiguous storage never allocated, fill time never: zeros (h5py) */
static void edges_never(hid_t f)
{
    hsize_t n = 4096;
    int fill = 99;
    for (int k = 0; k < 2; k++) {
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
        CHECK(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE));
        if (k)
            CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill));
        hid_t d = make(f, k ? "var2_fill99" : "var2", H5T_STD_I32LE, 1, &n, dcpl);
        H5Dclose(d);
        H5Pclose(dcpl);
    }
}

/* n-bit and scale-offset chunks: edges, unwritten chunks, fill values */
static void edges_nbit_so(hid_t f)
{
    static int v[50 * 9];
    hsize_t dims[2] = { 50, 9 }, ch[2] = { 8, 4 }, at[2] = { 3, 2 }, part[2] = { 20, 5 };
    for (int i = 0; i < 50 * 9; i++)
        v[i] = (i * 37) % 1500 - 700;
    int fill = -5;
    hid_t t = H5Tcopy(H5T_STD_I32BE);
    CHECK(H5Tset_precision(t, 12));
    for (int k = 0; k < 2; k++) {
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        CHECK(H5Pset_chunk(dcpl, 2, ch));
        CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill));
        if (k)
            CHECK(H5Pset_scaleoffset(dcpl, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT));
        else
            CHECK(H5Pset_nbit(dcpl));
        hid_t d = make(f, k ? "so_int_sparse" : "nbit_sparse", k ? H5T_STD_I32LE : t, 2, dims, dcpl);
        put_box(d, H5T_NATIVE_INT, 2, at, part, v);
        H5Dclose(d);
        H5Pclose(dcpl);
    }
    H5Tclose(t);
}

/* elements of 1.5 MiB (more than the 1 MiB slot threshold) in chunks of
 * two, little- and big-endian, one chunk never written */
static void edges_bigelem(hid_t f)
{
    hsize_t ad = 3u << 17, n = 5, ch = 2, at = 0, cnt = 2;
    unsigned *v = malloc(2 * ad * sizeof *v);
    if (!v)
        exit(1);
    for (hsize_t i = 0; i < 2 * ad; i++)
        v[i] = (unsigned)(i * 2654435761u);
    const hid_t base[2] = { H5T_STD_U32LE, H5T_STD_U32BE };
    const char *names[2] = { "bigelem_le", "bigelem_be" };
    for (int k = 0; k < 2; k++) {
        hid_t ft = H5Tarray_create2(base[k], 1, &ad), mt = H5Tarray_create2(H5T_NATIVE_UINT, 1, &ad);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        CHECK(H5Pset_chunk(dcpl, 1, &ch));
        CHECK(H5Pset_deflate(dcpl, 1));
        hid_t d = make(f, names[k], ft, 1, &n, dcpl);
        at = 0;
        put_box(d, mt, 1, &at, &cnt, v);
        at = 4;
        cnt = 1;
        put_box(d, mt, 1, &at, &cnt, v);
        cnt = 2;
        H5Dclose(d);
        H5Pclose(dcpl);
        H5Tclose(ft);
        H5Tclose(mt);
    }
    free(v);
}

static void edges(const char *dir)
{
    hid_t f = create(dir, "edges.h5", H5F_LIBVER_LATEST);
    edges_partial(f);
    edges_never(f);
    edges_nbit_so(f);
    edges_bigelem(f);
    H5Fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hdf5_gen OUTDIR\n");
        return 2;
    }
    capi(argv[1]);
    sb1(argv[1]);
    values(argv[1]);
    bigelem(argv[1]);
    edges(argv[1]);
    return 0;
}
