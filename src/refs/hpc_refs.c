/* hpc_refs.c - kerchunk-style references of a tree (hpc_refs.h).
 *
 * An array's chunks come from where its bytes lie: the extents of
 * hpc_mount_map (verbatim bytes), split into a regular grid along the
 * first axis, or the reader's chunk table (hpc_mount_chunks: HDF5 chunked
 * datasets, with their codecs).  Bytes the reader computes are written
 * inline up to the threshold, else the array is listed as not covered.
 *
 * This file walks the tree; hpc_refs_chunks.c writes the arrays of a
 * reader's chunk table, hpc_refs_array.c the rest, and the text of every
 * reference (hpc_refs_int.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hpc_bytes.h"
#include "hpc_json.h"
#include "hpc_refs.h"
#include "hpc_refs_int.h"

#define MAX_LINKED (1u << 20)  /* nodes walked again through links to directories */

/* One array node at key (relative to the walk's root). */
static int do_array(hpc_refs *r, const hpc_stat *st, const char *key, const char *name,
                    GString *notes)
{
    hpc_refs_array a = { 0 };
    const char *why = hpc_refs_array_of(r->m, st, &a);
    gsize mark = r->refs->len;
    unsigned nmark = r->nrefs;
    int rc = HPC_OK, chunked = 0;
    if (!why)
        rc = hpc_refs_chunked(r, st->ino, key, name, &a, &why, &chunked);
    if (!why && rc == HPC_OK && !chunked && a.structured)
        why = "a structured type (compound or array) with no zarr dtype from its reader";
    if (!why && rc == HPC_OK && !chunked && a.object)
        why = "objects (user.dtype O) whose elements its reader does not list";
    if (!why && rc == HPC_OK && !chunked)
        rc = hpc_refs_mapped_array(r, st->ino, key, name, &a, &why);
    if (rc == 1) {                      /* became block arrays */
        rc = HPC_OK;
        goto out;
    }
    if (!why && rc == HPC_OK)
        rc = hpc_refs_zattrs(r, st->ino, key, name, &a, NULL);
    if (!why && rc == HPC_OK)
        r->narrays++;
    if (why) {                          /* drop what was written of it */
        g_string_truncate(r->refs, mark);
        r->nrefs = nmark;
        hpc_refs_note(r, notes, name, why);
    }
    if (rc == HPC_OK)
        rc = hpc_mount_sources_unchanged(r->m, st->ino);
out:
    hpc_refs_array_clear(&a);
    return rc;
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct dent {
    char *name;
    hpc_stat st;
} dent;

static int collect(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    (void)next;
    if (strcmp(name, ".") && strcmp(name, "..")) {
        dent e = { g_strdup(name), *st };
        g_array_append_val((GArray *)p, e);
    }
    return 0;
}

static int dent_cmp(const void *a, const void *b)
{
    return strcmp(((const dent *)a)->name, ((const dent *)b)->name);
}

static void dent_clear(void *p)
{
    g_free(((dent *)p)->name);
}

static int walk_dir(hpc_refs *r, const hpc_stat *dir, const char *key, const char *path);

/* The root's .info (once), where readers name damaged nodes and why. */
static const char *root_info(hpc_refs *r)
{
    hpc_stat st;
    if (r->info || hpc_mount_resolve(r->m, "/.info", &st) != HPC_OK || !S_ISREG(st.mode))
        return r->info ? r->info : "";
    size_t len = (size_t)MIN(st.size, (uint64_t)(1u << 20)), got = 0;
    r->info = g_malloc0(len + 1);
    if (hpc_mount_read(r->m, st.ino, r->info, len, 0, &got) != HPC_OK)
        got = 0;
    r->info[got] = '\0';
    return r->info;
}

/* Why node path cannot be referenced: the error, and the line of .info
 * that names it ("damaged: PATH (...): why") when there is one. */
static char *damage_why(hpc_refs *r, const char *path, int rc)
{
    char *head = g_strdup_printf("damaged: %s ", path);
    const char *l = strstr(root_info(r), head), *why = l ? strstr(l, "): ") : NULL;
    const char *end = why ? strchr(why, '\n') : NULL;
    char *out = why ? g_strdup_printf("cannot be read (%s): %.*s", hpc_strerror(rc),
                                      (int)(end ? end - why - 3 : (ptrdiff_t)strlen(why + 3)),
                                      why + 3)
                    : g_strdup_printf("cannot be read (%s)", hpc_strerror(rc));
    g_free(head);
    return out;
}

/* A node whose reads fail (a damaged dataset, a group that cannot be
 * listed) is left out with a note; other errors (memory, a source that
 * changed, the root's own structure) refuse the document. */
static int node_damaged(int rc)
{
    return rc == HPC_E_IO || rc == HPC_E_CORRUPT || rc == HPC_E_CHECKSUM;
}

/* A symbolic link to a directory (an HDF5 soft link to a group, or a
 * group's further hard link): the directory at path again under the
 * link's name (key), as libnetcdf shows it; not one being walked (a
 * cycle), and at most MAX_LINKED nodes so (links to links multiply). */
static int linked_dir(hpc_refs *r, const hpc_stat *st, const char *key, const char *path,
                      const char *name, GString *notes)
{
    if (g_hash_table_contains(r->walking, &st->ino)) {
        hpc_refs_note(r, notes, name, "a symbolic link to a directory it is in (a cycle)");
        return HPC_OK;
    }
    if (r->linked > MAX_LINKED) {
        hpc_refs_note(r, notes, name, "a symbolic link to a directory, past the bound of "
                      "nodes walked again through such links");
        return HPC_OK;
    }
    uint64_t before = r->nodes;
    int rc = walk_dir(r, st, key, path);
    r->linked += r->nodes - before + 1;
    return rc;
}

/* Whether file lies in the directory the references may name files in:
 * that of the file given, or one below it. */
static gboolean ext_allowed(hpc_refs *r, const char *file)
{
    char *real = realpath(file, NULL);
    gboolean yes = real && r->xdir && g_str_has_prefix(real, r->xdir) &&
                   real[strlen(r->xdir)] == '/';
    free(real);
    return yes;
}

/* The mount of file, opened on first use; NULL and *why when it cannot be. */
static hpc_mount *ext_mount(hpc_refs *r, const char *file, const char **why)
{
    hpc_mount *xm = g_hash_table_lookup(r->xmounts, file);
    GError *err = NULL;
    if (xm)
        return xm;
    if (hpc_mount_open(file, r->o.mount_opts, &xm, &err) == HPC_OK) {
        g_hash_table_insert(r->xmounts, g_strdup(file), xm);
        return xm;
    }
    char *w = g_strdup_printf("an HDF5 external link to a file that cannot be opened: %s",
                              err ? err->message : "?");
    *why = g_string_chunk_insert(r->texts, w);
    g_free(w);
    g_clear_error(&err);
    return NULL;
}

/* The object x in mount xm (node st, its path there real), walked under
 * key as if it were here: with xm's nodes, inodes and .info. */
static int ext_walk(hpc_refs *r, hpc_mount *xm, const hpc_stat *st, const char *real,
                    const char *key, const char *name, GString *notes)
{
    hpc_mount *m = r->m;
    GHashTable *walking = r->walking;
    char *info = r->info;
    uint64_t before = r->nodes;
    r->m = xm;
    r->walking = g_hash_table_new(g_int64_hash, g_int64_equal);
    r->info = NULL;
    r->xdepth++;
    int rc = S_ISDIR(st->mode) ? walk_dir(r, st, key, real) : do_array(r, st, key, name, notes);
    r->xdepth--;
    g_free(r->info);
    r->info = info;
    g_hash_table_destroy(r->walking);
    r->walking = walking;
    r->m = m;
    r->linked += r->nodes - before + 1;
    return rc;
}

/* What r->xwalking holds: object real of file, the file by its real path
 * (a link to the file it is in names it as libhdf5 found it). */
static char *xwalk_id(const char *file, const char *real)
{
    char *rp = realpath(file, NULL);
    char *id = g_strdup_printf("%s//%s", rp ? rp : file, real);
    free(rp);
    return id;
}

/* A symbolic link out of the tree that is an HDF5 external link the
 * reader followed as libnetcdf does (r->xlinks, by its path from the
 * root): the object in the other file, under the link's name (*done);
 * a note when that file is out of bounds or unreadable, the object
 * missing, or the link leads into what it is in (a cycle). */
static int external(hpc_refs *r, const char *key, const char *name, GString *notes, int *done)
{
    char *in = g_build_filename(r->root_path, key, NULL);
    char *top = g_canonicalize_filename(in, "/");
    const hpc_refs_xlink *x = r->xlinks ? g_hash_table_lookup(r->xlinks, top) : NULL;
    const char *why = NULL;
    char *real = NULL, *id = NULL;
    hpc_mount *xm = NULL;
    hpc_stat st;
    int rc = HPC_OK;
    g_free(top);
    g_free(in);
    *done = x != NULL;
    if (!x)
        return HPC_OK;
    if (!ext_allowed(r, x->file))
        why = "an HDF5 external link to a file outside the directory of the file given";
    else if ((xm = ext_mount(r, x->file, &why)) &&
             hpc_mount_resolve_follow(xm, x->obj, TRUE, &st, &real) != HPC_OK)
        why = "an HDF5 external link to nothing in its file";
    if (!why) {
        id = xwalk_id(x->file, real);
        if (g_hash_table_contains(r->xwalking, id) || r->xdepth >= HPC_MAX_LINKS)
            why = "an HDF5 external link to a group it is in (a cycle)";
        else if (r->linked > MAX_LINKED)
            why = "an HDF5 external link, past the bound of nodes walked again through links";
    }
    if (why) {
        hpc_refs_note(r, notes, name, why);
    } else {
        g_hash_table_add(r->xwalking, id);
        rc = ext_walk(r, xm, &st, real, key, name, notes);
        g_hash_table_remove(r->xwalking, id);
    }
    g_free(id);
    g_free(real);
    return rc;
}

/* One entry of a directory. */
static int walk_one(hpc_refs *r, const dent *e, const char *key, const char *path,
                    GString *notes)
{
    char *sub = g_strdup_printf("%s/%s", strcmp(path, "/") ? path : "", e->name);
    char *subkey = key[0] ? g_strdup_printf("%s/%s", key, e->name) : g_strdup(e->name);
    hpc_stat st = e->st;
    char *real = NULL;
    int rc = st.partial ? hpc_mount_getattr(r->m, st.ino, &st) : HPC_OK;
    if (rc != HPC_OK) {
        r->failed_at = r->failed_at ? r->failed_at : g_strdup(sub);
        goto out;
    }
    if (e->name[0] == '.') {
        if (strcmp(e->name, ".info"))
            hpc_refs_note(r, notes, e->name, "zarr keys may not start with a dot");
        goto out;
    }
    /* every link on it followed (GSD frames lend frame 0's chunks this
     * way, HDF5 soft links name groups) */
    if (S_ISLNK(st.mode) && hpc_mount_resolve_follow(r->m, sub, TRUE, &st, &real) != HPC_OK) {
        int done = 0;
        rc = external(r, subkey, e->name, notes, &done);
        if (!done)
            hpc_refs_note(r, notes, e->name, "a symbolic link to nothing inside the tree");
        goto out;
    }
    if (S_ISDIR(st.mode) && S_ISLNK(e->st.mode))
        rc = linked_dir(r, &st, subkey, real, e->name, notes);
    else if (S_ISDIR(st.mode))
        rc = walk_dir(r, &st, subkey, sub);
    else
        rc = do_array(r, &st, subkey, e->name, notes);
    if (rc != HPC_OK && !r->failed_at)
        r->failed_at = g_strdup(sub);
out:
    if (r->o.progress)
        r->o.progress(r->o.progress_ctx, ++r->nodes);
    g_free(real);
    g_free(sub);
    g_free(subkey);
    return rc;
}

/* One entry of a directory; a damaged one becomes a note. */
static int walk_entry(hpc_refs *r, const dent *e, const char *key, const char *path,
                      GString *notes)
{
    gsize mark = r->refs->len;
    hpc_refs counts = *r;
    int rc = walk_one(r, e, key, path, notes);
    if (!node_damaged(rc))
        return rc;
    g_string_truncate(r->refs, mark);   /* nothing half: drop what was written of it */
    r->nrefs = counts.nrefs;
    r->narrays = counts.narrays;
    r->nranges = counts.nranges;
    r->ninline = counts.ninline;
    r->nnotes = counts.nnotes;
    char *sub = g_strdup_printf("%s/%s", strcmp(path, "/") ? path : "", e->name);
    char *why = damage_why(r, sub, rc);
    hpc_log("refs: %s: %s: left out: %s", r->source, sub, why);
    hpc_refs_note(r, notes, e->name, why);
    g_clear_pointer(&r->failed_at, g_free);
    g_free(why);
    g_free(sub);
    return HPC_OK;
}

/* A group: .zgroup, its members, then .zattrs with the notes. */
static int walk_dir(hpc_refs *r, const hpc_stat *dir, const char *key, const char *path)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(dent));
    g_array_set_clear_func(a, dent_clear);
    GString *notes = g_string_new(NULL), *za = g_string_new("{");
    GHashTable *outer = r->gdims;      /* dimension names are the group's own */
    r->gdims = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_hash_table_add(r->walking, (gpointer)&dir->ino);
    int rc = hpc_mount_readdir(r->m, dir->ino, 0, collect, a);
    if (rc != HPC_OK) {
        if (!r->failed_at)
            r->failed_at = g_strdup(path);
        goto out;
    }
    g_array_sort(a, dent_cmp);
    hpc_refs_text(r, key, ".zgroup", "{\"zarr_format\": 2}");
    for (guint i = 0; rc == HPC_OK && i < a->len; i++)
        rc = walk_entry(r, &g_array_index(a, dent, i), key, path, notes);
    if (rc != HPC_OK)
        goto out;
    g_string_append(za, "\"hpcmount_path\": ");
    hpc_json_str(za, path);
    if (!key[0]) {
        g_string_append(za, ", \"hpcmount_source\": ");
        hpc_json_str(za, r->source);
    }
    if (notes->len)
        g_string_append_printf(za, ", \"hpcmount_not_covered\": {%s}", notes->str);
    rc = hpc_refs_dir_attrs(r, dir->ino, za) ? HPC_OK
                                              : hpc_refs_attrs_json(r->m, dir->ino, za);
    if (rc != HPC_OK && !r->failed_at)
        r->failed_at = g_strdup(path);
    g_string_append_c(za, '}');
    hpc_refs_text(r, key, ".zattrs", za->str);
