/* dhdf_set.c - the open of a distributed HDF set: the main file's
 * File_Info and chunk tables, the arrays and their pieces, the check of
 * the whole set (set ids, file ids, bounds, overlaps, holes, the pieces'
 * types and sizes, each AHF against its record) and the static tree.
 * Every call here runs with dhdf_hdf_lock held.
 */
#include "config.h"
#include "dhdf_int.h"
#include "hpc_bytes.h"

#include <inttypes.h>
#include <string.h>

#define MAX_WATCHED_FILES 256    /* sets up to this many files: all watched for changes */

/* Open associated file k and check that it is there and an HDF4 file.
 * A source of the container is watched for changes by the core (reads
 * fail once it changed); that costs a descriptor per file, so only sets of
 * at most MAX_WATCHED_FILES are watched. */
static int ahf_source(hpc_container *c, dhdf *d, uint32_t k, const dhdf_finfo *listed,
                      GError **err)
{
    dhdf_file *f = &d->files[k];
    hpc_source tmp = { .fd = -1 }, *src = &tmp;
    GError *e = NULL;
    int watched = d->nfiles <= MAX_WATCHED_FILES;
    if (watched)
        src = c->host->add_source(c, f->path, &e);
    else if (hpc_source_open(f->path, &tmp, &e) != HPC_OK)
        src = NULL;
    if (!src) {
        int rc = hpc_fail(err, HPC_E_CORRUPT, c->path, "File_Info.FileName", listed->off,
                          "associated file %" PRId32 " '%s' is missing: %s", f->id, f->name,
                          e->message);
        g_error_free(e);
        return rc;
    }
    f->size = src->size;
    unsigned char head[4] = { 0 };
    int isdf = src->size >= 4 && hpc_source_pread(src, head, 4, 0) == HPC_OK &&
               memcmp(head, "\x0e\x03\x13\x01", 4) == 0;
    if (!watched)
        hpc_source_close(&tmp);
    if (!isdf)
        return hpc_fail(err, HPC_E_CORRUPT, f->path, "magic", 0,
                        "associated file %" PRId32 " of %s is not an HDF4 file", f->id, c->path);
    return HPC_OK;
}

/* The associated file's set attributes and File_Info name this set and
 * this file. */
static int ahf_identity(int32 sd, const dhdf *d, const dhdf_file *f, const char *mhf,
                        GError **err)
{
    char *setid = NULL;
    int32_t fid;
    uint64_t aoff[2];
    GArray *fi = NULL;
    int rc = dhdf_read_set_attrs(sd, f->path, f->size, &setid, &fid, aoff, err);
    if (rc != HPC_OK)
        goto out;
    if (!setid || strcmp(setid, d->setid) != 0) {
        rc = hpc_fail(err, HPC_E_CORRUPT, f->path, DHDF_ATTR_SETID, aoff[0],
                      "'%s' does not match the main file's '%s': the file belongs to another set",
                      setid ? setid : "(none)", d->setid);
        goto out;
    }
    if (fid != f->id) {
        rc = hpc_fail(err, HPC_E_CORRUPT, f->path, DHDF_ATTR_FILEID, aoff[1],
                      "%" PRId32 ", but %s lists the file as %" PRId32, fid, mhf, f->id);
        goto out;
    }
    if ((rc = dhdf_read_vdatas(f->path, f->size, &fi, NULL, err)) != HPC_OK)
        goto out;
    int has0 = 0, hasme = 0;
    for (guint i = 0; i < fi->len; i++) {
        has0 |= g_array_index(fi, dhdf_finfo, i).id == 0;
        hasme |= g_array_index(fi, dhdf_finfo, i).id == f->id;
    }
    if (!has0 || !hasme)
        rc = hpc_fail(err, HPC_E_CORRUPT, f->path, VD_FILEINFO, 0,
                      "lacks the record of the main file (id 0) or of itself (id %" PRId32 ")",
                      f->id);
out:
    dhdf_finfo_free(fi);
    g_free(setid);
    return rc;
}

