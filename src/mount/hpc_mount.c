/* hpc_mount.c - one container, or a run directory of containers.
 *
 * The directory layer keeps three tables under one lock: its own nodes
 * (a path relative to the run directory each, with what was found there),
 * the container slots (a node that a reader claims, its open container or
 * the reason it failed, and a use count), and the translation of container
 * node ids too large for 40 bits.  Directories are read from disk on every
 * listing, so files that appear or vanish show at once; what a file is
 * (plain, or a container of which format) is probed again when its size or
 * mtime changed.  Nothing is opened at mount: a container opens on its
 * first access and closes when it is the least recently used of more than
 * max_containers open ones and nobody uses it.  A container that reports
 * its source changed is closed and opened again on its next use; one that
 * failed to open is tried again only once its file changed.
 */
#include "hpc_format.h"
#include "hpc_mount.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define SLOT_SHIFT 40
#define INNER_MASK ((UINT64_C(1) << SLOT_SHIFT) - 1)
#define MAX_SLOTS (UINT64_C(1) << 22)
#define BIG_BIT (UINT64_C(1) << 63)
#define DIR_INO_FIRST 16         /* the layer's own ids; 1 root, 2 .info */
#define DIR_TIMEOUT 1.0          /* run directories change while mounted */
#define SINGLE_STATIC_TIMEOUT 86400.0
#define PROBE_HEAD 4096
#define MIN_CONTAINER_CACHE (1u << 20)

typedef enum { NODE_DIR, NODE_FILE, NODE_LINK, NODE_CONTAINER } node_kind;

typedef struct dnode {
    char *rel;                   /* "" for the root */
    node_kind kind;
    int64_t mtime;               /* of the probe */
    uint64_t size;
    uint32_t slot;               /* NODE_CONTAINER */
} dnode;

typedef struct slot {
    uint32_t node;               /* its dnode */
    char *path;                  /* absolute */
    hpc_container *c;            /* NULL while closed */
    char *error;                 /* why it cannot be opened */
    struct stat failed;          /* the file as it was when the open failed */
    int refs;                    /* calls using c now */
    int stale;                   /* its source changed: reopen when unused */
    GList *lru;                  /* in m->open while open */
    GMutex open_lock;
} slot;

typedef struct big_id {
    uint32_t slot;
    hpc_ino inner;
} big_id;

struct hpc_mount {
    hpc_container *single;       /* SOURCE is one container */
    char *root;                  /* else the run directory */
    hpc_options opts;            /* for every container opened */
    unsigned max_open;
    GMutex lock;
    GPtrArray *nodes;            /* dnode *, index = id - DIR_INO_FIRST */
    GHashTable *node_of;         /* rel -> id */
    GPtrArray *slots;            /* slot *, index = slot number - 1 */
    GQueue open;                 /* open slots, most recently used first */
    GArray *big;                 /* big_id, index = ino & ~BIG_BIT */
    GHashTable *big_of;          /* "slot:inner" -> index + 1 */
    int64_t mtime;
    uint32_t uid, gid;
};

/* ---- ids ---------------------------------------------------------------- */

static hpc_ino encode(hpc_mount *m, uint32_t s, hpc_ino inner)
{
    if (inner <= INNER_MASK)
        return ((hpc_ino)s << SLOT_SHIFT) | inner;
    char key[48];
    g_snprintf(key, sizeof key, "%u:%" G_GUINT64_FORMAT, s, inner);
    g_mutex_lock(&m->lock);
    guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(m->big_of, key));
    if (!idx) {
        big_id b = { s, inner };
        g_array_append_val(m->big, b);
        idx = m->big->len;
        g_hash_table_insert(m->big_of, g_strdup(key), GUINT_TO_POINTER(idx));
    }
    g_mutex_unlock(&m->lock);
    return BIG_BIT | (idx - 1);
}

