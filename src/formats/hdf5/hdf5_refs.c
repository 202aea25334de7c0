/* hdf5_refs.c - where a dataset's stored bytes lie, for references
 * (hpc_format.chunks of the HDF5 reader; hpc_refs_chunks.c reads it).
 *
 * The answer is text, one item per line, so that it passes through the
 * helper process unchanged:
 *   layout contiguous|chunked|compact|other
 *   order le|be|none          byte order of the file type's elements
 *   unsup WHY                 the bytes are no numpy type zarr decodes; after
 *                             "c" lines: the listing stopped there (a chunk
 *                             index not trusted, a checksum that fails)
 *   dtype SIZE JSON           a compound's zarr v2 dtype for the file's bytes
 *   sdtype SIZE JSON          the same for the served bytes (little-endian)
 *   adims A0,A1,...           an array type: the dims its elements add (the
 *                             dtypes above are then its base type's)
 *   addr OFFSET SIZE          contiguous and allocated
 *   chunk D0,D1,...           chunk shape
 *   codec JSON                the pipeline as numcodecs codecs, in file
 *                             (encode) order (filters_out: deflate -> zlib,
 *                             shuffle -> shuffle)
 *   nocodec WHY               a filter no numcodecs codec decodes as libhdf5
 *                             does: the pipeline ends here
 *   checksum 4 fletcher32     fletcher32, last: each chunk's 4 bytes the
 *                             references leave out
 *   checksums verified        every chunk's checksum was checked here
 *   fill HEX COUNT | fill none
 *                             fill value in the file type: the bytes HEX
 *                             COUNT times (an array type's, once per element)
 *   c OFFSET SIZE MASK C0,C1  one allocated chunk: its first element's coordinates
 * and before them, of a dataset or a group (then "layout group" and these
 * only; h5_chunks in hdf5_data.c):
 *   dim LEN NAME              per axis, netCDF-4's dimension (hdf5_ncdims.c):
 *                             its length and name (a JSON string)
 *   ldim PATH LEN NAME        the same for the link at PATH (hex) of a
 *                             dataset with several: netCDF-4 names each
 *                             link's variable in its own group
 *   ncdim                     a netCDF-4 dimension that is no variable
 *   novar                     a dataset of a type netCDF-4 has none for: no variable
 *   attrs                     typed attributes follow, all of them (hdf5_ncattr.c)
 *   attr NAME: VALUE          one, as a JSON member
 *   ncfill HEX                the dataset's _FillValue in its file type
 * and for a dataset of variable-length strings or object references, one
 * line per element (hdf5_data.c), in C order:
 *   vs HEX                    the string's bytes, or the target's path
 *                             (empty: a null reference)
 */
#include "config.h"

#include <string.h>

#include "hdf5_chunk.h"
#include "hdf5_refs.h"
#include "hdf5_type.h"

#define MAX_CHUNK_READ (256u << 20)  /* a chunk read for its checksum at most */
#define MAX_NESTING 8                /* compounds in compounds, at most */

/* Whether the file type's elements are bytes numpy reads as they are. */
static const char *type_verbatim(hid_t t, H5T_order_t *order)
{
    H5T_class_t cls = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    *order = size > 1 ? H5Tget_order(t) : H5T_ORDER_NONE;
    if (cls == H5T_ENUM && hpc_h5t_is_bool(t)) {
        /* h5py's bool: its 1-byte enum; other bases are converted */
        hid_t m = hpc_h5t_mem_type_of(t);
        int same = m >= 0 && H5Tequal(t, m) > 0;
        if (m >= 0)
            H5Tclose(m);
        *order = H5T_ORDER_NONE;
        return same ? NULL : "an enum h5py converts to bool";
    }
    if (cls == H5T_ENUM) {
        hid_t base = H5Tget_super(t);
        const char *why = base < 0 ? "enum without a base type" : type_verbatim(base, order);
        if (base >= 0)
            H5Tclose(base);
        return why;
    }
    if (cls == H5T_INTEGER)
        return H5Tget_precision(t) == 8 * size && H5Tget_offset(t) == 0 ? NULL
               : "an integer type with padding bits (n-bit)";
    if (cls == H5T_FLOAT)
        return H5Tequal(t, H5T_IEEE_F32LE) > 0 || H5Tequal(t, H5T_IEEE_F32BE) > 0 ||
               H5Tequal(t, H5T_IEEE_F64LE) > 0 || H5Tequal(t, H5T_IEEE_F64BE) > 0
               ? NULL : "a floating-point type other than IEEE binary32/64";
    if (cls == H5T_STRING) {
        *order = H5T_ORDER_NONE;
        if (H5Tis_variable_str(t) > 0)
            return "variable-length strings (no fixed-size bytes)";
        /* h5py reads NUL-padded strings; libhdf5 converts the others */
        return H5Tget_strpad(t) == H5T_STR_NULLPAD ? NULL
               : "strings padded with spaces or NUL-terminated (libhdf5 converts them)";
    }
    if (cls == H5T_VLEN)
        return "variable-length sequences";
    return "a type class zarr v2 has no verbatim dtype for (array, opaque, reference, "
           "bit field, time)";
}

