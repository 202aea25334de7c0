/* hpcdump.c - the tree, bytes and attributes of a container without FUSE.
 *
 *   hpcdump [-o OPTS] ls [-l] [-R] [--json] SOURCE [PATH]
 *   hpcdump [-o OPTS] cat SOURCE PATH...
 *   hpcdump [-o OPTS] info [--json] SOURCE
 *   hpcdump [-o OPTS] xattr [-R] SOURCE [PATH]
 *   hpcdump [-o OPTS] extract SOURCE DIR
 *   hpcdump [-o OPTS] refs [--inline=BYTES] SOURCE [PATH]
 *
 * A front end of the core library like fuse/hpcmount.c: the same names,
 * bytes and attributes as the mount (compute nodes often have no FUSE).
 * Exit status as hpcmount's: 0 done, 1 the container or a read failed,
 * 2 bad command line.  Besides the public API it uses only the core's JSON
 * string writer (hpc_json.h, compiled in), so that --json escapes names as
 * the references and .info.json do.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "hpc_json.h"
#include "hpcmount.h"

#define COPY_CHUNK (1u << 20)

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* Progress of extract and refs on stderr (--progress, --no-progress):
 * shown on a terminal once the work took PROGRESS_AFTER, or from the start
 * when forced; one line, rewritten at most every PROGRESS_EVERY. */
#define PROGRESS_AFTER G_USEC_PER_SEC
#define PROGRESS_EVERY (G_USEC_PER_SEC / 5)

typedef struct progress {
    int mode;                     /* -1 on a terminal, 0 never, 1 always */
    const char *what;             /* "extract", "refs" */
    int bytes;                    /* units: bytes, else nodes */
    uint64_t done, total;
    gint64 start, last;           /* monotonic us */
    int shown;
} progress;

typedef struct dump {
    hpcmount *c;
    progress prog;
    const char *source;
    struct stat src_st;           /* of SOURCE: owner and group, as the mount shows */
    int lng, rec, json;
    gint64 inline_max;            /* refs: --inline */
    char *buf;                    /* copy_file's, one for every file copied */
} dump;

/* ---- progress ----------------------------------------------------------- */