/* Split ino into slot (0: the layer's own node) and inner id. */
static int decode(hpc_mount *m, hpc_ino ino, uint32_t *s, hpc_ino *inner)
{
    int rc = HPC_OK;
    if (ino & BIG_BIT) {
        g_mutex_lock(&m->lock);
        uint64_t i = ino & ~BIG_BIT;
        if (i < m->big->len) {
            *s = g_array_index(m->big, big_id, i).slot;
            *inner = g_array_index(m->big, big_id, i).inner;
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

/* ---- the layer's own nodes ---------------------------------------------- */

static char *abs_path(hpc_mount *m, const char *rel)
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

/* The best reader's format for path (head: its first len bytes, NULL for
 * a directory), or NULL. */
static const hpc_format *probe_any(const char *path, const unsigned char *head, size_t len)
{
    const hpc_format *best = NULL;
    int best_score = 0;
    for (const hpc_format *const *f = hpc_formats; *f; f++) {
        int sc = (*f)->probe(path, head, len);
        if (sc > best_score) {
            best_score = sc;
            best = *f;
        }
    }
    return best;
}

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
    return n > 0 ? probe_any(path, head, (size_t)n) : NULL;
}

/* Does dir hold (directly, among its first entries) a file that a reader
 * other than f claims? */
static gboolean holds_other_format(const char *dir, const hpc_format *f)
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
    const hpc_format *f = probe_any(path, NULL, 0);
    return f && !holds_other_format(path, f) ? f : NULL;
}

static dnode *node_get(hpc_mount *m, uint64_t id)
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
    slot *s = g_new0(slot, 1);
    s->node = (uint32_t)id;
    s->path = g_strdup(path);
    g_mutex_init(&s->open_lock);
    g_ptr_array_add(m->slots, s);
    return m->slots->len;
}

/* What rel is now: find or make its node, probe it again if it changed.
 * *ino and *st (the directory layer's attributes) are filled. */
static int node_at(hpc_mount *m, const char *rel, hpc_stat *st)
{
    char *path = abs_path(m, rel);
    struct stat sb;
    int rc = lstat(path, &sb) == 0 ? HPC_OK : HPC_E_NOENT;
    if (rc != HPC_OK)
        goto out;
    node_kind kind = S_ISDIR(sb.st_mode) ? NODE_DIR : S_ISREG(sb.st_mode) ? NODE_FILE
                   : S_ISLNK(sb.st_mode) ? NODE_LINK : NODE_FILE;
    if (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
        rc = HPC_E_NOENT;          /* FIFOs, devices, sockets are not shown */
        goto out;
    }
    g_mutex_lock(&m->lock);
    gpointer idp = g_hash_table_lookup(m->node_of, rel);
    uint64_t id = GPOINTER_TO_SIZE(idp);
    dnode *d = id ? node_get(m, id) : NULL;
    gboolean fresh = d && d->mtime == (int64_t)sb.st_mtime && d->size == (uint64_t)sb.st_size &&
                     (d->kind == kind || (d->kind == NODE_CONTAINER && kind != NODE_LINK));
    g_mutex_unlock(&m->lock);
    if (!fresh) {
        const hpc_format *f = (kind == NODE_LINK || m->opts.noexpand || !*rel) ? NULL
                              : probe(path, kind == NODE_DIR);
        g_mutex_lock(&m->lock);
        if (!d) {
            d = g_new0(dnode, 1);
            d->rel = g_strdup(rel);
            g_ptr_array_add(m->nodes, d);
            id = DIR_INO_FIRST + m->nodes->len - 1;
            g_hash_table_insert(m->node_of, d->rel, GSIZE_TO_POINTER(id));
        }
        d->mtime = sb.st_mtime;
        d->size = (uint64_t)sb.st_size;
        d->kind = f ? NODE_CONTAINER : kind;
        if (f && !d->slot)
            d->slot = slot_new(m, id, path);
        if (f && !d->slot)
            d->kind = kind;        /* out of slots: shown as it is */
        g_mutex_unlock(&m->lock);
    }
    memset(st, 0, sizeof *st);
    st->mtime = sb.st_mtime;
    if (d->kind == NODE_CONTAINER) {
        st->ino = ((hpc_ino)d->slot << SLOT_SHIFT) | HPC_INO_ROOT;
        st->mode = HPC_MODE_DIR;
        st->nlink = 2;
    } else {
        st->ino = *rel ? id : HPC_INO_ROOT;
        st->mode = d->kind == NODE_DIR ? HPC_MODE_DIR : d->kind == NODE_LINK ? HPC_MODE_LINK
                                                                             : HPC_MODE_FILE;
        st->nlink = d->kind == NODE_DIR ? 2 : 1;
        st->size = d->kind == NODE_DIR ? 0 : (uint64_t)sb.st_size;
    }
out:
    g_free(path);
    return rc;
}

