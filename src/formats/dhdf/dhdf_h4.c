/* dhdf_h4.c - the distributed HDF reader's HDF4 helpers: number types,
 * attributes as xattrs, the set attributes, the vdatas (File_Info and the
 * chunk tables) and the SDSs of a file.  Every call here runs with
 * dhdf_hdf_lock held.
 */
#include "config.h"
#include "dhdf_int.h"
#include "hpc_bytes.h"
#include "hpc_json.h"

#include <inttypes.h>
#include <string.h>

#define MAX_STR_W 4096           /* widest FileName/ChunkName field accepted */
#define MAX_ATTR_SHOWN 65536     /* bytes of an attribute rendered as xattr */

/* Element size and NumPy dtype of an HDF4 base number type; 0 if unknown. */
uint32_t dhdf_nt_info(int32 nt, const char **dtype)
{
    switch (nt & DFNT_MASK) {
    case DFNT_CHAR8: *dtype = "|S1"; return 1;
    case DFNT_UCHAR8: *dtype = "|u1"; return 1;
    case DFNT_INT8: *dtype = "|i1"; return 1;
    case DFNT_UINT8: *dtype = "|u1"; return 1;
    case DFNT_INT16: *dtype = "<i2"; return 2;
    case DFNT_UINT16: *dtype = "<u2"; return 2;
    case DFNT_INT32: *dtype = "<i4"; return 4;
    case DFNT_UINT32: *dtype = "<u4"; return 4;
    case DFNT_FLOAT32: *dtype = "<f4"; return 4;
    case DFNT_FLOAT64: *dtype = "<f8"; return 8;
    default: *dtype = "?"; return 0;
    }
}

/* HDF4 returns native order; hpcmount serves little-endian. */
void dhdf_native_to_le(void *buf, size_t n, uint32_t esize)
{
#if G_BYTE_ORDER == G_BIG_ENDIAN
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++, p += esize) {
        if (esize == 2) {
            guint16 v;
            memcpy(&v, p, 2);
            v = GUINT16_TO_LE(v);
            memcpy(p, &v, 2);
        } else if (esize == 4) {
            guint32 v;
            memcpy(&v, p, 4);
            v = GUINT32_TO_LE(v);
            memcpy(p, &v, 4);
        } else if (esize == 8) {
            guint64 v;
            memcpy(&v, p, 8);
            v = GUINT64_TO_LE(v);
            memcpy(p, &v, 8);
        }
    }
#else
    (void)buf;
    (void)n;
    (void)esize;
#endif
}

/* Render an attribute value (native order) as text. */
static char *render_attr(int32 nt, const void *v, int32 count)
{
    const char *dt;
    uint32_t es = dhdf_nt_info(nt, &dt);
    int32 base = nt & DFNT_MASK;
    if (base == DFNT_CHAR8 || base == DFNT_UCHAR8) {
        size_t n = (size_t)count;
        while (n > 0 && ((const char *)v)[n - 1] == '\0')
            n--;
        return g_strndup(v, n);
    }
    GString *s = g_string_new(NULL);
    const unsigned char *p = v;
    for (int32 i = 0; i < count && es; i++, p += es) {
        if (i)
            g_string_append_c(s, ',');
        switch (base) {
        case DFNT_INT8: { int8_t x; memcpy(&x, p, 1); g_string_append_printf(s, "%d", x); break; }
        case DFNT_UINT8: { uint8_t x; memcpy(&x, p, 1); g_string_append_printf(s, "%u", x); break; }
        case DFNT_INT16: { int16_t x; memcpy(&x, p, 2); g_string_append_printf(s, "%d", x); break; }
        case DFNT_UINT16: { uint16_t x; memcpy(&x, p, 2); g_string_append_printf(s, "%u", x); break; }
        case DFNT_INT32: { int32_t x; memcpy(&x, p, 4); g_string_append_printf(s, "%" PRId32, x); break; }
        case DFNT_UINT32: { uint32_t x; memcpy(&x, p, 4); g_string_append_printf(s, "%" PRIu32, x); break; }
        case DFNT_FLOAT32: { float x; memcpy(&x, p, 4); g_string_append_printf(s, "%.9g", (double)x); break; }
        case DFNT_FLOAT64: { double x; memcpy(&x, p, 8); g_string_append_printf(s, "%.17g", x); break; }
        default: break;
        }
    }
    return g_string_free(s, FALSE);
}