/* ---- compound types as zarr v2 structured dtypes ----------------------- */

/* Both renderings of a type: as stored, and as served (little-endian). */
typedef struct zdt {
    GString *file, *served;
} zdt;

static const char *zdt_type(hid_t t, int depth, zdt *z);

static void zdt_append(zdt *z, const char *s)
{
    g_string_append(z->file, s);
    g_string_append(z->served, s);
}

/* A member name numpy keeps as it is and JSON needs no escape for. */
static int plain_name(const char *s)
{
    if (!s || !s[0] || !g_utf8_validate(s, -1, NULL))
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
            return 0;
    return 1;
}

/* numpy names zarr's unnamed padding fields "f<index>": a member of that
 * form would clash with one. */
static int numpy_default_name(const char *s)
{
    return s[0] == 'f' && s[1] && strspn(s + 1, "0123456789") == strlen(s + 1);
}

/* h5py's complex number (served as "<cN"): two IEEE floats of one order. */
static const char *complex_ok(hid_t t, H5T_order_t *order)
{
    const char *why = NULL;
    H5T_order_t o[2] = { H5T_ORDER_NONE, H5T_ORDER_NONE };
    for (unsigned i = 0; i < 2 && !why; i++) {
        hid_t mt = H5Tget_member_type(t, i);
        why = mt < 0 ? "a complex type libhdf5 cannot describe" : type_verbatim(mt, &o[i]);
        if (!why && (H5Tget_class(mt) != H5T_FLOAT || H5Tget_member_offset(t, i) != i * H5Tget_size(mt)))
            why = "a complex type that is not two adjacent floats";
        if (mt >= 0)
            H5Tclose(mt);
    }
    *order = o[0];
    return why ? why : o[0] != o[1] ? "a complex type with parts of two byte orders" : NULL;
}

/* A type h5py reads as a numpy scalar type: typestr as served, and with
 * the file's byte order. */
static const char *zdt_simple(hid_t t, const char *typestr, zdt *z)
{
    H5T_order_t order = H5T_ORDER_NONE;
    const char *why = H5Tget_class(t) == H5T_COMPOUND ? complex_ok(t, &order)
                                                     : type_verbatim(t, &order);
    if (why)
        return why;
    g_string_append_printf(z->served, "\"%s\"", typestr);
    g_string_append_printf(z->file, "\"%c%s\"",
                           order == H5T_ORDER_BE && typestr[0] == '<' ? '>' : typestr[0],
                           typestr + 1);
    return NULL;
}

/* One member ["name", type] or ["name", base, [d0, ...]] (an array type). */
static const char *zdt_member(hid_t mt, const char *name, int depth, zdt *z)
{
    if (!plain_name(name))
        return "a compound member name that JSON would have to escape";
    g_string_append_printf(z->file, "[\"%s\", ", name);
    g_string_append_printf(z->served, "[\"%s\", ", name);
    const char *why = NULL;
    if (H5Tget_class(mt) != H5T_ARRAY) {
        if (!(why = zdt_type(mt, depth + 1, z)))
            zdt_append(z, "]");
        return why;
    }
    hsize_t dims[H5S_MAX_RANK];
    int nd = H5Tget_array_ndims(mt);
    hid_t base = H5Tget_super(mt);
    why = nd < 1 || nd > H5S_MAX_RANK || H5Tget_array_dims2(mt, dims) < 0 || base < 0
                      ? "an array member libhdf5 cannot describe"
                      : H5Tget_class(base) == H5T_ARRAY ? "an array member of array type"
                      : zdt_type(base, depth + 1, z);
    for (int i = 0; !why && i < nd; i++)
        g_string_append_printf(z->file, "%s%" G_GUINT64_FORMAT, i ? ", " : ", [", (guint64)dims[i]);
    for (int i = 0; !why && i < nd; i++)
        g_string_append_printf(z->served, "%s%" G_GUINT64_FORMAT, i ? ", " : ", [", (guint64)dims[i]);
    if (!why)
        zdt_append(z, "]]");
    if (base >= 0)
        H5Tclose(base);
    return why;
}