static void human(char *s, size_t n, double v, int bytes)
{
    const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    while (bytes && v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (bytes)
        g_snprintf(s, n, u ? "%.1f %s" : "%.0f %s", v, units[u]);
    else
        g_snprintf(s, n, "%.0f", v);
}

static void hms(char *s, size_t n, double secs)
{
    unsigned long t = secs < 0 ? 0 : (unsigned long)(secs + 0.5);
    if (t >= 3600)
        g_snprintf(s, n, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
    else
        g_snprintf(s, n, "%lu:%02lu", t / 60, t % 60);
}

/* "extract: 1.2 GiB of 4.0 GiB (30%), 350.0 MiB/s, 0:08 left" */
static void progress_line(progress *p, gint64 now)
{
    char done[32], total[32], rate[32], left[32];
    double secs = (double)(now - p->start) / G_USEC_PER_SEC;
    double r = secs > 0 ? (double)p->done / secs : 0;
    human(done, sizeof done, (double)p->done, p->bytes);
    human(total, sizeof total, (double)p->total, p->bytes);
    human(rate, sizeof rate, r, p->bytes);
    if (r > 0)
        hms(left, sizeof left, (double)(p->total - MIN(p->done, p->total)) / r);
    else
        g_strlcpy(left, "?", sizeof left);
    unsigned pct = p->total ? (unsigned)(100.0 * (double)MIN(p->done, p->total) / (double)p->total) : 100;
    fprintf(stderr, "\r%s: %s of %s%s (%u%%), %s%s/s, %s left\033[K", p->what, done, total,
            p->bytes ? "" : " nodes", pct, rate, p->bytes ? "" : " nodes", left);
    fflush(stderr);
    p->shown = 1;
    p->last = now;
}

static void progress_start(progress *p, const char *what, int bytes, uint64_t total)
{
    p->what = what;
    p->bytes = bytes;
    p->total = total;
    p->done = 0;
    p->start = g_get_monotonic_time();
    p->last = 0;
}

static void progress_add(progress *p, uint64_t n)
{
    p->done += n;
    if (p->mode == 0)
        return;
    gint64 now = g_get_monotonic_time();
    if ((p->mode < 0 && now - p->start < PROGRESS_AFTER) || (p->last && now - p->last < PROGRESS_EVERY))
        return;
    progress_line(p, now);
}

/* The last line: always when forced, else if a line was shown. */
static void progress_end(progress *p)
{
    if (p->mode == 0 || (p->mode < 0 && !p->shown))
        return;
    progress_line(p, g_get_monotonic_time());
    fputc('\n', stderr);
}

/* ---- helpers ------------------------------------------------------------ */

/* Copy open file f to fd; returns 0 or an HPCMOUNT_E_ code (reported
 * here, once).  The buffer is d's for every file: an extract of 10^4 small
 * files would otherwise map and unmap 1 MiB per file, which under ASan
 * costs far more than the copy (tests/mount/gsd_diff.sh,
 * docs/PERFORMANCE.md). */
static int copy_file(dump *d, hpcmount_file *f, int fd, const char *what, progress *p)
{
    if (!d->buf)
        d->buf = g_malloc(COPY_CHUNK);
    char *buf = d->buf;
    uint64_t off = 0;
    int rc = HPCMOUNT_OK;
    for (;;) {
        size_t n = 0;
        rc = hpcmount_file_read(f, buf, COPY_CHUNK, off, &n);
        if (rc != HPCMOUNT_OK) {
            fprintf(stderr, "hpcdump: %s: read at %llu: %s\n", what,
                    (unsigned long long)off, hpcmount_strerror(rc));
            break;
        }
        if (n == 0)
            break;
        for (size_t w = 0; w < n;) {
            ssize_t k = write(fd, buf + w, n - w);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                fprintf(stderr, "hpcdump: %s: write: %s\n", what, g_strerror(errno));
                rc = HPCMOUNT_E_IO;
                goto out;
            }
            w += (size_t)k;
        }
        off += n;
        if (p)
            progress_add(p, n);
    }
out:
    return rc;
}

/* Copy file st to fd, as copy_file. */
static int copy_out(dump *d, const hpcmount_stat *st, int fd, const char *what, progress *p)
{
    hpcmount_file *f;
    int rc = hpcmount_file_open_node(d->c, st->ino, &f);
    if (rc != HPCMOUNT_OK) {
        fprintf(stderr, "hpcdump: %s: %s\n", what, hpcmount_strerror(rc));
        return rc;
    }
    rc = copy_file(d, f, fd, what, p);
    hpcmount_file_close(f);
    return rc;
}

typedef struct entry {
    char *name;
    hpcmount_stat st;
} entry;

static int collect(void *p, const char *name, const hpcmount_stat *st)
{
    GArray *a = p;
    entry e = { g_strdup(name), *st };
    g_array_append_val(a, e);
    return 0;
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static void entry_clear(void *p)
{
    g_free(((entry *)p)->name);
}

/* The entries of directory dir, sorted by name as `LC_ALL=C ls` sorts them,
 * with their full attributes. */
static int list_entries(hpcmount *c, const hpcmount_stat *dir, const char *path, GArray **out)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(entry));
    g_array_set_clear_func(a, entry_clear);
    int rc = hpcmount_readdir(c, dir->ino, collect, a);
    if (rc != HPCMOUNT_OK) {
        fprintf(stderr, "hpcdump: %s: %s\n", path, hpcmount_strerror(rc));
        g_array_free(a, TRUE);
        return rc;
    }
    g_array_sort(a, entry_cmp);
    *out = a;
    return HPCMOUNT_OK;
}

/* "/a/b" + "c" -> "/a/b/c" */
static char *child_path(const char *dir, const char *name)
{
    return g_strdup_printf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);
}

/* ---- ls ----------------------------------------------------------------- */

static void mode_string(uint32_t mode, char *s)
{
    s[0] = S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : '-';
    const char *rwx = "rwxrwxrwx";
    for (int i = 0; i < 9; i++)
        s[1 + i] = (mode & (1u << (8 - i))) ? rwx[i] : '-';
    s[10] = '\0';
}

/* ls's time column: month, day and time for the last six months, the year
 * instead of the time for older (or future) dates. */
static void time_string(int64_t mtime, char *s, size_t n)
{
    time_t t = (time_t)mtime, now = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    int recent = t <= now && now - t < 31556952 / 2;
    strftime(s, n, recent ? "%b %e %H:%M" : "%b %e  %Y", &tm);
}

typedef struct ls_widths {
    int nlink, user, group, size;
} ls_widths;

