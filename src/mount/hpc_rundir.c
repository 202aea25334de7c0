/* hpc_rundir.c - the tables of a run directory (hpc_rundir_int.h): ids
 * (a slot number and the container's own id, or an index into the table
 * of ids too large for 40 bits), the directory's own nodes and the probe
 * of what each file is, and the container slots: opened on first use,
 * closed when least recently used, reopened once stale, their containers
 * held by open files; and the one way the mount layer opens a container
 * (hpc_rundir_open_nodes).
 */
#define _GNU_SOURCE       /* O_PATH */
#include "config.h"
#include "hpc_rundir_int.h"
#include "hpc_npyview.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

hpc_ino hpc_rundir_encode(hpc_rundir *rd, uint32_t s, hpc_ino inner)
{
    if (inner <= INNER_MASK)
        return ((hpc_ino)s << SLOT_SHIFT) | inner;
    char key[48];
    g_snprintf(key, sizeof key, "%u:%" G_GUINT64_FORMAT, s, inner);
    g_mutex_lock(&rd->lock);
    guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(rd->big_of, key));
    if (!idx) {
        hpc_rundir_big_id b = { s, inner };
        g_array_append_val(rd->big, b);
        idx = rd->big->len;
        g_hash_table_insert(rd->big_of, g_strdup(key), GUINT_TO_POINTER(idx));
    }
    g_mutex_unlock(&rd->lock);
    return BIG_BIT | (idx - 1);
}

/* Split ino into slot (0: the layer's own node) and inner id. */
int hpc_rundir_decode(hpc_rundir *rd, hpc_ino ino, uint32_t *s, hpc_ino *inner)
{
    int rc = HPC_OK;
    if (ino & BIG_BIT) {
        g_mutex_lock(&rd->lock);
        uint64_t i = ino & ~BIG_BIT;
        if (i < rd->big->len) {
            *s = g_array_index(rd->big, hpc_rundir_big_id, i).slot;
            *inner = g_array_index(rd->big, hpc_rundir_big_id, i).inner;
        } else {
            rc = HPC_E_NOENT;
        }
        g_mutex_unlock(&rd->lock);
        return rc;
    }
    *s = (uint32_t)(ino >> SLOT_SHIFT);
    *inner = ino & INNER_MASK;
    return HPC_OK;
}

