/* fti_check.c - chunk MD5 checks: every chunk of a variable against its
 * record, once per variable (the result is kept in the variable's state).
 *
 * Checks run in parallel: a reader going through the variables in order
 * (or starting at a rank's first one) hands the next few variables to
 * worker threads, so that it finds them checked; its own variable it checks
 * in the reading thread unless a worker has started on it already.  A read
 * waits only for the check of its own variable, never for another's.  A
 * variable is claimed (busy) by one thread at a time; others wait for its
 * result on a condition.  See docs/fti.md, "Integrity".
 */
#include "fti.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <string.h>

typedef struct fti_checker {
    hpc_container *c;
    GAsyncQueue *queue;       /* fti_var * to check; &quit ends a thread */
    GThread *threads[8];
    unsigned nthreads;
    gint running;             /* the threads exist (in this process) */
    GMutex mu;
    GCond done;               /* a variable's check finished */
    gint stop;                /* closing: running checks give up */
    gint last;                /* index of the variable read last */
    gint cross;               /* the reader went on to the next rank */
    unsigned ahead;           /* variables checked ahead of an in-order reader */
} fti_checker;

/* Whether a source the variable's bytes come from changed since mount. */
static int rank_changed(const fti_rank *rk)
{
    if (rk->src)
        return hpc_source_changed(rk->src);
    for (unsigned k = 0; rk->rs && k < rk->rs->npieces; k++)
        if (hpc_source_changed(rk->rs->pieces[k].src))
            return 1;
    return 0;
}

/* MD5 of chunk ch into dig (libcrypto's MD5: about 1.4 times GLib's). */
static int chunk_md5(hpc_container *c, const fti_rank *rk, const fti_chunk *ch, char *buf,
                     size_t blen, uint8_t dig[16])
{
    /* the decoder writes in place at an even offset into an even address */
    buf += ch->fptr & 1;
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    unsigned dl = 16;
    int rc = h && EVP_DigestInit_ex(h, EVP_md5(), NULL) == 1 ? HPC_OK : HPC_E_NOMEM;
    for (uint64_t done = 0; done < ch->len && rc == HPC_OK;) {
        size_t n = (size_t)MIN((uint64_t)blen, ch->len - done);
        /* own files: straight from the file, as zero-copy reads bypass the
         * cache anyway; rebuilt ranks: decoded here, hashed while in cache */
        rc = rk->src ? hpc_source_pread(rk->src, buf, n, ch->fptr + done)
                     : fti_rank_read(c, rk, buf, n, ch->fptr + done);
        if (rc == HPC_OK && g_atomic_int_get(&((fti *)c->priv)->checker->stop))
            rc = HPC_E_IO;     /* closing: no verdict */
        if (rc == HPC_OK && EVP_DigestUpdate(h, buf, n) != 1)
            rc = HPC_E_NOMEM;
        done += n;
    }
    if (rc == HPC_OK && EVP_DigestFinal_ex(h, dig, &dl) != 1)
        rc = HPC_E_NOMEM;
    EVP_MD_CTX_free(h);
    return rc;
}

/* Check v now (the caller has claimed it); FTI_V_OK, FTI_V_BAD or an
 * hpc_err, in which case the state stays unknown (tried again later). */
static int verify_now(hpc_container *c, fti_var *v)
{
    fti *f = c->priv;
    const fti_rank *rk = &g_array_index(f->ranks, fti_rank, v->rank);
    const fti_chunk *ch = &g_array_index(f->chunks, fti_chunk, v->first);
    size_t blen = (size_t)MIN((uint64_t)FTI_CHECK_STEP, MAX(v->size, 1));
    char *buf = g_malloc(blen + 1);
    int rc = HPC_OK;
    uint64_t bad = UINT64_MAX;
    for (uint32_t i = 0; i < v->n && rc == HPC_OK && bad == UINT64_MAX; i++) {
        uint8_t dig[16];
        rc = chunk_md5(c, rk, &ch[i], buf, blen, dig);
        if (rc == HPC_OK && memcmp(dig, ch[i].md5, 16) != 0)
            bad = ch[i].fptr;
    }
    g_free(buf);
    if (rc == HPC_OK && rank_changed(rk))
        rc = HPC_E_CHANGED;  /* a verdict on bytes that are no longer there */
    if (rc != HPC_OK)
        return rc;
    v->bad_fptr = bad;
    int st = bad == UINT64_MAX ? FTI_V_OK : FTI_V_BAD;
    g_atomic_int_set(&v->state, st);
    if (st == FTI_V_BAD) {
        hpc_log("%s: checkpoint %d rank %d variable %d: MD5 of the chunk at offset %" PRIu64
                " does not match its record: reads fail with EIO (-o nocheck serves them)",
                rk->path, rk->ckpt, rk->rank, v->id, bad);
        c->host->info_changed(c);
    }
    return st;
}

