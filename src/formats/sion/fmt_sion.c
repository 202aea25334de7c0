/* fmt_sion.c - SIONlib multi-task container files (file formats 2 to 5).
 *
 * Every task's logical stream is the concatenation of its blocks; block j of
 * task i lies at startptr[i] + j * globalskip in its physical file.  The
 * reader keeps one small record per task plus the META2 block sizes, and
 * computes names, attributes and extents from them (no object per entry),
 * so that files of 10^6 tasks mount in a fraction of a second.
 *
 * See docs/formats/sion.md for the on-disk facts; all fields are checked
 * against the real file sizes before anything is allocated or read.  The
 * metadata of one physical file (META1, META2, salvage) is sion_meta.c;
 * this file is the set, the tree, the data and .info (sion_int.h).
 */
#include "sion_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int sion_probe(const char *path, const unsigned char *head, size_t len)
{
    (void)path;
    return (head && len >= 4 && memcmp(head, "sion", 4) == 0) ? 100 : 0;
}


/* ---- the set ---------------------------------------------------------- */

static void sion_free(sion *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nfiles; i++) {
        g_free(s->files[i].blocksizes);
        g_free(s->files[i].tasks);
    }
    g_free(s->files);
    g_free(s->tasks);
    g_free(s->by_rank);
    g_free(s->first_key);
    g_free(s->keys);
    g_free(s->segs);
    g_free(s);
}

static void sion_close(hpc_container *c)
{
    sion_free(c->priv);
    c->priv = NULL;
}

/* Read the mapping of a multi-file set (file 0, after META2) and put the
 * tasks in global order. */
static int read_mapping(sion *s, GError **err)
{
    sion_file *f0 = &s->files[0];
    const char *path = f0->src->path;
    uint64_t n = (uint64_t)f0->ntasks;
    uint64_t at = (uint64_t)f0->sov + 8 * n + 8 * n * (uint64_t)f0->maxchunks;
    unsigned char b[4];
    int rc = hpc_source_pread_field(f0->src, b, 4, at, "mapping_size", err);
    if (rc != HPC_OK)
        return rc;
    int32_t msize = rd32(b, f0->big);
    if (msize < 0 || (uint32_t)msize != s->ntasks)
        return hpc_fail(err, HPC_E_CORRUPT, path, "mapping_size", at,
                        "%d, but the files of the set hold %u tasks", msize, s->ntasks);
    unsigned char *m = g_malloc(8 * (uint64_t)s->ntasks);
    uint8_t *seen = g_malloc0(s->ntasks);
    rc = hpc_source_pread_field(f0->src, m, 8 * (uint64_t)s->ntasks, at + 4, "mapping", err);
    for (uint32_t g = 0; g < s->ntasks && rc == HPC_OK; g++) {
        int32_t fn = rd32(m + 8 * (uint64_t)g, f0->big), lr = rd32(m + 8 * (uint64_t)g + 4, f0->big);
        if (fn < 0 || (uint32_t)fn >= s->nfiles || lr < 0 || lr >= s->files[fn].ntasks ||
            seen[s->files[fn].first_task + (uint32_t)lr]++) {
            rc = hpc_fail(err, HPC_E_CORRUPT, path, "mapping", at + 4 + 8 * (uint64_t)g,
                          "global task %u maps to file %d local rank %d: no such task, or twice",
                          g, fn, lr);
            break;
        }
        s->tasks[g] = s->files[fn].tasks[lr];
    }
    g_free(seen);
    g_free(m);
    return rc;
}

