/* hdf5_ncdims.c - the names netCDF-4 gives the dimensions of a file's
 * datasets, for the xattr user.dims and the references' _ARRAY_DIMENSIONS
 * (xarray on the file names them so, through libnetcdf).
 *
 * libnetcdf 4.9 (libhdf5/hdf5open.c) reads the whole file at open, and so
 * does this file, once per container, on the first question:
 *
 * - every group's links in creation order (name order when not tracked),
 *   its child groups after all its other links; every link to a group,
 *   hard or soft, is a group of its own, except one to a group being read
 *   (a cycle: libnetcdf loops on it);
 * - a dataset whose CLASS is "DIMENSION_SCALE" (H5DSis_scale) is a
 *   dimension named after its link, of its first axis' length, unlimited
 *   when that axis is, with the id of its _Netcdf4Dimid or else the next
 *   free one; unless its NAME says "This is a netCDF dimension but not a
 *   netCDF variable", it is a variable too (a coordinate variable);
 * - a dataset is a variable when its type is an integer, a float or a
 *   string, or equals a committed type met before it;
 * - then, child groups first, each variable gets its dimensions: a 1-D
 *   dimension scale its own; else the ids of _Netcdf4Coordinates; else,
 *   when its first axis has a scale attached (DIMENSION_LIST), each axis'
 *   last attached scale, looked up in the group and those above; else
 *   "phony" dimensions: per axis the first dimension of the group of that
 *   length and unlimitedness the variable does not use yet, or a new one,
 *   phony_dim_N, N the next free id (so numbered per file, in this order).
 *
 * External links are followed as libnetcdf follows them (libhdf5 opens
 * the other file, as it finds it): what they lead to counts in the
 * numbering, and is named by its link's path ("xdim" lines of the root;
 * hpc_refs.c walks it in the other file, "xfile" names that file as
 * H5Fget_name does).  Objects of other files are keyed by their address
 * with the file's index above bit 56, apart from the file's own.
 *
 * A dataset with several hard links is a variable per link, each named
 * in its own group: the mount shows one file with the first link's names
 * (user.dims), the references each link's ("ldim" lines, hdf5_refs.c).
 *
 * Where a dataset's object header says all that counts (hdf5_ohdr.c: no
 * attribute libnetcdf looks at, a type class that decides), its header
 * is read without libhdf5 (read_header); everything else through
 * libhdf5.
 *
 * A variable libnetcdf would fail on (a scale missing on a later axis, an
 * unknown id) gets no names; xarray cannot open such a file anyway.  A
 * dataset of a type netCDF has none for is marked as no variable: xarray
 * does not show it.
 */
#include "hdf5_int.h"
#include "hpc_json.h"

#define DIM_WITHOUT_VARIABLE "This is a netCDF dimension but not a netCDF variable"
#define MAX_DEPTH 256             /* groups nested deeper: no names at all */
#define MAX_TEXT 4096             /* bytes of CLASS and NAME read */
#define FILE_SHIFT 56             /* an object's key: its file's index above this bit */
#define MAX_FILES 255             /* files met through external links, at most */

typedef struct ncdim {
    char *name;
    uint64_t len, addr;           /* addr: the scale's; 0 for a phony dimension */
    int id, unlim, dimonly;
} ncdim;

typedef enum { BY_NONE, BY_SELF, BY_IDS, BY_SCALES, BY_PHONY } nc_how;

typedef struct ncaxis {
    uint64_t len;
    uint64_t ref;                 /* BY_IDS: the id; BY_SCALES: the scale's address */
    int unlim;
    ncdim *dim;                   /* the answer */
} ncaxis;

typedef struct ncvar {
    uint64_t addr;
    char *path;                   /* of its link: the group's path, "/", its name */
    int rank, dimonly;
    int vialink;                  /* in a group reached through a soft link */
    int viaext;                   /* reached through an external link */
    int novar;                    /* of a type netCDF has none for: no variable */
    nc_how how;
    ncdim *self;                  /* BY_SELF */
    ncaxis *ax;
} ncvar;

typedef struct ncgrp {
    struct ncgrp *parent;
    char *path;                   /* "" for the root */
    int vialink;                  /* it or a group above is a soft link's target */
    int viaext;                   /* it or a group above is an external link's target */
    GPtrArray *dims, *vars, *children;
} ncgrp;

