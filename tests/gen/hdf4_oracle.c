/* hdf4_oracle.c - what libhdf4's SD interface reads from an HDF4 file, as
 * the oracle of tests/mount/conformance.py (Debian has no pyhdf).
 *
 *   hdf4_oracle FILE
 *   hdf4_oracle -d FILE
 *
 * prints one block per SDS, those that are not coordinate variables first,
 * then the coordinate variables (dimension scales), each in index order:
 *
 *   sds <index> <name as hex> <shape, e.g. 3,4> <HDF4 number type> <bytes> <status>
 *   <the bytes SDreaddata returns for the whole SDS, as hex>
 *
 * with "coord" for "sds" in a coordinate variable's block: the order in
 * which hpcmount names them, so the first block of a name is the SDS
 * served under it, the others are served under an alias
 * (tests/mount/h4names.py, docs/dhdf.md "Names").
 *
 * status "ok": SDreaddata succeeded, and read twice into buffers preset to
 * 0x00 and 0xff it gave the same bytes (every byte came from the library);
 * "filled": the two reads differ (the library succeeds but leaves elements
 * of an SDS never written untouched): those elements are given as the fill
 * value, SDgetfillvalue's, else HDF4's default for the type (FILL_*), as
 * the corpus's README defines; "fail": SDreaddata (or SDselect/SDgetinfo)
 * failed; "undefined": no data written and a _FillValue attribute shorter
 * than an element (libhdf4 fills from memory past the attribute: its
 * bytes differ from run to run, so the mount must fail the read).  The
 * bytes are in the host's order (little-endian on the machines the tests
 * run on).  External data (SDsetexternalfile) are read as from the file's
 * directory.
 * With -d, one line per SDS instead, in the same order:
 *
 *   dims <index> <name as hex> <its dimensions' names as hex, comma-separated>
 *
 * the names SDgetdimid and SDdiminfo give, which libnetcdf's HDF4 layer
 * (and so xarray) gives the variable's dimensions ("-" for rank 0).
 * With -a, one line per attribute: the file's first, then each SDS's in
 * the same order as the blocks, after a line naming the SDS (so that
 * SDSs without attributes are listed too):
 *
 *   gattr <name as hex> <number type> <count> <SDreadattr's bytes as hex>
 *   sds <index> <SDS name as hex>
 *   attr <index> <SDS name as hex> <name as hex> <number type> <count> <bytes as hex>
 *   fill <index> <SDS name as hex> <number type> <bytes as hex>
 *
 * "fill" where SDgetfillvalue succeeds (the SDS's type and its bytes),
 * which libnetcdf's HDF4 layer takes as the variable's fill value.
 * Exit 0, or 1 with one line when SDstart refuses the file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mfhdf.h>

static void put_hex(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
    putchar('\n');
}

/* Read the whole SDS into a and b (preset 0x00 / 0xff); 0 or -1. */
static int read_twice(int32 id, int32 *dims, unsigned char *a,
                      unsigned char *b, size_t n)
{
    int32 start[H4_MAX_VAR_DIMS] = { 0 };

    memset(a, 0, n);
    memset(b, 0xff, n);
    if (n == 0)
        return 0;
    if (SDreaddata(id, start, NULL, dims, a) == FAIL)
        return -1;
    if (SDreaddata(id, start, NULL, dims, b) == FAIL)
        return -1;
    return 0;
}

/* The fill value of SDS id of type nt: the first bytes of its _FillValue
 * attribute (what SDgetfillvalue copies, read here into a buffer of the
 * attribute's own size), else FILL_*.  Returns 1 when the attribute holds
 * fewer bytes than an element (libhdf4 then fills unwritten data from
 * memory past its copy of the attribute: undefined), else 0. */
static int fill_value(int32 id, int32 nt, unsigned char *out)
{
    char aname[H4_MAX_NC_NAME + 1];
    int32 ant, count, idx = SDfindattr(id, "_FillValue");
    size_t es = (size_t)DFKNTsize(nt);

    memset(out, 0, 16);
    if (idx != FAIL && SDattrinfo(id, idx, aname, &ant, &count) != FAIL && count >= 0) {
        size_t have = (size_t)count * (size_t)DFKNTsize(ant | DFNT_NATIVE);
        unsigned char *v = calloc(have + 16, 1);
        if (v == NULL || SDreadattr(id, idx, v) == FAIL)
            have = 0;
        else
            memcpy(out, v, have < es ? have : es);
        free(v);
        return have < es;
    }
    if (idx != FAIL)
        return 1;
    switch (nt & ~DFNT_LITEND) {
    case DFNT_INT8: case DFNT_UINT8: { int8_t v = FILL_BYTE; memcpy(out, &v, 1); break; }
    case DFNT_INT16: case DFNT_UINT16: { int16_t v = FILL_SHORT; memcpy(out, &v, 2); break; }
    case DFNT_INT32: case DFNT_UINT32: { int32_t v = (int32_t)FILL_LONG; memcpy(out, &v, 4); break; }
    case DFNT_FLOAT32: { float v = (float)FILL_FLOAT; memcpy(out, &v, 4); break; }
    case DFNT_FLOAT64: { double v = FILL_DOUBLE; memcpy(out, &v, 8); break; }
    default: break;                     /* char8, uchar8: FILL_CHAR, 0 */
    }
    return 0;
}