/* Give up the claim on v and wake the threads waiting for it. */
static void release(fti_checker *k, fti_var *v)
{
    g_mutex_lock(&k->mu);
    g_atomic_int_set(&v->busy, 0);
    g_cond_broadcast(&k->done);
    g_mutex_unlock(&k->mu);
}

static char quit;            /* the queue item that ends a worker */

/* Take v off the queue: claimed (1) unless checked already or a reader
 * claimed it meanwhile.  Under the lock, so that fti_check_all never sees
 * it neither queued nor busy while still to be checked. */
static int unqueue(fti_checker *k, fti_var *v)
{
    g_mutex_lock(&k->mu);
    g_atomic_int_set(&v->queued, 0);
    int mine = g_atomic_int_get(&v->state) == FTI_V_UNKNOWN &&
               g_atomic_int_compare_and_exchange(&v->busy, 0, 1);
    if (!mine)
        g_cond_broadcast(&k->done);
    g_mutex_unlock(&k->mu);
    return mine;
}

static gpointer worker(gpointer user)
{
    fti_checker *k = user;
    for (;;) {
        gpointer item = g_async_queue_pop(k->queue);
        if (item == &quit)
            return NULL;
        if (!unqueue(k, item))
            continue;
        verify_now(k->c, item);
        release(k, item);
    }
}

/* Start the workers on first use.  Not at open: hpcmount forks into the
 * background after opening the container, and threads do not survive a
 * fork (the daemon would queue checks nobody runs and join threads it
 * does not have). */
static void workers_start(fti_checker *k)
{
    if (g_atomic_int_get(&k->running))
        return;
    g_mutex_lock(&k->mu);
    if (!g_atomic_int_get(&k->running)) {
        for (unsigned i = 0; i < k->nthreads; i++)
            k->threads[i] = g_thread_new("fti-md5", worker, k);
        g_atomic_int_set(&k->running, 1);
    }
    g_mutex_unlock(&k->mu);
}

/* End and join the workers (they take one quit item each). */
static void workers_join(fti_checker *k)
{
    if (!g_atomic_int_get(&k->running))
        return;
    for (unsigned i = 0; i < k->nthreads; i++)
        g_async_queue_push_front(k->queue, &quit);
    for (unsigned i = 0; i < k->nthreads; i++)
        g_thread_join(k->threads[i]);
    g_atomic_int_set(&k->running, 0);
}

/* Hand v to the workers unless it is checked, queued or claimed already.
 * It is claimed only when a worker takes it, so a reader that reaches it
 * first checks it itself instead of waiting behind the queue. */
static void submit(fti_checker *k, fti_var *v)
{
    if (g_atomic_int_get(&v->state) == FTI_V_UNKNOWN && !g_atomic_int_get(&v->busy) &&
        g_atomic_int_compare_and_exchange(&v->queued, 0, 1)) {
        workers_start(k);
        g_async_queue_push(k->queue, v);
    }
}

/* The variable after i in the tree's order (a rank's variables, then the
 * next rank's), or -1. */
static gint next_var(const fti *f, gint i)
{
    if (i < 0 || (guint)i >= f->vars->len)
        return -1;
    const fti_var *v = &g_array_index(f->vars, fti_var, i);
    for (guint r = v->rank; r < f->ranks->len; r++) {
        const fti_rank *rk = &g_array_index(f->ranks, fti_rank, r);
        if (r == v->rank && (guint)i + 1 < rk->first_var + rk->nvars)
            return i + 1;
        if (r != v->rank && rk->nvars)
            return (gint)rk->first_var;
    }
    return -1;
}

/* A read of variable i.  When it follows the variable read before, or
 * starts a rank, the reader is going through the variables in order: the
 * next ones are handed to the workers, to be checked while it reads.  They
 * are taken from the following ranks too once the reader has gone on from
 * one rank to the next (not when it reads one rank only). */
