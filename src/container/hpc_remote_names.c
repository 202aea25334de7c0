/* hpc_remote_names.c - what the daemon remembers of the helper's answers:
 * names of nodes under their parents (for messages and lookups without a
 * request), attributes and extended attributes, readdir batches, and the
 * objects that killed a helper (served as EIO from then on, and listed in
 * .info).
 */
#include "config.h"
#include "hpc_remote_int.h"

#include <string.h>


void hpc_remote_rec_free(gpointer p)
{
    hpc_remote_node *rec = p;
    if (rec->xattrs)
        g_bytes_unref(rec->xattrs);
    g_free(rec);
}

static guint key_hash(gconstpointer p)
{
    const hpc_remote_key *k = p;
    return g_str_hash(k->name) ^ (guint)(k->parent * 0x9e3779b97f4a7c15ull >> 32);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    const hpc_remote_key *x = a, *y = b;
    return x->parent == y->parent && strcmp(x->name, y->name) == 0;
}

GHashTable *hpc_remote_nodes_new(void)
{
    return g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, hpc_remote_rec_free);
}

GHashTable *hpc_remote_children_new(void)
{
    return g_hash_table_new(key_hash, key_equal);
}

/* Note a node (from: the cookie of the readdir batch it came in, or NULL). */
void hpc_remote_remember_from(hpc_remote *r, hpc_ino parent, const char *name, const hpc_stat *st,
                              const uint64_t *from)
{
    size_t n = strlen(name);
    g_mutex_lock(&r->tables);
    hpc_remote_node *old = g_hash_table_lookup(r->nodes, &st->ino);
    if (old && (old->has_st || st->partial) && old->key.parent == parent &&
        strcmp(old->name, name) == 0) {
        g_mutex_unlock(&r->tables);
        return;                  /* known already, as well or better */
    }
    if (g_hash_table_size(r->nodes) >= NAMES_MAX) {
        g_hash_table_remove_all(r->children);
        g_hash_table_remove_all(r->nodes);
        g_hash_table_remove_all(r->plussed);
        old = NULL;
    }
    hpc_remote_node *rec = g_malloc(sizeof *rec + n + 1);
    memcpy(rec->name, name, n + 1);
    rec->key = (hpc_remote_key){ .parent = parent, .name = rec->name };
    rec->st = *st;
    rec->has_st = !st->partial;
    rec->xattrs = NULL;
    rec->listed = from != NULL;
    rec->listed_from = from ? *from : 0;
    /* the old record of this node goes (another name of it, as a hard
     * link gives, is asked for again) */
    if (old && g_hash_table_lookup(r->children, &old->key) == old)
        g_hash_table_remove(r->children, &old->key);
    g_hash_table_replace(r->nodes, &rec->st.ino, rec);
    g_hash_table_replace(r->children, &rec->key, rec);
    g_mutex_unlock(&r->tables);
}

void hpc_remote_remember(hpc_remote *r, hpc_ino parent, const char *name, const hpc_stat *st)
{
    hpc_remote_remember_from(r, parent, name, st, NULL);
}

int hpc_remote_cached_stat(hpc_remote *r, hpc_ino ino, hpc_stat *st)
{
    g_mutex_lock(&r->tables);
    const hpc_remote_node *rec = g_hash_table_lookup(r->nodes, &ino);
    int hit = rec && rec->has_st;
    if (hit)
        *st = rec->st;
    g_mutex_unlock(&r->tables);
    return hit;
}

/* The record of name under parent, or NULL (r->tables held). */
static hpc_remote_node *child_rec(hpc_remote *r, hpc_ino parent, const char *name)
{
    hpc_remote_key k = { .parent = parent, .name = name };
    return g_hash_table_lookup(r->children, &k);
}

/* A lookup the daemon can answer from names and attributes it saw. */
int hpc_remote_cached_lookup(hpc_remote *r, hpc_ino parent, const char *name, hpc_stat *st)
{
    g_mutex_lock(&r->tables);
    const hpc_remote_node *rec = child_rec(r, parent, name);
    int hit = rec && rec->has_st;
    if (hit)
        *st = rec->st;
    g_mutex_unlock(&r->tables);
    return hit;
}