/* Whether libhdf4's bytes for SDS id are undefined: no data written, not
 * chunked (a chunked SDS keeps its fill value in the file) and a
 * _FillValue shorter than an element. */
static int undefined_fill(int32 id, int32 nt)
{
    unsigned char fv[16];
    intn empty = 0;
    HDF_CHUNK_DEF cd;
    int32 flags = 0;

    if (SDcheckempty(id, &empty) == FAIL || !empty)
        return 0;
    if (SDgetchunkinfo(id, &cd, &flags) != FAIL && (flags & HDF_CHUNK))
        return 0;
    return fill_value(id, nt, fv);
}

/* Elements where reads a and b differ (not written by the library) become
 * the fill value. */
static void fill_unwritten(int32 id, int32 nt, unsigned char *a, const unsigned char *b, size_t n)
{
    size_t es = (size_t)DFKNTsize(nt);
    unsigned char fv[16];

    fill_value(id, nt, fv);
    for (size_t i = 0; i + es <= n; i += es)
        if (memcmp(a + i, b + i, es) != 0)
            memcpy(a + i, fv, es);
}

/* A name of len bytes (it may hold NULs) as hex, "-" when empty. */
static void put_name_len(const char *name, size_t len)
{
    if (len == 0)
        putchar('-');
    for (size_t i = 0; i < len; i++)
        printf("%02x", (unsigned char)name[i]);
}

static void put_name(const char *name)
{
    put_name_len(name, strlen(name));
}

/* The name of SDS (dim 0) or dimension (dim 1) id, all of its bytes: a
 * buffer of SDgetnamelen's size, as SDgetinfo and SDdiminfo copy the
 * whole name, which H4_MAX_NC_NAME does not bound.  NULL on failure. */
static char *obj_name(int32 id, int dim, uint16 *len)
{
    int32 rank, dims[H4_MAX_VAR_DIMS], nt, nattrs;
    char *name;

    if (SDgetnamelen(id, len) == FAIL || (name = calloc((size_t)*len + 1, 1)) == NULL)
        return NULL;
    if ((dim ? SDdiminfo(id, name, dims, &nt, &nattrs)
             : SDgetinfo(id, name, &rank, dims, &nt, &nattrs)) == FAIL) {
        free(name);
        return NULL;
    }
    return name;
}

/* SDS index, selected and described (its name in a new buffer, *len
 * bytes), if it is a coordinate variable (coord) or not; else FAIL. */
static int32 select_kind(int32 sd, int32 index, int coord, char **name, uint16 *len,
                         int32 *rank, int32 *dims, int32 *nt, int32 *nattrs)
{
    int32 id = SDselect(sd, index);

    *name = NULL;
    if (id == FAIL)
        return FAIL;
    if ((*name = obj_name(id, 0, len)) == NULL ||
        SDgetinfo(id, NULL, rank, dims, nt, nattrs) == FAIL || (SDiscoordvar(id) > 0) != coord) {
        free(*name);
        *name = NULL;
        SDendaccess(id);
        return FAIL;
    }
    return id;
}

/* The -d line of SDS index, if it is a coordinate variable (coord) or not. */
static void dump_dims(int32 sd, int32 index, int coord)
{
    char *name;
    uint16 len;
    int32 rank, dims[H4_MAX_VAR_DIMS], nt, nattrs;
    int32 id = select_kind(sd, index, coord, &name, &len, &rank, dims, &nt, &nattrs);

    if (id == FAIL)
        return;
    printf("dims %d ", (int)index);
    put_name_len(name, len);
    putchar(' ');
    if (rank == 0)
        putchar('-');
    for (int32 k = 0; k < rank; k++) {
        uint16 dlen = 0;
        int32 dim = SDgetdimid(id, k);
        char *dname = dim == FAIL ? NULL : obj_name(dim, 1, &dlen);
        if (k)
            putchar(',');
        if (dname)
            put_name_len(dname, dlen);
        else
            put_name("?");
        free(dname);
    }
    putchar('\n');
    free(name);
    SDendaccess(id);
}

/* The block of SDS index, if it is a coordinate variable (coord) or not;
 * one that cannot be selected is an SDS that fails. */