/* The SDS of sds named name, or NULL. */
static const dhdf_sds_info *sds_named(const GArray *sds, const char *name)
{
    const dhdf_sds_info *coord = NULL;    /* a coordinate variable only if no SDS is named so */
    for (guint j = 0; j < sds->len; j++) {
        const dhdf_sds_info *s = &g_array_index(sds, dhdf_sds_info, j);
        if (strcmp(s->name, name) == 0 && !s->coord)
            return s;
        if (strcmp(s->name, name) == 0 && !coord)
            coord = s;
    }
    return coord;
}

/* The one-line error for a piece whose SDS has another type or shape than
 * the chunk table says; the offset is that of the SDS's data. */
static int piece_mismatch(int32 sd, const dhdf_array *a, size_t pi, const dhdf_sds_info *s,
                          const char *path, const char *mhf, GError **err)
{
    char *want = dhdf_shape_text(a->rank, a->boxes[pi].size);
    GString *have = g_string_new(NULL);
    for (int32 dd = 0; dd < s->rank && dd < H4_MAX_VAR_DIMS; dd++)
        g_string_append_printf(have, "%s%d", dd ? "," : "", (int)s->dims[dd]);
    int32 off = 0, len = 0, id = SDselect(sd, s->index);
    if (id != FAIL) {
        if (SDgetdatainfo(id, NULL, 0, 1, &off, &len) < 1 || off < 0)
            off = 0;
        SDendaccess(id);
    }
    int rc = hpc_fail(err, HPC_E_CORRUPT, path, a->pieces[pi].name, (uint64_t)off,
                      "piece of '%s' has type %d shape %s, the chunk table of %s says "
                      "type %d shape %s", a->name, (int)(s->nt & DFNT_MASK), have->str,
                      mhf, (int)a->nt, want);
    g_string_free(have, TRUE);
    g_free(want);
    return rc;
}

/* Resolve piece pi of array a, stored in associated file f: its SDS, type
 * and shape, storage and attributes. */
static int piece_resolve(hpc_container *c, int32 sd, const GArray *sds, dhdf_array *a,
                         size_t pi, const dhdf_file *f, GPtrArray *warnings, GError **err)
{
    dhdf_piece *p = &a->pieces[pi];
    const dhdf_sds_info *s = sds_named(sds, p->name);
    if (!s) {
        char *fn = g_strdup_printf("%s[%zu].ChunkName", a->name, pi);
        int rc = hpc_fail(err, HPC_E_CORRUPT, c->path, fn, p->rec_off,
                          "piece '%s' is not an SDS of associated file %" PRId32 " %s",
                          p->name, f->id, f->path);
        g_free(fn);
        return rc;
    }
    int same = (s->nt & DFNT_MASK) == (a->nt & DFNT_MASK) && s->rank == (int32)a->rank;
    for (unsigned dd = 0; same && dd < a->rank; dd++)
        same = (uint64_t)s->dims[dd] == a->boxes[pi].size[dd];
    if (!same)
        return piece_mismatch(sd, a, pi, s, f->path, c->path, err);
    p->sds_index = s->index;
    dhdf_piece_storage(sd, f->path, f->size, p, a->nt, a->esize, a->rank, a->boxes[pi].size,
                       warnings);
    int32 id = SDselect(sd, s->index);
    if (id == FAIL)
        return HPC_OK;
    p->dimnames = dhdf_dim_names(id, s->rank);
    if (p->ino) {
        dhdf_dims_xattr(c->tree, p->ino, p->dimnames);
        dhdf_attrs_to_xattrs(c->tree, p->ino, id, s->nattrs, f->size);
    }
    SDendaccess(id);
    return HPC_OK;
}

/* Check associated file k (listed in the MHF's File_Info) and resolve its
 * pieces.  hdf_lock held. */
static int check_ahf(hpc_container *c, dhdf *d, uint32_t k, const dhdf_finfo *listed,
                     GError **err)
{
    dhdf_file *f = &d->files[k];
    int rc = ahf_source(c, d, k, listed, err);
    if (rc != HPC_OK)
        return rc;
    c->host->note_file(c, f->path);
    int32 sd = SDstart(f->path, DFACC_READ);
    if (sd == FAIL)
        return hpc_fail(err, HPC_E_CORRUPT, f->path, NULL, 0, "not a readable HDF4 file");
    GArray *sds = NULL;
    rc = ahf_identity(sd, d, f, c->path, err);
    if (rc == HPC_OK)
        rc = dhdf_list_sds(sd, f->path, &sds, err);
    for (uint32_t ai = 0; ai < d->narrays && rc == HPC_OK; ai++) {
        dhdf_array *a = &d->arrays[ai];
        for (size_t pi = 0; pi < a->npieces && rc == HPC_OK; pi++)
            if (a->pieces[pi].file == k)
                rc = piece_resolve(c, sd, sds, a, pi, f, d->warnings, err);
    }
    if (sds)
        g_array_free(sds, TRUE);
    SDend(sd);
    return rc;
}