static int cmp_rank(const void *a, const void *b, void *p)
{
    const sion_task *t = p;
    int64_t x = t[*(const uint32_t *)a].globalrank, y = t[*(const uint32_t *)b].globalrank;
    if (x != y)
        return x < y ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Decide how tasks are named and build the rank index. */
static void index_ranks(sion *s)
{
    int identity = 1;
    for (uint32_t i = 0; i < s->ntasks && identity; i++)
        identity = s->tasks[i].globalrank == (int64_t)i;
    if (identity)
        return;
    s->by_rank = g_new(uint32_t, s->ntasks);
    for (uint32_t i = 0; i < s->ntasks; i++)
        s->by_rank[i] = i;
    g_qsort_with_data(s->by_rank, (gint)s->ntasks, sizeof(uint32_t), cmp_rank, s->tasks);
    for (uint32_t i = 1; i < s->ntasks; i++)
        if (s->tasks[s->by_rank[i]].globalrank == s->tasks[s->by_rank[i - 1]].globalrank) {
            s->by_index = 1;
            g_free(s->by_rank);
            s->by_rank = NULL;
            return;
        }
}

/* Extents of [off, off+len) of task t's stream, at most max of them. */
static void stream_map(const sion *s, const sion_task *t, uint64_t off, uint64_t len,
                       hpc_extent *ext, unsigned max, unsigned *n)
{
    const sion_file *f = &s->files[t->file];
    uint64_t nt = (uint64_t)f->ntasks, pos = 0;
    *n = 0;
    for (uint32_t j = 0; j < t->blockcount && len > 0 && *n < max; j++) {
        uint64_t bs = (uint64_t)f->blocksizes[j * nt + t->local];
        if (off < pos + bs) {
            uint64_t in = off - pos, take = MIN(bs - in, len);
            ext[*n] = (hpc_extent){ .src = f->src, .off = t->start + j * f->globalskip + in, .len = take };
            (*n)++;
            off += take;
            len -= take;
        }
        pos += bs;
    }
}

/* Key-value mode: parse each task's record stream {i64 key, i64 len, data}. */
typedef struct kv_rec {
    int64_t key;
    uint64_t off, len;
    uint32_t seq;
} kv_rec;

static int cmp_rec(const void *a, const void *b)
{
    const kv_rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Read [off, off+len) of a task's stream (the reader's own parsing). */
static int stream_read(hpc_container *c, const sion *s, const sion_task *t, void *buf,
                       uint64_t len, uint64_t off)
{
    hpc_extent ext[16];
    char *p = buf;
    while (len > 0) {
        unsigned n;
        size_t got;
        stream_map(s, t, off, len, ext, 16, &n);
        int rc = c->host->read_extents(c, ext, n, p, (size_t)len, &got);
        if (rc != HPC_OK)
            return rc;
        p += got;
        off += got;
        len -= got;
    }
    return HPC_OK;
}

/* Where byte pos of a task's stream lies in its file (for messages). */
static uint64_t stream_offset_in_file(const sion *s, const sion_task *t, uint64_t pos)
{
    hpc_extent e;
    unsigned n;
    stream_map(s, t, pos, 1, &e, 1, &n);
    return n ? e.off : t->start;
}

/* Read the records of task ti's stream into recs (key, offset, length). */
static int task_records(hpc_container *c, sion *s, uint32_t ti, GArray *recs, GError **err)
{
    sion_task *t = &s->tasks[ti];
    const sion_file *f = &s->files[t->file];
    uint64_t pos = 0;
    g_array_set_size(recs, 0);
    while (pos < t->length) {
        unsigned char h[16];
        /* salvaged stream: the last record may be cut off; drop it */
        if (f->salvaged && (t->length - pos < 16 ||
                            (stream_read(c, s, t, h, 16, pos) == HPC_OK &&
                             (uint64_t)rd64(h + 8, f->big) > t->length - pos - 16)))
            break;
        if (t->length - pos < 16 || stream_read(c, s, t, h, 16, pos) != HPC_OK)
            return hpc_fail(err, HPC_E_CORRUPT, f->src->path, "key-value record",
                            stream_offset_in_file(s, t, pos),
                            "task %u: record header at stream offset %" PRIu64
                            " is cut off by the end of the stream (%" PRIu64 " bytes)",
                            ti, pos, t->length);
        int64_t len = rd64(h + 8, f->big);
        if (len < 0 || (uint64_t)len > t->length - pos - 16)
            return hpc_fail(err, HPC_E_CORRUPT, f->src->path, "key-value record",
                            stream_offset_in_file(s, t, pos + 8),
                            "task %u: record length %" PRId64 " at stream offset %" PRIu64
                            " runs past the end of the stream", ti, len, pos);
        kv_rec r = { rd64(h, f->big), pos + 16, (uint64_t)len, recs->len };
        g_array_append_val(recs, r);
        pos += 16 + (uint64_t)len;
    }
    return HPC_OK;
}

/* Group task ti's records by key (in stream order within a key). */
static void task_keys(uint32_t ti, GArray *recs, GArray *keys, GArray *segs)
{
    if (recs->len > 1)
        qsort(recs->data, recs->len, sizeof(kv_rec), cmp_rec);
    for (guint i = 0; i < recs->len; i++) {
        kv_rec *r = &g_array_index(recs, kv_rec, i);
        if (i == 0 || r->key != g_array_index(recs, kv_rec, i - 1).key) {
            sion_key k = { r->key, 0, ti, segs->len, 0 };
            g_array_append_val(keys, k);
        }
        sion_key *k = &g_array_index(keys, sion_key, keys->len - 1);
        if (r->len > 0) {     /* empty records add nothing but the key */
            sion_seg sg = { r->off, r->len };
            g_array_append_val(segs, sg);
            k->nseg++;
            k->length += r->len;
        }
    }
}

static int parse_keys(hpc_container *c, sion *s, GError **err)
{
    GArray *keys = g_array_new(FALSE, FALSE, sizeof(sion_key));
    GArray *segs = g_array_new(FALSE, FALSE, sizeof(sion_seg));
    GArray *recs = g_array_new(FALSE, FALSE, sizeof(kv_rec));
    int rc = HPC_OK;
    s->first_key = g_new0(uint32_t, (gsize)s->ntasks + 1);
    for (uint32_t ti = 0; ti < s->ntasks && rc == HPC_OK; ti++) {
        rc = task_records(c, s, ti, recs, err);
        s->first_key[ti] = keys->len;
        if (rc == HPC_OK)
            task_keys(ti, recs, keys, segs);
        s->first_key[ti + 1] = keys->len;
    }
    g_array_free(recs, TRUE);
    s->nkeys = keys->len;
    s->nsegs = segs->len;
    s->keys = (sion_key *)(void *)g_array_free(keys, FALSE);
    s->segs = (sion_seg *)(void *)g_array_free(segs, FALSE);
    return rc;
}

/* Open and check every physical file of the set (META1 and META2). */
static int open_files(hpc_container *c, sion *s, GError **err)
{
    const sion_file *first = &s->files[0];
    uint64_t total = 0;
    int rc = HPC_OK;
    for (uint32_t k = 0; k < s->nfiles && rc == HPC_OK; k++) {
        sion_file *f = &s->files[k];
        if (k > 0) {
            char *member = g_strdup_printf("%s.%06u", c->path, k);
            f->src = c->host->add_source(c, member, err);
            rc = f->src ? sion_parse_meta1(f, err) : HPC_E_IO;
            if (rc == HPC_OK && (f->filenumber != (int32_t)k || f->nfiles != first->nfiles))
                rc = hpc_fail(err, HPC_E_CORRUPT, member, "filenumber", SION_OFF_FILENUMBER,
                              "file %d of %d, expected file %u of %d",
                              f->filenumber, f->nfiles, k, first->nfiles);
            g_free(member);
        }
        if (rc == HPC_OK)
            rc = sion_parse_meta2(f, c->opts.salvage, err);
        for (uint32_t i = 0; rc == HPC_OK && i < (uint32_t)f->ntasks; i++) {
            f->tasks[i].file = k;
            f->tasks[i].local = i;
        }
        f->first_task = (uint32_t)total;
        total += (uint64_t)f->ntasks;
    }
    if (rc == HPC_OK && total > UINT32_MAX / 2)
        rc = hpc_fail(err, HPC_E_UNSUPPORTED, c->path, "ntasks", SION_OFF_NTASKS, "%" PRIu64 " tasks", total);
    s->ntasks = (uint32_t)total;
    return rc;
}

/* The tasks of the set in global order: file 0's mapping, or (a salvaged
 * set, whose mapping the close did not write) the files' order, which is
 * how writers split ranks over the files. */
static int order_tasks(sion *s, GError **err)
{
    int rc = HPC_OK;
    if (s->nfiles > 1 && s->files[0].salvaged) {
        s->map_inferred = 1;
        s->tasks = g_new0(sion_task, s->ntasks);
        for (uint32_t k = 0; k < s->nfiles; k++)
            memcpy(s->tasks + s->files[k].first_task, s->files[k].tasks,
                   (size_t)s->files[k].ntasks * sizeof(sion_task));
    } else if (s->nfiles > 1) {
        s->tasks = g_new0(sion_task, s->ntasks);
        rc = read_mapping(s, err);
    } else {
        s->tasks = s->files[0].tasks;
        s->files[0].tasks = NULL;
    }
    for (uint32_t k = 0; k < s->nfiles; k++) {
        g_free(s->files[k].tasks);
        s->files[k].tasks = NULL;
    }
    return rc;
}

static int sion_open(hpc_container *c, GError **err)
{
    sion *s = g_new0(sion, 1);
    int rc;
    sion_file first = { 0 };

    first.src = c->host->add_source(c, c->path, err);
    if (!first.src) {
        rc = HPC_E_IO;
        goto out;
    }
    rc = sion_parse_meta1(&first, err);
    if (rc != HPC_OK)
        goto out;
    /* A member other than file 0 shows only its own tasks. */
    int set = first.nfiles > 1 && first.filenumber == 0;
    s->nfiles = set ? (uint32_t)first.nfiles : 1;
    s->files = g_new0(sion_file, s->nfiles);
    s->files[0] = first;
    if ((rc = open_files(c, s, err)) != HPC_OK)
        goto out;
    c->fsblksize = (uint32_t)first.fsblksize;
    for (uint32_t k = 0; k < s->nfiles; k++)
        s->salvaged |= s->files[k].salvaged;
    if ((rc = order_tasks(s, err)) != HPC_OK)
        goto out;
    index_ranks(s);
    int kv = (int)(first.flag1 >> 32);
    if (first.fileformat >= 5 && kv != 0 && kv != SION_KV_NONE) {
        if (kv != SION_KV_INLINE) {
            rc = hpc_fail(err, HPC_E_UNSUPPORTED, c->path, "flag1", SION_OFF_FLAG1,
                          "key-value mode %d is not supported (inline, 51, is)", kv);
            goto out;
        }
        s->kvmode = 1;
        rc = parse_keys(c, s, err);
        if (rc != HPC_OK)
            goto out;
    }
    c->priv = s;
    return HPC_OK;
out:
    if (!s->files) {
        g_free(first.tasks);
        g_free(first.blocksizes);
    }
    sion_free(s);
    return rc;
}

/* ---- tree ------------------------------------------------------------- */

static int task_name(hpc_container *c, const sion *s, uint32_t i, char *buf, size_t len)
{
    if (s->by_index)
        return g_snprintf(buf, len, "task-%06u", i) < (int)len ? HPC_OK : HPC_E_RANGE;
    return hpc_rankname_format(&c->rankname, s->tasks[i].globalrank, buf, len);
}

static void task_stat(const sion *s, uint32_t i, hpc_stat *st)
{
    st->ino = HPC_INO_FIRST + i;
    st->mode = s->kvmode ? HPC_MODE_DIR : HPC_MODE_FILE;
    st->size = s->kvmode ? 0 : s->tasks[i].length;
}

static void key_stat(const sion *s, uint32_t k, hpc_stat *st)
{
    st->ino = KEY_INO_BASE + k;
    st->mode = HPC_MODE_FILE;
    st->size = s->keys[k].length;
}

static int find_task(hpc_container *c, const sion *s, const char *name, uint32_t *out)
{
    int64_t v;
    if (s->by_index) {
        if (strncmp(name, "task-", 5) != 0)
            return HPC_E_NOENT;
        char *end;
        unsigned long long idx = strtoull(name + 5, &end, 10);
        char again[32];
        if (*end || idx >= s->ntasks)
            return HPC_E_NOENT;
        g_snprintf(again, sizeof again, "task-%06llu", idx);
        if (strcmp(again, name) != 0)
            return HPC_E_NOENT;
        *out = (uint32_t)idx;
        return HPC_OK;
    }
    if (hpc_rankname_parse(&c->rankname, name, &v) != HPC_OK)
        return HPC_E_NOENT;
    if (!s->by_rank) {
        if (v < 0 || (uint64_t)v >= s->ntasks)
            return HPC_E_NOENT;
        *out = (uint32_t)v;
        return HPC_OK;
    }
    uint32_t lo = 0, hi = s->ntasks;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->tasks[s->by_rank[mid]].globalrank < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->ntasks || s->tasks[s->by_rank[lo]].globalrank != v)
        return HPC_E_NOENT;
    *out = s->by_rank[lo];
    return HPC_OK;
}