/* Read attribute idx of SD object id into a new buffer; bounds-checked
 * against the file size before allocating.  *off receives its offset. */
static int attr_read(int32 id, int32 idx, uint64_t fsize, char *name, int32 *nt,
                     int32 *count, void **val, uint64_t *off)
{
    int32 o = 0, l = 0;
    *val = NULL;
    *off = 0;
    if (SDattrinfo(id, idx, name, nt, count) == FAIL)
        return HPC_E_CORRUPT;
    if (SDgetattdatainfo(id, idx, &o, &l) != FAIL && o > 0)
        *off = (uint64_t)o;
    int32 es = DFKNTsize(*nt | DFNT_NATIVE);
    if (es <= 0 || *count < 0 || (uint64_t)*count * (uint64_t)es > fsize)
        return HPC_E_CORRUPT;
    *val = g_malloc0((size_t)*count * (size_t)es + 1);
    if (SDreadattr(id, idx, *val) == FAIL) {
        g_free(*val);
        *val = NULL;
        return HPC_E_CORRUPT;
    }
    return HPC_OK;
}

/* The file's DHDF_SetId (NULL if absent) and DHDF_FileId. */
int dhdf_read_set_attrs(int32 sd, const char *path, uint64_t fsize, char **setid,
                          int32_t *fileid, uint64_t *offs, GError **err)
{
    char name[H4_MAX_NC_NAME + 1];
    int32 nt, count;
    void *v;
    uint64_t off;
    offs[0] = offs[1] = 0;
    *setid = NULL;
    *fileid = -1;
    int32 idx = SDfindattr(sd, DHDF_ATTR_SETID);
    if (idx == FAIL)
        return HPC_OK;
    if (attr_read(sd, idx, fsize, name, &nt, &count, &v, &off) != HPC_OK)
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_SETID, off, "unreadable attribute");
    int32 base = nt & DFNT_MASK;
    if ((base != DFNT_CHAR8 && base != DFNT_UCHAR8) || count < 1 || count > DHDF_SETID_MAX) {
        g_free(v);
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_SETID, off,
                        "type %d count %d, expected a char8 string of 1 to 255 bytes",
                        (int)nt, (int)count);
    }
    *setid = render_attr(nt, v, count);
    offs[0] = off;
    g_free(v);
    idx = SDfindattr(sd, DHDF_ATTR_FILEID);
    if (idx == FAIL)
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_FILEID, 0,
                        "missing, but the file has a DHDF_SetId");
    if (attr_read(sd, idx, fsize, name, &nt, &count, &v, &off) != HPC_OK)
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_FILEID, off, "unreadable attribute");
    if ((nt & DFNT_MASK) != DFNT_INT32 || count != 1) {
        g_free(v);
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_FILEID, off,
                        "type %d count %d, expected one int32", (int)nt, (int)count);
    }
    memcpy(fileid, v, 4);
    offs[1] = off;
    g_free(v);
    if (*fileid < 0)
        return hpc_fail(err, HPC_E_CORRUPT, path, DHDF_ATTR_FILEID, off, "%" PRId32 " is negative",
                        *fileid);
    return HPC_OK;
}

/* Where record i, field f lies in the file (for messages). */
uint64_t dhdf_vt_off(const dhdf_vtable *t, int32 i, unsigned f)
{
    return t->data_off ? t->data_off + (uint64_t)i * t->disk_recsize + t->disk_off[f] : 0;
}