char *hpc_rundir_abs_path(hpc_rundir *rd, const char *rel)
{
    return *rel ? g_build_filename(rd->root, rel, NULL) : g_strdup(rd->root);
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

hpc_rundir_node *hpc_rundir_node_get(hpc_rundir *rd, uint64_t id)
{
    if (id < DIR_INO_FIRST || id - DIR_INO_FIRST >= rd->nodes->len)
        return NULL;
    return g_ptr_array_index(rd->nodes, id - DIR_INO_FIRST);
}

/* A new container slot for node id (rd->lock held). */
static uint32_t slot_new(hpc_rundir *rd, uint64_t id, const char *path)
{
    if (rd->slots->len + 1 >= MAX_SLOTS)
        return 0;
    hpc_rundir_slot *s = g_new0(hpc_rundir_slot, 1);
    s->node = (uint32_t)id;
    s->path = g_strdup(path);
    g_mutex_init(&s->open_lock);
    g_ptr_array_add(rd->slots, s);
    return rd->slots->len;
}

/* What rel is now: find or make its node, probe it again if it changed.
 * *ino and *st (the directory layer's attributes) are filled. */
int hpc_rundir_node_at(hpc_rundir *rd, const char *rel, hpc_stat *st)
{
    char *path = hpc_rundir_abs_path(rd, rel);
    struct stat sb;
    /* the root is the directory root_fd holds, even when the mount was
     * given a symbolic link to it; below it, links are shown as links */
    int rc = fstatat(rd->root_fd, rel, &sb, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) == 0
             ? HPC_OK : HPC_E_NOENT;
    if (rc != HPC_OK)
        goto out;
    hpc_rundir_kind kind = S_ISDIR(sb.st_mode) ? NODE_DIR : S_ISREG(sb.st_mode) ? NODE_FILE
                   : S_ISLNK(sb.st_mode) ? NODE_LINK : NODE_FILE;
    if (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
        rc = HPC_E_NOENT;          /* FIFOs, devices, sockets are not shown */
        goto out;
    }
    g_mutex_lock(&rd->lock);
    gpointer idp = g_hash_table_lookup(rd->node_of, rel);
    uint64_t id = GPOINTER_TO_SIZE(idp);
    hpc_rundir_node *d = id ? hpc_rundir_node_get(rd, id) : NULL;
    gboolean fresh = d && d->mtime == (int64_t)sb.st_mtime && d->size == (uint64_t)sb.st_size &&
                     (d->kind == kind || (d->kind == NODE_CONTAINER && kind != NODE_LINK));
    g_mutex_unlock(&rd->lock);
    if (!fresh) {
        const hpc_format *f = (kind == NODE_LINK || rd->opts.noexpand || !*rel) ? NULL
                              : probe(path, kind == NODE_DIR);
        g_mutex_lock(&rd->lock);
        if (!d) {
            d = g_new0(hpc_rundir_node, 1);
            d->rel = g_strdup(rel);
            g_ptr_array_add(rd->nodes, d);
            id = DIR_INO_FIRST + rd->nodes->len - 1;
            g_hash_table_insert(rd->node_of, d->rel, GSIZE_TO_POINTER(id));
        }
        d->mtime = sb.st_mtime;
        d->size = (uint64_t)sb.st_size;
        d->uid = (uint32_t)sb.st_uid;
        d->gid = (uint32_t)sb.st_gid;
        d->mode = (uint32_t)sb.st_mode;
        d->kind = f ? NODE_CONTAINER : kind;
        if (f && !d->slot)
            d->slot = slot_new(rd, id, path);
        if (f && !d->slot)
            d->kind = kind;        /* out of slots: shown as it is */
        g_mutex_unlock(&rd->lock);
    }
    memset(st, 0, sizeof *st);
    st->mtime = sb.st_mtime;
    /* a container's root until it is open: the file's own bits (its
     * container's are no wider; hpc_mount_node_meta: not cached) */
    uint32_t own = hpc_rundir_mode(rd, (uint32_t)sb.st_uid, (uint32_t)sb.st_gid, (uint32_t)sb.st_mode);
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

uint32_t hpc_rundir_mode(const hpc_rundir *rd, uint32_t uid, uint32_t gid, uint32_t mode)
{
    const hpc_creds *owner = hpc_creds_of(uid, gid);
    uint32_t r = hpc_perm_narrow_chain(mode & 0444, owner, uid, gid, rd->above);
    uint32_t x = hpc_perm_narrow_chain((mode & 0111) << 2, owner, uid, gid, rd->above);
    return (mode & S_IFMT) | r | (x >> 2);
}

/* The relative path of the layer's node ino (a new string), or NULL. */
char *hpc_rundir_node_rel(hpc_rundir *rd, hpc_ino ino)
{
    if (ino == HPC_INO_ROOT)
        return g_strdup("");
    g_mutex_lock(&rd->lock);
    hpc_rundir_node *d = hpc_rundir_node_get(rd, ino);
    char *rel = d ? g_strdup(d->rel) : NULL;
    g_mutex_unlock(&rd->lock);
    return rel;
}

hpc_rundir_slot *hpc_rundir_slot_get(hpc_rundir *rd, uint32_t s)
{
    return s >= 1 && s <= rd->slots->len ? g_ptr_array_index(rd->slots, s - 1) : NULL;
}

/* Slot s lets go of its container (rd->lock held): onto *closing, unless
 * open files hold it (the last one closes it). */
static void slot_close(hpc_rundir *rd, hpc_rundir_slot *s, GSList **closing)
{
    if (!g_hash_table_contains(rd->held, s->c))
        *closing = g_slist_prepend(*closing, s->c);
    s->c = NULL;
    g_queue_delete_link(&rd->open, s->lru);
    s->lru = NULL;
}

/* Close open containers beyond max_open that no call uses (rd->lock
 * held); returns them for closing outside the lock. */
static GSList *evict(hpc_rundir *rd)
{
    GSList *out = NULL;
    GList *l = rd->open.tail;
    while (l && rd->open.length > rd->max_open) {
        GList *prev = l->prev;
        hpc_rundir_slot *s = l->data;
        if (s->refs == 0)
            slot_close(rd, s, &out);
        l = prev;
    }
    return out;
}

void hpc_rundir_hold(hpc_rundir *rd, hpc_nodes *c, uint32_t sn)
{
    hpc_rundir_held *h = g_hash_table_lookup(rd->held, c);
    if (!h) {
        h = g_new0(hpc_rundir_held, 1);
        h->slot = sn;
        g_hash_table_insert(rd->held, c, h);
    }
    h->count++;
}

gboolean hpc_rundir_unhold(hpc_rundir *rd, hpc_nodes *c)
{
    hpc_rundir_held *h = g_hash_table_lookup(rd->held, c);
    if (!h || --h->count > 0)
        return FALSE;
    hpc_rundir_slot *s = hpc_rundir_slot_get(rd, h->slot);
    g_hash_table_remove(rd->held, c);
    return !s || s->c != c;
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
static void slot_open(hpc_rundir *rd, hpc_rundir_slot *s)
{
    hpc_nodes *c = NULL;
    GError *err = NULL;
    struct stat before;
    if (failed_unchanged(s))
        return;
    if (stat(s->path, &before) != 0)
        memset(&before, 0, sizeof before);
    if (hpc_rundir_open_nodes(s->path, &rd->opts, &c, &err) != HPC_OK) {
        g_mutex_lock(&rd->lock);
        gboolean first = !s->error;
        g_free(s->error);
        s->error = g_strdup(err ? err->message : "cannot be opened");
        s->failed = before;
        g_mutex_unlock(&rd->lock);
        if (first)
            hpc_log("%s", err ? err->message : s->path);
        g_clear_error(&err);
        return;
    }
    g_mutex_lock(&rd->lock);
    g_clear_pointer(&s->error, g_free);
    s->c = c;
    g_queue_push_head(&rd->open, s);
    s->lru = rd->open.head;
    g_mutex_unlock(&rd->lock);
}

/* Take slot number sn for a call: open it if needed.  *c is NULL when it
 * failed to open (then s->error says why).  Pair with slot_release. */
int hpc_rundir_slot_acquire(hpc_rundir *rd, uint32_t sn, hpc_rundir_slot **out, hpc_nodes **c)
{
    GSList *stale = NULL;
    g_mutex_lock(&rd->lock);
    hpc_rundir_slot *s = hpc_rundir_slot_get(rd, sn);
    if (!s) {
        g_mutex_unlock(&rd->lock);
        return HPC_E_NOENT;
    }
    if (s->stale && s->refs == 0 && s->c)
        slot_close(rd, s, &stale);
    if (!s->c)
        s->stale = 0;
    s->refs++;
    if (s->lru && s->lru != rd->open.head) {
        g_queue_unlink(&rd->open, s->lru);
        g_queue_push_head_link(&rd->open, s->lru);
    }
    gboolean need = !s->c;
    g_mutex_unlock(&rd->lock);
    close_all(stale);
    if (need) {
        g_mutex_lock(&s->open_lock);
        if (!s->c)
            slot_open(rd, s);
        g_mutex_unlock(&s->open_lock);
    }
    *out = s;
    *c = s->c;
    return HPC_OK;
}

int hpc_rundir_slot_release(hpc_rundir *rd, hpc_rundir_slot *s, int rc)
{
    g_mutex_lock(&rd->lock);
    s->refs--;
    if (rc == HPC_E_CHANGED)
        s->stale = 1;
    GSList *closing = evict(rd);
    g_mutex_unlock(&rd->lock);
    close_all(closing);
    return rc;
}

int hpc_rundir_init(hpc_rundir *rd, const char *root, const hpc_options *opts, GError **err)
{
    struct stat st;
    hpc_options_copy(&rd->opts, opts);
    rd->root = g_strdup(root);
    rd->root_fd = -1;
    if (stat(root, &st) != 0 || access(root, R_OK | X_OK) != 0)
        return hpc_fail(err, HPC_E_NOENT, root, NULL, 0, "cannot read the directory: %s",
                        g_strerror(errno));
    rd->mtime = st.st_mtime;
    rd->uid = st.st_uid;
    rd->gid = st.st_gid;
    rd->mode = st.st_mode;
    rd->above = hpc_perm_chain(root);
    rd->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rd->root_fd < 0)
        return hpc_fail(err, HPC_E_NOENT, root, NULL, 0, "cannot open the directory: %s",
                        g_strerror(errno));
    rd->max_open = opts->max_containers ? opts->max_containers : HPC_DEFAULT_MAX_CONTAINERS;
    /* cache_size is the whole mount's: each open container gets its share */
    rd->opts.cache_size = MAX(opts->cache_size / rd->max_open, MIN_CONTAINER_CACHE);
    g_mutex_init(&rd->lock);
    rd->nodes = g_ptr_array_new();
    rd->node_of = g_hash_table_new(g_str_hash, g_str_equal);
    rd->slots = g_ptr_array_new();
    g_queue_init(&rd->open);
    rd->big = g_array_new(FALSE, FALSE, sizeof(hpc_rundir_big_id));
    rd->big_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    rd->held = g_hash_table_new_full(NULL, NULL, NULL, g_free);
    return HPC_OK;
}

/* Close the containers that only open files still held (their slots let
 * go of them): files are not to outlive the run directory, but a front
 * end that unmounts may leave some unreleased. */
static void close_orphans(hpc_rundir *rd)
{
    GHashTableIter it;
    gpointer c, v;
    g_hash_table_iter_init(&it, rd->held);
    while (g_hash_table_iter_next(&it, &c, &v)) {
        hpc_rundir_slot *s = hpc_rundir_slot_get(rd, ((hpc_rundir_held *)v)->slot);
        if (!s || s->c != c)
            hpc_nodes_close(c);
    }
    g_hash_table_destroy(rd->held);
}

void hpc_rundir_free(hpc_rundir *rd)
{
    if (rd->slots) {
        close_orphans(rd);
        for (guint i = 0; i < rd->slots->len; i++) {
            hpc_rundir_slot *s = g_ptr_array_index(rd->slots, i);
            hpc_nodes_close(s->c);
            g_mutex_clear(&s->open_lock);
            g_free(s->path);
            g_free(s->error);
            g_free(s);
        }
        for (guint i = 0; i < rd->nodes->len; i++) {
            hpc_rundir_node *d = g_ptr_array_index(rd->nodes, i);
            g_free(d->rel);
            g_free(d);
        }
        g_ptr_array_free(rd->slots, TRUE);
        g_ptr_array_free(rd->nodes, TRUE);
        g_hash_table_destroy(rd->node_of);
        g_queue_clear(&rd->open);
        g_array_free(rd->big, TRUE);
        g_hash_table_destroy(rd->big_of);
        g_mutex_clear(&rd->lock);
    }
    if (rd->above)
        g_array_free(rd->above, TRUE);
    if (rd->root_fd >= 0)
        close(rd->root_fd);
    hpc_options_clear(&rd->opts);
    g_free(rd->root);
    g_free(rd);
}