/* The relative path of the layer's node ino (a new string), or NULL. */
static char *node_rel(hpc_mount *m, hpc_ino ino)
{
    if (ino == HPC_INO_ROOT)
        return g_strdup("");
    g_mutex_lock(&m->lock);
    dnode *d = node_get(m, ino);
    char *rel = d ? g_strdup(d->rel) : NULL;
    g_mutex_unlock(&m->lock);
    return rel;
}

/* ---- container slots ---------------------------------------------------- */

static slot *slot_get(hpc_mount *m, uint32_t s)
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
        slot *s = l->data;
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

static void close_all(GSList *list)
{
    g_slist_free_full(list, (GDestroyNotify)hpc_container_close);
}

/* Is the file of a slot whose open failed still the file that failed?
 * Then it is not opened again: a damaged file would cost a helper's whole
 * CPU limit on every lookup of a walk (s->open_lock held). */
static gboolean failed_unchanged(const slot *s)
{
    struct stat sb;
    return s->error && stat(s->path, &sb) == 0 && sb.st_dev == s->failed.st_dev &&
           sb.st_ino == s->failed.st_ino && sb.st_size == s->failed.st_size &&
           sb.st_mtim.tv_sec == s->failed.st_mtim.tv_sec &&
           sb.st_mtim.tv_nsec == s->failed.st_mtim.tv_nsec &&
           sb.st_ctim.tv_sec == s->failed.st_ctim.tv_sec &&
           sb.st_ctim.tv_nsec == s->failed.st_ctim.tv_nsec;
}