/* Load fields (int32 when want_int[f], char8 otherwise) of vdata vs. */
static int vt_load(int32 vs, const char *path, uint64_t fsize, const char *what,
                   const char *const *fields, const int *want_int, unsigned nf,
                   dhdf_vtable *t, GError **err)
{
    memset(t, 0, sizeof *t);
    VSgetname(vs, t->name);
    int32 nfld = VFnfields(vs);
    int found[4] = { 0 };
    int32 offs = 0, l = 0;
    if (VSgetdatainfo(vs, 0, 1, &offs, &l) > 0 && offs > 0)
        t->data_off = (uint64_t)offs;
    for (int32 i = 0; i < nfld; i++) {
        const char *fname = VFfieldname(vs, i);
        int32 esz = VFfieldesize(vs, i);
        for (unsigned f = 0; fname && f < nf; f++) {
            if (strcmp(fname, fields[f]) != 0)
                continue;
            int32 type = VFfieldtype(vs, i) & DFNT_MASK, order = VFfieldorder(vs, i);
            int ok = want_int[f] ? type == DFNT_INT32 : (type == DFNT_CHAR8 || type == DFNT_UCHAR8);
            int32 maxo = want_int[f] ? HPC_DHDF_MAX_RANK : MAX_STR_W;
            if (!ok || order < 1 || order > maxo)
                return hpc_fail(err, HPC_E_CORRUPT, path, fields[f], t->data_off,
                                "%s '%s': field of type %d order %d, expected %s of order 1 to %d",
                                what, t->name, (int)VFfieldtype(vs, i), (int)order,
                                want_int[f] ? "int32" : "char8", (int)maxo);
            found[f] = 1;
            t->order[f] = (uint32_t)order;
            t->disk_off[f] = t->disk_recsize;
        }
        if (esz > 0)
            t->disk_recsize += (uint32_t)esz;
    }
    GString *list = g_string_new(NULL);
    for (unsigned f = 0; f < nf; f++) {
        if (!found[f]) {
            g_string_free(list, TRUE);
            return hpc_fail(err, HPC_E_CORRUPT, path, fields[f], t->data_off,
                            "%s '%s' has no field %s", what, t->name, fields[f]);
        }
        g_string_append_printf(list, "%s%s", f ? "," : "", fields[f]);
        t->recsize += t->order[f] * (want_int[f] ? 4u : 1u);
    }
    int32 n = VSelts(vs);
    if (n < 0 || (uint64_t)n * (t->disk_recsize ? t->disk_recsize : 1) > fsize) {
        g_string_free(list, TRUE);
        return hpc_fail(err, HPC_E_CORRUPT, path, "nrecords", t->data_off,
                        "%s '%s': %d records of %u bytes cannot fit in %" PRIu64 " bytes",
                        what, t->name, (int)n, t->disk_recsize, fsize);
    }
    t->nrec = n;
    t->buf = g_malloc0(t->recsize * (size_t)n + 1);
    int rc = HPC_OK;
    if (n > 0 && (VSsetfields(vs, list->str) == FAIL ||
                  VSread(vs, t->buf, n, FULL_INTERLACE) != n))
        rc = hpc_fail(err, HPC_E_CORRUPT, path, what, t->data_off,
                      "'%s': cannot read %d records", t->name, (int)n);
    g_string_free(list, TRUE);
    return rc;
}

void dhdf_finfo_free(GArray *a)
{
    if (!a)
        return;
    for (guint i = 0; i < a->len; i++) {
        g_free(g_array_index(a, dhdf_finfo, i).name);
        g_free(g_array_index(a, dhdf_finfo, i).host);
    }
    g_array_free(a, TRUE);
}

static const char *const finfo_fields[] = { DHDF_FIELD_FILEID, DHDF_FIELD_FILENAME,
                                             DHDF_FIELD_HOSTNAME };
static const int finfo_int[] = { 1, 0, 0 };

const char *const dhdf_chunk_fields[] = { DHDF_FIELD_FILEID, DHDF_FIELD_CHUNKNAME,
                                             DHDF_FIELD_DIMSIZES, DHDF_FIELD_ORIGINS };
static const int chunk_int[] = { 1, 0, 1, 1 };