static int find_key(const sion *s, uint32_t task, const char *name, uint32_t *out)
{
    if (strncmp(name, "key-", 4) != 0)
        return HPC_E_NOENT;
    char *rest;
    long long key = strtoll(name + 4, &rest, 10);
    char again[32];
    if (*rest || name[4] == '\0')
        return HPC_E_NOENT;
    g_snprintf(again, sizeof again, "key-%lld", key);
    if (strcmp(again, name) != 0)
        return HPC_E_NOENT;
    uint32_t lo = s->first_key[task], end = s->first_key[task + 1], hi = end;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->keys[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == end || s->keys[lo].key != key)
        return HPC_E_NOENT;
    *out = lo;
    return HPC_OK;
}

static int sion_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    const sion *s = c->priv;
    uint32_t i, k;
    if (parent == HPC_INO_ROOT) {
        if (find_task(c, s, name, &i) != HPC_OK)
            return HPC_E_NOENT;
        task_stat(s, i, st);
        return HPC_OK;
    }
    if (parent >= HPC_INO_FIRST && parent - HPC_INO_FIRST < s->ntasks) {
        if (!s->kvmode)
            return HPC_E_NOTDIR;
        if (find_key(s, (uint32_t)(parent - HPC_INO_FIRST), name, &k) != HPC_OK)
            return HPC_E_NOENT;
        key_stat(s, k, st);
        return HPC_OK;
    }
    return (parent >= KEY_INO_BASE && parent - KEY_INO_BASE < s->nkeys) ? HPC_E_NOTDIR
                                                                        : HPC_E_NOENT;
}