static void user_group(const dump *d, char *user, char *group, size_t n)
{
    struct passwd *pw = getpwuid(d->src_st.st_uid);
    struct group *gr = getgrgid(d->src_st.st_gid);
    if (pw)
        g_strlcpy(user, pw->pw_name, n);
    else
        g_snprintf(user, n, "%u", (unsigned)d->src_st.st_uid);
    if (gr)
        g_strlcpy(group, gr->gr_name, n);
    else
        g_snprintf(group, n, "%u", (unsigned)d->src_st.st_gid);
}

static void widen(ls_widths *w, const dump *d, const hpcmount_stat *st)
{
    char user[64], group[64], num[32];
    user_group(d, user, group, sizeof user);
    w->user = MAX(w->user, (int)strlen(user));
    w->group = MAX(w->group, (int)strlen(group));
    w->nlink = MAX(w->nlink, g_snprintf(num, sizeof num, "%u", st->nlink));
    w->size = MAX(w->size, g_snprintf(num, sizeof num, "%llu", (unsigned long long)st->size));
}

/* One line of `ls -l`: mode, links, owner, group, size, time, name. */
static void long_line(const dump *d, const ls_widths *w, const hpcmount_stat *st, const char *name)
{
    char m[11], when[64], user[64], group[64];
    mode_string(st->mode, m);
    time_string(st->mtime, when, sizeof when);
    user_group(d, user, group, sizeof user);
    printf("%s %*u %-*s %-*s %*llu %s %s", m, w->nlink, st->nlink, w->user, user, w->group,
           group, w->size, (unsigned long long)st->size, when, name);
    char *target = NULL;
    if (S_ISLNK(st->mode) && hpcmount_readlink(d->c, st->ino, &target) == HPCMOUNT_OK)
        printf(" -> %s", target);
    hpcmount_free(target);
    printf("\n");
}

/* 1 KiB blocks of the entries, as ls's "total" line counts them (the mount
 * reports 512-byte blocks of the size). */
static unsigned long long total_kib(GArray *a)
{
    unsigned long long blocks = 0;
    for (guint i = 0; i < a->len; i++)
        blocks += (g_array_index(a, entry, i).st.size + 511) / 512;
    return (blocks + 1) / 2;
}

static int list_dir(dump *d, const hpcmount_stat *dir, const char *path, int header)
{
    GArray *a = NULL;
    int rc = list_entries(d->c, dir, path, &a);
    if (rc != HPCMOUNT_OK)
        return rc;
    if (header)
        printf("%s:\n", path);
    ls_widths w = { 0 };
    for (guint i = 0; i < a->len; i++)
        widen(&w, d, &g_array_index(a, entry, i).st);
    if (d->lng)
        printf("total %llu\n", total_kib(a));
    for (guint i = 0; i < a->len; i++) {
        entry *e = &g_array_index(a, entry, i);
        if (d->lng)
            long_line(d, &w, &e->st, e->name);
        else
            printf("%s\n", e->name);
    }
    for (guint i = 0; d->rec && rc == HPCMOUNT_OK && i < a->len; i++) {
        entry *e = &g_array_index(a, entry, i);
        if (!S_ISDIR(e->st.mode))
            continue;
        char *sub = child_path(path, e->name);
        printf("\n");
        rc = list_dir(d, &e->st, sub, 1);
        g_free(sub);
    }
    g_array_free(a, TRUE);
    return rc;
}

/* ---- ls --json ---------------------------------------------------------- */

#define LS_JSON_SCHEMA 1

/* One node as a JSON object (no closing brace: a directory's entries
 * may follow). */
static void json_node(dump *d, GString *o, const char *name, const hpcmount_stat *st)
{
    g_string_append(o, "{\"name\":");
    hpc_json_str(o, name);
    g_string_append_printf(o, ",\"type\":\"%s\",\"mode\":\"%04o\",\"size\":%llu,"
                           "\"nlink\":%u,\"mtime\":%lld,\"ino\":%llu",
                           S_ISDIR(st->mode) ? "dir" : S_ISLNK(st->mode) ? "link" : "file",
                           st->mode & 07777, (unsigned long long)st->size, st->nlink,
                           (long long)st->mtime, (unsigned long long)st->ino);
    char *target = NULL;
    if (S_ISLNK(st->mode) && hpcmount_readlink(d->c, st->ino, &target) == HPCMOUNT_OK) {
        g_string_append(o, ",\"target\":");
        hpc_json_str(o, target);
    }
    hpcmount_free(target);
}

/* Directory dir's entries as "entries":[...], each directory's own
 * entries nested in it with -R. */
