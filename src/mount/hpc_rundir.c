/* hpc_rundir.c - the tables of a mounted run directory (hpc_mount_int.h):
 * mount ids (a slot number and the container's own id, or an index into
 * the table of ids too large for 40 bits), the directory's own nodes and
 * the probe of what each file is, and the container slots: opened on
 * first use, closed when least recently used, reopened once stale; and
 * the one way the mount layer opens a container (hpc_rundir_open_nodes).
 */
#include "config.h"
#include "hpc_mount_int.h"
#include "hpc_npyview.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

hpc_ino hpc_rundir_encode(hpc_mount *m, uint32_t s, hpc_ino inner)
{
    if (inner <= INNER_MASK)
        return ((hpc_ino)s << SLOT_SHIFT) | inner;
    char key[48];
    g_snprintf(key, sizeof key, "%u:%" G_GUINT64_FORMAT, s, inner);
    g_mutex_lock(&m->lock);
    guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(m->big_of, key));
    if (!idx) {
        hpc_rundir_big_id b = { s, inner };
        g_array_append_val(m->big, b);
        idx = m->big->len;
        g_hash_table_insert(m->big_of, g_strdup(key), GUINT_TO_POINTER(idx));
    }
    g_mutex_unlock(&m->lock);
    return BIG_BIT | (idx - 1);
}

/* Split ino into slot (0: the layer's own node) and inner id. */
int hpc_rundir_decode(hpc_mount *m, hpc_ino ino, uint32_t *s, hpc_ino *inner)
{
    int rc = HPC_OK;
    if (ino & BIG_BIT) {
        g_mutex_lock(&m->lock);
        uint64_t i = ino & ~BIG_BIT;
        if (i < m->big->len) {
            *s = g_array_index(m->big, hpc_rundir_big_id, i).slot;
            *inner = g_array_index(m->big, hpc_rundir_big_id, i).inner;
        } else {
            rc = HPC_E_NOENT;
        }
        g_mutex_unlock(&m->lock);
        return rc;
    }
    *s = (uint32_t)(ino >> SLOT_SHIFT);
    *inner = ino & INNER_MASK;
    return HPC_OK;
}

char *hpc_rundir_abs_path(hpc_mount *m, const char *rel)
{
    return *rel ? g_build_filename(m->root, rel, NULL) : g_strdup(m->root);
}

/* A set member "NAME.000001" whose NAME is beside it: a plain file (the
 * set is shown under NAME). */
static gboolean is_set_member(const char *path)
{
    size_t n = strlen(path);
    if (n < 8 || path[n - 7] != '.')
        return FALSE;
    for (size_t i = n - 6; i < n; i++)
        if (!g_ascii_isdigit(path[i]))
            return FALSE;
    char *base = g_strndup(path, n - 7);
    struct stat st;
    gboolean member = stat(base, &st) == 0 && S_ISREG(st.st_mode);
    g_free(base);
    return member;
}

/* Names whose presence in a directory makes it a container candidate
 * inside a run directory (a reader's probe of a directory may walk far: an
 * FTI tree is recognised from any of its levels, so a run directory holding
 * one somewhere below would be claimed whole). */
static const struct {
    const char *format;
    const char *markers[9];
} dir_markers[] = {
    { "fti", { "config.fti", "Local", "Global", "Meta", "l1", "l2", "l3", "l4", NULL } },
};

static const hpc_format *probe_file(const char *path)
{
    unsigned char head[PROBE_HEAD];
    if (is_set_member(path))
        return NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof head, 0) : -1;
    close(fd);
    return n > 0 ? hpc_format_best(path, head, (size_t)n) : NULL;
}

/* Does dir hold (directly, among its first entries) a file that a reader
 * other than f claims? */
gboolean hpc_rundir_holds_other_format(const char *dir, const hpc_format *f)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    gboolean other = FALSE;
    for (int i = 0; d && !other && i < 256 && (name = g_dir_read_name(d)); i++) {
        char *p = g_build_filename(dir, name, NULL);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            const hpc_format *g = probe_file(p);
            other = g && g != f;
        }
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    return other;
}

static gboolean has_marker(const char *dir)
{
    for (size_t i = 0; i < G_N_ELEMENTS(dir_markers); i++)
        for (const char *const *mk = dir_markers[i].markers; *mk; mk++) {
            char *p = g_build_filename(dir, *mk, NULL);
            gboolean there = access(p, F_OK) == 0;
            g_free(p);
            if (there)
                return TRUE;
        }
    return FALSE;
}

/* The format that claims path inside a run directory, or NULL. */
static const hpc_format *probe(const char *path, gboolean dir)
{
    if (!dir)
        return probe_file(path);
    if (!has_marker(path))
        return NULL;
    const hpc_format *f = hpc_format_best(path, NULL, 0);
    return f && !hpc_rundir_holds_other_format(path, f) ? f : NULL;
}

hpc_rundir_node *hpc_rundir_node_get(hpc_mount *m, uint64_t id)
{
    if (id < DIR_INO_FIRST || id - DIR_INO_FIRST >= m->nodes->len)
        return NULL;
    return g_ptr_array_index(m->nodes, id - DIR_INO_FIRST);
}

