/* hpc_tree.c - in-memory trees for small containers. */
#include "hpc_tree.h"

#include <glib.h>
#include <string.h>

typedef struct tree_dirent {
    char *name;
    hpc_ino ino;
} tree_dirent;

typedef struct tree_xattr {
    char *name;
    GBytes *value;
} tree_xattr;

typedef struct tree_node {
    uint32_t mode;
    uint32_t nlink;
    uint64_t size;
    uint64_t data;
    GArray *entries;       /* directories: tree_dirent, in insertion order */
    GHashTable *byname;    /* directories: name -> index + 1 in entries */
    GArray *xattrs;        /* tree_xattr or NULL */
    char *target;          /* symlinks */
} tree_node;

struct hpc_tree {
    GArray *nodes;         /* tree_node; index 0 is the root */
};

static tree_node *node_of(const hpc_tree *t, hpc_ino ino)
{
    guint i;
    if (ino == HPC_INO_ROOT)
        i = 0;
    else if (ino >= HPC_INO_FIRST && ino - HPC_INO_FIRST + 1 < t->nodes->len)
        i = (guint)(ino - HPC_INO_FIRST + 1);
    else
        return NULL;
    return &g_array_index(t->nodes, tree_node, i);
}

static hpc_ino ino_of_index(guint i)
{
    return i == 0 ? HPC_INO_ROOT : HPC_INO_FIRST + i - 1;
}

static void node_init_dir(tree_node *n)
{
    n->entries = g_array_new(FALSE, FALSE, sizeof(tree_dirent));
    n->byname = g_hash_table_new(g_str_hash, g_str_equal);
}

hpc_tree *hpc_tree_new(void)
{
    hpc_tree *t = g_new0(hpc_tree, 1);
    t->nodes = g_array_new(FALSE, TRUE, sizeof(tree_node));
    tree_node root = { .mode = HPC_MODE_DIR, .nlink = 2 };
    node_init_dir(&root);
    g_array_append_val(t->nodes, root);
    return t;
}

void hpc_tree_free(hpc_tree *t)
{
    if (!t)
        return;
    for (guint i = 0; i < t->nodes->len; i++) {
        tree_node *n = &g_array_index(t->nodes, tree_node, i);
        if (n->entries) {
            for (guint j = 0; j < n->entries->len; j++)
                g_free(g_array_index(n->entries, tree_dirent, j).name);
            g_array_free(n->entries, TRUE);
            g_hash_table_destroy(n->byname);
        }
        if (n->xattrs) {
            for (guint j = 0; j < n->xattrs->len; j++) {
                tree_xattr *x = &g_array_index(n->xattrs, tree_xattr, j);
                g_free(x->name);
                g_bytes_unref(x->value);
            }
            g_array_free(n->xattrs, TRUE);
        }
        g_free(n->target);
    }
    g_array_free(t->nodes, TRUE);
    g_free(t);
}

/* Enter (name -> ino) into directory dir. */
static int dir_insert(tree_node *dir, const char *name, hpc_ino ino)
{
    if (!dir->entries)
        return HPC_E_NOTDIR;
    if (name[0] == '\0' || strchr(name, '/') || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0 || g_hash_table_contains(dir->byname, name))
        return HPC_E_INVAL;
    tree_dirent e = { g_strdup(name), ino };
    g_array_append_val(dir->entries, e);
    g_hash_table_insert(dir->byname, e.name, GUINT_TO_POINTER(dir->entries->len));
    return HPC_OK;
}

int hpc_tree_add(hpc_tree *t, hpc_ino parent, const char *name, uint32_t mode,
                 uint64_t size, uint64_t data, hpc_ino *ino)
{
    tree_node *dir = node_of(t, parent);
    if (!dir)
        return HPC_E_NOENT;
    hpc_ino id = ino_of_index(t->nodes->len);
    int rc = dir_insert(dir, name, id);
    if (rc != HPC_OK)
        return rc;
    tree_node n = { .mode = mode, .nlink = S_ISDIR(mode) ? 2 : 1, .size = size, .data = data };
    if (S_ISDIR(mode)) {
        node_init_dir(&n);
        dir->nlink++;          /* dir may move when the array grows: update first */
    }
    g_array_append_val(t->nodes, n);
    if (ino)
        *ino = id;
    return HPC_OK;
}

int hpc_tree_add_path(hpc_tree *t, hpc_ino parent, const char *path, uint32_t mode,
                      uint64_t size, uint64_t data, hpc_ino *ino)
{
    gchar **parts = g_strsplit(path, "/", -1);
    int rc = HPC_OK;
    guint n = g_strv_length(parts), last = n;
    while (last > 0 && parts[last - 1][0] == '\0')
        last--;
    hpc_ino cur = parent;
    for (guint i = 0; i < last && rc == HPC_OK; i++) {
        if (parts[i][0] == '\0')
            continue;              /* "a//b", leading '/' */
        if (i + 1 == last) {
            rc = hpc_tree_add(t, cur, parts[i], mode, size, data, ino);
            break;
        }
        hpc_stat st;
        if (hpc_tree_lookup(t, cur, parts[i], &st) == HPC_OK) {
            if (!S_ISDIR(st.mode))
                rc = HPC_E_NOTDIR;
            cur = st.ino;
        } else {
            rc = hpc_tree_add(t, cur, parts[i], HPC_MODE_DIR, 0, 0, &cur);
        }
    }
    if (last == 0)
        rc = HPC_E_INVAL;
    g_strfreev(parts);
    return rc;
}

