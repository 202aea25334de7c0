/* hpc_source.c - bounds-checked reads of the physical files, and the checks
 * that they did not change since they were opened. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE       /* F_SETLEASE, F_SETSIG, the writer-first rwlock */
#endif
#include "hpc_source.h"
#include "hpc_error.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
    src->mode = st->st_mode;
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
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    out->fd = fd;
    out->path = g_strdup(path);
    out->id = hpc_space_new();
    source_fill_stat(out, &st);
    return HPC_OK;
}

static void lease_forget(hpc_source *src);

void hpc_source_stream(hpc_source *src)
{
    (void)posix_fadvise(src->fd, 0, 0, POSIX_FADV_NORMAL);
}

void hpc_source_close(hpc_source *src)
{
    if (__atomic_load_n(&src->lease, __ATOMIC_ACQUIRE) == 1)
        lease_forget(src);
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

gboolean hpc_check_due(gint64 *last, gint64 period_us)
{
    gint64 now = g_get_monotonic_time();
    gint64 seen = __atomic_load_n(last, __ATOMIC_RELAXED);
    return now - seen >= period_us &&
           __atomic_compare_exchange_n(last, &seen, now, FALSE,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void hpc_refresh_init(hpc_refresh *r)
{
    g_mutex_init(&r->lock);
    r->last_check = g_get_monotonic_time();
    r->pending = 0;
}

void hpc_refresh_clear(hpc_refresh *r)
{
    g_mutex_clear(&r->lock);
}

gboolean hpc_refresh_begin(hpc_refresh *r, hpc_source *src)
{
    if (!hpc_check_due(&r->last_check, HPC_REFRESH_US) || !g_mutex_trylock(&r->lock))
        return FALSE;
    gboolean changed = FALSE;
    if (hpc_source_refresh(src, &changed) == HPC_OK && (changed || r->pending))
        return TRUE;
    g_mutex_unlock(&r->lock);
    return FALSE;
}

void hpc_refresh_end(hpc_refresh *r, gboolean built)
{
    r->pending = !built;
    g_mutex_unlock(&r->lock);
}

/* ---- read leases (hpc_source.h) ----------------------------------------
 * lease_lock guards the table and every lease change; a break holds it
 * while it waits for the replies in flight, so replies never take it. */

static int lease_signo;                /* 0: no leases */
static GMutex lease_lock;
static GHashTable *lease_fds;          /* fd -> hpc_source *, leases held */
/* readers: replies in flight; the writer: a break.  Writers first, so that
 * a stream of replies cannot keep a break (and the writer of the file)
 * waiting. */
static pthread_rwlock_t replies = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

void hpc_source_leases_enable(int signo)
{
    g_mutex_lock(&lease_lock);
    lease_signo = signo;
    g_mutex_unlock(&lease_lock);
}

gboolean hpc_source_lease(const hpc_source *csrc)
{
    hpc_source *src = (hpc_source *)csrc;     /* the lease is bookkeeping */
    int state = __atomic_load_n(&src->lease, __ATOMIC_ACQUIRE);
    if (state != 0)
        return state == 1;
    g_mutex_lock(&lease_lock);
    if (src->lease == 0) {
        int ok = lease_signo != 0 && fcntl(src->fd, F_SETSIG, lease_signo) == 0 &&
                 fcntl(src->fd, F_SETOWN, getpid()) == 0 &&
                 fcntl(src->fd, F_SETLEASE, F_RDLCK) == 0;
        if (ok) {
            if (!lease_fds)
                lease_fds = g_hash_table_new(NULL, NULL);
            g_hash_table_insert(lease_fds, GINT_TO_POINTER(src->fd), src);
        }
        __atomic_store_n(&src->lease, ok ? 1 : -1, __ATOMIC_RELEASE);
    }
    gboolean held = src->lease == 1;
    g_mutex_unlock(&lease_lock);
    return held;
}

gboolean hpc_source_leased(const hpc_source *src)
{
    return __atomic_load_n(&src->lease, __ATOMIC_ACQUIRE) == 1;
}

/* The source is being closed: its lease goes with the descriptor. */
static void lease_forget(hpc_source *src)
{
    g_mutex_lock(&lease_lock);
    if (lease_fds && g_hash_table_lookup(lease_fds, GINT_TO_POINTER(src->fd)) == src)
        g_hash_table_remove(lease_fds, GINT_TO_POINTER(src->fd));
    __atomic_store_n(&src->lease, -1, __ATOMIC_RELEASE);
    g_mutex_unlock(&lease_lock);
}

/* Leases the kernel is breaking: the one of fd, or (fd -1) every lease
 * whose break is pending (F_GETLEASE then tells the type it goes to). */
static GPtrArray *leases_breaking(int fd)
{
    GPtrArray *hit = g_ptr_array_new();
    if (!lease_fds)
        return hit;
    if (fd >= 0) {
        hpc_source *s = g_hash_table_lookup(lease_fds, GINT_TO_POINTER(fd));
        if (s)
            g_ptr_array_add(hit, s);
        return hit;
    }
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, lease_fds);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (fcntl(GPOINTER_TO_INT(k), F_GETLEASE) != F_RDLCK)
            g_ptr_array_add(hit, v);
    return hit;
}

void hpc_source_lease_broken(int fd)
{
    g_mutex_lock(&lease_lock);
    GPtrArray *hit = leases_breaking(fd);
    for (guint i = 0; i < hit->len; i++) {
        hpc_source *s = g_ptr_array_index(hit, i);
        __atomic_store_n(&s->lease, -1, __ATOMIC_RELEASE);
        if (!s->live)
            mark_changed(s);       /* before the wait: later replies see it */
    }
    pthread_rwlock_wrlock(&replies);   /* the replies in flight are out */
    pthread_rwlock_unlock(&replies);
    for (guint i = 0; i < hit->len; i++) {
        hpc_source *s = g_ptr_array_index(hit, i);
        g_hash_table_remove(lease_fds, GINT_TO_POINTER(s->fd));
        (void)fcntl(s->fd, F_SETLEASE, F_UNLCK);   /* the writer goes on */
    }
    g_ptr_array_free(hit, TRUE);
    g_mutex_unlock(&lease_lock);
}

void hpc_source_replies_begin(void)
{
    pthread_rwlock_rdlock(&replies);
}

void hpc_source_replies_end(void)
{
    pthread_rwlock_unlock(&replies);
}