/* Decode a File_Info table into dhdf_finfo; ids unique. */
static int finfo_decode(const dhdf_vtable *t, const char *path, GArray **out, GError **err)
{
    GArray *a = g_array_new(FALSE, TRUE, sizeof(dhdf_finfo));
    uint32_t w1 = t->order[1], w2 = t->order[2];
    int rc = HPC_OK;
    for (int32 i = 0; i < t->nrec; i++) {
        const unsigned char *r = t->buf + (size_t)i * t->recsize;
        dhdf_finfo f = { hpc_dhdf_get_i32(r), g_strndup((const char *)r + 4, w1),
                        g_strndup((const char *)r + 4 + w1, w2), dhdf_vt_off(t, i, 1) };
        g_array_append_val(a, f);
        if (f.id < 0 || f.name[0] == '\0') {
            rc = hpc_fail(err, HPC_E_CORRUPT, path, "File_Info", dhdf_vt_off(t, i, 0),
                          "record %d: DHDF_FileId %" PRId32 " FileName '%s' (ids are >= 0, "
                          "names not empty)", (int)i, f.id, f.name);
            break;
        }
        for (guint j = 0; j + 1 < a->len; j++)
            if (g_array_index(a, dhdf_finfo, j).id == f.id) {
                rc = hpc_fail(err, HPC_E_CORRUPT, path, "File_Info", dhdf_vt_off(t, i, 0),
                              "record %d: DHDF_FileId %" PRId32 " is listed twice", (int)i, f.id);
                break;
            }
        if (rc != HPC_OK)
            break;
    }
    if (rc != HPC_OK) {
        dhdf_finfo_free(a);
        a = NULL;
    }
    *out = a;
    return rc;
}

/* Read the vdatas of file `path`: its File_Info (exactly one), and, if
 * tables is not NULL, every chunk table. */
int dhdf_read_vdatas(const char *path, uint64_t fsize, GArray **finfo, GPtrArray *tables,
                       GError **err)
{
    *finfo = NULL;
    int32 f = Hopen(path, DFACC_READ, 0);
    if (f == FAIL)
        return hpc_fail(err, HPC_E_CORRUPT, path, NULL, 0, "not a readable HDF4 file");
    int rc = HPC_OK;
    int nfinfo = 0;
    Vstart(f);
    for (int32 ref = VSgetid(f, -1); ref != FAIL && rc == HPC_OK; ref = VSgetid(f, ref)) {
        int32 vs = VSattach(f, ref, "r");
        if (vs == FAIL)
            continue;
        char cls[VSNAMELENMAX + 1] = "", name[VSNAMELENMAX + 1] = "";
        VSgetclass(vs, cls);
        VSgetname(vs, name);
        if (strcmp(cls, CLASS_FILEINFO) == 0 && strcmp(name, VD_FILEINFO) == 0) {
            dhdf_vtable t;
            if (nfinfo++)
                rc = hpc_fail(err, HPC_E_CORRUPT, path, VD_FILEINFO, 0,
                              "more than one File_Info vdata");
            else if ((rc = vt_load(vs, path, fsize, "File_Info", finfo_fields, finfo_int, 3,
                                   &t, err)) == HPC_OK)
                rc = finfo_decode(&t, path, finfo, err);
            g_free(t.buf);
        } else if (tables && strcmp(cls, CLASS_CHUNKS) == 0) {
            dhdf_ctable *ct = g_new0(dhdf_ctable, 1);
            rc = vt_load(vs, path, fsize, "chunk table", dhdf_chunk_fields, chunk_int, 4, &ct->t, err);
            g_ptr_array_add(tables, ct);
        }
        VSdetach(vs);
    }
    Vend(f);
    Hclose(f);
    if (rc == HPC_OK && nfinfo == 0)
        rc = hpc_fail(err, HPC_E_CORRUPT, path, VD_FILEINFO, 0,
                      "no vdata File_Info of class " CLASS_FILEINFO);
    return rc;
}

void dhdf_ctable_free(gpointer p)
{
    dhdf_ctable *ct = p;
    g_free(ct->t.buf);
    g_free(ct);
}