/* Resolve FileName against the MHF's directory. */
static char *resolve(const char *mhf, const char *name)
{
    if (g_path_is_absolute(name))
        return g_strdup(name);
    char *dir = g_path_get_dirname(mhf);
    char *p = g_build_filename(dir, name, NULL);
    g_free(dir);
    return p;
}

/* The pieces of a lie inside it, do not overlap, and (unless -o
 * allowholes) cover it. */
static int check_cover(hpc_container *c, dhdf_array *a, const dhdf_vtable *t, GError **err)
{
    const char *mhf = c->path;
    int rc;
    size_t x = 0, y = 0;
    switch (hpc_dhdf_check_pieces(a->rank, a->dims, a->boxes, a->npieces, &a->holes, &x, &y)) {
    case HPC_DHDF_OUTSIDE: {
        char *fn = g_strdup_printf("%s[%zu].DimSizes", a->name, x);
        rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, dhdf_vt_off(t, (int32)x, 2),
                      "piece %zu '%s' exceeds the array", x, a->pieces[x].name);
        g_free(fn);
        return rc;
    }
    case HPC_DHDF_OVERLAP: {
        char *o1 = dhdf_shape_text(a->rank, a->boxes[x].origin), *o2 = dhdf_shape_text(a->rank, a->boxes[y].origin);
        char *fn = g_strdup_printf("%s[%zu].Origins", a->name, y);
        rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, dhdf_vt_off(t, (int32)y, 3),
                      "pieces %zu '%s' (origin %s) and %zu '%s' (origin %s) overlap",
                      x, a->pieces[x].name, o1, y, a->pieces[y].name, o2);
        g_free(fn);
        g_free(o1);
        g_free(o2);
        return rc;
    }
    case HPC_DHDF_FINE:
        break;
    }
    if (a->holes && !c->opts.allowholes)
        return hpc_fail(err, HPC_E_CORRUPT, mhf, a->name, t->data_off,
                        "the %zu pieces leave %" PRIu64 " of %" PRIu64 " elements uncovered "
                        "(holes); mount with -o allowholes to read them as zeros",
                        a->npieces, a->holes, a->nbytes / a->esize);
    return HPC_OK;
}

/* Decode the chunk table of distributed array a and check its pieces. */
static int load_pieces(hpc_container *c, dhdf *d, dhdf_array *a, dhdf_ctable *ct, GError **err)
{
    const char *mhf = c->path;
    dhdf_vtable *t = &ct->t;
    a->layout = (hpc_dhdf_layout){ t->order[1], t->order[2], t->order[3] };
    a->npieces = (size_t)t->nrec;
    a->boxes = g_new0(hpc_dhdf_box, a->npieces ? a->npieces : 1);
    a->pieces = g_new0(dhdf_piece, a->npieces ? a->npieces : 1);
    GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
    int rc = HPC_OK;
    for (size_t i = 0; i < a->npieces; i++) {
        char name[HPC_DHDF_MAX_NAME + 1], why[512];
        const char *field = NULL;
        int32_t fid;
        rc = hpc_dhdf_decode_record(t->buf + i * t->recsize, &a->layout, a->rank, a->dims, &fid,
                                    name, &a->boxes[i], &field, why, sizeof why);
        unsigned fno = 3;
        for (unsigned k = 0; k < 3; k++)
            if (strcmp(field ? field : "", dhdf_chunk_fields[k]) == 0)
                fno = k;
        if (rc != HPC_OK) {
            char *fn = g_strdup_printf("%s[%zu].%s", a->name, i, field);
            rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, dhdf_vt_off(t, (int32)i, fno), "%s", why);
            g_free(fn);
            break;
        }
        a->pieces[i].name = g_strdup(name);
        a->pieces[i].sds = FAIL;
        a->pieces[i].rec_off = dhdf_vt_off(t, (int32)i, 1);
        a->pieces[i].file = UINT32_MAX;
        for (uint32_t k = 1; k < d->nfiles; k++)
            if (d->files[k].id == fid)
                a->pieces[i].file = k;
        if (a->pieces[i].file == UINT32_MAX) {
            char *fn = g_strdup_printf("%s[%zu].DHDF_FileId", a->name, i);
            rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, dhdf_vt_off(t, (int32)i, 0),
                          "piece '%s' is in file %" PRId32 ", which File_Info does not list",
                          name, fid);
            g_free(fn);
            break;
        }
        if (!g_hash_table_add(names, a->pieces[i].name)) {
            char *fn = g_strdup_printf("%s[%zu].ChunkName", a->name, i);
            rc = hpc_fail(err, HPC_E_CORRUPT, mhf, fn, dhdf_vt_off(t, (int32)i, 1),
                          "piece name '%s' is used twice", name);
            g_free(fn);
            break;
        }
    }
    g_hash_table_destroy(names);
    if (rc != HPC_OK)
        return rc;
    return check_cover(c, a, t, err);
}