/* Unnamed padding of n bytes, as zarr writes numpy's ('', '|Vn'). */
static void zdt_pad(zdt *z, size_t n, int first)
{
    char pad[40];
    g_snprintf(pad, sizeof pad, "%s[\"\", \"|V%zu\"]", first ? "" : ", ", n);
    zdt_append(z, pad);
}

/* A compound as a list of members in offset order, gaps as padding. */
static const char *zdt_compound(hid_t t, int depth, zdt *z)
{
    int nm = H5Tget_nmembers(t);
    size_t at = 0, size = H5Tget_size(t);
    int gaps = 0, clash = 0;
    const char *why = nm < 1 ? "a compound type without members" : NULL;
    zdt_append(z, "[");
    for (int i = 0; i < nm && !why; i++) {
        size_t off = H5Tget_member_offset(t, (unsigned)i);
        hid_t mt = H5Tget_member_type(t, (unsigned)i);
        char *name = H5Tget_member_name(t, (unsigned)i);
        if (mt < 0 || off < at || off + H5Tget_size(mt) > size)
            why = "compound members out of offset order or overlapping";
        else if (off > at)
            zdt_pad(z, off - at, i == 0);
        gaps |= off > at;
        clash |= name && numpy_default_name(name);
        if (!why && i)
            zdt_append(z, ", ");
        why = why ? why : zdt_member(mt, name, depth, z);
        at = mt >= 0 ? off + H5Tget_size(mt) : at;
        H5free_memory(name);
        if (mt >= 0)
            H5Tclose(mt);
    }
    if (!why && at < size)
        zdt_pad(z, size - at, 0);
    zdt_append(z, "]");
    return why ? why : (gaps || at < size) && clash
           ? "a compound with padding and a member named like numpy's padding fields (f0, f1, ...)"
           : NULL;
}

/* File type t into z: a typestr or, for a compound, a list of members. */
static const char *zdt_type(hid_t t, int depth, zdt *z)
{
    if (depth > MAX_NESTING)
        return "compound types nested too deep";
    hid_t m = hpc_h5t_mem_type(t);
    if (m < 0)
        return "a type with no byte image (variable-length data or references)";
    GString *lit = g_string_new(NULL);
    hpc_h5t_np_dtype(t, m, lit);
    H5Tclose(m);
    const char *why;
    if (!strchr("[{(", lit->str[0]))
        why = zdt_simple(t, lit->str, z);
    else if (H5Tget_class(t) == H5T_COMPOUND)
        why = zdt_compound(t, depth, z);
    else
        why = "an array type (zarr v2 has no dtype for it)";
    g_string_free(lit, TRUE);
    return why;
}

/* The "dtype" and "sdtype" lines of a compound type t, or, for an array
 * type, of its base type and the "adims" line (h5py reads the array's
 * dims as trailing axes); or why there are none. */
static const char *structured_out(hid_t t, GString *o)
{
    zdt z = { g_string_new(NULL), g_string_new(NULL) };
    hid_t base = H5Tget_class(t) == H5T_ARRAY ? H5Tget_super(t) : H5Tcopy(t);
    hsize_t dims[H5S_MAX_RANK];
    int nd = H5Tget_class(t) == H5T_ARRAY ? H5Tget_array_ndims(t) : 0;
    const char *why = base < 0 || nd < 0 || nd > H5S_MAX_RANK ||
                      (nd && H5Tget_array_dims2(t, dims) < 0) ? "a type libhdf5 cannot describe"
                      : H5Tget_class(base) == H5T_ARRAY ? "an array type of array type"
                      : zdt_type(base, 0, &z);
    if (!why)
        g_string_append_printf(o, "dtype %zu %s\nsdtype %zu %s\n", H5Tget_size(base), z.file->str,
                               H5Tget_size(base), z.served->str);
    for (int i = 0; !why && i < nd; i++)
        g_string_append_printf(o, "%s%" G_GUINT64_FORMAT "%s", i ? "," : "adims ", (guint64)dims[i],
                               i == nd - 1 ? "\n" : "");
    if (base >= 0)
        H5Tclose(base);
    g_string_free(z.file, TRUE);
    g_string_free(z.served, TRUE);
    return why;
}