static int json_entries(dump *d, GString *o, const hpcmount_stat *dir, const char *path)
{
    GArray *a = NULL;
    int rc = list_entries(d->c, dir, path, &a);
    if (rc != HPCMOUNT_OK)
        return rc;
    g_string_append(o, ",\"entries\":[");
    for (guint i = 0; rc == HPCMOUNT_OK && i < a->len; i++) {
        entry *e = &g_array_index(a, entry, i);
        g_string_append(o, i ? ",\n" : "\n");
        json_node(d, o, e->name, &e->st);
        if (d->rec && S_ISDIR(e->st.mode)) {
            char *sub = child_path(path, e->name);
            rc = json_entries(d, o, &e->st, sub);
            g_free(sub);
        }
        g_string_append_c(o, '}');
    }
    g_string_append_c(o, ']');
    g_array_free(a, TRUE);
    return rc;
}

/* ls --json: one object, PATH itself with its entries; written only when
 * complete. */
static int ls_json(dump *d, const hpcmount_stat *st, const char *path)
{
    GString *o = g_string_new(NULL);
    g_string_append_printf(o, "{\"schema\":%d,\"path\":", LS_JSON_SCHEMA);
    hpc_json_str(o, path);
    g_string_append(o, ",\"node\":");
    json_node(d, o, path, st);
    int rc = S_ISDIR(st->mode) ? json_entries(d, o, st, path) : HPCMOUNT_OK;
    g_string_append(o, "}}\n");
    if (rc == HPCMOUNT_OK)
        fwrite(o->str, 1, o->len, stdout);
    g_string_free(o, TRUE);
    return rc;
}

static int cmd_ls(dump *d, const hpcmount_stat *st, const char *path)
{
    if (d->json)
        return ls_json(d, st, path);
    if (S_ISDIR(st->mode))
        return list_dir(d, st, path, d->rec);
    if (d->lng) {
        ls_widths w = { 0 };
        widen(&w, d, st);
        long_line(d, &w, st, path);
    } else {
        printf("%s\n", path);
    }
    return HPCMOUNT_OK;
}

/* ---- cat ---------------------------------------------------------------- */

static int cat_one(dump *d, const char *path)
{
    hpcmount_file *f;
    int rc = hpcmount_file_open(d->c, path, &f);
    if (rc != HPCMOUNT_OK) {
        fprintf(stderr, "hpcdump: %s: %s\n", path, hpcmount_strerror(rc));
        return rc;
    }
    rc = copy_file(d, f, STDOUT_FILENO, path, NULL);
    hpcmount_file_close(f);
    return rc;
}

/* Each path in turn, as cat(1): one open of the container for many files
 * (a process and, for HDF5, its helper per file cost more than most
 * reads).  A path that fails is said and skipped; the first failure is
 * the result. */
static int cmd_cat(dump *d, char **paths)
{
    int rc = HPCMOUNT_OK;
    for (; *paths; paths++) {
        int r = cat_one(d, *paths);
        if (rc == HPCMOUNT_OK)
            rc = r;
    }
    return rc;
}

/* ---- xattr -------------------------------------------------------------- */

/* A value as getfattr -d shows it: quoted text (NUL, CR, LF as \ooo; '"'
 * and '\' escaped) when at most one byte in eight is not printable, else
 * base64 after "0s". */
