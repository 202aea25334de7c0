/* nc3_refs.c - where a netCDF-3 variable's values lie, for references
 * (hpc_format.chunks; hpc_refs_chunks.c reads the lines, which the HDF5
 * reader's hdf5_refs.c lists).  A fixed variable is one contiguous
 * big-endian extent; a record variable one chunk per record, its slab in
 * that record. */
#include "nc3_int.h"

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
    if (rc == HPC_OK) {
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
