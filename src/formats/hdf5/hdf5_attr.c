/* hdf5_attr.c - HDF5 attributes as xattrs user.attr.<name>; user.shape,
 * user.dtype and user.dims (netCDF-4's dimension names) of datasets. */
#include "hdf5_int.h"

/* ---- attributes as xattrs --------------------------------------------- */

/* The shape of attribute aid where its value's text does not tell it
 * (docs/hdf5.md): one element is a scalar, more a 1-D array; otherwise
 * (an array of one, any other rank, a null dataspace) its shape as
 * user.shape gives one, "null", or NULL. */
static char *attr_shape(hid_t aid)
{
    hid_t s = H5Aget_space(aid);
    hsize_t dims[H5S_MAX_RANK];
    H5S_class_t cls = s >= 0 ? H5Sget_simple_extent_type(s) : H5S_NO_CLASS;
    int rank = cls == H5S_SIMPLE ? H5Sget_simple_extent_dims(s, dims, NULL) : 0;
    char *shape = NULL;
    if (cls == H5S_NULL) {
        shape = g_strdup("null");
    } else if (rank > 1 || (rank == 1 && dims[0] == 1)) {
        GString *t = g_string_new(NULL);
        for (int i = 0; i < rank; i++)
            g_string_append_printf(t, "%s%" PRIu64, i ? "," : "", (uint64_t)dims[i]);
        shape = g_string_free(t, FALSE);
    }
    if (s >= 0)
        H5Sclose(s);
    return shape;
}

/* user.attrshape.<name> of attribute aid, where attr_shape gives one. */
static void attr_shape_add(attr_ctx *a, hid_t aid, const char *name)
{
    char *shape = attr_shape(aid);
    if (!shape)
        return;
    char *xname = g_strconcat("user.attrshape.", name, NULL);
    if (strlen(xname) > XATTR_NAME_MAX_LEN) {
        g_string_append_printf(a->notes, "warning: %s: attribute name '%.40s...' is too long "
                               "for the xattr of its shape (%s): not shown\n", a->path, name, shape);
        g_free(xname);
        g_free(shape);
        return;
    }
    g_ptr_array_add(a->names, xname);
    g_ptr_array_add(a->values, g_string_new(shape));
    g_free(shape);
}

/* The length of value v, that is not text where dtype is set, cut to
 * Linux's limit: bytes of esize-byte strings to whole elements, hex
 * (esize 0) to whole elements at a ','. */
static size_t attr_cut(const GString *v, const GString *dtype, size_t esize)
{
    if (v->len <= XATTR_VALUE_MAX)
        return v->len;
    if (esize)
        return XATTR_VALUE_MAX / esize * esize;
    if (!dtype->len)
        return XATTR_VALUE_MAX;
    const char *c = g_strrstr_len(v->str, XATTR_VALUE_MAX + 1, ",");
    return c ? (size_t)(c - v->str) : 0;
}

/* Add attribute aid's value v as xattr user.attr.<name>, with the xattrs
 * that tell how to read it: its shape, and dtype where it is not text
 * (hpc_h5t_attr_text). */
static void attr_add(attr_ctx *a, hid_t aid, const char *name, GString *v,
                     const GString *dtype, size_t esize)
{
    size_t max = attr_cut(v, dtype, esize);
    if (v->len > max) {
        g_string_truncate(v, max);
        g_string_append_printf(a->notes, "warning: %s: attribute '%s' cut to %zu bytes\n",
                               a->path, name, max);
    }
    g_ptr_array_add(a->names, g_strconcat("user.attr.", name, NULL));
    g_ptr_array_add(a->values, v);
    attr_shape_add(a, aid, name);
    if (dtype->len) {
        g_ptr_array_add(a->names, g_strconcat("user.attrdtype.", name, NULL));
        g_ptr_array_add(a->values, g_string_new(dtype->str));
    }
}

/* Attribute aid as its text (hpc_h5t_attr_text) or bytes. */
static void attr_text(attr_ctx *a, hid_t aid, const char *name)
{
    GString *v = g_string_new(NULL), *dtype = g_string_new(NULL);
    size_t esize = 0;
    int rc = aid >= 0 ? hpc_h5t_attr_text(aid, a->h->src->size, v, dtype, &esize) : HPC_E_IO;
    /* the longest name the attribute's xattrs need: a value without its
     * dtype would read as text */
    size_t xlen = strlen(dtype->len ? "user.attrdtype." : "user.attr.") + strlen(name);
    if (rc != HPC_OK) {
        char *why = h5_errtext();
        if (!a->failed)
            a->failed = g_strdup_printf("attribute '%s': %s", name, why);
        g_free(why);
    } else if (xlen > XATTR_NAME_MAX_LEN) {
        g_string_append_printf(a->notes, "warning: %s: attribute name '%.40s...' is too "
                               "long for an xattr: not shown\n", a->path, name);
    } else if (esize > XATTR_VALUE_MAX) {   /* not one whole element would fit */
        g_string_append_printf(a->notes, "warning: %s: attribute '%s': strings of %zu bytes "
                               "are longer than an xattr: not shown\n", a->path, name, esize);
    } else if (dtype->len > XATTR_VALUE_MAX || (dtype->len && !esize && v->len &&
                                                 attr_cut(v, dtype, 0) == 0)) {
        g_string_append_printf(a->notes, "warning: %s: attribute '%s': its dtype or one "
                               "element is longer than an xattr: not shown\n", a->path, name);
    } else {
        attr_add(a, aid, name, v, dtype, esize);
        v = NULL;
    }
    if (v)
        g_string_free(v, TRUE);
    g_string_free(dtype, TRUE);
}

