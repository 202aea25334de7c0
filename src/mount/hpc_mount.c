/* hpc_mount.c - SOURCE opened as one stack of node implementations
 * (hpc_nodes.h): one container, or a run directory of them (hpc_rundir.h),
 * with the npy view over each container when asked.  Every call goes
 * through the stack's table; paths are walked here, on top of it.
 */
#include "hpc_mount.h"
#include "hpc_rundir.h"

#include <string.h>
#include <sys/stat.h>

struct hpc_mount {
    hpc_nodes *top;              /* the stack every call goes to */
    char *source;                /* SOURCE (absolute) */
    gboolean directory;          /* top is a run directory */
};

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
    const hpc_format *f = hpc_format_best(source, NULL, 0);
    return f && !hpc_rundir_holds_other_format(source, f);
}

int hpc_mount_open(const char *given, const hpc_options *opts, hpc_mount **out,
                   GError **err)
{
    hpc_mount *m = g_new0(hpc_mount, 1);
    /* absolute: the daemon runs from "/", and .info names it the same way
     * whichever front end opened it */
    m->source = g_canonicalize_filename(given, NULL);
    m->directory = !is_one_container(m->source, opts);
    int rc = m->directory ? hpc_rundir_open(m->source, opts, &m->top, err)
                          : hpc_rundir_open_nodes(m->source, opts, &m->top, err);
    if (rc != HPC_OK) {
        g_free(m->source);
        g_free(m);
        m = NULL;
    }
    *out = m;
    return rc;
}

void hpc_mount_close(hpc_mount *m)
{
    if (!m)
        return;
    hpc_nodes_close(m->top);
    g_free(m->source);
    g_free(m);
}

gboolean hpc_mount_is_directory(const hpc_mount *m)
{
    return m->directory;
}

const char *hpc_mount_source(const hpc_mount *m)
{
    return m->source;
}

/* ---- the table's calls -------------------------------------------------- */

int hpc_mount_lookup(hpc_mount *m, hpc_ino parent, const char *name, hpc_stat *st)
{
    return m->top->ops->lookup(m->top, parent, name, st);
}

int hpc_mount_getattr(hpc_mount *m, hpc_ino ino, hpc_stat *st)
{
    return m->top->ops->getattr(m->top, ino, st);
}

int hpc_mount_readdir(hpc_mount *m, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    return m->top->ops->readdir(m->top, dir, cookie, fn, ctx);
}

int hpc_mount_readlink(hpc_mount *m, hpc_ino ino, char **target)
{
    return m->top->ops->readlink(m->top, ino, target);
}

int hpc_mount_read(hpc_mount *m, hpc_ino ino, void *buf, size_t len, uint64_t off,
                   size_t *nread)
{
    return m->top->ops->read(m->top, ino, buf, len, off, nread);
}

int hpc_mount_map(hpc_mount *m, hpc_ino ino, uint64_t off, uint64_t len,
                  hpc_extent *ext, unsigned max, unsigned *n)
{
    return m->top->ops->map(m->top, ino, off, len, ext, max, n);
}

void hpc_mount_unmap(hpc_mount *m, hpc_ino ino)
{
    hpc_nodes_unmap(m->top, ino);
}

int hpc_mount_sources_unchanged(hpc_mount *m, hpc_ino ino)
{
    return m->top->ops->sources_unchanged(m->top, ino);
}

int hpc_mount_hold(hpc_mount *m, hpc_ino ino, hpc_nodes **src, hpc_ino *inner)
{
    return hpc_nodes_hold(m->top, ino, src, inner);
}

void hpc_mount_release(hpc_mount *m, hpc_nodes *src)
{
    hpc_nodes_release(m->top, src);
}

void hpc_mount_statfs(hpc_mount *m, uint64_t *bytes, uint32_t *bsize)
{
    *bytes = m->top->ops->source_bytes(m->top);
    *bsize = m->top->ops->block_size(m->top);
}

int hpc_mount_getxattr(hpc_mount *m, hpc_ino ino, const char *name, void **value, size_t *len)
{
    return m->top->ops->getxattr(m->top, ino, name, value, len);
}