typedef struct ncwalk {
    h5 *h;
    int next_dimid;
    GArray *types;                /* hid_t: native types of the committed types met */
    GHashTable *by_id;            /* dimension id -> ncdim (the last of that id) */
    GHashTable *seen;             /* addresses of the groups being read: no cycles */
    GPtrArray *groups, *vars, *dims;   /* everything, to free */
    hid_t efile;                  /* access with the prefix of external raw data */
    GArray *files;                /* fileno of each file met; [0] the file's own */
    GString *xlines;              /* "xfile" lines of the external links followed */
    unsigned nobj;
    int over;                     /* too many objects or too deep: no names */
} ncwalk;

/* ---- attributes libnetcdf looks at ---------------------------------------- */

/* The first string of string attribute name of obj (fixed or variable
 * length), or NULL; *h5ds: it is fixed-length and NUL-terminated, as the
 * dimension scale API writes (and H5DSis_scale wants) it. */
static char *attr_string(hid_t obj, const char *name, int *h5ds)
{
    char *out = NULL;
    if (H5Aexists(obj, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1;
    hid_t s = a >= 0 ? H5Aget_space(a) : -1;
    hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    size_t size = t >= 0 ? H5Tget_size(t) : 0;
    *h5ds = t >= 0 && H5Tget_strpad(t) == H5T_STR_NULLTERM && H5Tis_variable_str(t) == 0;
    if (t < 0 || H5Tget_class(t) != H5T_STRING || n < 1 || n > 64 || size == 0)
        goto out;
    if (H5Tis_variable_str(t) > 0) {
        char **v = g_new0(char *, n);
        if (H5Aread(a, t, v) >= 0) {
            out = g_strdup(v[0] ? v[0] : "");
            H5Dvlen_reclaim(t, s, H5P_DEFAULT, v);
        }
        g_free(v);
    } else if (size <= MAX_TEXT) {
        char *v = g_malloc0((size_t)n * size + 1);
        if (H5Aread(a, t, v) >= 0)
            out = g_strndup(v, size);
        g_free(v);
    }
out:
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return out;
}

/* n ints of integer attribute name of obj into v (exactly n of them). */
static int attr_ints(hid_t obj, const char *name, int *v, int n)
{
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), s = a >= 0 ? H5Aget_space(a) : -1;
    int ok = s >= 0 && H5Sget_simple_extent_npoints(s) == n &&
             H5Aread(a, H5T_NATIVE_INT, v) >= 0;
    if (s >= 0)
        H5Sclose(s);
    if (a >= 0)
        H5Aclose(a);
    return ok ? 0 : 1;
}

/* H5DSis_scale's test: CLASS a NUL-terminated string that DIMENSION_SCALE
 * starts with (a variable-length one it compares as pointer bytes: taken
 * as no scale). */
static int is_scale(hid_t did)
{
    int h5ds = 0;
    char *c = attr_string(did, "CLASS", &h5ds);
    int yes = c && h5ds && !strncmp(c, "DIMENSION_SCALE", MIN(strlen("DIMENSION_SCALE"), strlen(c)));
    g_free(c);
    return yes;
}

/* The address of the last scale attached to each axis (0: none) from
 * DIMENSION_LIST; -1 when it cannot be read, 0 when it is missing. */
static int attached(hid_t did, int rank, uint64_t *scale)
{
    if (H5Aexists(did, "DIMENSION_LIST") <= 0)
        return 0;
    hid_t a = H5Aopen(did, "DIMENSION_LIST", H5P_DEFAULT), s = a >= 0 ? H5Aget_space(a) : -1;
    hid_t m = H5Tvlen_create(H5T_STD_REF_OBJ);
    hvl_t *v = g_new0(hvl_t, rank);
    int rc = s >= 0 && m >= 0 && H5Sget_simple_extent_npoints(s) == rank &&
             H5Aread(a, m, v) >= 0 ? 1 : -1;
    for (int d = 0; rc == 1 && d < rank; d++)
        scale[d] = v[d].len ? (uint64_t)((const hobj_ref_t *)v[d].p)[v[d].len - 1] : 0;
    if (rc == 1)
        H5Dvlen_reclaim(m, s, H5P_DEFAULT, v);
    g_free(v);
    if (m >= 0)
        H5Tclose(m);
    if (s >= 0)
        H5Sclose(s);
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

/* ---- the read: groups, dimensions, variables ------------------------------ */

static ncgrp *group_new(ncwalk *w, ncgrp *parent, const char *name)
{
    ncgrp *g = g_new0(ncgrp, 1);
    g->parent = parent;
    g->path = parent ? g_strconcat(parent->path, "/", name, NULL) : g_strdup("");
    g->dims = g_ptr_array_new();
    g->vars = g_ptr_array_new();
    g->children = g_ptr_array_new();
    g_ptr_array_add(w->groups, g);
    return g;
}

/* A dimension (nc4_dim_list_add): one of length 0 is unlimited, as
 * NC_UNLIMITED is 0, so no fixed axis of length 0 shares it. */
static ncdim *dim_new(ncwalk *w, ncgrp *g, const char *name, int id, uint64_t len, int unlim)
{
    ncdim *d = g_new0(ncdim, 1);
    d->name = g_strdup(name);
    d->id = id;
    d->len = len;
    d->unlim = unlim || len == 0;
    g_ptr_array_add(g->dims, d);
    g_ptr_array_add(w->dims, d);
    g_hash_table_insert(w->by_id, GINT_TO_POINTER(id), d);
    return d;
}

/* The dimension a scale dataset is (read_scale). */
static ncdim *scale_dim(ncwalk *w, ncgrp *g, hid_t did, const char *name, const ncaxis *ax0,
                        uint64_t addr)
{
    int id = -1, h5ds = 0;
    if (attr_ints(did, "_Netcdf4Dimid", &id, 1) == 0 && id >= 0)
        w->next_dimid = MAX(w->next_dimid, id + 1);
    else
        id = w->next_dimid++;
    ncdim *d = dim_new(w, g, name, id, ax0->len, ax0->unlim);
    d->addr = addr;
    char *n = attr_string(did, "NAME", &h5ds);
    d->dimonly = n && g_str_has_prefix(n, DIM_WITHOUT_VARIABLE);
    g_free(n);
    return d;
}

/* libnetcdf's variables: integers, floats, strings, and types equal to a
 * committed type met before (get_type_info2). */
static int nc_type_known(ncwalk *w, hid_t did)
{
    hid_t t = H5Dget_type(did), nt = t >= 0 ? H5Tget_native_type(t, H5T_DIR_DEFAULT) : -1;
    H5T_class_t cls = nt >= 0 ? H5Tget_class(nt) : H5T_NO_CLASS;
    int yes = cls == H5T_INTEGER || cls == H5T_FLOAT || cls == H5T_STRING;
    for (guint i = 0; !yes && nt >= 0 && i < w->types->len; i++)
        yes = H5Tequal(g_array_index(w->types, hid_t, i), nt) > 0;
    if (nt >= 0)
        H5Tclose(nt);
    if (t >= 0)
        H5Tclose(t);
    return yes;
}

/* How a variable finds its dimensions (read_var, get_scale_info); dim:
 * the dimension it is the scale of. */
static nc_how var_how(hid_t did, ncvar *v, const ncdim *dim)
{
    uint64_t file = v->addr >> FILE_SHIFT << FILE_SHIFT;   /* scales of its own file */
    int ids[H5S_MAX_RANK];
    uint64_t scale[H5S_MAX_RANK];
    int c = attr_ints(did, "_Netcdf4Coordinates", ids, v->rank);
    if (dim && v->rank == 1)
        return BY_SELF;
    if (c == 0) {
        for (int d = 0; d < v->rank; d++)
            v->ax[d].ref = (uint64_t)(int64_t)ids[d];
        return BY_IDS;
    }
    if (dim || c > 0)       /* libnetcdf fails on such a variable */
        return BY_NONE;
    /* H5DSget_num_scales of the first axis: an error counts as none */
    if (attached(did, v->rank, scale) <= 0 || !scale[0])
        return BY_PHONY;
    for (int d = 0; d < v->rank; d++)
        v->ax[d].ref = scale[d] ? scale[d] | file : 0;
    return BY_SCALES;
}

static ncvar *var_new(ncwalk *w, ncgrp *g, const char *name, uint64_t addr, int ext, int rank)
{
    ncvar *v = g_new0(ncvar, 1);
    v->addr = addr;
    v->path = g_strconcat(g->path, "/", name, NULL);
    v->rank = rank;
    v->vialink = g->vialink;
    v->viaext = g->viaext || ext;
    v->ax = g_new0(ncaxis, rank);
    g_ptr_array_add(w->vars, v);
    return v;
}

static void read_dataset(ncwalk *w, ncgrp *g, hid_t did, const char *name, uint64_t addr,
                         int ext)
{
    hsize_t len[H5S_MAX_RANK], max[H5S_MAX_RANK];
    hid_t s = H5Dget_space(did);
    int rank = s >= 0 ? H5Sget_simple_extent_dims(s, len, max) : -1;
    if (s >= 0)
        H5Sclose(s);
    if (rank < 0)
        return;
    ncvar *v = var_new(w, g, name, addr, ext, rank);
    for (int d = 0; d < rank; d++) {
        v->ax[d].len = len[d];
        v->ax[d].unlim = max[d] == H5S_UNLIMITED;
    }
    ncdim *dim = rank > 0 && is_scale(did) ? scale_dim(w, g, did, name, &v->ax[0], addr) : NULL;
    if (dim && dim->dimonly) {             /* not a variable: its own dimension */
        v->dimonly = 1;
        v->ax[0].dim = rank == 1 ? dim : NULL;
    } else if (!nc_type_known(w, did)) {
        v->novar = 1;
    } else if (rank > 0) {                 /* scalars have no dimensions to name */
        v->how = var_how(did, v, dim);
        g_ptr_array_add(g->vars, v);
    }
    v->self = dim;
}

/* read_dataset from the object header o where it says all that counts:
 * none of the attributes read_dataset asks libhdf5 for (o->attrs, see
 * h5_header_read: so no scale, and phony dimensions), a
 * type whose class decides whether it is a variable.  FALSE: ask
 * libhdf5.  Opening every dataset of a file made the first `ls -l` of a
 * mount of 10^4 datasets twice as slow. */
static gboolean read_header(ncwalk *w, ncgrp *g, const char *name, uint64_t addr,
                            const hpc_h5ohdr *o)
{
    int known = o->tclass == H5T_INTEGER || o->tclass == H5T_FLOAT || o->tclass == H5T_STRING;
    if (o->attrs || o->attrs_hidden || (!known && (o->tclass < 0 || w->types->len)))
        return FALSE;
    ncvar *v = var_new(w, g, name, addr, 0, MAX(o->rank, 0));
    for (int d = 0; d < v->rank; d++) {
        v->ax[d].len = o->dims[d];
        v->ax[d].unlim = o->unlim >> d & 1;
    }
    v->novar = !known;
    if (known && v->rank > 0) {            /* as read_dataset: scalars have none */
        v->how = BY_PHONY;
        g_ptr_array_add(g->vars, v);
    }
    return TRUE;
}

/* oi->addr made the object's key: its file's index (0: the file's own)
 * above FILE_SHIFT; FALSE past MAX_FILES files. */
static gboolean key_of(ncwalk *w, H5O_info_t *oi)
{
    guint i = 0;
    while (i < w->files->len && g_array_index(w->files, unsigned long, i) != oi->fileno)
        i++;
    if (i == w->files->len && i <= MAX_FILES)
        g_array_append_val(w->files, oi->fileno);
    oi->addr |= (haddr_t)i << FILE_SHIFT;
    return i <= MAX_FILES && oi->addr >> FILE_SHIFT == i;
}

static void hex_append(GString *o, const char *s)
{
    for (; *s; s++)
        g_string_append_printf(o, "%02x", (unsigned char)*s);
}

/* "xfile PATH FILE OBJECT" (each in hex) of the external link name of
 * group g: the file libhdf5 opened for it (H5Fget_name) and the object's
 * path there; FALSE when it leads nowhere. */
static gboolean ext_line(ncwalk *w, const ncgrp *g, hid_t gid, const char *name)
{
    hid_t o = H5Oopen(gid, name, H5P_DEFAULT);
    ssize_t n = o >= 0 ? H5Fget_name(o, NULL, 0) : -1;
    char *file = n > 0 ? g_malloc0((size_t)n + 1) : NULL, *val = NULL;
    const char *obj = NULL;
    H5L_info_t li;
    if (file && H5Fget_name(o, file, (size_t)n + 1) == n &&
        H5Lget_info(gid, name, &li, H5P_DEFAULT) >= 0 && li.type == H5L_TYPE_EXTERNAL) {
        val = g_malloc0(li.u.val_size + 1);
        if (H5Lget_val(gid, name, val, li.u.val_size, H5P_DEFAULT) < 0 ||
            H5Lunpack_elink_val(val, li.u.val_size, NULL, NULL, &obj) < 0)
            obj = NULL;
    }
    if (obj) {
        g_string_append(w->xlines, "xfile ");
        hex_append(w->xlines, g->path);
        hex_append(w->xlines, "/");
        hex_append(w->xlines, name);
        g_string_append_c(w->xlines, ' ');
        hex_append(w->xlines, file);
        g_string_append_c(w->xlines, ' ');
        hex_append(w->xlines, obj);
        g_string_append_c(w->xlines, '\n');
    }
    g_free(val);
    g_free(file);
    if (o >= 0)
        H5Oclose(o);
    return obj != NULL;
}

/* A child group, read after the group's other links. */
typedef struct later_grp {
    char *name;
    uint64_t addr;
    int soft, ext;
} later_grp;

typedef struct link_ctx {
    ncwalk *w;
    ncgrp *g;
    GArray *later;                /* later_grp, in link order */
} link_ctx;

static void later_clear(void *p)
{
    g_free(((later_grp *)p)->name);
}

static void later_add(ncwalk *w, link_ctx *k, const char *name, uint64_t addr, int soft, int ext)
{
    later_grp c = { NULL, addr, soft, ext };
    if (g_hash_table_contains(w->seen, GSIZE_TO_POINTER(addr)))
        return;
    c.name = g_strdup(name);
    g_array_append_val(k->later, c);
}

/* Hard link name to an object of the file's own (key: its address), read
 * from its header where that says enough; FALSE: ask libhdf5. */
static gboolean read_hard(ncwalk *w, link_ctx *k, const char *name, uint64_t addr)
{
    hpc_h5ohdr o;
    if (k->g->viaext || addr >> FILE_SHIFT || h5_header_read(w->h, addr, &o) != HPC_OK)
        return FALSE;
    if (o.kind == HPC_H5OBJ_GROUP) {
        later_add(w, k, name, addr, 0, 0);
        return TRUE;
    }
    return o.kind == HPC_H5OBJ_DATASET && read_header(w, k->g, name, addr, &o);
}

static herr_t read_link(hid_t gid, const char *name, const H5L_info_t *info, void *p)
{
    link_ctx *k = p;
    ncwalk *w = k->w;
    if (++w->nobj > INFO_MAX_OBJECTS) {
        w->over = 1;
        return 1;
    }
    /* soft and external links followed as libnetcdf follows them (a
     * user-defined one it cannot open) */
    if (info->type != H5L_TYPE_HARD && info->type != H5L_TYPE_SOFT &&
        info->type != H5L_TYPE_EXTERNAL)
        return 0;
    if (info->type == H5L_TYPE_HARD && read_hard(w, k, name, (uint64_t)info->u.address))
        return 0;
    H5O_info_t oi;
    hid_t o = H5I_INVALID_HID;
    int ext = info->type == H5L_TYPE_EXTERNAL;
    if (H5Oget_info_by_name2(gid, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
        !key_of(w, &oi) || (ext && !ext_line(w, k->g, gid, name)))
        return 0;
    if (oi.type == H5O_TYPE_GROUP) {
        /* every link to a group is a group of its own, as libnetcdf reads
         * it; one to a group being read is a cycle libnetcdf loops on */
        later_add(w, k, name, (uint64_t)oi.addr, info->type == H5L_TYPE_SOFT, ext);
    } else if (oi.type == H5O_TYPE_NAMED_DATATYPE && (o = H5Topen2(gid, name, H5P_DEFAULT)) >= 0) {
        hid_t nt = H5Tget_native_type(o, H5T_DIR_DEFAULT);
        if (nt >= 0)
            g_array_append_val(w->types, nt);
        H5Tclose(o);
    } else if (oi.type == H5O_TYPE_DATASET) {
        /* with the prefix of external raw data where the reader holds it
         * open so: libhdf5 refuses a dataset two prefixes */
        o = H5Dopen2(gid, name, w->h->dapl);
        o = o >= 0 ? o : H5Dopen2(gid, name, w->efile);
        if (o >= 0) {
            read_dataset(w, k->g, o, name, (uint64_t)oi.addr, ext);
            H5Dclose(o);
        }
    }
    return 0;
}

static void read_group(ncwalk *w, ncgrp *g, hid_t gid, int depth)
{
    unsigned order = 0;
    hid_t cpl = H5Gget_create_plist(gid);
    if (cpl >= 0) {
        H5Pget_link_creation_order(cpl, &order);
        H5Pclose(cpl);
    }
    link_ctx k = { w, g, g_array_new(FALSE, FALSE, sizeof(later_grp)) };
    g_array_set_clear_func(k.later, later_clear);
    H5_index_t idx = order & H5P_CRT_ORDER_TRACKED ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
    H5Literate(gid, idx, H5_ITER_INC, NULL, read_link, &k);
    w->over |= depth >= MAX_DEPTH && k.later->len;
    for (guint i = 0; !w->over && i < k.later->len; i++) {
        const later_grp *l = &g_array_index(k.later, later_grp, i);
        hid_t c = H5Gopen2(gid, l->name, H5P_DEFAULT);
        ncgrp *child = group_new(w, g, l->name);
        child->vialink = g->vialink || l->soft;
        child->viaext = g->viaext || l->ext;
        g_ptr_array_add(g->children, child);
        g_hash_table_add(w->seen, GSIZE_TO_POINTER(l->addr));
        if (c >= 0) {
            read_group(w, child, c, depth + 1);
            H5Gclose(c);
        }
        g_hash_table_remove(w->seen, GSIZE_TO_POINTER(l->addr));
    }
    g_array_free(k.later, TRUE);
}

/* ---- the match: each variable's dimensions -------------------------------- */

/* The dimension made of the scale at addr, in g or a group above. */
static ncdim *scale_of(ncgrp *g, uint64_t addr)
{
    for (; g; g = g->parent)
        for (guint i = 0; i < g->dims->len; i++) {
            ncdim *d = g_ptr_array_index(g->dims, i);
            if (d->addr == addr)
                return d;
        }
    return NULL;
}

/* Axis k's phony dimension (create_phony_dims). */
static ncdim *phony(ncwalk *w, ncgrp *g, const ncvar *v, int k)
{
    const ncaxis *a = &v->ax[k];
    for (guint i = 0; i < g->dims->len; i++) {
        ncdim *d = g_ptr_array_index(g->dims, i);
        int used = 0;
        for (int j = 0; j < k; j++)
            used |= v->ax[j].dim == d;
        if (d->len == a->len && d->unlim == a->unlim && !used)
            return d;
    }
    char *name = g_strdup_printf("phony_dim_%d", w->next_dimid);
    ncdim *d = dim_new(w, g, name, w->next_dimid++, a->len, a->unlim);
    g_free(name);
    return d;
}

static void match_var(ncwalk *w, ncgrp *g, ncvar *v)
{
    for (int k = 0; k < v->rank; k++) {
        ncaxis *a = &v->ax[k];
        switch (v->how) {
        case BY_SELF: a->dim = k == 0 ? v->self : NULL; break;
        case BY_IDS: a->dim = g_hash_table_lookup(w->by_id, GINT_TO_POINTER((int)a->ref)); break;
        case BY_SCALES: a->dim = a->ref ? scale_of(g, a->ref) : NULL; break;
        case BY_PHONY: a->dim = phony(w, g, v, k); break;
        case BY_NONE: a->dim = NULL; break;
        }
    }
}

static void match_group(ncwalk *w, ncgrp *g)
{
    for (guint i = 0; i < g->children->len; i++)
        match_group(w, g_ptr_array_index(g->children, i));
    for (guint i = 0; i < g->vars->len; i++)
        match_var(w, g, g_ptr_array_index(g->vars, i));
}

/* ---- the answers ------------------------------------------------------------ */

static void ncdims_free(gpointer p)
{
    h5_ncdims *n = p;
    g_strfreev(n->names);
    g_free(n->len);
    if (n->links)
        g_string_free(n->links, TRUE);
    g_free(n);
}

/* An unlimited dimension without a variable is as long as the longest
 * variable along it (nc4_find_dim_len). */
static void dimonly_lengths(ncwalk *w)
{
    for (guint i = 0; i < w->vars->len; i++) {
        const ncvar *v = g_ptr_array_index(w->vars, i);
        for (int k = 0; !v->dimonly && k < v->rank; k++) {
            ncdim *d = v->ax[k].dim;
            if (d && d->dimonly && d->unlim)
                d->len = MAX(d->len, v->ax[k].len);
        }
    }
}

static int named(const ncvar *v)
{
    int k = 0;
    while (k < v->rank && v->ax[k].dim)
        k++;
    return v->rank > 0 && k == v->rank;
}

/* "WHAT PATH LEN NAME" per axis of v: PATH its link's path in hex. */
static void path_dims(GString *o, const char *what, const ncvar *v)
{
    for (int k = 0; k < v->rank; k++) {
        g_string_append(o, what);
        hex_append(o, v->path);
        g_string_append_printf(o, " %" G_GUINT64_FORMAT " ", v->ax[k].dim->len);
        hpc_json_str(o, v->ax[k].dim->name);
        g_string_append_c(o, '\n');
    }
}

/* Each link's names of a dataset with several links that are variables:
 * "ldim PATH LEN NAME" per axis, PATH its link's path in hex. */
static void link_lines(ncwalk *w, GHashTable *out)
{
    GHashTable *count = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < w->vars->len; i++) {
        const ncvar *v = g_ptr_array_index(w->vars, i);
        gpointer key = GSIZE_TO_POINTER(v->addr);
        if (named(v) && !v->viaext)
            g_hash_table_insert(count, key, GINT_TO_POINTER(GPOINTER_TO_INT(
                                g_hash_table_lookup(count, key)) + 1));
    }
    for (guint i = 0; i < w->vars->len; i++) {
        const ncvar *v = g_ptr_array_index(w->vars, i);
        h5_ncdims *n = g_hash_table_lookup(out, GSIZE_TO_POINTER(v->addr));
        if (!n || !named(v) || v->viaext ||
            GPOINTER_TO_INT(g_hash_table_lookup(count, GSIZE_TO_POINTER(v->addr))) < 2)
            continue;
        n->links = n->links ? n->links : g_string_new(NULL);
        path_dims(n->links, "ldim ", v);
    }
    g_hash_table_destroy(count);
}

/* "xdim PATH LEN NAME" per axis of each variable reached through an
 * external link (it is in another file, or the file's own again). */
static void ext_lines(ncwalk *w)
{
    for (guint i = 0; i < w->vars->len; i++) {
        const ncvar *v = g_ptr_array_index(w->vars, i);
        if (v->viaext && named(v))
            path_dims(w->xlines, "xdim ", v);
    }
}

/* Every variable whose axes all have a dimension, and every dataset that
 * is no variable, by address: the first link met outside soft-linked
 * groups names a dataset of several (the mount's path of it; link_lines
 * each link). */
static void answer(ncwalk *w, GHashTable *out)
{
    dimonly_lengths(w);
    for (guint i = 0; i < 2 * w->vars->len; i++) {
        const ncvar *v = g_ptr_array_index(w->vars, i % w->vars->len);
        int k, is = named(v);
        if ((!is && !v->novar) || v->viaext || v->vialink != (i >= w->vars->len) ||
            g_hash_table_contains(out, GSIZE_TO_POINTER(v->addr)))
            continue;
        h5_ncdims *n = g_new0(h5_ncdims, 1);
        n->rank = v->rank;
        n->dimonly = v->dimonly;
        n->novar = v->novar;
        n->names = is ? g_new0(char *, v->rank + 1) : NULL;
        n->len = is ? g_new0(uint64_t, v->rank) : NULL;
        for (k = 0; is && k < v->rank; k++) {
            n->names[k] = g_strdup(v->ax[k].dim->name);
            n->len[k] = v->ax[k].dim->len;
        }
        g_hash_table_insert(out, GSIZE_TO_POINTER(v->addr), n);
    }
    link_lines(w, out);
    ext_lines(w);
}

static void walk_free(ncwalk *w)
{
    for (guint i = 0; i < w->groups->len; i++) {
        ncgrp *g = g_ptr_array_index(w->groups, i);
        g_ptr_array_free(g->dims, TRUE);
        g_ptr_array_free(g->vars, TRUE);
        g_ptr_array_free(g->children, TRUE);
        g_free(g->path);
        g_free(g);
    }
    for (guint i = 0; i < w->vars->len; i++) {
        ncvar *v = g_ptr_array_index(w->vars, i);
        g_free(v->ax);
        g_free(v->path);
        g_free(v);
    }
    for (guint i = 0; i < w->dims->len; i++) {
        ncdim *d = g_ptr_array_index(w->dims, i);
        g_free(d->name);
        g_free(d);
    }
    g_ptr_array_free(w->groups, TRUE);
    g_ptr_array_free(w->vars, TRUE);
    g_ptr_array_free(w->dims, TRUE);
    g_hash_table_destroy(w->by_id);
    g_hash_table_destroy(w->seen);
    g_array_free(w->files, TRUE);
    if (w->efile >= 0)
        H5Pclose(w->efile);
}

/* The whole file, read once as libnetcdf reads it.  Lock held. */
static void ncdims_build(h5 *h)
{
    ncwalk w = { .h = h, .types = g_array_new(FALSE, FALSE, sizeof(hid_t)),
                 .by_id = g_hash_table_new(g_direct_hash, g_direct_equal),
                 .seen = g_hash_table_new(g_direct_hash, g_direct_equal),
                 .groups = g_ptr_array_new(), .vars = g_ptr_array_new(),
                 .dims = g_ptr_array_new(), .efile = h5_dset_access_external(),
                 .files = g_array_new(FALSE, FALSE, sizeof(unsigned long)),
                 .xlines = g_string_new(NULL) };
    h->ncdims = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, ncdims_free);
    h->nctypes = w.types;
    hid_t root = H5Gopen2(h->file, "/", H5P_DEFAULT);
    H5O_info_t oi;
    w.over = root < 0 || H5Oget_info2(root, &oi, H5O_INFO_BASIC) < 0 || !key_of(&w, &oi);
    if (!w.over) {
        g_hash_table_add(w.seen, GSIZE_TO_POINTER(oi.addr));
        read_group(&w, group_new(&w, NULL, NULL), root, 0);
    }
    if (root >= 0)
        H5Gclose(root);
    if (w.over && w.groups->len)
        g_string_append_printf(h->warnings, "warning: more than %u objects or groups nested "
                               "deeper than %d: no netCDF-4 dimension names (user.dims)\n",
                               INFO_MAX_OBJECTS, MAX_DEPTH);
    if (!w.over) {
        match_group(&w, g_ptr_array_index(w.groups, 0));
        answer(&w, h->ncdims);
    }
    h->ncext = g_string_free(w.xlines, w.over);
    walk_free(&w);
}

const h5_ncdims *h5_ncdims_of(h5 *h, uint64_t addr)
{
    if (!h->ncdims)
        ncdims_build(h);
    return g_hash_table_lookup(h->ncdims, GSIZE_TO_POINTER(addr));
}

const char *h5_ncext(h5 *h)
{
    if (!h->ncdims)
        ncdims_build(h);
    return h->ncext;
}

const GArray *h5_nctypes(h5 *h)
{
    if (!h->ncdims)
        ncdims_build(h);
    return h->nctypes;
}

void h5_ncdims_free(h5 *h)
{
    if (h->ncdims)
        g_hash_table_destroy(h->ncdims);
    h->ncdims = NULL;
    g_clear_pointer(&h->ncext, g_free);
    for (guint i = 0; h->nctypes && i < h->nctypes->len; i++)
        H5Tclose(g_array_index(h->nctypes, hid_t, i));
    if (h->nctypes)
        g_array_free(h->nctypes, TRUE);
    h->nctypes = NULL;
}
