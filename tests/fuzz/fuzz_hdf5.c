/* fuzz_hdf5.c - libFuzzer harness of the HDF5 reader.
 *
 * libhdf5 is the parser; what is ours is the mapping of byte ranges to
 * hyperslab boxes and element reads, and the walk of a file at open.  The
 * first input byte picks the target:
 *   even  the mapping layer: the rest is a list of reads (dataset, offset,
 *         length) on a file this harness writes once with known values;
 *         every read must return exactly the known bytes; plus the box
 *         invariants for a shape and range taken from the input;
 *   odd   file open: the rest is an HDF5 file, opened and walked like
 *         every other format's harness does (tests/fuzz/fuzz_common.h).
 *
 * Build and run: tests/fuzz/run.sh hdf5 60
 */
#include "fuzz_common.h"
#include "fmt_hdf5.h"

#include <hdf5.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NDS 6

static const char *ds_names[NDS] = { "gz3d_be", "contig", "compact", "scalar", "cmpd_be", "edges" };
static unsigned char *expect[NDS];
static uint64_t expect_len[NDS];
static hpc_ino inos[NDS];
static hpc_container *fixed;

/* Value i of every dataset: a pattern whose bytes all differ. */
static uint32_t val(uint64_t i)
{
    return (uint32_t)(i * 2654435761u) ^ 0x5a5a1234u;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    uint32_t le = GUINT32_TO_LE(v);
    memcpy(p, &le, 4);
}

/* Write dataset `name` of uint32 values val(i) with file type ft. */
static void make(hid_t f, int k, hid_t ft, int rank, const hsize_t *dims, hid_t dcpl)
{
    uint64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    uint32_t *v = g_new(uint32_t, n);
    expect[k] = g_malloc(4 * n + 1);
    expect_len[k] = 4 * n;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = val(i);
        put_le32(expect[k] + 4 * i, v[i]);
    }
    hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(f, ds_names[k], ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d);
    H5Sclose(sp);
    g_free(v);
}

static char *fixed_path;

static void remove_fixed(void)
{
    unlink(fixed_path);
}

static void setup(void)
{
    char *path = NULL;
    int fd = g_file_open_tmp("fuzz_hdf5_XXXXXX.h5", &path, NULL);
    if (fd < 0)
        abort();
    close(fd);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t d3[3] = { 7, 11, 13 }, c3[3] = { 3, 4, 5 }, d1[1] = { 5000 }, d2[2] = { 9, 7 },
            de[2] = { 50, 33 }, ce[2] = { 8, 10 };
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, c3);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 1);
    make(f, 0, H5T_STD_U32BE, 3, d3, dcpl);
    H5Pclose(dcpl);
    make(f, 1, H5T_STD_U32LE, 1, d1, H5P_DEFAULT);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_layout(dcpl, H5D_COMPACT);
    make(f, 2, H5T_STD_U32BE, 2, d2, dcpl);
    H5Pclose(dcpl);
    make(f, 3, H5T_STD_U32BE, 0, NULL, H5P_DEFAULT);
    /* a compound of one big-endian member has the same bytes */
    hid_t ct = H5Tcreate(H5T_COMPOUND, 4);
    H5Tinsert(ct, "u", 0, H5T_STD_U32BE);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 4);
    H5Tinsert(mt, "u", 0, H5T_NATIVE_UINT32);
    {
        hsize_t n = 300;
        uint32_t *v = g_new(uint32_t, n);
        expect[4] = g_malloc(4 * n);
        expect_len[4] = 4 * n;
        for (uint64_t i = 0; i < n; i++) {
            v[i] = val(i);
            put_le32(expect[4] + 4 * i, v[i]);
        }
        hid_t sp = H5Screate_simple(1, &n, NULL);
        hid_t d = H5Dcreate2(f, ds_names[4], ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
        H5Dclose(d);
        H5Sclose(sp);
        g_free(v);
    }
    H5Tclose(ct);
    H5Tclose(mt);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, ce);
    make(f, 5, H5T_STD_U32LE, 2, de, dcpl);
    H5Pclose(dcpl);
    H5Fclose(f);

    hpc_options opts;
    hpc_options_init(&opts);
    opts.cache_size = 1 << 20;
    opts.inproc = 1;
    GError *err = NULL;
    if (hpc_container_open(path, &opts, &fixed, &err) != HPC_OK) {
        fprintf(stderr, "fuzz_hdf5: %s\n", err ? err->message : "open failed");
        abort();
    }
    for (int k = 0; k < NDS; k++) {
        hpc_stat st;
        if (hpc_container_resolve(fixed, ds_names[k], &st) != HPC_OK || st.size != expect_len[k])
            abort();
        inos[k] = st.ino;
    }
    fixed_path = path;   /* removed at exit: the core fails reads of a deleted source */
    atexit(remove_fixed);
}

static uint64_t take(const uint8_t **p, const uint8_t *end, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n && *p < end; i++, (*p)++)
        v |= (uint64_t)**p << (8 * i);
    return v;
}

static void fuzz_boxes(const uint8_t *p, const uint8_t *end)
{
    uint64_t dims[HPC_HDF5_MAX_RANK], total = 1;
    int rank = 1 + (int)(take(&p, end, 1) % 6);
    for (int k = 0; k < rank; k++) {
        dims[k] = 1 + take(&p, end, 1) % 9;
        total *= dims[k];
    }
    uint64_t a = take(&p, end, 2) % (total + 1), b = take(&p, end, 2) % (total + 1);
    if (a > b) {
        uint64_t t = a;
        a = b;
        b = t;
    }
    hpc_hdf5_box box[2 * HPC_HDF5_MAX_RANK - 1];
    unsigned n = hpc_hdf5_boxes(rank, dims, a, b, box);
    uint64_t cells = 0;
    if (n > 2u * (unsigned)rank - 1)
        abort();
    for (unsigned i = 0; i < n; i++) {
        uint64_t c = 1, first = 0;
        for (int k = 0; k < rank; k++) {
            if (box[i].count[k] == 0 || box[i].start[k] + box[i].count[k] > dims[k])
                abort();
            c *= box[i].count[k];
            first = first * dims[k] + box[i].start[k];
        }
        if (first != a + cells)
            abort();
        cells += c;
    }
    if (cells != b - a)
        abort();
}

static void fuzz_reads(const uint8_t *p, const uint8_t *end)
{
    static unsigned char buf[1 << 16];
    while (p < end) {
        int k = (int)(take(&p, end, 1) % NDS);
        uint64_t off = take(&p, end, 3), len = take(&p, end, 2);
        size_t n = 0;
        if (hpc_container_read(fixed, inos[k], buf, (size_t)len, off, &n) != HPC_OK)
            abort();
        uint64_t want = off >= expect_len[k] ? 0 : MIN(len, expect_len[k] - off);
        if (n != want || (n && memcmp(buf, expect[k] + off, n) != 0))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 1)
        return hpc_fuzz_container("hdf5", data + 1, size - 1);
    if (!fixed)
        setup();
    fuzz_boxes(data + 1, data + size);
    fuzz_reads(data + 1, data + size);
    return 0;
}
