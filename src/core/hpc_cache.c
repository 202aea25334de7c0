/* hpc_cache.c - sharded LRU block cache. */
#include "hpc_cache.h"
#include "hpc_error.h"

#include <glib.h>
#include <string.h>

typedef struct cache_entry {
    uint64_t space;
    uint64_t block;
    GList lru;           /* link in the shard's LRU queue, data = entry */
    size_t len;          /* valid bytes */
    char data[];
} cache_entry;

typedef struct cache_shard {
    GMutex lock;
    GHashTable *map;     /* entry -> entry, hashed on (space, block) */
    GQueue lru;          /* head = most recently used */
    uint64_t capacity;   /* blocks */
} cache_shard;

struct hpc_cache {
    uint32_t block_size;
    unsigned nshards;
    cache_shard *shards;
    uint64_t hits, misses, evictions;
};


uint64_t hpc_cache_space_new(void)
{
    return hpc_space_new();
}

static inline uint64_t key_hash64(uint64_t space, uint64_t block)
{
    uint64_t h = space * 0x9E3779B97F4A7C15ull ^ (block + 0x632BE59BD9B4E019ull);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return h;
}

static guint entry_hash(gconstpointer p)
{
    const cache_entry *e = p;
    return (guint)key_hash64(e->space, e->block);
}

static gboolean entry_equal(gconstpointer a, gconstpointer b)
{
    const cache_entry *x = a, *y = b;
    return x->space == y->space && x->block == y->block;
}

hpc_cache *hpc_cache_new(uint64_t capacity, uint32_t block_size, unsigned nshards)
{
    if (block_size == 0)
        return NULL;
    uint64_t blocks = capacity / block_size;
    if (blocks < 1)
        blocks = 1;
    if (nshards == 0) {
        /* enough shards to spread threads, few enough that each holds a useful LRU */
        nshards = 16;
        while (nshards > 1 && blocks / nshards < 8)
            nshards /= 2;
    }
    hpc_cache *c = g_new0(hpc_cache, 1);
    c->block_size = block_size;
    c->nshards = nshards;
    c->shards = g_new0(cache_shard, nshards);
    for (unsigned i = 0; i < nshards; i++) {
        cache_shard *s = &c->shards[i];
        g_mutex_init(&s->lock);
        s->map = g_hash_table_new(entry_hash, entry_equal);
        g_queue_init(&s->lru);
        s->capacity = blocks / nshards + (i < blocks % nshards);
        if (s->capacity == 0)
            s->capacity = 1;
    }
    return c;
}

void hpc_cache_free(hpc_cache *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        GList *l;
        while ((l = g_queue_pop_head_link(&s->lru)) != NULL)
            g_free(l->data);
        g_hash_table_destroy(s->map);
        g_mutex_clear(&s->lock);
    }
    g_free(c->shards);
    g_free(c);
}

uint32_t hpc_cache_block_size(const hpc_cache *c)
{
    return c->block_size;
}

static cache_shard *shard_of(hpc_cache *c, uint64_t space, uint64_t block)
{
    return &c->shards[(key_hash64(space, block) >> 32) % c->nshards];
}

/* Copy [from, from+n) of a cached block to dst; the shard lock is held. */
static int entry_copy(const cache_entry *e, size_t from, size_t n, char *dst)
{
    if (from > e->len || n > e->len - from)
        return HPC_E_CORRUPT;
    memcpy(dst, e->data + from, n);
    return HPC_OK;
}

static int cache_read_block(hpc_cache *c, uint64_t space, uint64_t block, size_t from,
                            size_t n, char *dst, hpc_cache_fill_fn fill, void *ctx)
{
    cache_shard *s = shard_of(c, space, block);
    cache_entry key = { .space = space, .block = block };
    int rc;

    g_mutex_lock(&s->lock);
    cache_entry *e = g_hash_table_lookup(s->map, &key);
    if (e) {
        g_queue_unlink(&s->lru, &e->lru);
        g_queue_push_head_link(&s->lru, &e->lru);
        rc = entry_copy(e, from, n, dst);
        g_mutex_unlock(&s->lock);
        __atomic_fetch_add(&c->hits, 1, __ATOMIC_RELAXED);
        return rc;
    }
    g_mutex_unlock(&s->lock);
    __atomic_fetch_add(&c->misses, 1, __ATOMIC_RELAXED);

    /* Fill outside the lock: other blocks of this shard stay readable. */
    cache_entry *fresh = g_malloc(sizeof *fresh + c->block_size);
    fresh->space = space;
    fresh->block = block;
    fresh->len = 0;
    fresh->lru.data = fresh;
    fresh->lru.prev = fresh->lru.next = NULL;
    rc = fill(ctx, block, fresh->data, &fresh->len);
    if (rc != HPC_OK || fresh->len > c->block_size) {
        g_free(fresh);
        return rc != HPC_OK ? rc : HPC_E_CORRUPT;
    }

    g_mutex_lock(&s->lock);
    e = g_hash_table_lookup(s->map, &key);
    if (e) {                       /* another thread filled it meanwhile */
        g_free(fresh);
    } else {
        e = fresh;
        g_hash_table_add(s->map, e);
        g_queue_push_head_link(&s->lru, &e->lru);
        while (s->lru.length > s->capacity) {
            GList *old = g_queue_pop_tail_link(&s->lru);
            g_hash_table_remove(s->map, old->data);
            g_free(old->data);
            __atomic_fetch_add(&c->evictions, 1, __ATOMIC_RELAXED);
        }
    }
    rc = entry_copy(e, from, n, dst);
    g_mutex_unlock(&s->lock);
    return rc;
}

