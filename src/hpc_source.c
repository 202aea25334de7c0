/* hpc_source.c - bounds-checked reads of the physical files. */
#include "hpc_source.h"
#include "hpc_cache.h"
#include "hpc_error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void source_fill_stat(hpc_source *src, const struct stat *st)
{
    /* atomic: live formats refresh the size while other threads read */
    __atomic_store_n(&src->size, (uint64_t)st->st_size, __ATOMIC_RELEASE);
    src->blksize = st->st_blksize > 0 ? (uint32_t)st->st_blksize : 4096;
    src->mtime = (int64_t)st->st_mtime;
    src->uid = st->st_uid;
    src->gid = st->st_gid;
}

int hpc_source_open(const char *path, hpc_source *out, GError **err)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    out->fd = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return hpc_fail(err, errno == ENOENT ? HPC_E_NOENT : HPC_E_IO, path, NULL, 0,
                        "cannot open: %s", g_strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        close(fd);
        return hpc_fail(err, HPC_E_INVAL, path, NULL, 0, "%s",
                        S_ISREG(st.st_mode) ? g_strerror(e) : "not a regular file");
    }
    out->fd = fd;
    out->path = g_strdup(path);
    out->id = hpc_cache_space_new();
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

int hpc_source_pread_upto(const hpc_source *src, void *buf, size_t len, uint64_t off,
                          size_t *got)
{
    *got = 0;
    if (!hpc_source_contains(src, off, len))
        return HPC_E_CORRUPT;
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