static int sion_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st)
{
    const sion *s = c->priv;
    if (ino == HPC_INO_ROOT) {
        st->ino = ino;
        st->mode = HPC_MODE_DIR;
        return HPC_OK;
    }
    if (ino >= HPC_INO_FIRST && ino - HPC_INO_FIRST < s->ntasks) {
        task_stat(s, (uint32_t)(ino - HPC_INO_FIRST), st);
        return HPC_OK;
    }
    if (s->kvmode && ino >= KEY_INO_BASE && ino - KEY_INO_BASE < s->nkeys) {
        key_stat(s, (uint32_t)(ino - KEY_INO_BASE), st);
        return HPC_OK;
    }
    return HPC_E_NOENT;
}

static int sion_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx)
{
    const sion *s = c->priv;
    char name[HPC_RANKNAME_MAX * 2 + 64];
    hpc_stat st;
    if (dir == HPC_INO_ROOT) {
        for (uint64_t i = cookie; i < s->ntasks; i++) {
            memset(&st, 0, sizeof st);
            task_stat(s, (uint32_t)i, &st);
            if (task_name(c, s, (uint32_t)i, name, sizeof name) != HPC_OK)
                return HPC_E_RANGE;
            if (fn(ctx, name, &st, i + 1))
                break;
        }
        return HPC_OK;
    }
    if (dir >= HPC_INO_FIRST && dir - HPC_INO_FIRST < s->ntasks && s->kvmode) {
        uint32_t ti = (uint32_t)(dir - HPC_INO_FIRST), first = s->first_key[ti];
        for (uint64_t i = cookie; i < s->first_key[ti + 1] - first; i++) {
            memset(&st, 0, sizeof st);
            key_stat(s, first + (uint32_t)i, &st);
            g_snprintf(name, sizeof name, "key-%" PRId64, s->keys[first + i].key);
            if (fn(ctx, name, &st, i + 1))
                break;
        }
        return HPC_OK;
    }
    return sion_getattr(c, dir, &st) == HPC_OK ? HPC_E_NOTDIR : HPC_E_NOENT;
}