/* Two digits a byte, written in place: a fill value of an array type can
 * be hundreds of MiB, too many for a printf per byte. */
static void put_hex(GString *o, const unsigned char *p, size_t n)
{
    static const char digit[] = "0123456789abcdef";
    gsize at = o->len;
    g_string_set_size(o, at + 2 * n);
    for (size_t i = 0; i < n; i++) {
        o->str[at + 2 * i] = digit[p[i] >> 4];
        o->str[at + 2 * i + 1] = digit[p[i] & 15];
    }
}

/* The stored chunk at coordinates off ends with the Fletcher-32 checksum
 * of the rest (hdf5_chunk.c's, as libhdf5 computes it). */
static int chunk_sum_ok(hid_t did, const hsize_t *off, uint64_t size)
{
    if (size < 4 || size > MAX_CHUNK_READ)
        return 0;
    unsigned char *buf = g_malloc(size);
    uint32_t mask = 0;
    int ok = H5Dread_chunk(did, H5P_DEFAULT, off, &mask, buf) >= 0;
    if (ok) {
        uint32_t sum = hpc_h5chunk_fletcher32(buf, size - 4);
        uint32_t le = (uint32_t)buf[size - 4] | (uint32_t)buf[size - 3] << 8 |
                      (uint32_t)buf[size - 2] << 16 | (uint32_t)buf[size - 1] << 24;
        /* libhdf5 before 1.6.3 swapped the bytes of each half (as hdf5_chunk.c) */
        ok = le == sum || le == (((sum & 0x00ff00ffu) << 8) | ((sum >> 8) & 0x00ff00ffu));
    }
    g_free(buf);
    return ok;
}

/* Why filter id of the pipeline has no numcodecs codec here (after a
 * Fletcher-32 checksum, after a compressor), or NULL. */
static const char *no_codec(H5Z_filter_t id, int fletcher, int compressed)
{
    if (fletcher)
        return "fletcher32 not last in the filter pipeline";
    if (id == H5Z_FILTER_SHUFFLE && compressed)     /* its input: compressed bytes */
        return "shuffle after a compressor (numcodecs' shuffle refuses a buffer that is not a "
               "whole number of elements; libhdf5's leaves the rest as it is)";
    if (id == H5Z_FILTER_DEFLATE || id == H5Z_FILTER_SHUFFLE || id == H5Z_FILTER_FLETCHER32)
        return NULL;
    return id == HPC_H5CHUNK_FILTER_LZF ? "LZF compression (numcodecs 0.11 has no LZF codec)"
           : id == H5Z_FILTER_SZIP ? "szip compression (no numcodecs codec)"
           : id == H5Z_FILTER_NBIT ? "the n-bit filter (no numcodecs codec)"
           : id == H5Z_FILTER_SCALEOFFSET ? "the scale-offset filter (no numcodecs codec)"
           : "a filter numcodecs is not known here to decode as libhdf5 does";
}

/* Filter id (its first client datum cd0) as a "codec" line, or the
 * "nocodec" line of why it has none; *fletcher and *compressed say what
 * came before and are updated.  Shuffle without its element size gets
 * the type's, which libhdf5 stores there. */
static const char *filter_out(H5Z_filter_t id, unsigned cd0, hid_t ftype, int *fletcher,
                              int *compressed, GString *o)
{
    const char *why = no_codec(id, *fletcher, *compressed);
    if (why)
        g_string_append_printf(o, "nocodec %s\n", why);
    else if (id == H5Z_FILTER_DEFLATE)
        g_string_append_printf(o, "codec {\"id\": \"zlib\", \"level\": %u}\n", MIN(cd0, 9u));
    else if (id == H5Z_FILTER_SHUFFLE)
        g_string_append_printf(o, "codec {\"id\": \"shuffle\", \"elementsize\": %u}\n",
                               cd0 ? cd0 : (unsigned)H5Tget_size(ftype));
    *fletcher |= id == H5Z_FILTER_FLETCHER32;
    *compressed |= id == H5Z_FILTER_DEFLATE;
    return why;
}