/* The directory NAME.pieces of distributed array ai: one file a piece,
 * with its shape, origin and file as attributes. */
static int tree_add_pieces(hpc_container *c, dhdf *d, uint32_t ai, GError **err)
{
    dhdf_array *a = &d->arrays[ai];
    char *dir = g_strdup_printf("%s" DHDF_PIECES_SUFFIX, a->name);
    hpc_ino dino, ino;
    int rc = hpc_tree_add(c->tree, HPC_INO_ROOT, dir, HPC_MODE_DIR, 0, 0, &dino);
    if (rc != HPC_OK)
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, a->name, 0,
                      "'%s' clashes with another entry", dir);
    g_free(dir);
    if (rc != HPC_OK)
        return rc;
    a->piece_space = g_new0(uint64_t, a->npieces ? a->npieces : 1);
    for (size_t pi = 0; pi < a->npieces; pi++) {
        dhdf_piece *p = &a->pieces[pi];
        uint64_t nb = a->esize;
        for (unsigned dd = 0; dd < a->rank; dd++)
            nb *= a->boxes[pi].size[dd];
        a->piece_space[pi] = hpc_cache_space_new();
        rc = hpc_tree_add(c->tree, dino, p->name, HPC_MODE_FILE, nb,
                          ((uint64_t)ai << 32) | (uint64_t)(pi + 1), &ino);
        if (rc != HPC_OK)
            return hpc_fail(err, rc, c->path, a->name, 0, "cannot add piece '%s'", p->name);
        dhdf_array_xattrs(c->tree, ino, a->rank, a->boxes[pi].size, a->nt);
        char *o = dhdf_shape_text(a->rank, a->boxes[pi].origin);
        hpc_tree_add_xattr(c->tree, ino, "user.origin", o, strlen(o));
        g_free(o);
        const dhdf_file *f = &d->files[p->file];
        hpc_tree_add_xattr(c->tree, ino, "user.file", f->name, strlen(f->name));
        p->ino = ino;        /* its attributes come with the check of its AHF */
    }
    return HPC_OK;
}

/* The SDS's own attributes and dimension names (for pieces: those of
 * the MHF's SDS), by its index: SDnametoindex would give a coordinate
 * variable of the same name (a dimension named like the SDS) when that
 * comes first. */
static void tree_sds_attrs(hpc_tree *t, hpc_ino ino, int32 mhf_sd, dhdf_array *a,
                           uint64_t fsize)
{
    int32 id = SDselect(mhf_sd, a->sds_index);
    if (id == FAIL)
        return;
    int32 rk, dm[H4_MAX_VAR_DIMS], nt, na;
    if (SDgetinfo(id, NULL, &rk, dm, &nt, &na) != FAIL) {
        dhdf_attrs_to_xattrs(t, ino, id, na, fsize);
        a->dimnames = a->scalar ? NULL : dhdf_dim_names(id, rk);
        dhdf_dims_xattr(t, ino, a->dimnames);
    }
    SDendaccess(id);
}