/* ---- data ------------------------------------------------------------- */

/* The extents of [off, off+len) of key k's bytes: its records' data, in
 * stream order. */
static void key_map(const sion *s, const sion_key *k, uint64_t off, uint64_t len,
                    hpc_extent *ext, unsigned max, unsigned *n)
{
    const sion_task *t = &s->tasks[k->task];
    uint64_t pos = 0;
    for (uint32_t i = 0; i < k->nseg && len > 0 && *n < max; i++) {
        const sion_seg *sg = &s->segs[k->first_seg + i];
        uint64_t start = pos;
        pos += sg->len;
        if (off >= pos)
            continue;
        uint64_t in = off - start, take = MIN(sg->len - in, len);
        unsigned got;
        stream_map(s, t, sg->off + in, take, ext + *n, max - *n, &got);
        for (unsigned e = 0; e < got; e++) {
            off += ext[*n + e].len;
            len -= ext[*n + e].len;
        }
        *n += got;
    }
}

static int sion_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                    hpc_extent *ext, unsigned max, unsigned *n)
{
    const sion *s = c->priv;
    *n = 0;
    if (!s->kvmode && ino >= HPC_INO_FIRST && ino - HPC_INO_FIRST < s->ntasks) {
        const sion_task *t = &s->tasks[ino - HPC_INO_FIRST];
        if (off < t->length)
            stream_map(s, t, off, MIN(len, t->length - off), ext, max, n);
        return HPC_OK;
    }
    if (s->kvmode && ino >= KEY_INO_BASE && ino - KEY_INO_BASE < s->nkeys) {
        key_map(s, &s->keys[ino - KEY_INO_BASE], off, len, ext, max, n);
        return HPC_OK;
    }
    return sion_getattr(c, ino, &(hpc_stat){ 0 }) == HPC_OK ? HPC_E_ISDIR : HPC_E_NOENT;
}