static void print_value(const unsigned char *v, size_t len)
{
    size_t odd = 0;
    for (size_t i = 0; i < len; i++)
        odd += !g_ascii_isprint(v[i]);
    if (len < odd * 8) {
        char *b = g_base64_encode(v, len);
        printf("0s%s", b);
        g_free(b);
        return;
    }
    putchar('"');
    for (size_t i = 0; i < len; i++) {
        if (v[i] == '\0' || v[i] == '\n' || v[i] == '\r')
            printf("\\%03o", v[i]);
        else if (v[i] == '"' || v[i] == '\\')
            printf("\\%c", v[i]);
        else
            putchar(v[i]);
    }
    putchar('"');
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* getfattr -d -m - for one node: "# file: PATH", name="value" lines, a
 * blank line; nothing for a node without attributes. */
static int show_xattrs(hpcmount *c, const hpcmount_stat *st, const char *path)
{
    char *names = NULL;
    size_t nlen = 0;
    int rc = hpcmount_listxattr(c, st->ino, &names, &nlen);
    GPtrArray *sorted = g_ptr_array_new();
    for (const char *x = names; rc == HPCMOUNT_OK && x && x < names + nlen; x += strlen(x) + 1)
        g_ptr_array_add(sorted, (gpointer)x);
    g_ptr_array_sort(sorted, name_cmp);
    if (sorted->len)
        printf("# file: %s\n", path[0] == '/' ? (path[1] ? path + 1 : ".") : path[0] ? path : ".");
    for (guint i = 0; rc == HPCMOUNT_OK && i < sorted->len; i++) {
        const char *name = g_ptr_array_index(sorted, i);
        void *v = NULL;
        size_t len = 0;
        rc = hpcmount_getxattr(c, st->ino, name, &v, &len);
        if (rc == HPCMOUNT_OK) {
            printf("%s=", name);
            print_value(v, len);
            printf("\n");
        }
        hpcmount_free(v);
    }
    if (sorted->len)
        printf("\n");
    if (rc != HPCMOUNT_OK)
        fprintf(stderr, "hpcdump: %s: attributes: %s\n", path, hpcmount_strerror(rc));
    g_ptr_array_free(sorted, TRUE);
    hpcmount_free(names);
    return rc;
}

/* Attributes of the nodes at and below path.  A symlink shows its
 * target's, as getfattr does without -h (links have none of their own). */
static int xattr_tree(dump *d, const hpcmount_stat *st, const char *path)
{
    hpcmount_stat shown = *st;
    if (S_ISLNK(st->mode) && hpcmount_resolve_follow(d->c, path, 1, &shown) != HPCMOUNT_OK)
        shown = *st;        /* dangling: nothing to show */
    int rc = show_xattrs(d->c, &shown, path);
    if (rc != HPCMOUNT_OK || !d->rec || !S_ISDIR(st->mode))
        return rc;
    GArray *a = NULL;
    rc = list_entries(d->c, st, path, &a);
    for (guint i = 0; rc == HPCMOUNT_OK && i < a->len; i++) {
        entry *e = &g_array_index(a, entry, i);
        char *sub = child_path(path, e->name);
        rc = xattr_tree(d, &e->st, sub);
        g_free(sub);
    }
    if (a)
        g_array_free(a, TRUE);
    return rc;
}

/* ---- extract ------------------------------------------------------------ */

typedef struct xattr_copy {
    hpcmount *c;
    uint64_t ino;
    const char *dest;
    int rc;
} xattr_copy;

/* Copy the node's extended attributes to host file dest (not following a
 * symlink; Linux keeps no user.* attributes on links, which is no loss:
 * the readers put none there). */
static int copy_xattrs(hpcmount *c, const hpcmount_stat *st, const char *dest)
{
    if (S_ISLNK(st->mode))
        return HPCMOUNT_OK;
    char *names = NULL;
    size_t nlen = 0;
    int rc = hpcmount_listxattr(c, st->ino, &names, &nlen);
    for (const char *x = names; rc == HPCMOUNT_OK && x && x < names + nlen; x += strlen(x) + 1) {
        void *v = NULL;
        size_t len = 0;
        rc = hpcmount_getxattr(c, st->ino, x, &v, &len);
        if (rc == HPCMOUNT_OK && lsetxattr(dest, x, v, len, 0) != 0) {
            fprintf(stderr, "hpcdump: %s: cannot set %s: %s\n", dest, x, g_strerror(errno));
            rc = HPCMOUNT_E_IO;
        }
        hpcmount_free(v);
    }
    hpcmount_free(names);
    return rc;
}

/* The node's mtime on host file dest (links too). */
static int copy_mtime(const hpcmount_stat *st, const char *dest)
{
    struct timespec ts[2] = { { 0, UTIME_OMIT }, { (time_t)st->mtime, 0 } };
    if (utimensat(AT_FDCWD, dest, ts, AT_SYMLINK_NOFOLLOW) != 0) {
        fprintf(stderr, "hpcdump: %s: cannot set the time: %s\n", dest, g_strerror(errno));
        return HPCMOUNT_E_IO;
    }
    return HPCMOUNT_OK;
}

static int extract_tree(dump *d, const hpcmount_stat *dir, const char *dest);

static int extract_node(dump *d, const hpcmount_stat *st, const char *p)
{
    hpcmount *c = d->c;
    int rc = HPCMOUNT_OK;
    if (S_ISDIR(st->mode))
        return extract_tree(d, st, p);
    if (S_ISLNK(st->mode)) {
        char *target = NULL;
        rc = hpcmount_readlink(c, st->ino, &target);
        if (rc == HPCMOUNT_OK && symlink(target, p) != 0 && errno != EEXIST) {
            fprintf(stderr, "hpcdump: %s: %s\n", p, g_strerror(errno));
            rc = HPCMOUNT_E_IO;
        }
        hpcmount_free(target);
    } else {
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            fprintf(stderr, "hpcdump: %s: %s\n", p, g_strerror(errno));
            return HPCMOUNT_E_IO;
        }
        rc = copy_out(d, st, fd, p, &d->prog);
        if (close(fd) != 0 && rc == HPCMOUNT_OK) {
            fprintf(stderr, "hpcdump: %s: %s\n", p, g_strerror(errno));
            rc = HPCMOUNT_E_IO;
        }
        if (rc != HPCMOUNT_OK)       /* never leave a file holding part of the bytes */
            unlink(p);
    }
    if (rc == HPCMOUNT_OK)
        rc = copy_xattrs(c, st, p);
    if (rc == HPCMOUNT_OK)
        rc = copy_mtime(st, p);
    return rc;
}