/* Build the tree.  hdf_lock held (attributes are read again). */
static int build_tree(hpc_container *c, dhdf *d, int32 mhf_sd, GError **err)
{
    hpc_tree *t = hpc_tree_new();
    int32 nds, ngattr;
    c->tree = t;
    if (SDfileinfo(mhf_sd, &nds, &ngattr) != FAIL)
        dhdf_attrs_to_xattrs(t, HPC_INO_ROOT, mhf_sd, ngattr, d->files[0].size);
    for (uint32_t ai = 0; ai < d->narrays; ai++) {
        dhdf_array *a = &d->arrays[ai];
        hpc_ino ino;
        a->space = hpc_cache_space_new();
        if (hpc_tree_add(t, HPC_INO_ROOT, a->name, HPC_MODE_FILE, a->nbytes,
                         (uint64_t)ai << 32, &ino) != HPC_OK) {
            if (a->distributed)
                return hpc_fail(err, HPC_E_CORRUPT, c->path, a->name, 0,
                                "the array's name clashes with another entry");
            g_ptr_array_add(d->warnings, g_strdup_printf("SDS '%s' not shown: its name "
                                                         "clashes with another entry", a->name));
            continue;
        }
        dhdf_array_xattrs(t, ino, a->scalar ? 0 : a->rank, a->dims, a->nt);
        if (a->h4name)
            hpc_tree_add_xattr(t, ino, "user.h4name", a->h4name, a->h4namelen);
        tree_sds_attrs(t, ino, mhf_sd, a, d->files[0].size);
        int rc = a->distributed ? tree_add_pieces(c, d, ai, err) : HPC_OK;
        if (rc != HPC_OK)
            return rc;
    }
    return HPC_OK;
}

/* The chunk table of name, or NULL. */
static dhdf_ctable *table_named(GPtrArray *tables, const char *name)
{
    for (guint j = 0; tables && j < tables->len; j++) {
        dhdf_ctable *x = g_ptr_array_index(tables, j);
        if (strcmp(x->t.name, name) == 0)
            return x;
    }
    return NULL;
}

/* Add SDS s (chunk table ct, or NULL) as the next array, named name; a
 * plain SDS we cannot serve (its type, a negative size) is left out with
 * a warning. */
static int add_array(hpc_container *c, dhdf *d, int32 sd, const dhdf_sds_info *s, dhdf_ctable *ct,
                     const char *name, GError **err)
{
    dhdf_array *a = &d->arrays[d->narrays];
    GError *e = NULL;
    /* a plain SDS of rank 0 holds one element (SDreaddata reads it):
     * read as rank 1, shown as a scalar (user.shape "") */
    static const int32 one[1] = { 1 };
    a->scalar = !ct && s->rank == 0;
    int rc = dhdf_sds_shape(c->path, s->name, a->scalar ? 1 : s->rank, a->scalar ? one : s->dims,
                            s->nt, ct == NULL, &a->rank, a->dims, &a->esize, &a->nbytes, &e);
    if (rc != HPC_OK && ct) {
        g_propagate_error(err, e);
        return rc;
    }
    if (rc != HPC_OK) {
        g_ptr_array_add(d->warnings, g_strdup_printf("SDS '%s' not shown: %s", s->name,
                                                     e->message));
        g_clear_error(&e);
        return HPC_OK;
    }
    a->name = g_strdup(name);
    a->sds_index = s->index;
    a->nt = s->nt & DFNT_MASK;
    a->coord = s->coord;
    d->narrays++;
    if (ct) {
        ct->used = 1;
        a->distributed = 1;
        return load_pieces(c, d, a, ct, err);
    }
    a->npieces = 1;
    a->boxes = g_new0(hpc_dhdf_box, 1);
    a->pieces = g_new0(dhdf_piece, 1);
    memcpy(a->boxes[0].size, a->dims, sizeof a->dims);
    a->pieces[0] = (dhdf_piece){ .file = 0, .sds_index = s->index, .name = g_strdup(s->name) };
    dhdf_piece_storage(sd, c->path, d->files[0].size, &a->pieces[0], a->nt, a->esize, a->rank,
                       a->dims, d->warnings);
    return HPC_OK;
}