/* ---- .info ------------------------------------------------------------ */

static int sion_info(hpc_container *c, GString *o)
{
    const sion *s = c->priv;
    const sion_file *f0 = &s->files[0];
    g_string_append_printf(o, "version: %d.%d.%d\nfileformat: %d\nbyteorder: %s\n"
                           "fsblksize: %d\nnfiles: %u\nntasks: %u\nkeyvalue: %s\nnaming: %s\n",
                           f0->version / 1000, f0->version % 1000, f0->patchlevel,
                           f0->fileformat, f0->big ? "big" : "little",
                           f0->fsblksize, s->nfiles, s->ntasks,
                           s->kvmode ? "inline" : "none",
                           s->by_index ? "task-<index> (global ranks repeat)" : "global rank");
    if (s->salvaged)
        g_string_append(o, "salvaged: yes (no META2: the writer was killed before closing; "
                        "block lengths inferred from SEEK_DATA/SEEK_HOLE, the file size and "
                        "trailing zero bytes, see column inferred)\n");
    if (s->map_inferred)
        g_string_append(o, "set: file 0 of a multi-file set, mapping inferred (file order)\n");
    else if (s->nfiles > 1 && f0->nfiles > 1 && f0->filenumber == 0)
        g_string_append(o, "set: file 0 of a multi-file set with mapping\n");
    else if (f0->nfiles > 1)
        g_string_append_printf(o, "set: member %d of %d (only its own tasks)\n",
                               f0->filenumber, f0->nfiles);
    for (uint32_t k = 0; k < s->nfiles; k++) {
        const sion_file *f = &s->files[k];
        g_string_append_printf(o, "file %u: %s size %" PRIu64 " ntasks %d maxchunks %d "
                               "start_of_data %" PRIu64 " globalskip %" PRIu64
                               " start_of_varheader %" PRId64 "\n",
                               k, f->src->path, f->src->size, f->ntasks, f->maxchunks,
                               f->start_of_data, f->globalskip, f->sov);
    }
    g_string_append(o, s->salvaged ? "\ntask\tname\tfile\tlocalrank\tglobalrank\tlength\tblocks\tkeys\tinferred\n"
                                   : "\ntask\tname\tfile\tlocalrank\tglobalrank\tlength\tblocks\tkeys\n");
    char name[HPC_RANKNAME_MAX * 2 + 64];
    for (uint32_t i = 0; i < s->ntasks; i++) {
        const sion_task *t = &s->tasks[i];
        if (task_name(c, s, i, name, sizeof name) != HPC_OK)
            return HPC_E_RANGE;
        g_string_append_printf(o, "%u\t%s\t%u\t%u\t%" PRId64 "\t%" PRIu64 "\t%u\t%u",
                               i, name, t->file, t->local, t->globalrank, t->length,
                               t->blockcount, s->kvmode ? s->first_key[i + 1] - s->first_key[i] : 0);
        if (s->salvaged)    /* files that were closed have exact lengths */
            g_string_append_printf(o, "\t%s", s->files[t->file].salvaged
                                   ? sion_how_name[t->how] : "meta2");
        g_string_append_c(o, '\n');
    }
    return HPC_OK;
}

const hpc_format hpc_format_sion = {
    .name = "sion",
    .probe = sion_probe,
    .open = sion_open,
    .close = sion_close,
    .lookup = sion_lookup,
    .getattr = sion_getattr,
    .readdir = sion_readdir,
    .map = sion_map,
    .info = sion_info,
};