/* Attributes of SD object id as user.attr.* xattrs of node ino. */
void dhdf_attrs_to_xattrs(hpc_tree *tree, hpc_ino ino, int32 id, int32 nattrs, uint64_t fsize)
{
    for (int32 i = 0; i < nattrs; i++) {
        char name[H4_MAX_NC_NAME + 1];
        int32 nt, count;
        void *v;
        uint64_t off;
        if (attr_read(id, i, fsize, name, &nt, &count, &v, &off) != HPC_OK)
            continue;
        char *text = render_attr(nt, v, count);
        char *x = g_strdup_printf("user.attr.%s", name);
        hpc_tree_add_xattr(tree, ino, x, text, MIN(strlen(text), MAX_ATTR_SHOWN));
        g_free(x);
        g_free(text);
        g_free(v);
    }
}

/* Element i of an attribute (native order) as JSON: a number. */
static void json_number(GString *o, int32 base, const unsigned char *p)
{
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
            float f; double d; } v;
    memcpy(&v, p, (size_t)DFKNTsize(base | DFNT_NATIVE));
    switch (base) {
    case DFNT_INT8: g_string_append_printf(o, "%d", v.i8); break;
    case DFNT_INT16: g_string_append_printf(o, "%d", v.i16); break;
    case DFNT_INT32: g_string_append_printf(o, "%" PRId32, v.i32); break;
    case DFNT_UINT16: g_string_append_printf(o, "%u", v.u16); break;
    case DFNT_UINT32: g_string_append_printf(o, "%" PRIu32, v.u32); break;
    case DFNT_FLOAT32: hpc_json_double(o, (double)v.f, HPC_JSON_NAN_BARE); break;
    case DFNT_FLOAT64: hpc_json_double(o, v.d, HPC_JSON_NAN_BARE); break;
    default: g_string_append_printf(o, "%u", v.u8); break;     /* uint8, uchar8 */
    }
}

/* One "attr NAME: VALUE" line, as netCDF4-python gives libnetcdf's HDF4
 * layer's attribute: char8 as text (NULs dropped, bytes that are no UTF-8
 * replaced), one number as itself, several as a list (uchar8 is NC_UBYTE:
 * numbers). */
static void attr_line(GString *o, const char *name, int32 nt, const unsigned char *v,
                      int32 count)
{
    int32 base = nt & DFNT_MASK, es = DFKNTsize(base | DFNT_NATIVE);
    g_string_append(o, "attr ");
    hpc_json_str(o, name);
    g_string_append(o, ": ");
    if (base == DFNT_CHAR8) {
        GString *t = g_string_new(NULL);
        for (int32 i = 0; i < count; i++)
            if (v[i])
                g_string_append_c(t, (char)v[i]);
        char *text = g_utf8_make_valid(t->str, (gssize)t->len);
        hpc_json_str(o, text);
        g_free(text);
        g_string_free(t, TRUE);
    } else {
        g_string_append(o, count == 1 ? "" : "[");
        for (int32 i = 0; i < count; i++) {
            g_string_append(o, i ? ", " : "");
            json_number(o, base, v + (size_t)i * (size_t)es);
        }
        g_string_append(o, count == 1 ? "" : "]");
    }
    g_string_append_c(o, '\n');
}

/* The typed attributes of SD object id for the references ("attrs", then
 * one "attr" line each; hpc_refs_chunks.c reads them).  When fill is not
 * NULL and a _FillValue of type nt holds one value, its bytes (native
 * order) go to fill and 1 is returned: zarr's fill_value, as libnetcdf's
 * HDF4 layer takes SDgetfillvalue's value for the variable's. */