out:
    g_hash_table_remove(r->walking, &dir->ino);
    g_hash_table_destroy(r->gdims);
    r->gdims = outer;
    g_string_free(notes, TRUE);
    g_string_free(za, TRUE);
    g_array_free(a, TRUE);
    return rc;
}

/* ---- entry point --------------------------------------------------------- */

/* A file alone whose reader follows HDF5 external links: the references
 * may name the files in its directory and below. */
static void ext_begin(hpc_refs *r)
{
    if (!r->o.mount_opts || hpc_mount_is_directory(r->m))
        return;
    char *dir = g_path_get_dirname(r->source);
    r->xdir = realpath(dir, NULL);
    g_free(dir);
    hpc_refs_ext_load(r);
}

/* A root path through an HDF5 external link (the longest one of
 * r->xlinks it starts with): its node *st in the other file's mount,
 * which the walk then reads (r->m), and its path there *real. */
static int ext_root(hpc_refs *r, hpc_stat *st, char **real)
{
    char *path = g_canonicalize_filename(r->root_path, "/"), *p = g_strdup(path), *slash;
    const hpc_refs_xlink *x = NULL;
    const char *why = NULL;
    hpc_mount *xm = NULL;
    int rc = HPC_E_NOENT;
    while (r->xlinks && !(x = g_hash_table_lookup(r->xlinks, p)) && (slash = strrchr(p, '/')))
        *slash = '\0';
    if (x && ext_allowed(r, x->file) && (xm = ext_mount(r, x->file, &why))) {
        char *in = g_strconcat(x->obj, "/", path + strlen(p), NULL);
        rc = hpc_mount_resolve_follow(xm, in, TRUE, st, real);
        g_free(in);
    }
    if (rc == HPC_OK) {
        r->m = xm;
        r->xdepth = 1;
    }
    g_free(path);
    g_free(p);
    return rc;
}