GBytes *hpc_remote_cached_xattrs(hpc_remote *r, hpc_ino ino)
{
    g_mutex_lock(&r->tables);
    const hpc_remote_node *rec = g_hash_table_lookup(r->nodes, &ino);
    GBytes *b = rec && rec->xattrs ? g_bytes_ref(rec->xattrs) : NULL;
    g_mutex_unlock(&r->tables);
    return b;
}

void hpc_remote_keep_xattrs(hpc_remote *r, hpc_ino ino, GBytes *b)
{
    g_mutex_lock(&r->tables);
    hpc_remote_node *rec = g_hash_table_lookup(r->nodes, &ino);
    if (rec && !rec->xattrs)
        rec->xattrs = g_bytes_ref(b);
    g_mutex_unlock(&r->tables);
}

/* "/a/b" of ino as far as the daemon saw its names, else "node N". */
static char *path_of(hpc_remote *r, hpc_ino ino)
{
    GString *p = g_string_new(NULL);
    g_mutex_lock(&r->tables);
    for (int depth = 0; ino != HPC_INO_ROOT && depth < 256; depth++) {
        const hpc_remote_node *rec = g_hash_table_lookup(r->nodes, &ino);
        if (!rec) {
            char num[40];
            g_snprintf(num, sizeof num, "node %" G_GUINT64_FORMAT, (guint64)ino);
            g_string_prepend(p, num);
            break;
        }
        g_string_prepend(p, rec->name);
        g_string_prepend_c(p, '/');
        ino = rec->key.parent;
    }
    g_mutex_unlock(&r->tables);
    if (p->len == 0)
        g_string_assign(p, "/");
    return g_string_free(p, FALSE);
}

/* The object a request is about: the key of the damaged table, and the
 * name the log and .info give it. */
char *hpc_remote_object_key(const hpc_rq *rq, const char *name)
{
    if (rq->op == HPC_RQ_INFO)
        return g_strdup(".info");
    if (rq->op == HPC_RQ_LOOKUP)
        return g_strdup_printf("%" G_GUINT64_FORMAT "/%s", (guint64)rq->ino, name);
    return g_strdup_printf("%" G_GUINT64_FORMAT, (guint64)rq->ino);
}

static char *object_name(hpc_remote *r, const hpc_rq *rq, const char *name)
{
    if (rq->op == HPC_RQ_INFO)
        return g_strdup(".info");
    char *p = path_of(r, rq->ino);
    if (rq->op != HPC_RQ_LOOKUP)
        return p;
    char *full = g_strdup_printf("%s%s%s", p, strcmp(p, "/") == 0 ? "" : "/", name);
    g_free(p);
    return full;
}

/* Set while this thread builds .info (under the core's lock, which
 * the host's info_changed takes too). */
static __thread int building_info;

void hpc_remote_building_info(int on)
{
    building_info = on;
}

void hpc_remote_info_stale(hpc_container *c)
{
    if (!building_info)
        c->host->info_changed(c);
}

int hpc_remote_is_damaged(hpc_remote *r, const char *key)
{
    if (g_atomic_int_get(&r->ndamaged) == 0)
        return 0;
    g_mutex_lock(&r->tables);
    int hit = g_hash_table_contains(r->damaged, key);
    g_mutex_unlock(&r->tables);
    return hit;
}

/* The helper went away serving this request: log, .info, and (unless
 * only the wall clock ran out) remember the object as damaged. */