static herr_t attr_visit(hid_t loc, const char *name, const H5A_info_t *info, void *p)
{
    (void)info;
    attr_ctx *a = p;
    hid_t aid = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = aid >= 0 ? H5Aget_type(aid) : H5I_INVALID_HID;
    if (t >= 0 && h5_attrvar_is(t))
        h5_attrvar_add(a, loc, aid, name, t);
    else
        attr_text(a, aid, name);
    if (t >= 0)
        H5Tclose(t);
    if (aid >= 0)
        H5Aclose(aid);
    return 0;
}

static void gstring_free(gpointer p)
{
    g_string_free(p, TRUE);
}

/* Read the attributes of object oid (node id) into a; a damaged attribute
 * is noted for .info and left out.  Lock held. */
void h5_attrs_read(h5 *h, uint32_t id, hid_t oid, attr_ctx *a)
{
    char *path = h5_node_path(h, id);
    hsize_t at = 0;
    a->h = h;
    a->names = g_ptr_array_new_with_free_func(g_free);
    a->values = g_ptr_array_new_with_free_func(gstring_free);
    a->notes = g_string_new(NULL);
    a->path = path;
    if (H5Aiterate2(oid, H5_INDEX_NAME, H5_ITER_INC, &at, attr_visit, a) < 0 && !a->failed) {
        char *why = h5_errtext();
        a->failed = g_strdup_printf("attributes: %s", why);
        g_free(why);
    }
    if (a->failed)
        h5_note_damaged(h, id, "cannot read", a->failed);
    if (a->notes->len && !NODE(h, id)->noted) {
        NODE(h, id)->noted = 1;
        g_string_append(h->warnings, a->notes->str);
    }
    a->path = NULL;
    g_free(path);
}

void h5_attrs_clear(attr_ctx *a)
{
    if (a->names)
        g_ptr_array_free(a->names, TRUE);
    if (a->values)
        g_ptr_array_free(a->values, TRUE);
    if (a->notes)
        g_string_free(a->notes, TRUE);
    g_free(a->failed);
}

int h5_xattrs(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx)
{
    h5 *h = c->priv;
    attr_ctx a = { 0 };
    char *shape = NULL, *dtype = NULL, *dims = NULL, *extra = NULL;
    const char *extra_name = NULL;
    int rc = HPC_OK, null_space = 0, eol_nul = 0;
    h5_quiet();
    g_mutex_lock(&h->lock);
    uint32_t id = h5_ino_to_id(ino, h);
    uint8_t kind = id == NO_PARENT ? 0 : NODE(h, id)->kind;
    if (kind == K_PART || kind == K_PDIR) {
        h5_handle *hd;
        rc = h5_handle_get(h, h5_part_dataset(h, id), &hd);
        const h5_part *p = rc == HPC_OK ? h5_part_of(hd->d, NODE(h, id)->addr) : NULL;
        if (p && p->dtype && p->shape) {
            dtype = g_strdup(p->dtype);
            shape = g_strdup(p->shape);
            extra_name = p->extra_name;
            extra = g_strdup(p->extra);
            eol_nul = p->eol_nul;
        }
        if (rc == HPC_OK)
            h5_handle_put(h, hd);
    } else if (kind == K_DATASET || kind == K_VLEN) {
        h5_handle *hd;
        rc = h5_handle_get(h, id, &hd);
        if (rc == HPC_OK) {
            shape = g_strdup(hd->d->shape);
            dtype = g_strdup(hd->d->dtype);
            /* what a reader of the bytes needs besides: the kind of
             * references, the dtype of a sequence's values */
            const h5_part *p = h5_part_of(hd->d, 0);
            extra_name = hd->d->ref ? "user.h5ref" : p ? p->extra_name : NULL;
            extra = g_strdup(hd->d->ref ? hd->d->ref : p ? p->extra : NULL);
            null_space = hd->d->null_space;
            eol_nul = hd->d->eol_nul;
            h5_attrs_read(h, id, hd->d->id, &a);
            h5_handle_put(h, hd);
            const h5_ncdims *n = h->walking ? NULL : h5_ncdims_of(h, NODE(h, id)->addr);
            dims = n && n->names ? g_strjoinv(",", n->names) : NULL;
        }
    } else if (kind == K_GROUP) {
        hid_t g = h5_group_open(h, id);
        if (g >= 0) {
            h5_attrs_read(h, id, g, &a);
            H5Oclose(g);
        }
    } else if (id == NO_PARENT) {
        rc = HPC_E_NOENT;
    }
    g_mutex_unlock(&h->lock);
    int stop = 0;
    if (shape)
        stop = fn(ctx, "user.shape", shape, strlen(shape)) ||
               fn(ctx, "user.dtype", dtype, strlen(dtype));
    if (dims && !stop)
        stop = fn(ctx, "user.dims", dims, strlen(dims));
    if (extra_name && extra && !stop)
        stop = fn(ctx, extra_name, extra, strlen(extra));
    if (null_space && !stop)
        stop = fn(ctx, "user.h5space", "null", 4);
    if (eol_nul && !stop)             /* elements of text end with NUL */
        stop = fn(ctx, "user.h5eol", "nul", 3);
    for (guint i = 0; !stop && a.names && i < a.names->len; i++) {
        GString *v = g_ptr_array_index(a.values, i);
        stop = fn(ctx, g_ptr_array_index(a.names, i), v->str, v->len);
    }
    h5_attrs_clear(&a);
    g_free(shape);
    g_free(dtype);
    g_free(dims);
    g_free(extra);
    return rc;
}