/* Recreate the tree below dir at host path dest: directories, files,
 * symlinks, their user.* attributes and modification times.  A node that
 * fails (e.g. EIO of a damaged dataset) is reported and left out, the
 * others are still extracted; the first error is returned. */
static int extract_tree(dump *d, const hpcmount_stat *dir, const char *dest)
{
    hpcmount *c = d->c;
    if (mkdir(dest, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "hpcdump: %s: %s\n", dest, g_strerror(errno));
        return HPCMOUNT_E_IO;
    }
    GArray *a = NULL;
    int first = HPCMOUNT_OK;
    int rc = list_entries(c, dir, dest, &a);
    for (guint i = 0; rc == HPCMOUNT_OK && i < a->len; i++) {
        entry *e = &g_array_index(a, entry, i);
        char *p = g_build_filename(dest, e->name, NULL);
        int r = extract_node(d, &e->st, p);
        if (r != HPCMOUNT_OK && first == HPCMOUNT_OK)
            first = r;
        g_free(p);
    }
    if (a)
        g_array_free(a, TRUE);
    if (rc == HPCMOUNT_OK)
        rc = copy_xattrs(c, dir, dest);
    if (rc == HPCMOUNT_OK)       /* last: filling the directory changed its time */
        rc = copy_mtime(dir, dest);
    return rc == HPCMOUNT_OK ? first : rc;
}

/* The bytes of the files and the number of nodes below dir (the totals of
 * the progress; a directory that cannot be listed counts as empty here and
 * fails where it is extracted). */
static void tree_size(dump *d, const hpcmount_stat *dir, const char *path, uint64_t *bytes,
                      uint64_t *nodes)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(entry));
    g_array_set_clear_func(a, entry_clear);
    if (hpcmount_readdir(d->c, dir->ino, collect, a) != HPCMOUNT_OK)
        g_array_set_size(a, 0);      /* quietly: extract and refs report it */
    for (guint i = 0; i < a->len; i++) {
        entry *e = &g_array_index(a, entry, i);
        ++*nodes;
        if (S_ISREG(e->st.mode))
            *bytes += e->st.size;
        if (!S_ISDIR(e->st.mode))
            continue;
        char *sub = child_path(path, e->name);
        tree_size(d, &e->st, sub, bytes, nodes);
        g_free(sub);
    }
    g_array_free(a, TRUE);
}

static int cmd_extract(dump *d, const char *dest)
{
    hpcmount_stat st;
    uint64_t bytes = 0, nodes = 0;
    hpcmount_getattr(d->c, HPCMOUNT_INO_ROOT, &st);
    if (d->prog.mode != 0)
        tree_size(d, &st, "/", &bytes, &nodes);
    progress_start(&d->prog, "extract", 1, bytes);
    int rc = extract_tree(d, &st, dest);
    progress_end(&d->prog);
    return rc;
}

/* ---- refs --------------------------------------------------------------- */

static void refs_progress(void *ctx, uint64_t nodes)
{
    progress *p = ctx;
    progress_add(p, nodes - p->done);
}

