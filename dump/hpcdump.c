/* hpcdump.c - the tree and bytes of a container without FUSE.
 *
 *   hpcdump [-o OPTS] ls [-l] [-R] SOURCE [PATH]
 *   hpcdump [-o OPTS] cat SOURCE PATH
 *   hpcdump [-o OPTS] info SOURCE
 *   hpcdump [-o OPTS] extract SOURCE DIR
 *
 * Same names and bytes as the mount (compute nodes often have no FUSE).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hpc_container.h"

#define COPY_CHUNK (1u << 20)

static void usage(FILE *f)
{
    fprintf(f, "usage: hpcdump [-o OPTS] ls [-l] [-R] SOURCE [PATH]\n"
               "       hpcdump [-o OPTS] cat SOURCE PATH\n"
               "       hpcdump [-o OPTS] info SOURCE\n"
               "       hpcdump [-o OPTS] extract SOURCE DIR\n"
               "OPTS as for hpcmount: cache_size, blocksize, format, rankname, nocheck,\n"
               "allowholes, salvage.\n");
}

/* Copy file ino to fd; returns 0 or an hpc_err. */
static int copy_out(hpc_container *c, const hpc_stat *st, int fd, const char *what)
{
    char *buf = g_malloc(COPY_CHUNK);
    uint64_t off = 0;
    int rc = HPC_OK;
    for (;;) {
        size_t n = 0;
        rc = hpc_container_read(c, st->ino, buf, COPY_CHUNK, off, &n);
        if (rc != HPC_OK) {
            fprintf(stderr, "hpcdump: %s: read at %llu: %s\n", what,
                    (unsigned long long)off, hpc_strerror(rc));
            break;
        }
        if (n == 0)
            break;
        for (size_t w = 0; w < n;) {
            ssize_t k = write(fd, buf + w, n - w);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                fprintf(stderr, "hpcdump: %s: write: %s\n", what, strerror(errno));
                rc = HPC_E_IO;
                goto out;
            }
            w += (size_t)k;
        }
        off += n;
    }
out:
    g_free(buf);
    return rc;
}

typedef struct ls_ctx {
    hpc_container *c;
    GPtrArray *names;
    GArray *stats;
} ls_ctx;

static int collect(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    (void)next;
    ls_ctx *l = p;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return 0;
    g_ptr_array_add(l->names, g_strdup(name));
    g_array_append_val(l->stats, *st);
    return 0;
}

static void mode_string(uint32_t mode, char *s)
{
    s[0] = S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : '-';
    const char *rwx = "rwxrwxrwx";
    for (int i = 0; i < 9; i++)
        s[1 + i] = (mode & (1u << (8 - i))) ? rwx[i] : '-';
    s[10] = '\0';
}

static int list_dir(hpc_container *c, const hpc_stat *dir, const char *path, int lng, int rec)
{
    ls_ctx l = { c, g_ptr_array_new_with_free_func(g_free), g_array_new(FALSE, FALSE, sizeof(hpc_stat)) };
    int rc = hpc_container_readdir(c, dir->ino, 0, collect, &l);
    if (rc != HPC_OK) {
        fprintf(stderr, "hpcdump: %s: %s\n", path, hpc_strerror(rc));
        goto out;
    }
    if (rec)
        printf("%s:\n", path);
    for (guint i = 0; i < l.names->len; i++) {
        const char *name = g_ptr_array_index(l.names, i);
        hpc_stat *st = &g_array_index(l.stats, hpc_stat, i);
        if (!lng) {
            printf("%s\n", name);
            continue;
        }
        char m[11], when[32];
        hpc_container_getattr(c, st->ino, st);     /* .info's size, for one */
        time_t t = (time_t)st->mtime;
        mode_string(st->mode, m);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M", gmtime(&t));
        printf("%s %u %12llu %s %s", m, st->nlink, (unsigned long long)st->size, when, name);
        char *target = NULL;
        if (S_ISLNK(st->mode) && hpc_container_readlink(c, st->ino, &target) == HPC_OK)
            printf(" -> %s", target);
        g_free(target);
        printf("\n");
    }
    for (guint i = 0; rec && i < l.names->len; i++) {
        hpc_stat *st = &g_array_index(l.stats, hpc_stat, i);
        if (!S_ISDIR(st->mode))
            continue;
        char *sub = g_strdup_printf("%s/%s", strcmp(path, "/") == 0 ? "" : path,
                                    (char *)g_ptr_array_index(l.names, i));
        printf("\n");
        rc = list_dir(c, st, sub, lng, rec);
        g_free(sub);
        if (rc != HPC_OK)
            break;
    }
out:
    g_ptr_array_free(l.names, TRUE);
    g_array_free(l.stats, TRUE);
    return rc;
}