/* ---- names ------------------------------------------------------------ */

#define FILE_NAME_MAX 255        /* bytes of a file name (NAME_MAX) */

/* The name each SDS is served under, in the order arrays are added. */
typedef struct sds_naming {
    const dhdf_sds_info *s;
    char *name;                  /* its file's name */
    char *why;                   /* why that is not s->name, or NULL */
} sds_naming;

static void naming_clear(gpointer p)
{
    sds_naming *n = p;
    g_free(n->name);
    g_free(n->why);
}

/* Why SDS s cannot be served under its own name (taken: the names given
 * so far, each to SDS index + 1, 0 for a pieces directory), or NULL. */
static char *rename_why(const dhdf_sds_info *s, GHashTable *taken)
{
    gpointer holder;
    if (s->namelen > FILE_NAME_MAX)
        return g_strdup_printf("its name of %u bytes is longer than a file name (%d)",
                               (unsigned)s->namelen, FILE_NAME_MAX);
    if (strlen(s->name) != (size_t)s->namelen)
        return g_strdup("its name holds a NUL byte");
    if (!s->name[0])
        return g_strdup("its name is empty");
    if (strchr(s->name, '/'))
        return g_strdup("its name holds '/'");
    if (!hpc_dhdf_name_ok(s->name))
        return g_strdup("its name is '.' or '..'");
    if (strcmp(s->name, ".info") == 0)
        return g_strdup("its name is the mount's .info");
    if (!g_hash_table_lookup_extended(taken, s->name, NULL, &holder))
        return NULL;
    if (GPOINTER_TO_INT(holder) == 0)
        return g_strdup("its name is that of a distributed array's pieces directory");
    return g_strdup_printf("SDS %d has its name%s", GPOINTER_TO_INT(holder) - 1,
                           s->coord ? " (it is the scale of a dimension of that name)" : "");
}

/* The name of SDS s when its own cannot be served: its bytes with '/'
 * and NUL as '_', cut (not inside a UTF-8 character) to leave room for
 * "~INDEX", or "~INDEX_K" (K = 2, 3, ...) while a name in taken has that
 * form.  What follows the last '~' differs from SDS to SDS and from K to
 * K, so no two SDSs get one name and the loop ends within |taken| + 1
 * tries. */
static char *alias_name(const dhdf_sds_info *s, GHashTable *taken)
{
    for (unsigned k = 1;; k++) {
        char suffix[32];
        if (k == 1)
            g_snprintf(suffix, sizeof suffix, "~%d", (int)s->index);
        else
            g_snprintf(suffix, sizeof suffix, "~%d_%u", (int)s->index, k);
        size_t keep = MIN((size_t)s->namelen, FILE_NAME_MAX - strlen(suffix));
        while (keep > 0 && keep < (size_t)s->namelen &&
               ((unsigned char)s->name[keep] & 0xc0) == 0x80)
            keep--;
        GString *n = g_string_sized_new(keep + sizeof suffix);
        for (size_t i = 0; i < keep; i++)
            g_string_append_c(n, s->name[i] == '/' || !s->name[i] ? '_' : s->name[i]);
        g_string_append(n, suffix);
        if (!g_hash_table_contains(taken, n->str))
            return g_string_free(n, FALSE);
        g_string_free(n, TRUE);
    }
}

/* The pieces directories of the distributed arrays (an SDS named like a
 * chunk table), so that no SDS takes their names. */
static void reserve_pieces(const GArray *list, GPtrArray *tables, GHashTable *taken)
{
    for (guint i = 0; tables && i < list->len; i++) {
        const dhdf_sds_info *s = &g_array_index(list, dhdf_sds_info, i);
        if (!s->coord && table_named(tables, s->name))
            g_hash_table_insert(taken, g_strdup_printf("%s" DHDF_PIECES_SUFFIX, s->name),
                                GINT_TO_POINTER(0));
    }
}

/* The names of the SDSs of list, in the order arrays are added (every SDS
 * in index order, then every coordinate variable, which so never takes
 * an SDS's name): an SDS keeps its own when that can be a file and no SDS
 * before it has it (libhdf4's lookup by name, SDnametoindex, finds that
 * one), the others get an alias (alias_name) once every name kept is
 * known.  The same file gives the same names. */