int dhdf_attr_lines(int32 id, int32 nattrs, uint64_t fsize, int32 nt, unsigned char *fill,
                    GString *out)
{
    int got = 0;
    g_string_append(out, "attrs\n");
    for (int32 i = 0; i < nattrs; i++) {
        char name[H4_MAX_NC_NAME + 1];
        int32 ant, count;
        void *v;
        uint64_t off;
        const char *dt;
        if (attr_read(id, i, fsize, name, &ant, &count, &v, &off) != HPC_OK)
            continue;
        if (dhdf_nt_info(ant, &dt))         /* a type numpy has */
            attr_line(out, name, ant, v, count);
        if (fill && !strcmp(name, "_FillValue") && count == 1 &&
            (ant & DFNT_MASK) == (nt & DFNT_MASK) && dhdf_nt_info(ant, &dt)) {
            memcpy(fill, v, (size_t)DFKNTsize(ant | DFNT_NATIVE));
            got = 1;
        }
        g_free(v);
    }
    return got;
}

/* The names libhdf4 gives SDS id's axes (SDdiminfo: the name set with
 * SDsetdimname, else its own "fakeDimN"): the dimensions libnetcdf's HDF4
 * layer, and so xarray, give the variable.  NULL when one cannot be read
 * or holds a comma (user.dims separates them so).  hdf_lock held. */
char **dhdf_dim_names(int32 id, int32 rank)
{
    char **out = g_new0(char *, rank + 1);
    for (int32 k = 0; k < rank; k++) {
        uint16 len = 0;
        int32 dim = SDgetdimid(id, k);
        char *name = dim == FAIL ? NULL : dhdf_obj_name(dim, 1, &len);
        if (!name || !name[0] || strlen(name) != (size_t)len || strchr(name, ',')) {
            g_free(name);
            g_strfreev(out);
            return NULL;
        }
        out[k] = name;
    }
    return out;
}

char *dhdf_obj_name(int32 id, int dim, uint16 *len)
{
    int32 rank, dims[H4_MAX_VAR_DIMS], nt, nattrs;
    *len = 0;
    if (SDgetnamelen(id, len) == FAIL)
        return NULL;
    char *name = g_malloc0((size_t)*len + 1);
    if ((dim ? SDdiminfo(id, name, dims, &nt, &nattrs)
             : SDgetinfo(id, name, &rank, dims, &nt, &nattrs)) == FAIL) {
        g_free(name);
        return NULL;
    }
    return name;
}

/* user.dims of node ino: names, comma-separated (none for NULL). */
void dhdf_dims_xattr(hpc_tree *tree, hpc_ino ino, char **names)
{
    if (!names || !names[0])
        return;
    char *v = g_strjoinv(",", names);
    hpc_tree_add_xattr(tree, ino, "user.dims", v, strlen(v));
    g_free(v);
}

char *dhdf_shape_text(unsigned rank, const uint64_t *dims)
{
    GString *s = g_string_new(NULL);
    for (unsigned d = 0; d < rank; d++)
        g_string_append_printf(s, "%s%" PRIu64, d ? "," : "", dims[d]);
    return g_string_free(s, FALSE);
}

void dhdf_array_xattrs(hpc_tree *tree, hpc_ino ino, unsigned rank, const uint64_t *dims, int32 nt)
{
    const char *dt;
    char *shape = dhdf_shape_text(rank, dims);
    dhdf_nt_info(nt, &dt);
    hpc_tree_add_xattr(tree, ino, "user.shape", shape, strlen(shape));
    hpc_tree_add_xattr(tree, ino, "user.dtype", dt, strlen(dt));
    g_free(shape);
}

/* Sizes of an SDS: checked rank, dims, type; total bytes.  empty_ok: a
 * dimension may have size 0 (an unlimited dimension with no record yet;
 * SDgetinfo gives 0 and the SDS holds no element: an empty file). */