int hpc_mount_listxattr(hpc_mount *m, hpc_ino ino, GString *out)
{
    return m->top->ops->listxattr(m->top, ino, out);
}

int hpc_mount_chunks(hpc_mount *m, hpc_ino ino, GString *out)
{
    return m->top->ops->chunks(m->top, ino, out);
}

void hpc_mount_node_meta(hpc_mount *m, hpc_ino ino, hpc_node_meta *meta)
{
    m->top->ops->meta(m->top, ino, meta);
}

/* ---- paths ---------------------------------------------------------------- */

static int lookup_in(void *m, hpc_ino parent, const char *name, hpc_stat *st)
{
    return hpc_mount_lookup(m, parent, name, st);
}

int hpc_mount_resolve(hpc_mount *m, const char *path, hpc_stat *st)
{
    int rc = hpc_mount_getattr(m, HPC_INO_ROOT, st);
    return rc == HPC_OK ? hpc_path_walk(path, lookup_in, m, st) : rc;
}

/* Put the components of path in front of the ones still to walk. */
static void push_parts(GQueue *todo, const char *path)
{
    gchar **parts = g_strsplit(path, "/", -1);
    guint n = g_strv_length(parts);
    for (guint i = n; i-- > 0;)
        g_queue_push_head(todo, parts[i]);
    g_free(parts);              /* the strings now belong to todo */
}

/* One step of hpc_mount_resolve_follow: component name from the directory
 * on top of stack (the directories walked, the root first). */
static int follow_step(hpc_mount *m, GArray *stack, GQueue *todo, const char *name,
                       gboolean follow_last, int *hops)
{
    hpc_stat *top = &g_array_index(stack, hpc_stat, stack->len - 1), st;
    if (*name == '\0' || strcmp(name, ".") == 0)
        return HPC_OK;
    if (strcmp(name, "..") == 0) {
        if (stack->len == 1)
            return HPC_E_NOENT;
        g_array_set_size(stack, stack->len - 1);
        return HPC_OK;
    }
    if (!S_ISDIR(top->mode))
        return HPC_E_NOTDIR;
    int rc = hpc_mount_lookup(m, top->ino, name, &st);
    if (rc != HPC_OK || !S_ISLNK(st.mode) || (g_queue_is_empty(todo) && !follow_last)) {
        if (rc == HPC_OK)
            g_array_append_val(stack, st);
        return rc;
    }
    char *target = NULL;
    rc = ++*hops > HPC_MAX_LINKS ? HPC_E_LOOP : hpc_mount_readlink(m, st.ino, &target);
    if (rc != HPC_OK)
        return rc;
    rc = target[0] ? HPC_OK : HPC_E_NOENT;     /* as the kernel: "" names nothing */
    if (target[0] == '/')
        g_array_set_size(stack, 1);
    push_parts(todo, target);
    g_free(target);
    return rc;
}

int hpc_mount_resolve_follow(hpc_mount *m, const char *path, gboolean follow_last, hpc_stat *st,
                             char **real)
{
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(hpc_stat));
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);   /* of stack[1..] */
    GQueue todo = G_QUEUE_INIT;
    int hops = 0, rc = hpc_mount_getattr(m, HPC_INO_ROOT, st);
    g_array_append_val(stack, *st);
    push_parts(&todo, path ? path : "");
    char *name;
    while (rc == HPC_OK && (name = g_queue_pop_head(&todo))) {
        rc = follow_step(m, stack, &todo, name, follow_last, &hops);
        if (stack->len - 1 < names->len)        /* "..", or an absolute target */
            g_ptr_array_set_size(names, (gint)stack->len - 1);
        if (stack->len - 1 > names->len)        /* a step down */
            g_ptr_array_add(names, g_strdup(name));
        g_free(name);
    }
    if (rc == HPC_OK)
        *st = g_array_index(stack, hpc_stat, stack->len - 1);
    if (rc == HPC_OK && real) {
        g_ptr_array_add(names, NULL);
        char *j = g_strjoinv("/", (char **)names->pdata);
        *real = g_strconcat("/", j, NULL);
        g_free(j);
    }
    g_queue_clear_full(&todo, g_free);
    g_ptr_array_free(names, TRUE);
    g_array_free(stack, TRUE);
    return rc;
}