static GArray *name_sdss(const GArray *list, GPtrArray *tables)
{
    GArray *out = g_array_new(FALSE, TRUE, sizeof(sds_naming));
    g_array_set_clear_func(out, naming_clear);
    GHashTable *taken = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    reserve_pieces(list, tables, taken);
    for (guint i = 0; i < 2 * list->len; i++) {
        const dhdf_sds_info *s = &g_array_index(list, dhdf_sds_info, i % list->len);
        if (s->coord != (i >= list->len))
            continue;
        sds_naming n = { .s = s, .why = rename_why(s, taken) };
        if (!n.why) {
            n.name = g_strdup(s->name);
            g_hash_table_insert(taken, g_strdup(s->name), GINT_TO_POINTER(s->index + 1));
        }
        g_array_append_val(out, n);
    }
    for (guint i = 0; i < out->len; i++) {
        sds_naming *n = &g_array_index(out, sds_naming, i);
        if (n->name)
            continue;
        n->name = alias_name(n->s, taken);
        g_hash_table_insert(taken, g_strdup(n->name), GINT_TO_POINTER(n->s->index + 1));
    }
    g_hash_table_destroy(taken);
    return out;
}

/* A name for a line of .info: control bytes and '\' as \xNN, so that a
 * name is one line however odd its bytes. */
static char *info_name(const char *s, size_t len)
{
    GString *o = g_string_sized_new(len);
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)s[i];
        if (b < 0x20 || b == 0x7f || b == '\\')
            g_string_append_printf(o, "\\x%02x", b);
        else
            g_string_append_c(o, (char)b);
    }
    return g_string_free(o, FALSE);
}

/* Add SDS n->s as served under n->name; one served under another name
 * than its own keeps that in user.h4name and a note in .info says why. */
static int add_named(hpc_container *c, dhdf *d, int32 sd, const sds_naming *n,
                     GPtrArray *tables, GError **err)
{
    const dhdf_sds_info *s = n->s;
    dhdf_ctable *ct = s->coord ? NULL : table_named(tables, s->name);
    if (ct && n->why)
        return hpc_fail(err, HPC_E_CORRUPT, c->path, s->name, 0, "distributed array name is "
                        "empty, invalid or used twice: %s", n->why);
    uint32_t before = d->narrays;
    int rc = add_array(c, d, sd, s, ct, n->name, err);
    if (d->narrays == before || !n->why)
        return rc;
    dhdf_array *a = &d->arrays[before];
    a->h4name = g_memdup2(s->name, (gsize)s->namelen + 1);
    a->h4namelen = s->namelen;
    char *real = info_name(s->name, s->namelen), *served = info_name(n->name, strlen(n->name));
    g_ptr_array_add(d->notes, g_strdup_printf("%s %d '%s' served as '%s': %s",
                                              s->coord ? "coordinate variable" : "SDS",
                                              (int)s->index, real, served, n->why));
    g_free(real);
    g_free(served);
    return rc;
}

/* Arrays of the MHF (or of a plain HDF4 file): every SDS, then every
 * coordinate variable, each under its name (name_sdss); an SDS is
 * distributed when a chunk table of its name exists. */
static int collect_arrays(hpc_container *c, dhdf *d, int32 sd, GPtrArray *tables, GError **err)
{
    GArray *sds;
    int rc = dhdf_list_sds(sd, c->path, &sds, err);
    if (rc != HPC_OK)
        return rc;
    d->arrays = g_new0(dhdf_array, sds->len + 1);
    GArray *names = name_sdss(sds, tables);
    for (guint i = 0; i < names->len && rc == HPC_OK; i++)
        rc = add_named(c, d, sd, &g_array_index(names, sds_naming, i), tables, err);
    for (guint j = 0; rc == HPC_OK && tables && j < tables->len; j++) {
        dhdf_ctable *x = g_ptr_array_index(tables, j);
        if (!x->used)
            rc = hpc_fail(err, HPC_E_CORRUPT, c->path, x->t.name, x->t.data_off,
                          "chunk table '%s' has no SDS of that name in the main file", x->t.name);
    }
    g_array_free(names, TRUE);
    g_array_free(sds, TRUE);
    return rc;
}