int dhdf_sds_shape(const char *path, const char *name, int32 rank, const int32 *d32, int32 nt,
                     int empty_ok, unsigned *rank_out, uint64_t *dims, uint32_t *esize,
                     uint64_t *nbytes, GError **err)
{
    const char *dt;
    *esize = dhdf_nt_info(nt, &dt);
    if (*esize == 0)
        return hpc_fail(err, HPC_E_UNSUPPORTED, path, name, 0,
                        "SDS of HDF4 number type %d is not supported", (int)nt);
    if (rank < 1 || rank > HPC_DHDF_MAX_RANK)
        return hpc_fail(err, HPC_E_CORRUPT, path, name, 0, "rank %d (1 to 32)", (int)rank);
    uint64_t n = *esize;
    for (int32 i = 0; i < rank; i++) {
        if (d32[i] < 1 && !(d32[i] == 0 && empty_ok))
            return hpc_fail(err, HPC_E_CORRUPT, path, name, 0,
                            "dimension %d has size %d", (int)i, (int)d32[i]);
        dims[i] = (uint64_t)d32[i];
        if (!hpc_mul_u64(n, dims[i], &n) || n > (UINT64_C(1) << 62))
            return hpc_fail(err, HPC_E_CORRUPT, path, name, 0, "array too large");
    }
    *rank_out = (unsigned)rank;
    *nbytes = n;
    return HPC_OK;
}

/* Every SDS of an open SD file. */
static void sds_info_clear(gpointer p)
{
    g_free(((dhdf_sds_info *)p)->name);
}

int dhdf_list_sds(int32 sd, const char *path, GArray **out, GError **err)
{
    int32 nds, ngattr;
    *out = NULL;
    if (SDfileinfo(sd, &nds, &ngattr) == FAIL)
        return hpc_fail(err, HPC_E_CORRUPT, path, NULL, 0, "cannot read the SD directory");
    GArray *a = g_array_new(FALSE, TRUE, sizeof(dhdf_sds_info));
    g_array_set_clear_func(a, sds_info_clear);
    for (int32 i = 0; i < nds; i++) {
        dhdf_sds_info s = { .index = i };
        int32 id = SDselect(sd, i);
        if (id == FAIL)
            continue;
        s.name = dhdf_obj_name(id, 0, &s.namelen);
        if (s.name && SDgetinfo(id, NULL, &s.rank, s.dims, &s.nt, &s.nattrs) != FAIL) {
            s.coord = SDiscoordvar(id) > 0;
            g_array_append_val(a, s);
        } else {
            g_free(s.name);
        }
        SDendaccess(id);
    }
    *out = a;
    return HPC_OK;
}

/* HDF4's own fill value for an SDS without _FillValue (what SDreaddata
 * returns for elements never written), native order. */
void dhdf_default_fill(int32 nt, unsigned char *out)
{
    switch (nt & DFNT_MASK) {
    case DFNT_INT8: case DFNT_UINT8: { int8_t v = FILL_BYTE; memcpy(out, &v, 1); break; }
    case DFNT_INT16: case DFNT_UINT16: { int16_t v = FILL_SHORT; memcpy(out, &v, 2); break; }
    case DFNT_INT32: case DFNT_UINT32: { int32_t v = (int32_t)FILL_LONG; memcpy(out, &v, 4); break; }
    case DFNT_FLOAT32: { float v = (float)FILL_FLOAT; memcpy(out, &v, 4); break; }
    case DFNT_FLOAT64: { double v = FILL_DOUBLE; memcpy(out, &v, 8); break; }
    default: memset(out, 0, 8); break;    /* char8, uchar8: FILL_CHAR */
    }
}

/* The fill value libhdf4 reads an SDS with no data as: the first esize
 * bytes of its _FillValue attribute (of whatever type and count, native
 * order), else HDF4's default.  Returns 0, or 1 when the attribute holds
 * fewer bytes than an element (or cannot be read): libhdf4 then copies an
 * element's worth from its copy of the attribute and beyond it, so what it
 * returns for unwritten data is undefined. */
static int sds_fill(int32 id, int32 nt, uint32_t esize, uint64_t fsize, unsigned char *fill)
{
    char name[H4_MAX_NC_NAME + 1];
    int32 ant, count;
    void *v;
    uint64_t off;
    dhdf_default_fill(nt, fill);
    int32 idx = SDfindattr(id, "_FillValue");
    if (idx == FAIL)
        return 0;
    if (attr_read(id, idx, fsize, name, &ant, &count, &v, &off) != HPC_OK)
        return 1;
    uint64_t have = (uint64_t)count * (uint64_t)DFKNTsize(ant | DFNT_NATIVE);
    memset(fill, 0, 8);
    memcpy(fill, v, (size_t)MIN(have, (uint64_t)esize));
    g_free(v);
    return have < esize;
}