static void ext_end(hpc_refs *r)
{
    if (r->xlinks)
        g_hash_table_destroy(r->xlinks);
    if (r->xdims)
        g_hash_table_destroy(r->xdims);
    g_hash_table_destroy(r->xwalking);
    g_hash_table_destroy(r->xmounts);
    free(r->xdir);
}

static void finish(hpc_refs *r, GString *out)
{
    g_string_append(out, "{\"version\": 1, \"templates\": {");
    for (guint i = 0; i < r->tmpl_paths->len; i++) {
        const char *p = g_ptr_array_index(r->tmpl_paths, i);
        g_string_append(out, i ? ", " : "");
        hpc_json_str(out, g_hash_table_lookup(r->tmpl, p));
        g_string_append(out, ": ");
        hpc_json_str(out, p);
    }
    g_string_append(out, "},\n\"refs\": {\n");
    g_string_append_len(out, r->refs->str, (gssize)r->refs->len);
    g_string_append(out, "\n}}\n");
}

/* A single array at the root of the hierarchy. */
static int root_array(hpc_refs *r, const hpc_stat *st, const char *path)
{
    GString *notes = g_string_new(NULL);
    char *base = g_path_get_basename(path);
    int rc = do_array(r, st, "", base, notes);
    if (rc == HPC_OK && notes->len)
        rc = HPC_E_NOTSUP;
    if (rc != HPC_OK && !r->failed_at)
        r->failed_at = g_strdup_printf("%s: %s", path, notes->len ? notes->str : "");
    g_free(base);
    g_string_free(notes, TRUE);
    return rc;
}