/* The pipeline's lines up to its first filter without a codec, then the
 * "checksum" line of a Fletcher-32 that ends it (numcodecs 0.11 has no
 * codec for it: the reader checks every chunk instead); *verify when
 * Fletcher-32 is the last filter. */
static int filters_out(hid_t dcpl, hid_t ftype, GString *o, int *verify)
{
    int n = H5Pget_nfilters(dcpl), fletcher = 0, compressed = 0;
    const char *why = NULL;
    *verify = 0;
    for (int i = 0; i < n; i++) {
        unsigned flags = 0, cd[32], conf = 0;
        size_t ncd = G_N_ELEMENTS(cd);
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, &conf);
        if (id < 0)
            return HPC_E_CORRUPT;
        if (!why)
            why = filter_out(id, ncd ? cd[0] : 0, ftype, &fletcher, &compressed, o);
        *verify = id == H5Z_FILTER_FLETCHER32 && i == n - 1;
    }
    if (fletcher && !why)
        g_string_append(o, "checksum 4 fletcher32\n");
    return HPC_OK;
}

/* The "c" line of the chunk at off (checksum checked when asked); or the
 * reason, as an "unsup" line, why the listing stops there. */
static int chunk_out(hid_t did, int rank, int verify, const hsize_t *off, uint64_t addr,
                     uint64_t size, unsigned mask, GString *o)
{
    if (verify && !mask && !chunk_sum_ok(did, off, size)) {
        g_string_append(o, "unsup the fletcher32 checksum of a chunk does not match\n");
        return 0;
    }
    g_string_append_printf(o, "c %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %u ",
                           (guint64)addr, (guint64)size, mask);
    for (int d = 0; d < rank; d++)
        g_string_append_printf(o, "%s%" G_GUINT64_FORMAT, d ? "," : "", (guint64)off[d]);
    g_string_append_c(o, '\n');
    return 1;
}

/* The chunks of the reader's index (hdf5_index.h), each found again by
 * libhdf5's lookup at its coordinates with its size (the lookup H5Dread
 * makes: no walk); 0 when one is not, and nothing written. */
static int listed_out(hid_t did, int rank, int verify, const hpc_h5idx *ix, GString *o)
{
    gsize start = o->len;
    int go = 1;
    for (guint i = 0; go && i < ix->chunks->len; i++) {
        const hpc_h5idx_chunk *c = &g_array_index(ix->chunks, hpc_h5idx_chunk, i);
        uint64_t at[HPC_H5OHDR_MAX_RANK];
        hsize_t off[H5S_MAX_RANK], size = 0;
        hpc_h5idx_origin(ix, c->idx, at);
        for (int d = 0; d < rank; d++)
            off[d] = at[d];
        if (H5Dget_chunk_storage_size(did, off, &size) < 0 || size != c->size) {
            g_string_truncate(o, start);
            return 0;
        }
        go = chunk_out(did, rank, verify, off, c->addr, c->size, c->mask, o);
    }
    if (go && verify)
        g_string_append(o, "checksums verified\n");
    return 1;
}

/* The user block's size: libhdf5 1.10 leaves it out of the addresses
 * H5Dget_chunk_info* give (not of H5Dget_offset's). */
static uint64_t file_base(hid_t did)
{
    hid_t f = H5Iget_file_id(did), fcpl = f >= 0 ? H5Fget_create_plist(f) : H5I_INVALID_HID;
    hsize_t ub = 0;
    if (fcpl >= 0 && H5Pget_userblock(fcpl, &ub) < 0)
        ub = 0;
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (f >= 0)
        H5Fclose(f);
    return (uint64_t)ub;
}

/* One "c" line per allocated chunk, from the reader's index ix where
 * given, else from libhdf5's listing (which walks the index up to each
 * chunk: n * n / 2 steps). */