/* The file table: the main file first, then the associated files in
 * File_Info's order (a plain file or an AHF mounted alone: itself). */
static int set_files(hpc_container *c, dhdf *d, const GArray *finfo, uint64_t size,
                     GError **err)
{
    d->nfiles = 1;
    if (finfo) {
        int has0 = 0;
        for (guint i = 0; i < finfo->len; i++)
            has0 |= g_array_index(finfo, dhdf_finfo, i).id == 0;
        if (!has0)
            return hpc_fail(err, HPC_E_CORRUPT, c->path, VD_FILEINFO, 0,
                            "no record of the main file itself (DHDF_FileId 0)");
        d->nfiles = finfo->len;
    }
    d->files = g_new0(dhdf_file, d->nfiles);
    d->files[0] = (dhdf_file){ .id = d->fileid < 0 ? 0 : d->fileid, .path = g_strdup(c->path),
                               .size = size, .sd = FAIL };
    for (uint32_t i = 0, k = 1; finfo && i < finfo->len; i++) {
        const dhdf_finfo *r = &g_array_index(finfo, dhdf_finfo, i);
        dhdf_file *f = r->id == 0 ? &d->files[0] : &d->files[k++];
        f->id = r->id;
        f->name = g_strdup(r->name);
        f->host = g_strdup(r->host);
        if (r->id != 0) {
            f->path = resolve(c->path, r->name);
            f->sd = FAIL;
        }
    }
    if (!d->files[0].name)
        d->files[0].name = g_path_get_basename(c->path);
    return HPC_OK;
}

/* Check every associated file against its File_Info record. */
static int check_ahfs(hpc_container *c, dhdf *d, const GArray *finfo, GError **err)
{
    int rc = HPC_OK;
    for (uint32_t k = 1; rc == HPC_OK && k < d->nfiles; k++) {
        const dhdf_finfo *listed = NULL;
        for (guint i = 0; i < finfo->len; i++)
            if (g_array_index(finfo, dhdf_finfo, i).id == d->files[k].id)
                listed = &g_array_index(finfo, dhdf_finfo, i);
        rc = check_ahf(c, d, k, listed, err);
    }
    return rc;
}

/* Open the file as HDF4 and read the set's description.  hdf_lock held. */
int dhdf_open_set(hpc_container *c, dhdf *d, const hpc_source *src, GError **err)
{
    GPtrArray *tables = g_ptr_array_new_with_free_func(dhdf_ctable_free);
    GArray *finfo = NULL;
    uint32 maj, min, rel;
    char ver[128] = "";   /* LIBVSTR_LEN (80) + 1 is enough */
    Hgetlibversion(&maj, &min, &rel, ver);
    d->libversion = g_strdup_printf("%u.%u.%u", maj, min, rel);
    c->host->note_file(c, c->path);
    int32 sd = SDstart(c->path, DFACC_READ);
    if (sd == FAIL) {
        g_ptr_array_free(tables, TRUE);
        return hpc_fail(err, HPC_E_CORRUPT, c->path, NULL, 0, "not a readable HDF4 SD file");
    }
    uint64_t aoff[2];
    int rc = dhdf_read_set_attrs(sd, c->path, src->size, &d->setid, &d->fileid, aoff, err);
    if (rc != HPC_OK)
        goto out;
    d->role = !d->setid ? ROLE_PLAIN : d->fileid == 0 ? ROLE_MAIN : ROLE_ASSOC;
    /* decoded compressed pieces may take as much memory as the block cache */
    d->whole_max = c->opts.cache_size;
    if (d->role == ROLE_MAIN && (rc = dhdf_read_vdatas(c->path, src->size, &finfo, tables, err)) != HPC_OK)
        goto out;
    rc = set_files(c, d, finfo, src->size, err);
    if (rc == HPC_OK)
        rc = collect_arrays(c, d, sd, d->role == ROLE_MAIN ? tables : NULL, err);
    if (rc == HPC_OK)
        rc = build_tree(c, d, sd, err);
    if (rc == HPC_OK)
        rc = check_ahfs(c, d, finfo, err);
out:
    SDend(sd);
    dhdf_finfo_free(finfo);
    g_ptr_array_free(tables, TRUE);
    return rc;
}