static void check_ahead(fti_checker *k, const fti *f, gint i)
{
    gint prev = g_atomic_int_get(&k->last);
    if (prev == i)
        return;              /* the same variable read on: nothing new */
    g_atomic_int_set(&k->last, i);
    const fti_var *v = &g_array_index(f->vars, fti_var, i);
    const fti_rank *rk = &g_array_index(f->ranks, fti_rank, v->rank);
    int in_order = next_var(f, prev) == i;
    if (in_order != g_atomic_int_get(&k->cross) && (!in_order || (guint)i == rk->first_var))
        g_atomic_int_set(&k->cross, in_order);
    if (!in_order && (guint)i != rk->first_var)
        return;
    int cross = g_atomic_int_get(&k->cross);
    gint j = i;
    for (unsigned n = 0; n < k->ahead && (j = next_var(f, j)) >= 0; n++) {
        fti_var *w = &g_array_index(f->vars, fti_var, j);
        if (w->rank != v->rank && !cross)
            break;
        submit(k, w);
    }
}

int fti_check_start(hpc_container *c)
{
    fti *f = c->priv;
    fti_checker *k = g_new0(fti_checker, 1);
    k->c = c;
    k->nthreads = CLAMP(g_get_num_processors(), 1, (gint)G_N_ELEMENTS(k->threads));
    /* enough to keep every worker busy while the reader serves one */
    k->ahead = 2 * k->nthreads;
    k->last = -1;
    g_mutex_init(&k->mu);
    g_cond_init(&k->done);
    k->queue = g_async_queue_new();
    f->checker = k;
    return HPC_OK;
}

/* Own threads rather than a GThreadPool: they are joined here, so nothing
 * of theirs outlives the container. */
void fti_check_stop(fti *f)
{
    fti_checker *k = f->checker;
    if (!k)
        return;
    g_atomic_int_set(&k->stop, 1);             /* running checks give up */
    workers_join(k);
    g_async_queue_unref(k->queue);             /* checks still queued are dropped */
    g_mutex_clear(&k->mu);
    g_cond_clear(&k->done);
    g_free(k);
    f->checker = NULL;
}

/* Whether v is still to be checked by a thread (under k->mu). */
static int pending(const fti_var *v)
{
    return g_atomic_int_get(&v->queued) || g_atomic_int_get(&v->busy);
}

void fti_check_all(hpc_container *c)
{
    fti *f = c->priv;
    fti_checker *k = f->checker;
    for (guint i = 0; i < f->vars->len; i++)
        submit(k, &g_array_index(f->vars, fti_var, i));
    g_mutex_lock(&k->mu);
    for (guint i = 0; i < f->vars->len; i++)
        while (pending(&g_array_index(f->vars, fti_var, i)))
            g_cond_wait(&k->done, &k->mu);
    g_mutex_unlock(&k->mu);
    workers_join(k);           /* none may outlive the open (see workers_start) */
}

/* Check v in this thread, or wait for the thread that has claimed it. */
static int verify_or_wait(hpc_container *c, fti_checker *k, fti_var *v)
{
    for (int tries = 0; tries < 2; tries++) {
        if (g_atomic_int_compare_and_exchange(&v->busy, 0, 1)) {
            int st = verify_now(c, v);
            release(k, v);
            return st;
        }
        g_mutex_lock(&k->mu);
        while (g_atomic_int_get(&v->busy))
            g_cond_wait(&k->done, &k->mu);
        g_mutex_unlock(&k->mu);
        int st = g_atomic_int_get(&v->state);
        if (st != FTI_V_UNKNOWN)
            return st;
        /* the other thread's check failed (I/O): check it here */
    }
    return HPC_E_IO;
}

int fti_var_verify(hpc_container *c, fti_var *v)
{
    fti *f = c->priv;
    fti_checker *k = f->checker;
    const fti_rank *rk = &g_array_index(f->ranks, fti_rank, v->rank);
    int st = g_atomic_int_get(&v->state);
    if (st != FTI_V_UNKNOWN && rank_changed(rk))
        g_atomic_int_set(&v->state, st = FTI_V_UNKNOWN);    /* source changed: recheck */
    check_ahead(k, f, (gint)(v - (fti_var *)(void *)f->vars->data));
    if (st != FTI_V_UNKNOWN)
        return st;
    return verify_or_wait(c, k, v);
}