int hpc_tree_link(hpc_tree *t, hpc_ino parent, const char *name, hpc_ino target)
{
    tree_node *dir = node_of(t, parent), *n = node_of(t, target);
    if (!dir || !n)
        return HPC_E_NOENT;
    if (S_ISDIR(n->mode))
        return HPC_E_ISDIR;
    int rc = dir_insert(dir, name, target);
    if (rc == HPC_OK)
        n->nlink++;
    return rc;
}

int hpc_tree_set_symlink(hpc_tree *t, hpc_ino ino, const char *target)
{
    tree_node *n = node_of(t, ino);
    if (!n || !S_ISLNK(n->mode))
        return HPC_E_INVAL;
    g_free(n->target);
    n->target = g_strdup(target);
    n->size = strlen(target);
    return HPC_OK;
}

int hpc_tree_add_xattr(hpc_tree *t, hpc_ino ino, const char *name,
                       const void *value, size_t len)
{
    tree_node *n = node_of(t, ino);
    if (!n)
        return HPC_E_NOENT;
    if (!n->xattrs)
        n->xattrs = g_array_new(FALSE, FALSE, sizeof(tree_xattr));
    tree_xattr x = { g_strdup(name), g_bytes_new(value, len) };
    g_array_append_val(n->xattrs, x);
    return HPC_OK;
}

int hpc_tree_set_size(hpc_tree *t, hpc_ino ino, uint64_t size)
{
    tree_node *n = node_of(t, ino);
    if (!n)
        return HPC_E_NOENT;
    n->size = size;
    return HPC_OK;
}

int hpc_tree_data(const hpc_tree *t, hpc_ino ino, uint64_t *data)
{
    tree_node *n = node_of(t, ino);
    if (!n)
        return HPC_E_NOENT;
    *data = n->data;
    return HPC_OK;
}

uint64_t hpc_tree_count(const hpc_tree *t)
{
    return t->nodes->len;
}

static void fill_stat(const tree_node *n, hpc_ino ino, hpc_stat *st)
{
    memset(st, 0, sizeof *st);
    st->ino = ino;
    st->mode = n->mode;
    st->nlink = n->nlink;
    st->size = n->size;
}

int hpc_tree_lookup(const hpc_tree *t, hpc_ino parent, const char *name, hpc_stat *st)
{
    tree_node *dir = node_of(t, parent);
    if (!dir)
        return HPC_E_NOENT;
    if (!dir->entries)
        return HPC_E_NOTDIR;
    guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(dir->byname, name));
    if (idx == 0)
        return HPC_E_NOENT;
    hpc_ino ino = g_array_index(dir->entries, tree_dirent, idx - 1).ino;
    fill_stat(node_of(t, ino), ino, st);
    return HPC_OK;
}

int hpc_tree_getattr(const hpc_tree *t, hpc_ino ino, hpc_stat *st)
{
    tree_node *n = node_of(t, ino);
    if (!n)
        return HPC_E_NOENT;
    fill_stat(n, ino, st);
    return HPC_OK;
}

int hpc_tree_readdir(const hpc_tree *t, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    tree_node *d = node_of(t, dir);
    if (!d)
        return HPC_E_NOENT;
    if (!d->entries)
        return HPC_E_NOTDIR;
    for (uint64_t i = cookie; i < d->entries->len; i++) {
        tree_dirent *e = &g_array_index(d->entries, tree_dirent, i);
        hpc_stat st;
        fill_stat(node_of(t, e->ino), e->ino, &st);
        if (fn(ctx, e->name, &st, i + 1))
            break;
    }
    return HPC_OK;
}

int hpc_tree_readlink(const hpc_tree *t, hpc_ino ino, char **target)
{
    tree_node *n = node_of(t, ino);
    if (!n)
        return HPC_E_NOENT;
    if (!n->target)
        return HPC_E_INVAL;
    *target = g_strdup(n->target);
    return HPC_OK;
}

int hpc_tree_xattrs(const hpc_tree *t, hpc_ino ino, hpc_xattr_fn fn, void *ctx)
{
    tree_node *n = node_of(t, ino);
    if (!n)
        return HPC_E_NOENT;
    for (guint i = 0; n->xattrs && i < n->xattrs->len; i++) {
        tree_xattr *x = &g_array_index(n->xattrs, tree_xattr, i);
        gsize len;
        const void *v = g_bytes_get_data(x->value, &len);
        int rc = fn(ctx, x->name, v, len);
        if (rc != 0)
            return rc;
    }
    return HPC_OK;
}