int hpc_cache_read(hpc_cache *c, uint64_t space, void *buf, size_t len,
                   uint64_t off, hpc_cache_fill_fn fill, void *ctx)
{
    char *dst = buf;
    while (len > 0) {
        uint64_t block = off / c->block_size;
        size_t from = (size_t)(off % c->block_size);
        size_t n = c->block_size - from;
        if (n > len)
            n = len;
        int rc = cache_read_block(c, space, block, from, n, dst, fill, ctx);
        if (rc != HPC_OK)
            return rc;
        dst += n;
        off += n;
        len -= n;
    }
    return HPC_OK;
}

typedef struct source_fill {
    const hpc_source *src;
    uint64_t size;               /* the file's length as the caller sees it */
    uint32_t block_size;
} source_fill;

/* A block of a physical file.  If the file shrank since it was opened, keep
 * what is still there: reads inside it succeed, reads beyond it fail. */
static int fill_from_source(void *ctx, uint64_t block, void *buf, size_t *len)
{
    const source_fill *f = ctx;
    uint64_t off = block * f->block_size;
    if (off >= f->size)
        return HPC_E_CORRUPT;
    uint64_t n = MIN(f->size - off, (uint64_t)f->block_size);
    return hpc_source_pread_upto(f->src, buf, (size_t)n, off, len);
}

int hpc_cache_read_file(hpc_cache *c, const hpc_source *src, uint64_t space, uint64_t size,
                        void *buf, size_t len, uint64_t off)
{
    if (off > size || len > size - off)
        return HPC_E_CORRUPT;
    source_fill f = { src, size, c->block_size };
    return hpc_cache_read(c, space, buf, len, off, fill_from_source, &f);
}

int hpc_cache_read_source(hpc_cache *c, const hpc_source *src, void *buf,
                          size_t len, uint64_t off)
{
    return hpc_cache_read_file(c, src, src->id, __atomic_load_n(&src->size, __ATOMIC_ACQUIRE),
                               buf, len, off);
}

int hpc_cache_contains(hpc_cache *c, uint64_t space, uint64_t block)
{
    cache_shard *s = shard_of(c, space, block);
    cache_entry key = { .space = space, .block = block };
    g_mutex_lock(&s->lock);
    int found = g_hash_table_contains(s->map, &key);
    g_mutex_unlock(&s->lock);
    return found;
}

void hpc_cache_drop_space(hpc_cache *c, uint64_t space)
{
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        g_mutex_lock(&s->lock);
        GList *l = s->lru.head;
        while (l) {
            GList *next = l->next;
            cache_entry *e = l->data;
            if (e->space == space) {
                g_queue_unlink(&s->lru, l);
                g_hash_table_remove(s->map, e);
                g_free(e);
            }
            l = next;
        }
        g_mutex_unlock(&s->lock);
    }
}

void hpc_cache_get_stats(hpc_cache *c, hpc_cache_stats *out)
{
    out->hits = __atomic_load_n(&c->hits, __ATOMIC_RELAXED);
    out->misses = __atomic_load_n(&c->misses, __ATOMIC_RELAXED);
    out->evictions = __atomic_load_n(&c->evictions, __ATOMIC_RELAXED);
    out->blocks = 0;
    for (unsigned i = 0; i < c->nshards; i++) {
        g_mutex_lock(&c->shards[i].lock);
        out->blocks += c->shards[i].lru.length;
        g_mutex_unlock(&c->shards[i].lock);
    }
}