static int chunks_out(hid_t did, int rank, int verify, const hpc_h5idx *ix, GString *o)
{
    hsize_t n = 0, off[H5S_MAX_RANK];
    if (ix && ix->rank == rank && listed_out(did, rank, verify, ix, o))
        return HPC_OK;
    uint64_t base = file_base(did);   /* the index's addresses include it */
    hid_t space = H5Dget_space(did);
    int rc = space >= 0 && H5Dget_num_chunks(did, space, &n) >= 0 ? HPC_OK : HPC_E_CORRUPT;
    if (rc == HPC_OK && n > HPC_H5REFS_MAX_CHUNKS) {
        g_string_append(o, "unsup more allocated chunks than references are written for\n");
        goto out;
    }
    for (hsize_t i = 0; rc == HPC_OK && i < n; i++) {
        unsigned mask = 0;
        haddr_t addr = 0;
        hsize_t size = 0;
        if (H5Dget_chunk_info(did, space, i, off, &mask, &addr, &size) < 0) {
            rc = HPC_E_CORRUPT;
            break;
        }
        /* the index of 1.10 gives wrong coordinates for some indexes
         * (extensible arrays): every chunk is looked up again by them */
        unsigned m2 = 0;
        haddr_t a2 = 0;
        hsize_t s2 = 0;
        if (H5Dget_chunk_info_by_coord(did, off, &m2, &a2, &s2) < 0 || a2 != addr ||
            s2 != size || m2 != mask) {
            g_string_append(o, "unsup libhdf5's chunk index gives coordinates that do not "
                               "find the same chunk again\n");
            goto out;
        }
        if (!chunk_out(did, rank, verify, off, (uint64_t)addr + base, size, mask, o))
            goto out;
    }
    if (verify && rc == HPC_OK)
        g_string_append(o, "checksums verified\n");
out:
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* The bytes of an array type's fill value repeat its base element's
 * value (a default fill is zeros): the smallest unit to send. */
static size_t fill_unit(hid_t ftype, size_t size)
{
    hid_t base = H5Tget_class(ftype) == H5T_ARRAY ? H5Tget_super(ftype) : H5I_INVALID_HID;
    size_t unit = base >= 0 ? H5Tget_size(base) : 0;
    if (base >= 0)
        H5Tclose(base);
    return unit && size % unit == 0 ? unit : size;
}

/* "fill HEX COUNT": the fill value of size bytes as the first unit of
 * them, repeated COUNT times when they repeat it.  An array type's fill
 * value can be hundreds of MiB: sent as hex through the helper, it cost
 * seconds of CPU. */
static void fill_hex(GString *o, hid_t ftype, const unsigned char *buf, size_t size)
{
    size_t unit = fill_unit(ftype, size);
    if (unit < size && memcmp(buf, buf + unit, size - unit))
        unit = size;
    g_string_append(o, "fill ");
    put_hex(o, buf, unit);
    g_string_append_printf(o, " %zu\n", unit ? size / unit : 1);
}

static void fill_out(hid_t dcpl, hid_t ftype, GString *o)
{
    H5D_fill_value_t st;
    size_t size = H5Tget_size(ftype);
    H5D_fill_time_t when = H5D_FILL_TIME_IFSET;
    unsigned char *buf = g_malloc0(MAX(size, 1));
    /* fill time "never": libhdf5 leaves unwritten storage alone and h5py
     * (like the mount) shows zeros, not the fill value */
    if (H5Pget_fill_time(dcpl, &when) >= 0 && when == H5D_FILL_TIME_NEVER)
        fill_hex(o, ftype, buf, size);
    else if (H5Pfill_value_defined(dcpl, &st) < 0 || st == H5D_FILL_VALUE_UNDEFINED ||
             H5Pget_fill_value(dcpl, ftype, buf) < 0)
        g_string_append(o, "fill none\n");
    else
        fill_hex(o, ftype, buf, size);
    g_free(buf);
}

static int chunked_out(hid_t did, hid_t dcpl, hid_t ftype, const hpc_h5idx *ix, GString *o)
{
    hsize_t dims[H5S_MAX_RANK];
    int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, dims);
    int fl = 0;
    if (rank < 1 || filters_out(dcpl, ftype, o, &fl) != HPC_OK)
        return HPC_E_CORRUPT;
    unsigned opts = 0;
    if (H5Pget_nfilters(dcpl) > 0 && H5Pget_chunk_opts(dcpl, &opts) >= 0 &&
        (opts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS))   /* 1.10 reports mask 0 for them */
        g_string_append(o, "unsup partial edge chunks stored unfiltered\n");
    g_string_append(o, "chunk ");
    for (int d = 0; d < rank; d++)
        g_string_append_printf(o, "%s%" G_GUINT64_FORMAT, d ? "," : "", (guint64)dims[d]);
    g_string_append_c(o, '\n');
    fill_out(dcpl, ftype, o);
    return chunks_out(did, rank, fl, ix, o);
}