/* A new container slot for node id (m->lock held). */
static uint32_t slot_new(hpc_mount *m, uint64_t id, const char *path)
{
    if (m->slots->len + 1 >= MAX_SLOTS)
        return 0;
    hpc_rundir_slot *s = g_new0(hpc_rundir_slot, 1);
    s->node = (uint32_t)id;
    s->path = g_strdup(path);
    g_mutex_init(&s->open_lock);
    g_ptr_array_add(m->slots, s);
    return m->slots->len;
}

/* What rel is now: find or make its node, probe it again if it changed.
 * *ino and *st (the directory layer's attributes) are filled. */
int hpc_rundir_node_at(hpc_mount *m, const char *rel, hpc_stat *st)
{
    char *path = hpc_rundir_abs_path(m, rel);
    struct stat sb;
    int rc = lstat(path, &sb) == 0 ? HPC_OK : HPC_E_NOENT;
    if (rc != HPC_OK)
        goto out;
    hpc_rundir_kind kind = S_ISDIR(sb.st_mode) ? NODE_DIR : S_ISREG(sb.st_mode) ? NODE_FILE
                   : S_ISLNK(sb.st_mode) ? NODE_LINK : NODE_FILE;
    if (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
        rc = HPC_E_NOENT;          /* FIFOs, devices, sockets are not shown */
        goto out;
    }
    g_mutex_lock(&m->lock);
    gpointer idp = g_hash_table_lookup(m->node_of, rel);
    uint64_t id = GPOINTER_TO_SIZE(idp);
    hpc_rundir_node *d = id ? hpc_rundir_node_get(m, id) : NULL;
    gboolean fresh = d && d->mtime == (int64_t)sb.st_mtime && d->size == (uint64_t)sb.st_size &&
                     (d->kind == kind || (d->kind == NODE_CONTAINER && kind != NODE_LINK));
    g_mutex_unlock(&m->lock);
    if (!fresh) {
        const hpc_format *f = (kind == NODE_LINK || m->opts.noexpand || !*rel) ? NULL
                              : probe(path, kind == NODE_DIR);
        g_mutex_lock(&m->lock);
        if (!d) {
            d = g_new0(hpc_rundir_node, 1);
            d->rel = g_strdup(rel);
            g_ptr_array_add(m->nodes, d);
            id = DIR_INO_FIRST + m->nodes->len - 1;
            g_hash_table_insert(m->node_of, d->rel, GSIZE_TO_POINTER(id));
        }
        d->mtime = sb.st_mtime;
        d->size = (uint64_t)sb.st_size;
        d->uid = (uint32_t)sb.st_uid;
        d->gid = (uint32_t)sb.st_gid;
        d->mode = (uint32_t)sb.st_mode;
        d->kind = f ? NODE_CONTAINER : kind;
        if (f && !d->slot)
            d->slot = slot_new(m, id, path);
        if (f && !d->slot)
            d->kind = kind;        /* out of slots: shown as it is */
        g_mutex_unlock(&m->lock);
    }
    memset(st, 0, sizeof *st);
    st->mtime = sb.st_mtime;
    /* a container's root until it is open: the file's own bits (its
     * container's are no wider; hpc_mount_node_meta: not cached) */
    uint32_t own = hpc_rundir_mode(m, (uint32_t)sb.st_uid, (uint32_t)sb.st_gid, (uint32_t)sb.st_mode);
    if (d->kind == NODE_CONTAINER) {
        st->ino = ((hpc_ino)d->slot << SLOT_SHIFT) | HPC_INO_ROOT;
        st->mode = hpc_perm_mode(HPC_MODE_DIR, own & HPC_PERM_ALL);
        st->nlink = 2;
    } else {
        st->ino = *rel ? id : HPC_INO_ROOT;
        st->mode = d->kind == NODE_LINK ? HPC_MODE_LINK : own;
        st->nlink = d->kind == NODE_DIR ? 2 : 1;
        st->size = d->kind == NODE_DIR ? 0 : (uint64_t)sb.st_size;
    }
out:
    g_free(path);
    return rc;
}

uint32_t hpc_rundir_mode(const hpc_mount *m, uint32_t uid, uint32_t gid, uint32_t mode)
{
    const hpc_creds *owner = hpc_creds_of(uid, gid);
    uint32_t r = hpc_perm_narrow_chain(mode & 0444, owner, uid, gid, m->above);
    uint32_t x = hpc_perm_narrow_chain((mode & 0111) << 2, owner, uid, gid, m->above);
    return (mode & S_IFMT) | r | (x >> 2);
}

/* The relative path of the layer's node ino (a new string), or NULL. */
char *hpc_rundir_node_rel(hpc_mount *m, hpc_ino ino)
{
    if (ino == HPC_INO_ROOT)
        return g_strdup("");
    g_mutex_lock(&m->lock);
    hpc_rundir_node *d = hpc_rundir_node_get(m, ino);
    char *rel = d ? g_strdup(d->rel) : NULL;
    g_mutex_unlock(&m->lock);
    return rel;
}