/* Recreate the tree below dir at host path dest. */
static int extract(hpc_container *c, const hpc_stat *dir, const char *dest)
{
    if (mkdir(dest, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "hpcdump: %s: %s\n", dest, strerror(errno));
        return HPC_E_IO;
    }
    ls_ctx l = { c, g_ptr_array_new_with_free_func(g_free), g_array_new(FALSE, FALSE, sizeof(hpc_stat)) };
    int rc = hpc_container_readdir(c, dir->ino, 0, collect, &l);
    for (guint i = 0; rc == HPC_OK && i < l.names->len; i++) {
        const char *name = g_ptr_array_index(l.names, i);
        hpc_stat *st = &g_array_index(l.stats, hpc_stat, i);
        char *p = g_build_filename(dest, name, NULL);
        if (S_ISDIR(st->mode)) {
            rc = extract(c, st, p);
        } else if (S_ISLNK(st->mode)) {
            char *target = NULL;
            rc = hpc_container_readlink(c, st->ino, &target);
            if (rc == HPC_OK && symlink(target, p) != 0 && errno != EEXIST)
                rc = HPC_E_IO;
            g_free(target);
        } else {
            int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0) {
                fprintf(stderr, "hpcdump: %s: %s\n", p, strerror(errno));
                rc = HPC_E_IO;
            } else {
                rc = copy_out(c, st, fd, p);
                if (close(fd) != 0 && rc == HPC_OK)
                    rc = HPC_E_IO;
            }
        }
        g_free(p);
    }
    g_ptr_array_free(l.names, TRUE);
    g_array_free(l.stats, TRUE);
    return rc;
}

int main(int argc, char *argv[])
{
    hpc_options opts;
    hpc_container *c = NULL;
    GError *err = NULL;
    int lng = 0, rec = 0, ret = 1;
    hpc_options_init(&opts);

    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            ret = 0;
            goto out;
        }
        if (strcmp(argv[i], "-o") != 0 || i + 1 >= argc) {
            usage(stderr);
            ret = 2;
            goto out;
        }
        gchar **kv = g_strsplit(argv[++i], ",", -1);
        for (gchar **p = kv; *p; p++) {
            int rc = hpc_options_set(&opts, *p, &err);
            if (rc != HPC_OK) {
                fprintf(stderr, "hpcdump: %s\n", err ? err->message : "unknown option");
                if (!err)
                    fprintf(stderr, "hpcdump: unknown option '%s'\n", *p);
                g_strfreev(kv);
                ret = 2;
                goto out;
            }
        }
        g_strfreev(kv);
    }
    if (i >= argc) {
        usage(stderr);
        ret = 2;
        goto out;
    }
    const char *cmd = argv[i++];
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "-l") == 0)
            lng = 1;
        else if (strcmp(argv[i], "-R") == 0)
            rec = 1;
        else if (strcmp(argv[i], "-lR") == 0 || strcmp(argv[i], "-Rl") == 0)
            lng = rec = 1;
        else {
            usage(stderr);
            ret = 2;
            goto out;
        }
    }
    int nargs = argc - i;
    int need_path = strcmp(cmd, "cat") == 0 || strcmp(cmd, "extract") == 0;
    if (strcmp(cmd, "ls") && strcmp(cmd, "cat") && strcmp(cmd, "info") && strcmp(cmd, "extract")) {
        usage(stderr);
        ret = 2;
        goto out;
    }
    if (nargs < 1 + need_path || nargs > 2) {
        usage(stderr);
        ret = 2;
        goto out;
    }
    const char *source = argv[i], *path = nargs > 1 ? argv[i + 1] : "/";
    if (hpc_container_open(source, &opts, &c, &err) != HPC_OK) {
        fprintf(stderr, "hpcdump: %s\n", err->message);
        goto out;
    }
    hpc_stat st;
    if (strcmp(cmd, "info") == 0)
        path = "/.info";
    if (strcmp(cmd, "extract") == 0) {
        hpc_container_getattr(c, HPC_INO_ROOT, &st);
        ret = extract(c, &st, path) != HPC_OK;
        goto out;
    }
    int rc = hpc_container_resolve(c, path, &st);
    if (rc != HPC_OK) {
        fprintf(stderr, "hpcdump: %s: %s\n", path, hpc_strerror(rc));
        goto out;
    }
    if (strcmp(cmd, "ls") == 0) {
        if (S_ISDIR(st.mode))
            ret = list_dir(c, &st, path, lng, rec) != HPC_OK;
        else {
            printf("%s\n", path);
            ret = 0;
        }
    } else if (S_ISDIR(st.mode)) {
        fprintf(stderr, "hpcdump: %s: is a directory\n", path);
    } else {
        ret = copy_out(c, &st, STDOUT_FILENO, path) != HPC_OK;
    }
out:
    hpc_container_close(c);
    hpc_options_clear(&opts);
    g_clear_error(&err);
    return ret;
}
