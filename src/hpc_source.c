/* hpc_source.c - bounds-checked reads of the physical files, and the checks
 * that they did not change since they were opened. */
#include "hpc_source.h"
#include "hpc_error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t hpc_space_new(void)
{
    static uint64_t next_space = 1;
    return __atomic_fetch_add(&next_space, 1, __ATOMIC_RELAXED);
}

static int64_t ts_ns(const struct timespec *t)
{
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static void source_fill_stat(hpc_source *src, const struct stat *st)
{
    /* atomic: live formats refresh the size while other threads read */
    __atomic_store_n(&src->size, (uint64_t)st->st_size, __ATOMIC_RELEASE);
    src->blksize = st->st_blksize > 0 ? (uint32_t)st->st_blksize : 4096;
    src->mtime = (int64_t)st->st_mtime;
    src->uid = st->st_uid;
    src->gid = st->st_gid;
    src->dev = (uint64_t)st->st_dev;
    src->ino = (uint64_t)st->st_ino;
    __atomic_store_n(&src->mtime_ns, ts_ns(&st->st_mtim), __ATOMIC_RELAXED);
    __atomic_store_n(&src->ctime_ns, ts_ns(&st->st_ctim), __ATOMIC_RELAXED);
}

int hpc_source_open(const char *path, hpc_source *out, GError **err)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    out->fd = -1;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return hpc_fail(err, errno == ENOENT ? HPC_E_NOENT : HPC_E_IO, path, NULL, 0,
                        "cannot open: %s", g_strerror(errno));
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return hpc_fail(err, HPC_E_IO, path, NULL, 0, "cannot stat: %s", g_strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return hpc_fail(err, HPC_E_INVAL, path, NULL, 0, "not a regular file");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    out->fd = fd;
    out->path = g_strdup(path);
    out->id = hpc_space_new();
    source_fill_stat(out, &st);
    return HPC_OK;
}

void hpc_source_close(hpc_source *src)
{
    if (src->fd >= 0 && src->path)
        close(src->fd);
    src->fd = -1;
    g_free(src->path);
    src->path = NULL;
}

gboolean hpc_source_contains(const hpc_source *src, uint64_t off, uint64_t len)
{
    uint64_t size = __atomic_load_n(&src->size, __ATOMIC_ACQUIRE);
    return off <= size && len <= size - off;
}

static int mark_changed(const hpc_source *src)
{
    __atomic_store_n(&((hpc_source *)src)->changed, 1, __ATOMIC_RELEASE);
    return HPC_E_CHANGED;
}

gboolean hpc_source_changed(const hpc_source *src)
{
    return !src->live && __atomic_load_n(&src->changed, __ATOMIC_ACQUIRE);
}

void hpc_source_set_live(hpc_source *src)
{
    src->live = 1;
    __atomic_store_n(&src->changed, 0, __ATOMIC_RELEASE);
}

static gboolean same_identity(const hpc_source *src, const struct stat *st)
{
    return (uint64_t)st->st_size == __atomic_load_n(&src->size, __ATOMIC_ACQUIRE) &&
           ts_ns(&st->st_mtim) == __atomic_load_n(&src->mtime_ns, __ATOMIC_RELAXED) &&
           ts_ns(&st->st_ctim) == __atomic_load_n(&src->ctime_ns, __ATOMIC_RELAXED);
}

int hpc_source_check(const hpc_source *src)
{
    struct stat st;
    if (src->live)
        return HPC_OK;
    if (__atomic_load_n(&src->changed, __ATOMIC_ACQUIRE))
        return HPC_E_CHANGED;
    if (fstat(src->fd, &st) != 0)
        return HPC_E_IO;
    return same_identity(src, &st) ? HPC_OK : mark_changed(src);
}

int hpc_source_check_path(const hpc_source *src)
{
    struct stat st;
    int rc = hpc_source_check(src);
    if (rc != HPC_OK || src->live)
        return rc;
    if (stat(src->path, &st) != 0)
        return errno == ENOENT || errno == ENOTDIR ? mark_changed(src) : HPC_OK;
    if ((uint64_t)st.st_dev != src->dev || (uint64_t)st.st_ino != src->ino)
        return mark_changed(src);
    return HPC_OK;
}

int hpc_source_pread_upto(const hpc_source *src, void *buf, size_t len, uint64_t off,
                          size_t *got)
{
    *got = 0;
    if (!hpc_source_contains(src, off, len))
        return HPC_E_CORRUPT;
    if (!src->live && __atomic_load_n(&src->changed, __ATOMIC_ACQUIRE))
        return HPC_E_CHANGED;
    char *p = buf;
    while (*got < len) {
        ssize_t n = pread(src->fd, p + *got, len - *got, (off_t)(off + *got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return HPC_E_IO;
        if (n == 0)
            break;             /* the file shrank under us */
        *got += (size_t)n;
    }
    /* after the read: bytes of a file written meanwhile must not be used */
    int rc = hpc_source_check(src);
    if (rc != HPC_OK)
        return rc;
    return *got > 0 || len == 0 ? HPC_OK : HPC_E_IO;
}

int hpc_source_pread(const hpc_source *src, void *buf, size_t len, uint64_t off)
{
    size_t got;
    int rc = hpc_source_pread_upto(src, buf, len, off, &got);
    return rc == HPC_OK && got < len ? HPC_E_IO : rc;
}

int hpc_source_pread_field(const hpc_source *src, void *buf, size_t len,
                           uint64_t off, const char *field, GError **err)
{
    int rc = hpc_source_pread(src, buf, len, off);
    if (rc == HPC_E_CORRUPT)
        return hpc_fail(err, rc, src->path, field, off,
                        "%zu bytes would end beyond the end of the file (%" G_GUINT64_FORMAT " bytes)",
                        len, (guint64)src->size);
    if (rc == HPC_E_CHANGED)
        return hpc_fail(err, rc, src->path, field, off, "the file changed while it was read");
    if (rc != HPC_OK)
        return hpc_fail(err, rc, src->path, field, off, "read failed: %s", g_strerror(errno));
    return HPC_OK;
}

int hpc_source_refresh(hpc_source *src, gboolean *changed)
{
    struct stat st;
    if (fstat(src->fd, &st) != 0)
        return HPC_E_IO;
    *changed = (uint64_t)st.st_size != __atomic_load_n(&src->size, __ATOMIC_ACQUIRE) ||
               (int64_t)st.st_mtime != src->mtime;
    source_fill_stat(src, &st);
    return HPC_OK;
}