/* Whether SDS id keeps its data in an external file (SDsetexternalfile),
 * and where hpcmount lets libhdf4 find it: beside the HDF4 file at path
 * (a relative name is relative to that file's directory, an absolute one
 * that does not exist is looked for there by its base name, as libhdf4
 * does with HXsetdir), never in hpcmount's working directory.  Sets
 * p->ext_dir (the directory to give HXsetdir before a read) or p->why. */
static void sds_external(int32 id, const char *path, dhdf_piece *p)
{
    int32 off = 0, len = 0;
    intn n = SDgetexternalinfo(id, 0, NULL, &off, &len);
    if (n <= 0 || n > 4096)
        return;                  /* not external, or no data written */
    char *name = g_malloc0((size_t)n + 1), *at = NULL;
    char *dir = g_path_get_dirname(path);
    if (SDgetexternalinfo(id, n + 1, name, &off, &len) <= 0 || !name[0]) {
        p->why = g_strdup_printf("%s: SDS '%s': its external file cannot be named", path, p->name);
        goto out;
    }
    at = g_path_is_absolute(name) ? g_strdup(name) : g_build_filename(dir, name, NULL);
    if (g_path_is_absolute(name) && !g_file_test(at, G_FILE_TEST_IS_REGULAR)) {
        char *base = g_path_get_basename(name);
        g_free(at);
        at = g_build_filename(dir, base, NULL);
        g_free(base);
    }
    if (!g_file_test(at, G_FILE_TEST_IS_REGULAR))
        p->why = g_strdup_printf("%s: SDS '%s': its data are in the external file '%s', "
                                 "which is not %s", path, p->name, name,
                                 g_path_is_absolute(name) ? "there nor beside the file"
                                                          : "beside the file");
    else
        p->ext_dir = g_steal_pointer(&dir);
out:
    g_free(at);
    g_free(dir);
    g_free(name);
}

/* How piece p (SDS p->sds_index of file sd, at path) is stored, as its
 * reads need it: size, fill value, one compressed stream or not, and why
 * its reads must fail (p->why, also a line of warnings).  hdf_lock held. */
void dhdf_piece_storage(int32 sd, const char *path, uint64_t fsize, dhdf_piece *p, int32 nt,
                        uint32_t esize, unsigned rank, const uint64_t *size, GPtrArray *warnings)
{
    p->sds = FAIL;
    p->nbytes = esize;
    for (unsigned d = 0; d < rank; d++)
        p->nbytes *= size[d];
    dhdf_default_fill(nt, p->fill);
    int32 id = SDselect(sd, p->sds_index);
    if (id == FAIL)
        return;
    sds_external(id, path, p);
    if (p->ext_dir)
        HXsetdir(p->ext_dir);
    comp_coder_t ct = COMP_CODE_NONE;
    comp_info ci;
    HDF_CHUNK_DEF cd;
    int32 flags = 0;
    intn empty = 0;
    if (SDgetcompinfo(id, &ct, &ci) == FAIL)
        ct = COMP_CODE_NONE;
    if (SDgetchunkinfo(id, &cd, &flags) == FAIL)
        flags = 0;
    if (SDcheckempty(id, &empty) == FAIL)
        empty = 0;
    p->stream = ct != COMP_CODE_NONE && !(flags & HDF_CHUNK);
    /* a chunked SDS keeps its fill value in the file (HDF_CHUNK_DEF) */
    if (sds_fill(id, nt, esize, fsize, p->fill) && empty && !(flags & HDF_CHUNK) && !p->why)
        p->why = g_strdup_printf("%s: SDS '%s': no data written and its _FillValue is "
                                 "shorter than an element (libhdf4 fills it from memory "
                                 "past the attribute)", path, p->name);
    if (p->why)
        g_ptr_array_add(warnings, g_strdup_printf("reads fail (EIO): %s", p->why));
    SDendaccess(id);
}
