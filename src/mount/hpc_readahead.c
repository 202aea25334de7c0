/* hpc_readahead.c - read-ahead of the source extents behind sequential
 * streams: the decision (hpc_ra_step) and the threads that advise. */
#define _GNU_SOURCE       /* posix_fadvise on older C libraries */
#include "hpc_readahead.h"
#include "hpc_error.h"

#include <fcntl.h>
#include <glib.h>

#define RA_EXTENTS 64
#define RA_MIN_WINDOW 4096u

struct hpc_ra {
    hpc_mount *m;
    uint64_t min_window, max_window;
    GThreadPool *pool;
    gint stopping;
    GMutex lock;
    GHashTable *streams; /* open streams: freed with ra if never released */
    uint64_t advised;    /* bytes, __atomic */
};

struct hpc_ra_stream {
    hpc_ra *ra;
    hpc_ino ino;
    GMutex lock;         /* reads of one open file run on several threads */
    hpc_ra_state st;
};

/* One piece of read-ahead, queued for the threads. */
typedef struct ra_piece {
    hpc_ino ino;
    uint64_t from, to;
} ra_piece;

static int is_sequential(const hpc_ra_state *st, uint64_t off, uint64_t len)
{
    if (!st->started)
        return off == 0;
    /* a running stream tolerates reordering within its window; a new one
     * within one request, so random reads never look sequential */
    uint64_t slack = st->window ? st->window : len;
    uint64_t lo = st->next > slack ? st->next - slack : 0;
    return off >= lo && off <= st->next + slack;
}

int hpc_ra_step(hpc_ra_state *st, uint64_t min_window, uint64_t max_window,
                uint64_t off, uint64_t len, uint64_t *from, uint64_t *to)
{
    uint64_t end = off + len < off ? UINT64_MAX : off + len;
    int seq = is_sequential(st, off, len);
    st->started = 1;
    if (!seq || max_window == 0) {
        st->next = end;
        st->ahead = st->window = 0;
        return 0;
    }
    st->next = MAX(st->next, end);
    if (st->window == 0) {
        st->window = MAX(MIN(min_window, max_window), RA_MIN_WINDOW);
    } else {
        if (st->ahead > st->next && st->ahead - st->next >= st->window / 2)
            return 0;        /* enough still ahead: not at the trigger yet */
        st->window = MIN(st->window * 2, MAX(max_window, RA_MIN_WINDOW));
    }
    *from = MAX(st->ahead, st->next);
    *to = st->next + st->window < st->next ? UINT64_MAX : st->next + st->window;
    st->ahead = *to;
    return *to > *from;
}

/* WILLNEED on n extents; the bytes advised. */
static uint64_t advise_extents(hpc_ra *ra, const hpc_extent *ext, unsigned n)
{
    uint64_t done = 0;
    for (unsigned i = 0; i < n; i++) {
        if (posix_fadvise(ext[i].src->fd, (off_t)ext[i].off, (off_t)ext[i].len,
                          POSIX_FADV_WILLNEED) == 0)
            __atomic_add_fetch(&ra->advised, ext[i].len, __ATOMIC_RELAXED);
        done += ext[i].len;
    }
    return done;
}

/* Advise [from, to) of ino, mapped in as many calls as its extents need. */
static void advise_range(hpc_ra *ra, hpc_ino ino, uint64_t from, uint64_t to)
{
    hpc_extent ext[RA_EXTENTS];
    while (from < to && !g_atomic_int_get(&ra->stopping)) {
        unsigned n = 0;
        if (hpc_mount_map(ra->m, ino, from, to - from, ext, RA_EXTENTS, &n) != HPC_OK)
            return;          /* not mapped (HPC_E_NOTSUP) or gone */
        uint64_t got = advise_extents(ra, ext, n);
        hpc_mount_unmap(ra->m, ino);
        if (got == 0)
            return;          /* past the end of the file */
        from += got;
    }
}

static void stream_destroy(gpointer p)
{
    hpc_ra_stream *s = p;
    g_mutex_clear(&s->lock);
    g_free(s);
}

static void ra_run(gpointer data, gpointer user)
{
    ra_piece *p = data;
    advise_range(user, p->ino, p->from, p->to);
    g_free(p);
}

int hpc_ra_new(hpc_mount *m, uint64_t min_window, uint64_t max_window,
               unsigned threads, hpc_ra **out)
{
    *out = NULL;
    if (max_window == 0 || threads == 0)
        return HPC_OK;
    hpc_ra *ra = g_new0(hpc_ra, 1);
    ra->m = m;
    ra->min_window = min_window;
    ra->max_window = max_window;
    /* shared threads, started on first use: never before a fork */
    ra->pool = g_thread_pool_new(ra_run, ra, (gint)threads, FALSE, NULL);
    if (!ra->pool) {
        g_free(ra);
        return HPC_E_NOMEM;
    }
    g_mutex_init(&ra->lock);
    ra->streams = g_hash_table_new_full(NULL, NULL, stream_destroy, NULL);
    *out = ra;
    return HPC_OK;
}

void hpc_ra_free(hpc_ra *ra)
{
    if (!ra)
        return;
    g_atomic_int_set(&ra->stopping, 1);      /* queued pieces return at once */
    g_thread_pool_free(ra->pool, FALSE, TRUE);
    /* an unmount drops the releases still queued in the kernel: the
     * streams never released are freed with the table */
    g_hash_table_destroy(ra->streams);
    g_mutex_clear(&ra->lock);
    g_free(ra);
}

hpc_ra_stream *hpc_ra_stream_new(hpc_ra *ra, hpc_ino ino)
{
    if (!ra)
        return NULL;
    hpc_ra_stream *s = g_new0(hpc_ra_stream, 1);
    s->ra = ra;
    s->ino = ino;
    g_mutex_init(&s->lock);
    g_mutex_lock(&ra->lock);
    g_hash_table_add(ra->streams, s);
    g_mutex_unlock(&ra->lock);
    return s;
}

void hpc_ra_stream_free(hpc_ra_stream *s)
{
    if (!s)
        return;
    hpc_ra *ra = s->ra;
    g_mutex_lock(&ra->lock);
    g_hash_table_remove(ra->streams, s);    /* frees s */
    g_mutex_unlock(&ra->lock);
}

int hpc_ra_read(hpc_ra_stream *s, uint64_t off, uint64_t len)
{
    uint64_t from, to;
    if (!s)
        return HPC_OK;
    g_mutex_lock(&s->lock);
    int go = hpc_ra_step(&s->st, s->ra->min_window, s->ra->max_window, off, len, &from, &to);
    g_mutex_unlock(&s->lock);
    /* pieces, so that several requests are outstanding at once */
    for (; go && from < to; from += MIN(to - from, HPC_RA_PIECE)) {
        ra_piece *p = g_new(ra_piece, 1);
        *p = (ra_piece){ s->ino, from, from + MIN(to - from, HPC_RA_PIECE) };
        if (!g_thread_pool_push(s->ra->pool, p, NULL))
            return HPC_E_NOMEM;   /* no new thread; p is queued all the same */
    }
    return HPC_OK;
}

uint64_t hpc_ra_advised(const hpc_ra *ra)
{
    return ra ? __atomic_load_n(&ra->advised, __ATOMIC_RELAXED) : 0;
}