int hpc_h5refs_describe(hid_t did, const hpc_h5idx *ix, GString *o)
{
    hid_t dcpl = H5Dget_create_plist(did), ftype = H5Dget_type(did);
    int rc = HPC_OK;
    H5T_order_t order = H5T_ORDER_NONE;
    if (dcpl < 0 || ftype < 0) {
        rc = HPC_E_CORRUPT;
        goto out;
    }
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int ext = H5Pget_external_count(dcpl);
    g_string_append_printf(o, "layout %s\n", ext > 0 ? "other" : lay == H5D_CONTIGUOUS ? "contiguous"
                           : lay == H5D_CHUNKED ? "chunked" : lay == H5D_COMPACT ? "compact"
                           : "other");
    H5T_class_t cls = H5Tget_class(ftype);
    char *refused = NULL;
    const char *why = hpc_h5t_refusal(ftype, &refused) != HPC_OK ? "a type h5py has no NumPy image of"
                      : cls == H5T_COMPOUND || cls == H5T_ARRAY ? structured_out(ftype, o)
                      : type_verbatim(ftype, &order);
    g_free(refused);
    g_string_append_printf(o, "order %s\n", order == H5T_ORDER_BE ? "be"
                           : order == H5T_ORDER_LE ? "le" : "none");
    if (why)
        g_string_append_printf(o, "unsup %s\n", why);
    if (ext > 0)
        g_string_append(o, "unsup external storage (raw data in other files)\n");
    else if (lay == H5D_CONTIGUOUS) {
        haddr_t a = H5Dget_offset(did);
        if (a != HADDR_UNDEF)
            g_string_append_printf(o, "addr %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n",
                                   (guint64)a, (guint64)H5Dget_storage_size(did));
        fill_out(dcpl, ftype, o);
    } else if (lay == H5D_CHUNKED && !why) {
        rc = chunked_out(did, dcpl, ftype, ix, o);
    } else if (lay != H5D_COMPACT && lay != H5D_CHUNKED) {
        g_string_append(o, "unsup a virtual dataset (its bytes lie in other datasets)\n");
    }
out:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (ftype >= 0)
        H5Tclose(ftype);
    return rc;
}

static void put_vs(GString *o, const char *p, size_t n)
{
    g_string_append(o, "vs ");
    put_hex(o, (const unsigned char *)p, n);
    g_string_append_c(o, '\n');
}

int hpc_h5refs_vstrings(hid_t did, uint64_t nelem, GString *o)
{
    hid_t ft = H5Dget_type(did), m = H5Tcopy(H5T_C_S1), sp = H5Dget_space(did);
    char **v = NULL;
    int rc = HPC_E_CORRUPT;
    if (ft < 0 || m < 0 || sp < 0 || H5Tis_variable_str(ft) <= 0 || nelem > HPC_H5REFS_VLEN_MAX ||
        H5Tset_size(m, H5T_VARIABLE) < 0 || H5Tset_cset(m, H5Tget_cset(ft)) < 0)
        goto out;
    v = g_new0(char *, MAX(nelem, 1));
    if (nelem && H5Dread(did, m, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        goto out;
    size_t total = 0;
    for (uint64_t i = 0; i < nelem; i++)
        total += v[i] ? strlen(v[i]) : 0;
    for (uint64_t i = 0; total <= HPC_H5REFS_VLEN_MAX && i < nelem; i++)
        put_vs(o, v[i] ? v[i] : "", v[i] ? strlen(v[i]) : 0);
    if (nelem)
        H5Dvlen_reclaim(m, sp, H5P_DEFAULT, v);
    rc = HPC_OK;
out:
    g_free(v);
    if (sp >= 0)
        H5Sclose(sp);
    if (m >= 0)
        H5Tclose(m);
    if (ft >= 0)
        H5Tclose(ft);
    return rc;
}

void hpc_h5refs_vpaths(const char *text, uint64_t size, uint64_t nelem, char eol, GString *o)
{
    const char *end = text + size, *p = text, *e = NULL;
    uint64_t n = 0;
    while (p < end && (e = memchr(p, eol, (size_t)(end - p)))) {
        n++;
        p = e + 1;
    }
    int whole = p == end && n == nelem;    /* else: none */
    for (p = text; whole && p < end; p = e + 1) {
        e = memchr(p, eol, (size_t)(end - p));
        put_vs(o, p, (size_t)(e - p));
    }
}