/* kerchunk references of the tree under path, written only when complete. */
static int cmd_refs(dump *d, const char *path)
{
    char *json = NULL;
    size_t len = 0;
    uint64_t bytes = 0, nodes = 0;
    hpcmount_stat st;
    if (d->prog.mode != 0 && hpcmount_resolve(d->c, path, &st) == HPCMOUNT_OK && S_ISDIR(st.mode))
        tree_size(d, &st, path, &bytes, &nodes);
    progress_start(&d->prog, "refs", 0, nodes);
    int rc = hpcmount_refs_progress(d->c, path, (uint64_t)d->inline_max, refs_progress, &d->prog,
                                    &json, &len);
    progress_end(&d->prog);
    if (rc != HPCMOUNT_OK) {
        fprintf(stderr, "hpcdump: %s\n", hpcmount_last_error());
    } else if (fwrite(json, 1, len, stdout) != len || fflush(stdout) != 0) {
        fprintf(stderr, "hpcdump: refs: write: %s\n", g_strerror(errno));
        rc = HPCMOUNT_E_IO;
    }
    hpcmount_free(json);
    return rc;
}

/* ---- command line ------------------------------------------------------- */

typedef struct command {
    const char *name;
    int min_args, max_args;       /* after SOURCE */
    const char *usage;
} command;

static const command commands[] = {
    { "ls", 0, 1, "ls [-l] [-R] [--json] SOURCE [PATH]\n"
      "                               list a directory like ls (-l long, -R recursive)" },
    { "cat", 1, G_MAXINT, "cat SOURCE PATH...           write files' bytes to stdout, in turn (follows symlinks)" },
    { "info", 0, 0, "info [--json] SOURCE         print the container's /.info (or /.info.json)" },
    { "xattr", 0, 1, "xattr [-R] SOURCE [PATH]     extended attributes like getfattr -d -m -" },
    { "extract", 1, 1, "extract SOURCE DIR           copy the tree to DIR with attributes and times" },
    { "refs", 0, 1, "refs [--inline=BYTES] SOURCE [PATH]\n"
      "                               kerchunk references (JSON) for zarr, xarray, Dask" },
};

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* The commands and the -o options: the basic ones, or (all) every one. */
static char *commands_help(int all)
{
    GString *s = g_string_new("Commands:\n");
    char *opts = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        g_string_append_printf(s, "  %s\n", commands[i].usage);
    g_string_append_printf(s, "\nOPTS (comma-separated, -o may repeat), as for hpcmount%s:\n",
                           all ? "" : "; --help-all: every option");
    if (all)
        hpcmount_options_help(&opts);
    else
        hpcmount_options_help_basic(&opts);
    g_string_append(s, opts);
    hpcmount_free(opts);
    g_string_append(s, "Exit status: 0 done, 1 the container or a read failed, 2 bad command line.");
    return g_string_free(s, FALSE);
}

/* --help or --help-all on stdout (GOption's own would not tell them apart). */
static void print_help(GOptionContext *ctx, int all)
{
    char *cmds = commands_help(all);
    g_option_context_set_description(ctx, cmds);
    char *text = g_option_context_get_help(ctx, TRUE, NULL);
    fputs(text, stdout);
    g_free(text);
    g_free(cmds);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "hpcdump: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see hpcdump --help)\n");
    return EXIT_USAGE;
}

/* The -o sets joined into one option string (*out), checked. */
static int apply_options(char **sets, char **out)
{
    *out = sets ? g_strjoinv(",", sets) : NULL;
    if (hpcmount_options_check(*out) == HPCMOUNT_OK)
        return EXIT_OK;
    fprintf(stderr, "hpcdump: %s (see hpcdump --help)\n", hpcmount_last_error());
    return EXIT_USAGE;
}

static void print_version(void)
{
    char *f = NULL;
    hpcmount_formats(&f);
    printf("hpcdump %s\n%s\n", PACKAGE_VERSION, f);
    hpcmount_free(f);
}

/* Run command cmd on the open container; returns the exit status. */
static int run(dump *d, const command *cmd, char **args)
{
    const char *name = cmd->name;
    hpcmount_stat st;
    if (strcmp(name, "extract") == 0)
        return cmd_extract(d, args[0]) == HPCMOUNT_OK ? EXIT_OK : EXIT_FAIL;
    if (strcmp(name, "refs") == 0)
        return cmd_refs(d, args[0] ? args[0] : "/") == HPCMOUNT_OK ? EXIT_OK : EXIT_FAIL;
    if (strcmp(name, "cat") == 0)
        return cmd_cat(d, args) == HPCMOUNT_OK ? EXIT_OK : EXIT_FAIL;
    const char *info = d->json ? "/.info.json" : "/.info";
    const char *path = strcmp(name, "info") == 0 ? info : args[0] ? args[0] : "/";
    int rc = hpcmount_resolve(d->c, path, &st);
    if (rc != HPCMOUNT_OK) {
        fprintf(stderr, "hpcdump: %s: %s\n", path, hpcmount_strerror(rc));
        return EXIT_FAIL;
    }
    if (strcmp(name, "info") == 0)
        rc = copy_out(d, &st, STDOUT_FILENO, path, NULL);
    else if (strcmp(name, "xattr") == 0)
        rc = xattr_tree(d, &st, path);
    else
        rc = cmd_ls(d, &st, path);
    return rc == HPCMOUNT_OK ? EXIT_OK : EXIT_FAIL;
}