int hpc_remote_lost(hpc_container *c, const hpc_rq *rq, const char *name, const char *key,
                    const char *why, int remember_it)
{
    hpc_remote *r = c->priv;
    char *obj = object_name(r, rq, name);
    hpc_log("%s: %s: %s %s serving it; %s", c->path, obj, lib_of(r), why,
            remember_it ? "damaged: EIO for it from now on, the rest is served"
                        : "EIO for this request (the helper was restarted)");
    g_mutex_lock(&r->tables);
    g_string_append_printf(r->notes, "%s: %s: %s %s\n", remember_it ? "damaged" : "unanswered",
                           obj, lib_of(r), why);
    if (remember_it && !g_hash_table_contains(r->damaged, key)) {
        g_hash_table_add(r->damaged, g_strdup(key));
        g_atomic_int_inc(&r->ndamaged);
    }
    g_mutex_unlock(&r->tables);
    hpc_remote_info_stale(c);
    g_free(obj);
    return HPC_E_IO;
}

/* The next entry of a readdir batch at *at: its header and name. */
int hpc_remote_dirent_at(const char *p, size_t len, size_t *at, hpc_wire_dirent *d, const char **name)
{
    if (len - *at < sizeof *d)
        return HPC_E_IO;
    memcpy(d, p + *at, sizeof *d);
    *at += sizeof *d;
    if (len - *at < d->namelen)
        return HPC_E_IO;
    *name = p + *at;
    *at += d->namelen;
    return HPC_OK;
}

/* The cookie of the readdir batch that listed name of dir without its
 * attributes, if that batch was not yet asked for in full (marked now). */
int hpc_remote_plus_start(hpc_remote *r, hpc_ino dir, const char *name, uint64_t *start)
{
    g_mutex_lock(&r->tables);
    const hpc_remote_node *rec = child_rec(r, dir, name);
    char *batch = rec && rec->listed && !rec->has_st
                  ? g_strdup_printf("%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, (guint64)dir,
                                    (guint64)rec->listed_from) : NULL;
    int hit = batch && !g_hash_table_contains(r->plussed, batch);
    if (hit) {
        *start = rec->listed_from;
        g_hash_table_add(r->plussed, batch);
    } else {
        g_free(batch);
    }
    g_mutex_unlock(&r->tables);
    return hit;
}

/* Take a "plus" batch: entries with full attributes and xattrs. */
int hpc_remote_plus_take(hpc_remote *r, hpc_ino dir, const char *p, size_t len)
{
    for (size_t at = 0; at < len;) {
        hpc_wire_dirent d;
        const char *at_name;
        uint32_t xlen;
        if (hpc_remote_dirent_at(p, len, &at, &d, &at_name) != HPC_OK || len - at < sizeof xlen)
            return HPC_E_IO;
        char *name = g_strndup(at_name, d.namelen);
        hpc_remote_remember(r, dir, name, &d.st);
        g_free(name);
        memcpy(&xlen, p + at, sizeof xlen);
        at += sizeof xlen;
        if (xlen == UINT32_MAX)
            continue;
        if (len - at < xlen)
            return HPC_E_IO;
        GBytes *x = g_bytes_new(p + at, xlen);
        hpc_remote_keep_xattrs(r, d.st.ino, x);
        g_bytes_unref(x);
        at += xlen;
    }
    return HPC_OK;
}

/* Whether batch b continues from cookie: it starts there, or one of its
 * entries but the last of a full batch leads there. */
static int batch_has(const struct dir_batch *b, uint64_t cookie)
{
    gsize len;
    const char *p = g_bytes_get_data(b->data, &len), *name;
    size_t at = 0;
    hpc_wire_dirent d;
    if (b->start == cookie)
        return 1;
    while (at < len && hpc_remote_dirent_at(p, len, &at, &d, &name) == HPC_OK)
        if (d.next == cookie)
            return at < len || !b->more;
    return 0;
}

int hpc_remote_batch_find(hpc_remote *r, hpc_ino dir, uint64_t cookie, struct dir_batch *out)
{
    int hit = 0;
    g_mutex_lock(&r->tables);
    for (unsigned i = 0; i < G_N_ELEMENTS(r->dirs) && !hit; i++) {
        const struct dir_batch *b = &r->dirs[i];
        hit = b->data && b->dir == dir && batch_has(b, cookie);
        if (hit) {
            *out = *b;
            g_bytes_ref(out->data);
        }
    }
    g_mutex_unlock(&r->tables);
    return hit;
}