/* The walk from the root directory: it is one of the groups an external
 * link may lead back into (a link to its own file). */
static int walk_top(hpc_refs *r, const hpc_stat *st, const char *real)
{
    char *id = r->xdepth ? NULL : xwalk_id(r->source, real);
    if (id)
        g_hash_table_add(r->xwalking, id);
    int rc = walk_dir(r, st, "", real);
    if (id)
        g_hash_table_remove(r->xwalking, id);
    g_free(id);
    return rc;
}

int hpc_refs_json(hpc_mount *m, const char *path, const hpc_refs_opts *o, GString *out,
                  GError **err)
{
    hpc_refs r = { .m = m, .refs = g_string_new(NULL), .root_path = path ? path : "/",
                   .tmpl = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                   .tmpl_paths = g_ptr_array_new_with_free_func(g_free),
                   .texts = g_string_chunk_new(1024),
                   .gdims = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                   .walking = g_hash_table_new(g_int64_hash, g_int64_equal),
                   .xmounts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                    (GDestroyNotify)hpc_mount_close),
                   .xwalking = g_hash_table_new(g_str_hash, g_str_equal) };
    if (o)
        r.o = *o;
    else
        r.o.inline_max = HPC_REFS_INLINE_DEFAULT;
    r.source = hpc_mount_source(m);
    ext_begin(&r);
    hpc_stat st;
    char *real = NULL;
    int rc = hpc_mount_resolve_follow(m, r.root_path, TRUE, &st, &real);
    if (rc == HPC_E_NOENT)
        rc = ext_root(&r, &st, &real);
    if (rc != HPC_OK)
        r.failed_at = g_strdup(r.root_path);
    else if (S_ISDIR(st.mode))
        rc = walk_top(&r, &st, real);
    else
        rc = root_array(&r, &st, r.root_path);
    if (rc == HPC_OK)
        finish(&r, out);
    else
        g_set_error(err, HPC_ERROR, rc, "%s: %s: %s", r.source, r.failed_at ? r.failed_at : "?",
                    rc == HPC_E_NOTSUP ? "cannot be described as an array" : hpc_strerror(rc));
    g_free(real);
    g_free(r.failed_at);
    g_free(r.info);
    g_string_chunk_free(r.texts);
    g_hash_table_destroy(r.gdims);
    g_hash_table_destroy(r.walking);
    ext_end(&r);
    g_hash_table_destroy(r.tmpl);
    g_ptr_array_free(r.tmpl_paths, TRUE);
    g_string_free(r.refs, TRUE);
    return rc;
}