int main(int argc, char *argv[])
{
    char **sets = NULL;
    gboolean lng = FALSE, rec = FALSE, json = FALSE, version = FALSE, help = FALSE, help_all = FALSE;
    gboolean prog = FALSE, noprog = FALSE;
    gint64 inline_max = HPCMOUNT_REFS_INLINE_DEFAULT;
    GOptionEntry entries[] = {
        { "options", 'o', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "container options, as hpcmount's -o", "OPTS" },
        { "long", 'l', 0, G_OPTION_ARG_NONE, &lng, "ls: long listing, as ls -l", NULL },
        { "recursive", 'R', 0, G_OPTION_ARG_NONE, &rec, "ls, xattr: descend into directories", NULL },
        { "json", 0, 0, G_OPTION_ARG_NONE, &json, "info, ls: one JSON object (docs/info-json.md)", NULL },
        { "inline", 0, 0, G_OPTION_ARG_INT64, &inline_max,
          "refs: chunks of at most BYTES inline (default "
          G_STRINGIFY(HPCMOUNT_REFS_INLINE_DEFAULT) ")", "BYTES" },
        { "progress", 0, 0, G_OPTION_ARG_NONE, &prog,
          "extract, refs: progress on stderr even when it is no terminal", NULL },
        { "no-progress", 0, 0, G_OPTION_ARG_NONE, &noprog,
          "extract, refs: no progress (default: on a terminal, after a second)", NULL },
        { "version", 'V', 0, G_OPTION_ARG_NONE, &version, "print the version and the formats built in", NULL },
        { "help", 'h', 0, G_OPTION_ARG_NONE, &help, "this help", NULL },
        { "help-all", 0, 0, G_OPTION_ARG_NONE, &help_all, "this help with every -o option", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    char *optstr = NULL;
    dump d = { 0 };
    GError *err = NULL;
    int ret = EXIT_USAGE;
    GOptionContext *ctx = g_option_context_new("COMMAND SOURCE [ARG] - read a container without FUSE");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_help_enabled(ctx, FALSE);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        usage_error("%s", err->message);
        goto out;
    }
    if (help || help_all) {
        print_help(ctx, help_all);
        ret = EXIT_OK;
        goto out;
    }
    if (version) {
        print_version();
        ret = EXIT_OK;
        goto out;
    }
    if (argc < 3) {
        usage_error("%s", argc < 2 ? "no command" : "no SOURCE");
        goto out;
    }
    const command *cmd = find_command(argv[1]);
    if (!cmd) {
        usage_error("unknown command '%s'", argv[1]);
        goto out;
    }
    int nargs = argc - 3;
    if (nargs < cmd->min_args || nargs > cmd->max_args) {
        usage_error("usage: hpcdump %s", cmd->usage);
        goto out;
    }
    if ((ret = apply_options(sets, &optstr)) != EXIT_OK)
        goto out;
    d.source = argv[2];
    d.lng = lng;
    d.rec = rec;
    d.json = json;
    d.prog.mode = noprog ? 0 : prog ? 1 : isatty(STDERR_FILENO) ? -1 : 0;
    if (inline_max < 0) {
        usage_error("%s", "--inline: BYTES must be >= 0");
        goto out;
    }
    d.inline_max = inline_max;
    ret = EXIT_FAIL;
    if (stat(d.source, &d.src_st) != 0) {
        fprintf(stderr, "hpcdump: %s: %s\n", d.source, g_strerror(errno));
        goto out;
    }
    if (hpcmount_open(d.source, optstr, &d.c) != HPCMOUNT_OK) {
        fprintf(stderr, "hpcdump: %s\n", hpcmount_last_error());
        goto out;
    }
    char **args = g_new0(char *, nargs + 1);     /* NULL-ended */
    memcpy(args, argv + 3, nargs * sizeof *args);
    ret = run(&d, cmd, args);
    g_free(args);
out:
    hpcmount_close(d.c);
    g_free(d.buf);
    g_free(optstr);
    g_clear_error(&err);
    g_strfreev(sets);
    g_option_context_free(ctx);
    return ret;
}