hpc_rundir_slot *hpc_rundir_slot_get(hpc_mount *m, uint32_t s)
{
    return s >= 1 && s <= m->slots->len ? g_ptr_array_index(m->slots, s - 1) : NULL;
}

/* Close open containers beyond max_open that nobody uses (m->lock held);
 * returns them for closing outside the lock. */
static GSList *evict(hpc_mount *m)
{
    GSList *out = NULL;
    GList *l = m->open.tail;
    while (l && m->open.length > m->max_open) {
        GList *prev = l->prev;
        hpc_rundir_slot *s = l->data;
        if (s->refs == 0) {
            out = g_slist_prepend(out, s->c);
            s->c = NULL;
            g_queue_delete_link(&m->open, l);
            s->lru = NULL;
        }
        l = prev;
    }
    return out;
}

static void close_one(gpointer n)
{
    hpc_nodes_close(n);
}

static void close_all(GSList *list)
{
    g_slist_free_full(list, close_one);
}

/* Is the file of a slot whose open failed still the file that failed?
 * Then it is not opened again: a damaged file would cost a helper's whole
 * CPU limit on every lookup of a walk (s->open_lock held). */
static gboolean failed_unchanged(const hpc_rundir_slot *s)
{
    struct stat sb;
    return s->error && stat(s->path, &sb) == 0 && sb.st_dev == s->failed.st_dev &&
           sb.st_ino == s->failed.st_ino && sb.st_size == s->failed.st_size &&
           sb.st_mtim.tv_sec == s->failed.st_mtim.tv_sec &&
           sb.st_mtim.tv_nsec == s->failed.st_mtim.tv_nsec &&
           sb.st_ctim.tv_sec == s->failed.st_ctim.tv_sec &&
           sb.st_ctim.tv_nsec == s->failed.st_ctim.tv_nsec;
}

int hpc_rundir_open_nodes(const char *path, const hpc_options *opts, hpc_nodes **out,
                          GError **err)
{
    int rc = hpc_container_nodes_open(path, opts, out, err);
    if (rc == HPC_OK && opts->npy)
        *out = hpc_npyview_new(*out);
    return rc;
}

/* Open slot s's container if it is closed (s->open_lock held). */
static void slot_open(hpc_mount *m, hpc_rundir_slot *s)
{
    hpc_nodes *c = NULL;
    GError *err = NULL;
    struct stat before;
    if (failed_unchanged(s))
        return;
    if (stat(s->path, &before) != 0)
        memset(&before, 0, sizeof before);
    if (hpc_rundir_open_nodes(s->path, &m->opts, &c, &err) != HPC_OK) {
        g_mutex_lock(&m->lock);
        gboolean first = !s->error;
        g_free(s->error);
        s->error = g_strdup(err ? err->message : "cannot be opened");
        s->failed = before;
        g_mutex_unlock(&m->lock);
        if (first)
            hpc_log("%s", err ? err->message : s->path);
        g_clear_error(&err);
        return;
    }
    g_mutex_lock(&m->lock);
    g_clear_pointer(&s->error, g_free);
    s->c = c;
    g_queue_push_head(&m->open, s);
    s->lru = m->open.head;
    g_mutex_unlock(&m->lock);
}

/* Take slot number sn for a call: open it if needed.  *c is NULL when it
 * failed to open (then s->error says why).  Pair with slot_release. */
int hpc_rundir_slot_acquire(hpc_mount *m, uint32_t sn, hpc_rundir_slot **out, hpc_nodes **c)
{
    GSList *stale = NULL;
    g_mutex_lock(&m->lock);
    hpc_rundir_slot *s = hpc_rundir_slot_get(m, sn);
    if (!s) {
        g_mutex_unlock(&m->lock);
        return HPC_E_NOENT;
    }
    if (s->stale && s->refs == 0 && s->c) {
        stale = g_slist_prepend(stale, s->c);
        g_queue_delete_link(&m->open, s->lru);
        s->lru = NULL;
        s->c = NULL;
        s->stale = 0;
    }
    s->refs++;
    if (s->lru && s->lru != m->open.head) {
        g_queue_unlink(&m->open, s->lru);
        g_queue_push_head_link(&m->open, s->lru);
    }
    gboolean need = !s->c;
    g_mutex_unlock(&m->lock);
    close_all(stale);
    if (need) {
        g_mutex_lock(&s->open_lock);
        if (!s->c)
            slot_open(m, s);
        g_mutex_unlock(&s->open_lock);
    }
    *out = s;
    *c = s->c;
    return HPC_OK;
}

int hpc_rundir_slot_release(hpc_mount *m, hpc_rundir_slot *s, int rc)
{
    g_mutex_lock(&m->lock);
    s->refs--;
    if (rc == HPC_E_CHANGED)
        s->stale = 1;
    GSList *closing = evict(m);
    g_mutex_unlock(&m->lock);
    close_all(closing);
    return rc;
}