/* Open slot s's container if it is closed (s->open_lock held). */
static void slot_open(hpc_mount *m, slot *s)
{
    hpc_container *c = NULL;
    GError *err = NULL;
    struct stat before;
    if (failed_unchanged(s))
        return;
    if (stat(s->path, &before) != 0)
        memset(&before, 0, sizeof before);
    if (hpc_container_open(s->path, &m->opts, &c, &err) != HPC_OK) {
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
static int slot_acquire(hpc_mount *m, uint32_t sn, slot **out, hpc_container **c)
{
    GSList *stale = NULL;
    g_mutex_lock(&m->lock);
    slot *s = slot_get(m, sn);
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

static int slot_release(hpc_mount *m, slot *s, int rc)
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

/* ---- open / close ------------------------------------------------------- */

/* SOURCE is one container: a file, a forced format, or a directory a
 * reader claims whole (an FTI tree at any of its levels) that holds no file
 * of another format (then it is a run directory around them). */
static gboolean is_one_container(const char *source, const hpc_options *opts)
{
    struct stat st;
    if (opts->format || stat(source, &st) != 0 || !S_ISDIR(st.st_mode))
        return TRUE;
    if (opts->rundir)
        return FALSE;
    const hpc_format *f = probe_any(source, NULL, 0);
    return f && !holds_other_format(source, f);
}

int hpc_mount_open(const char *given, const hpc_options *opts, hpc_mount **out,
                   GError **err)
{
    hpc_mount *m = g_new0(hpc_mount, 1);
    struct stat st;
    int rc;
    /* absolute: the daemon runs from "/", and .info names it the same way
     * whichever front end opened it */
    char *source = g_canonicalize_filename(given, NULL);
    hpc_options_copy(&m->opts, opts);
    if (is_one_container(source, &m->opts)) {
        rc = hpc_container_open(source, &m->opts, &m->single, err);
        if (rc != HPC_OK)
            goto fail;
        g_free(source);
        *out = m;
        return HPC_OK;
    }
    if (stat(source, &st) != 0 || access(source, R_OK | X_OK) != 0) {
        rc = hpc_fail(err, HPC_E_NOENT, source, NULL, 0, "cannot read the directory: %s",
                      g_strerror(errno));
        goto fail;
    }
    m->root = source;
    source = NULL;
    m->mtime = st.st_mtime;
    m->uid = st.st_uid;
    m->gid = st.st_gid;
    m->max_open = opts->max_containers ? opts->max_containers : 16;
    /* cache_size is the whole mount's: each open container gets its share */
    m->opts.cache_size = MAX(opts->cache_size / m->max_open, MIN_CONTAINER_CACHE);
    g_mutex_init(&m->lock);
    m->nodes = g_ptr_array_new();
    m->node_of = g_hash_table_new(g_str_hash, g_str_equal);
    m->slots = g_ptr_array_new();
    g_queue_init(&m->open);
    m->big = g_array_new(FALSE, FALSE, sizeof(big_id));
    m->big_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    *out = m;
    return HPC_OK;
fail:
    hpc_options_clear(&m->opts);
    g_free(source);
    g_free(m);
    return rc;
}

void hpc_mount_close(hpc_mount *m)
{
    if (!m)
        return;
    hpc_container_close(m->single);
    if (m->root) {
        for (guint i = 0; i < m->slots->len; i++) {
            slot *s = g_ptr_array_index(m->slots, i);
            hpc_container_close(s->c);
            g_mutex_clear(&s->open_lock);
            g_free(s->path);
            g_free(s->error);
            g_free(s);
        }
        for (guint i = 0; i < m->nodes->len; i++) {
            dnode *d = g_ptr_array_index(m->nodes, i);
            g_free(d->rel);
            g_free(d);
        }
        g_ptr_array_free(m->slots, TRUE);
        g_ptr_array_free(m->nodes, TRUE);
        g_hash_table_destroy(m->node_of);
        g_queue_clear(&m->open);
        g_array_free(m->big, TRUE);
        g_hash_table_destroy(m->big_of);
        g_mutex_clear(&m->lock);
    }
    hpc_options_clear(&m->opts);
    g_free(m->root);
    g_free(m);
}

gboolean hpc_mount_is_directory(const hpc_mount *m)
{
    return m->root != NULL;
}

const char *hpc_mount_source(const hpc_mount *m)
{
    return m->root ? m->root : m->single->path;
}

/* ---- the directory layer's .info ---------------------------------------- */

static GString *dir_info(hpc_mount *m)
{
    GString *o = g_string_new(NULL);
    g_mutex_lock(&m->lock);
    g_string_append_printf(o, "format: directory\nsource: %s\ncontainers_seen: %u\n"
                           "containers_open: %u\nmax_containers: %u\n\n",
                           m->root, m->slots->len, m->open.length, m->max_open);
    g_string_append(o, "path\tstate\tformat_or_reason\n");
    for (guint i = 0; i < m->slots->len; i++) {
        slot *s = g_ptr_array_index(m->slots, i);
        dnode *d = node_get(m, s->node);
        g_string_append_printf(o, "%s\t%s\t%s\n", d ? d->rel : "?",
                               s->c ? "open" : s->error ? "failed" : "closed",
                               s->c ? hpc_container_format_name(s->c) : s->error ? s->error : "-");
    }
    g_mutex_unlock(&m->lock);
    return o;
}

/* .info of a container that failed to open: the reason, one line. */
static GString *failed_info(hpc_mount *m, slot *s)
{
    GString *o = g_string_new(NULL);
    g_mutex_lock(&m->lock);
    g_string_append_printf(o, "format: unknown\nsource: %s\nerror: %s\n", s->path,
                           s->error ? s->error : "cannot be opened");
    g_mutex_unlock(&m->lock);
    return o;
}

static void text_stat(hpc_mount *m, hpc_ino ino, GString *text, hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = ino;
    st->mode = HPC_MODE_FILE;
    st->nlink = 1;
    st->size = text->len;
    st->mtime = m->mtime;
    g_string_free(text, TRUE);
}

/* ---- calls into a container's slot -------------------------------------- */

/* Translate a container's attributes to mount ids (in place). */
static void outward(hpc_mount *m, uint32_t sn, hpc_stat *st)
{
    if (st->ino == HPC_INO_INFO)
        st->partial = 1;     /* its text changes: the kernel must ask again */
    st->ino = encode(m, sn, st->ino);
}

typedef struct fwd_dir {
    hpc_mount *m;
    uint32_t slot;
    hpc_dirent_fn fn;
    void *ctx;
} fwd_dir;

static int fwd_dirent(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    fwd_dir *f = p;
    hpc_stat s = *st;
    outward(f->m, f->slot, &s);
    return f->fn(f->ctx, name, &s, next);
}

/* A container slot's failed state: its root is an empty directory with
 * .info, the reason. */
static int failed_call(hpc_mount *m, slot *s, uint32_t sn, hpc_ino inner, hpc_stat *st)
{
    if (inner == HPC_INO_ROOT) {
        memset(st, 0, sizeof *st);
        st->ino = ((hpc_ino)sn << SLOT_SHIFT) | HPC_INO_ROOT;
        st->mode = HPC_MODE_DIR;
        st->nlink = 2;
        st->mtime = m->mtime;
        return HPC_OK;
    }
    if (inner == HPC_INO_INFO) {
        text_stat(m, ((hpc_ino)sn << SLOT_SHIFT) | HPC_INO_INFO, failed_info(m, s), st);
        return HPC_OK;
    }
    return HPC_E_NOENT;
}

/* ---- tree --------------------------------------------------------------- */

int hpc_mount_lookup(hpc_mount *m, hpc_ino parent, const char *name, hpc_stat *st)
{
    if (m->single)
        return hpc_container_lookup(m->single, parent, name, st);
    uint32_t sn;
    hpc_ino inner;
    int rc = decode(m, parent, &sn, &inner);
    if (rc != HPC_OK)
        return rc;
    if (sn == 0) {
        if (parent == HPC_INO_ROOT && strcmp(name, ".info") == 0) {
            text_stat(m, HPC_INO_INFO, dir_info(m), st);
            return HPC_OK;
        }
        char *rel = node_rel(m, parent);
        if (!rel)
            return HPC_E_NOENT;
        char *child = *rel ? g_build_filename(rel, name, NULL) : g_strdup(name);
        rc = strchr(name, '/') ? HPC_E_NOENT : node_at(m, child, st);
        g_free(child);
        g_free(rel);
        return rc;
    }
    slot *s;
    hpc_container *c;
    if ((rc = slot_acquire(m, sn, &s, &c)) != HPC_OK)
        return rc;
    if (!c)
        rc = inner == HPC_INO_ROOT && strcmp(name, ".info") == 0
                 ? failed_call(m, s, sn, HPC_INO_INFO, st) : HPC_E_NOENT;
    else if ((rc = hpc_container_lookup(c, inner, name, st)) == HPC_OK)
        outward(m, sn, st);
    return slot_release(m, s, rc);
}

int hpc_mount_getattr(hpc_mount *m, hpc_ino ino, hpc_stat *st)
{
    if (m->single)
        return hpc_container_getattr(m->single, ino, st);
    uint32_t sn;
    hpc_ino inner;
    int rc = decode(m, ino, &sn, &inner);
    if (rc != HPC_OK)
        return rc;
    if (sn == 0) {
        if (ino == HPC_INO_INFO) {
            text_stat(m, HPC_INO_INFO, dir_info(m), st);
            return HPC_OK;
        }
        char *rel = node_rel(m, ino);
        rc = rel ? node_at(m, rel, st) : HPC_E_NOENT;
        g_free(rel);
        return rc;
    }
    slot *s;
    hpc_container *c;
    if ((rc = slot_acquire(m, sn, &s, &c)) != HPC_OK)
        return rc;
    if (!c)
        rc = failed_call(m, s, sn, inner, st);
    else if ((rc = hpc_container_getattr(c, inner, st)) == HPC_OK)
        outward(m, sn, st);
    return slot_release(m, s, rc);
}

static int cmp_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* List a directory of the run directory: ".", "..", (root) ".info", then
 * its entries sorted by name; cookie k resumes after the k-th. */
static int dir_readdir(hpc_mount *m, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    hpc_stat self, st;
    char *rel = node_rel(m, dir);
    int rc = rel ? node_at(m, rel, &self) : HPC_E_NOENT;
    if (rc != HPC_OK || !S_ISDIR(self.mode) || self.ino != dir) {
        g_free(rel);
        return rc != HPC_OK ? rc : HPC_E_NOTDIR;
    }
    uint64_t k = 0;
    if (cookie <= k++ && fn(ctx, ".", &self, k))
        goto out;
    if (cookie <= k++ && fn(ctx, "..", &self, k))
        goto out;
    if (dir == HPC_INO_ROOT && cookie <= k++) {
        text_stat(m, HPC_INO_INFO, dir_info(m), &st);
        if (fn(ctx, ".info", &st, k))
            goto out;
    }
    char *path = abs_path(m, rel);
    GDir *d = g_dir_open(path, 0, NULL);
    g_free(path);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while (d && (name = g_dir_read_name(d)))
        if (!(dir == HPC_INO_ROOT && strcmp(name, ".info") == 0))
            g_ptr_array_add(names, g_strdup(name));
    if (d)
        g_dir_close(d);
    g_ptr_array_sort(names, cmp_names);
    for (guint i = 0; i < names->len; i++, k++) {
        if (cookie > k)
            continue;
        const char *n = g_ptr_array_index(names, i);
        char *child = *rel ? g_build_filename(rel, n, NULL) : g_strdup(n);
        int found = node_at(m, child, &st) == HPC_OK;
        g_free(child);
        if (found && fn(ctx, n, &st, k + 1))
            break;
    }
    g_ptr_array_free(names, TRUE);
out:
    g_free(rel);
    return HPC_OK;
}

int hpc_mount_readdir(hpc_mount *m, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    if (m->single)
        return hpc_container_readdir(m->single, dir, cookie, fn, ctx);
    uint32_t sn;
    hpc_ino inner;
    int rc = decode(m, dir, &sn, &inner);
    if (rc != HPC_OK)
        return rc;
    if (sn == 0)
        return dir_readdir(m, dir, cookie, fn, ctx);
    slot *s;
    hpc_container *c;
    if ((rc = slot_acquire(m, sn, &s, &c)) != HPC_OK)
        return rc;
    if (c) {
        fwd_dir f = { m, sn, fn, ctx };
        rc = hpc_container_readdir(c, inner, cookie, fwd_dirent, &f);
    } else if (inner != HPC_INO_ROOT) {
        rc = HPC_E_NOENT;
    } else {
        hpc_stat root, info;
        failed_call(m, s, sn, HPC_INO_ROOT, &root);
        failed_call(m, s, sn, HPC_INO_INFO, &info);
        if (cookie < 1 && fn(ctx, ".", &root, 1)) {
        } else if (cookie < 2 && fn(ctx, "..", &root, 2)) {
        } else if (cookie < 3) {
            fn(ctx, ".info", &info, 3);
        }
    }
    return slot_release(m, s, rc);
}

int hpc_mount_readlink(hpc_mount *m, hpc_ino ino, char **target)
{
    if (m->single)
        return hpc_container_readlink(m->single, ino, target);
    uint32_t sn;
    hpc_ino inner;
    int rc = decode(m, ino, &sn, &inner);
    if (rc != HPC_OK)
        return rc;
    if (sn == 0) {
        char *rel = node_rel(m, ino), *path = rel ? abs_path(m, rel) : NULL;
        *target = path ? g_file_read_link(path, NULL) : NULL;
        g_free(rel);
        g_free(path);
        return *target ? HPC_OK : HPC_E_INVAL;
    }
    slot *s;
    hpc_container *c;
    if ((rc = slot_acquire(m, sn, &s, &c)) != HPC_OK)
        return rc;
    rc = c ? hpc_container_readlink(c, inner, target) : HPC_E_INVAL;
    return slot_release(m, s, rc);
}

/* ---- data --------------------------------------------------------------- */

/* A plain file of the run directory: pread of the real file. */
static int plain_read(hpc_mount *m, hpc_ino ino, void *buf, size_t len, uint64_t off,
                      size_t *nread)
{
    char *rel = node_rel(m, ino), *path = rel ? abs_path(m, rel) : NULL;
    int rc = HPC_E_NOENT, fd = path ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        size_t done = 0;
        rc = HPC_OK;
        while (done < len) {
            ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                rc = HPC_E_IO;
            if (n <= 0)
                break;
            done += (size_t)n;
        }
        *nread = rc == HPC_OK ? done : 0;
    }
    if (fd >= 0)
        close(fd);
    g_free(rel);
    g_free(path);
    return rc;
}

static int text_read(GString *text, void *buf, size_t len, uint64_t off, size_t *nread)
{
    *nread = off < text->len ? MIN(len, text->len - off) : 0;
    memcpy(buf, text->str + (off < text->len ? off : 0), *nread);
    g_string_free(text, TRUE);
    return HPC_OK;
}

int hpc_mount_read(hpc_mount *m, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread)
{
    *nread = 0;
    if (m->single)
        return hpc_container_read(m->single, ino, buf, len, off, nread);
    uint32_t sn;
    hpc_ino inner;
    int rc = decode(m, ino, &sn, &inner);
    if (rc != HPC_OK)
        return rc;
    if (sn == 0)
        return ino == HPC_INO_INFO ? text_read(dir_info(m), buf, len, off, nread)
                                   : plain_read(m, ino, buf, len, off, nread);
    slot *s;
    hpc_container *c;
    if ((rc = slot_acquire(m, sn, &s, &c)) != HPC_OK)
        return rc;
    if (c)
        rc = hpc_container_read(c, inner, buf, len, off, nread);
    else
        rc = inner == HPC_INO_INFO ? text_read(failed_info(m, s), buf, len, off, nread)
                                   : HPC_E_NOENT;
    return slot_release(m, s, rc);
}

int hpc_mount_map(hpc_mount *m, hpc_ino ino, uint64_t off, uint64_t len,
                  hpc_extent *ext, unsigned max, unsigned *n)
{
    *n = 0;
    if (m->single)
        return hpc_container_map(m->single, ino, off, len, ext, max, n);
    uint32_t sn;
    hpc_ino inner;
    int rc = decode(m, ino, &sn, &inner);
    if (rc != HPC_OK || sn == 0)
        return rc != HPC_OK ? rc : HPC_E_NOTSUP;
    slot *s;
    hpc_container *c;
    if ((rc = slot_acquire(m, sn, &s, &c)) != HPC_OK)
        return rc;
    rc = c ? hpc_container_map(c, inner, off, len, ext, max, n) : HPC_E_NOTSUP;
    if (rc != HPC_OK)
        slot_release(m, s, rc);   /* on success the slot stays taken until unmap */
    return rc;
}

void hpc_mount_unmap(hpc_mount *m, hpc_ino ino)
{
    uint32_t sn;
    hpc_ino inner;
    if (m->single || decode(m, ino, &sn, &inner) != HPC_OK || sn == 0)
        return;
    g_mutex_lock(&m->lock);
    slot *s = slot_get(m, sn);
    g_mutex_unlock(&m->lock);
    if (s)
        slot_release(m, s, HPC_OK);
}

/* The open container of slot sn, held by a map (no acquire), or NULL. */
static hpc_container *held_container(hpc_mount *m, uint32_t sn, slot **out)
{
    g_mutex_lock(&m->lock);
    slot *s = slot_get(m, sn);
    hpc_container *c = s ? s->c : NULL;
    g_mutex_unlock(&m->lock);
    *out = s;
    return c;
}

int hpc_mount_extents_unchanged(hpc_mount *m, hpc_ino ino, const hpc_extent *ext, unsigned n)
{
    uint32_t sn;
    hpc_ino inner;
    slot *s;
    if (m->single)
        return hpc_container_extents_unchanged(m->single, ext, n);
    if (decode(m, ino, &sn, &inner) != HPC_OK || sn == 0)
        return HPC_OK;
    hpc_container *c = held_container(m, sn, &s);
    int rc = c ? hpc_container_extents_unchanged(c, ext, n) : HPC_OK;
    if (rc == HPC_E_CHANGED) {
        g_mutex_lock(&m->lock);
        s->stale = 1;
        g_mutex_unlock(&m->lock);
    }
    return rc;
}

int hpc_mount_sources_unchanged(hpc_mount *m, hpc_ino ino)
{
    uint32_t sn;
    hpc_ino inner;
    if (m->single)
        return hpc_container_sources_unchanged(m->single);
    if (decode(m, ino, &sn, &inner) != HPC_OK || sn == 0)
        return HPC_OK;
    slot *s;
    hpc_container *c;
    int rc = slot_acquire(m, sn, &s, &c);
    if (rc == HPC_OK)
        rc = slot_release(m, s, c ? hpc_container_sources_unchanged(c) : HPC_OK);
    return rc;
}

void hpc_mount_statfs(hpc_mount *m, uint64_t *bytes, uint32_t *bsize)
{
    *bytes = 0;
    *bsize = 65536;
    if (m->single) {
        *bytes = hpc_container_source_bytes(m->single);
        *bsize = hpc_container_block_size(m->single);
        return;
    }
    struct statvfs sv;
    if (statvfs(m->root, &sv) == 0)
        *bytes = (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
}

/* ---- extended attributes, paths, kernel hints --------------------------- */

int hpc_mount_getxattr(hpc_mount *m, hpc_ino ino, const char *name, void **value, size_t *len)
{
    if (m->single)
        return hpc_container_getxattr(m->single, ino, name, value, len);
    uint32_t sn;
    hpc_ino inner;
    int rc = decode(m, ino, &sn, &inner);
    if (rc != HPC_OK || sn == 0)
        return rc != HPC_OK ? rc : HPC_E_NODATA;
    slot *s;
    hpc_container *c;
    if ((rc = slot_acquire(m, sn, &s, &c)) != HPC_OK)
        return rc;
    rc = c ? hpc_container_getxattr(c, inner, name, value, len) : HPC_E_NODATA;
    return slot_release(m, s, rc);
}

int hpc_mount_chunks(hpc_mount *m, hpc_ino ino, GString *out)
{
    if (m->single)
        return hpc_container_chunks(m->single, ino, out);
    uint32_t sn;
    hpc_ino inner;
    int rc = decode(m, ino, &sn, &inner);
    if (rc != HPC_OK || sn == 0)
        return rc != HPC_OK ? rc : HPC_E_NOTSUP;
    slot *s;
    hpc_container *c;
    if ((rc = slot_acquire(m, sn, &s, &c)) != HPC_OK)
        return rc;
    rc = c ? hpc_container_chunks(c, inner, out) : HPC_E_NOTSUP;
    return slot_release(m, s, rc);
}

int hpc_mount_listxattr(hpc_mount *m, hpc_ino ino, GString *out)
{
    if (m->single)
        return hpc_container_listxattr(m->single, ino, out);
    uint32_t sn;
    hpc_ino inner;
    int rc = decode(m, ino, &sn, &inner);
    if (rc != HPC_OK || sn == 0)
        return rc;
    slot *s;
    hpc_container *c;
    if ((rc = slot_acquire(m, sn, &s, &c)) != HPC_OK)
        return rc;
    rc = c ? hpc_container_listxattr(c, inner, out) : HPC_OK;
    return slot_release(m, s, rc);
}

static int lookup_in(void *m, hpc_ino parent, const char *name, hpc_stat *st)
{
    return hpc_mount_lookup(m, parent, name, st);
}

int hpc_mount_resolve(hpc_mount *m, const char *path, hpc_stat *st)
{
    int rc = hpc_mount_getattr(m, HPC_INO_ROOT, st);
    return rc == HPC_OK ? hpc_path_walk(path, lookup_in, m, st) : rc;
}

void hpc_mount_node_meta(hpc_mount *m, hpc_ino ino, hpc_node_meta *meta)
{
    hpc_container *c = m->single;
    uint32_t sn;
    hpc_ino inner = 0;
    memset(meta, 0, sizeof *meta);
    meta->timeout = DIR_TIMEOUT;
    meta->uid = m->uid;
    meta->gid = m->gid;
    meta->blksize = 65536;
    if (c) {
        meta->timeout = hpc_container_is_live(c) ? DIR_TIMEOUT : SINGLE_STATIC_TIMEOUT;
        meta->direct_io = ino == HPC_INO_INFO;  /* regenerated when things change */
        meta->keep_cache = !meta->direct_io;   /* the bytes never change */
        hpc_container_owner(c, &meta->uid, &meta->gid);
        meta->blksize = hpc_container_block_size(c);
        return;
    }
    /* a run directory: files and containers may change, .info texts do */
    if (decode(m, ino, &sn, &inner) != HPC_OK)
        return;
    meta->direct_io = inner == HPC_INO_INFO;
    g_mutex_lock(&m->lock);
    slot *s = sn ? slot_get(m, sn) : NULL;
    if (s && s->c) {
        hpc_container_owner(s->c, &meta->uid, &meta->gid);
    }
    g_mutex_unlock(&m->lock);
}