static void dump_sds(int32 sd, int32 index, int coord)
{
    char *name = NULL;
    uint16 len = 0;
    int32 rank, dims[H4_MAX_VAR_DIMS], nt, nattrs;
    int32 id = SDselect(sd, index);

    if (id == FAIL || (name = obj_name(id, 0, &len)) == NULL ||
        SDgetinfo(id, NULL, &rank, dims, &nt, &nattrs) == FAIL) {
        if (!coord)
            printf("sds %d - - 0 0 fail\n\n", (int)index);
        if (id != FAIL)
            SDendaccess(id);
        free(name);
        return;
    }
    if ((SDiscoordvar(id) > 0) != coord) {
        free(name);
        SDendaccess(id);
        return;
    }
    size_t n = (size_t)DFKNTsize(nt);
    for (int32 i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    unsigned char *a = malloc(n ? n : 1), *b = malloc(n ? n : 1);
    if (a == NULL || b == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    const char *status = "ok";
    if (undefined_fill(id, nt))
        status = "undefined";
    else if (read_twice(id, dims, a, b, n) < 0)
        status = "fail";
    else if (memcmp(a, b, n) != 0) {
        status = "filled";
        fill_unwritten(id, nt, a, b, n);
    }
    printf("%s %d ", coord ? "coord" : "sds", (int)index);
    put_name_len(name, len);
    putchar(' ');
    for (int32 i = 0; i < rank; i++)
        printf("%s%ld", i ? "," : "", (long)dims[i]);
    printf(" %ld %zu %s\n", (long)nt, n, status);
    if (strcmp(status, "ok") == 0 || strcmp(status, "filled") == 0)
        put_hex(a, n);
    else
        putchar('\n');
    free(a);
    free(b);
    free(name);
    SDendaccess(id);
}

/* One attribute of object id: "PREFIX<name> <type> <count> <bytes>". */
static void put_attr(int32 id, int32 idx)
{
    char name[H4_MAX_NC_NAME + 1] = "";
    int32 nt, count;

    if (SDattrinfo(id, idx, name, &nt, &count) == FAIL || count < 0)
        return;
    size_t n = (size_t)count * (size_t)DFKNTsize(nt | DFNT_NATIVE);
    unsigned char *v = calloc(n + 1, 1);
    if (v == NULL || SDreadattr(id, idx, v) == FAIL) {
        free(v);
        return;
    }
    put_name(name);
    printf(" %ld %ld ", (long)nt, (long)count);
    put_hex(v, n);
    free(v);
}

/* The -a lines of SDS index, if it is a coordinate variable (coord) or not. */
static void dump_attrs(int32 sd, int32 index, int coord)
{
    char *name;
    uint16 len;
    int32 rank, dims[H4_MAX_VAR_DIMS], nt, nattrs, aidx;
    int32 id = select_kind(sd, index, coord, &name, &len, &rank, dims, &nt, &nattrs);

    if (id == FAIL)
        return;
    printf("sds %d ", (int)index);
    put_name_len(name, len);
    putchar('\n');
    for (int32 i = 0; i < nattrs; i++) {
        printf("attr %d ", (int)index);
        put_name_len(name, len);
        putchar(' ');
        put_attr(id, i);
    }
    /* SDgetfillvalue copies the whole attribute: a buffer of its size */
    char an[H4_MAX_NC_NAME + 1];
    int32 ant, count;
    if ((aidx = SDfindattr(id, "_FillValue")) != FAIL &&
        SDattrinfo(id, aidx, an, &ant, &count) != FAIL && count >= 0) {
        size_t n = (size_t)count * (size_t)DFKNTsize(ant | DFNT_NATIVE);
        unsigned char *v = calloc(n + 16, 1);
        if (v != NULL && SDgetfillvalue(id, v) != FAIL) {
            printf("fill %d ", (int)index);
            put_name_len(name, len);
            printf(" %ld ", (long)nt);
            put_hex(v, (size_t)DFKNTsize(nt | DFNT_NATIVE));
        }
        free(v);
    }
    free(name);
    SDendaccess(id);
}

int main(int argc, char **argv)
{
    int dims = argc == 3 && strcmp(argv[1], "-d") == 0;
    int attrs = argc == 3 && strcmp(argv[1], "-a") == 0;
    if (argc != 2 + dims + attrs) {
        fprintf(stderr, "usage: hdf4_oracle [-d | -a] FILE\n");
        return 2;
    }
    argv += dims + attrs;
    int32 sd = SDstart(argv[1], DFACC_READ);
    int32 nsds, ngattrs;
    if (sd == FAIL || SDfileinfo(sd, &nsds, &ngattrs) == FAIL) {
        fprintf(stderr, "%s: libhdf4 refuses the file (SDstart)\n", argv[1]);
        return 1;
    }
    /* external data (SDsetexternalfile) are looked for beside the file,
     * as hpcmount does: from its directory, also by base name */
    char *dir = strdup(argv[1]), *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        slash[slash == dir] = '\0';
    if (!dir || (slash && chdir(dir) != 0) || HXsetdir(".") == FAIL) {
        fprintf(stderr, "%s: cannot change to its directory\n", argv[1]);
        return 2;
    }
    free(dir);
    for (int32 i = 0; attrs && i < ngattrs; i++) {
        printf("gattr ");
        put_attr(sd, i);
    }
    for (int coord = 0; coord < 2; coord++)
        for (int32 i = 0; i < nsds; i++)
            (attrs ? dump_attrs : dims ? dump_dims : dump_sds)(sd, i, coord);
    SDend(sd);
    return 0;
}
