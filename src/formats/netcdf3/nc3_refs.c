/* nc3_refs.c - where a netCDF-3 variable's values lie, for references
 * (hpc_format.chunks; hpc_refs_chunks.c reads the lines, which the HDF5
 * reader's hdf5_refs.c lists).  A fixed variable is one contiguous
 * big-endian extent; a record variable one chunk per record, its slab in
 * that record.  Its dimensions and attributes go with it as typed values,
 * as netCDF4-python gives them, so xarray over the references sees what
 * it sees on the file. */
#include "nc3_int.h"
#include "hpc_json.h"

/* A real as JSON: NaN and the infinities bare, as zarr's attributes
 * hold them. */
static void json_real(GString *o, double x, int single)
{
    (void)single;
    hpc_json_double(o, x, HPC_JSON_NAN_BARE);
}

/* One attribute's "attr NAME: VALUE" line: text for chars (NULs dropped
 * and bytes that are no UTF-8 replaced, as netCDF4-python decodes them),
 * a number for one value, else a list. */
static void attr_line(const nc3_att *a, GString *out)
{
    g_string_append(out, "attr ");
    hpc_json_str(out, a->name);
    g_string_append(out, ": ");
    if (a->type == NC_CHAR) {
        GString *t = g_string_new(NULL);
        for (uint64_t i = 0; i < a->nelems; i++)
            if (a->values[i])
                g_string_append_c(t, (char)a->values[i]);
        char *text = g_utf8_make_valid(t->str, (gssize)t->len);   /* U+FFFD, as Python's */
        hpc_json_str(out, text);
        g_free(text);
        g_string_free(t, TRUE);
    } else {
        g_string_append(out, a->nelems == 1 ? "" : "[");
        for (uint64_t i = 0; i < a->nelems; i++) {
            g_string_append(out, i ? ", " : "");
            nc3_append_number(out, a->type, a->values, i, json_real);
        }
        g_string_append(out, a->nelems == 1 ? "" : "]");
    }
    g_string_append_c(out, '\n');
}

static void attr_lines(const nc3_att *atts, uint32_t n, GString *out)
{
    g_string_append(out, "attrs\n");
    for (uint32_t i = 0; i < n; i++)
        if (nc3_type_size(atts[i].type))
            attr_line(&atts[i], out);
}

/* "ncfill HEX": a variable's _FillValue of its own type, its stored
 * bytes, which zarr holds as fill_value (for chars the bytes xarray masks
 * on the file; JSON text would never equal them). */
static void fill_line(const nc3_var *v, GString *out)
{
    for (uint32_t i = 0; i < v->natts; i++) {
        const nc3_att *a = &v->atts[i];
        if (strcmp(a->name, "_FillValue") || a->type != v->type || a->nelems != 1)
            continue;
        g_string_append(out, "ncfill ");
        for (unsigned k = 0; k < nc3_type_size(a->type); k++)
            g_string_append_printf(out, "%02x", a->values[k]);
        g_string_append_c(out, '\n');
    }
}

/* "dim LEN NAME" per axis: the record dimension as long as numrecs. */
static void dim_lines(const nc3_hdr *h, const nc3_var *v, GString *out)
{
    for (uint32_t d = 0; d < v->ndims; d++) {
        const nc3_dim *dim = &h->dims[v->dimids[d]];
        g_string_append_printf(out, "dim %" PRIu64 " ", v->is_rec && d == 0 ? h->numrecs : dim->len);
        hpc_json_str(out, dim->name);
        g_string_append_c(out, '\n');
    }
}

static void chunk_lines(const nc3_hdr *h, const nc3_var *v, GString *out)
{
    g_string_append(out, "layout chunked\nchunk 1");
    for (uint32_t d = 1; d < v->ndims; d++)
        g_string_append_printf(out, ",%" PRIu64, h->dims[v->dimids[d]].len);
    g_string_append(out, "\nfill none\n");
    for (uint64_t r = 0; r < h->numrecs; r++) {
        g_string_append_printf(out, "c %" PRIu64 " %" PRIu64 " 0 %" PRIu64,
                               v->begin + r * h->recsize, v->slab, r);
        for (uint32_t d = 1; d < v->ndims; d++)
            g_string_append(out, ",0");
        g_string_append_c(out, '\n');
    }
}

int nc3_chunks(hpc_container *c, hpc_ino ino, GString *out)
{
    nc3_state *s = nc3_state_get(c->priv);
    const nc3_hdr *h = s->h;
    const nc3_var *v = ino >= NC3_INO_VAR && ino - NC3_INO_VAR < h->nvars
                       ? &h->vars[ino - NC3_INO_VAR] : NULL;
    int rc = v && !v->hidden ? HPC_OK : HPC_E_NOENT;
    if (ino == HPC_INO_ROOT) {
        attr_lines(h->gatts, h->ngatts, out);
        rc = HPC_OK;
    } else if (rc == HPC_OK) {
        dim_lines(h, v, out);
        attr_lines(v->atts, v->natts, out);
        fill_line(v, out);
        g_string_append_printf(out, "order %s\n", nc3_type_size(v->type) > 1 ? "be" : "none");
        if (v->is_rec)
            chunk_lines(h, v, out);
        else
            g_string_append_printf(out, "layout contiguous\naddr %" PRIu64 " %" PRIu64 "\n",
                                   v->begin, v->slab);
    }
    nc3_state_unref(s);
    return rc;
}
