/* hpc_file.c - an open file of a mount and its one read call (hpc_file.h).
 *
 * The file reads what holds its node (hpc_mount_hold: in a run directory,
 * the slot's container itself), not the mount's stack: the container it
 * opened stays open for it, whatever the run directory closes meanwhile.
 */
#define _GNU_SOURCE       /* posix_fadvise on older C libraries */
#include "hpc_file.h"
#include "hpc_bytes.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define READ_PIECE (8u << 20)     /* bytes per core read: bounds its buffers */
#define SPREAD 4u                 /* advise a span up to 4x the bytes wanted */
#define MAP_BATCH 64u             /* extents asked of the core per call */

struct hpc_file {
    hpc_mount *m;
    hpc_ino ino;                 /* the mount's id */
    hpc_nodes *src;              /* held: what reads it */
    hpc_ino inner;               /* its id in src */
    hpc_stat st;
    hpc_ra_stream *ra;
    uint64_t verbatim_min;
};

int hpc_file_open(hpc_mount *m, hpc_ino ino, const hpc_file_conf *conf, hpc_file **out)
{
    hpc_stat st;
    *out = NULL;
    int rc = hpc_mount_getattr(m, ino, &st);
    if (rc != HPC_OK)
        return rc;
    if (S_ISDIR(st.mode))
        return HPC_E_ISDIR;
    if (S_ISLNK(st.mode))
        return HPC_E_INVAL;
    hpc_file *f = g_new0(hpc_file, 1);
    rc = hpc_mount_hold(m, ino, &f->src, &f->inner);
    if (rc != HPC_OK) {
        g_free(f);
        return rc;
    }
    f->m = m;
    f->ino = ino;
    f->st = st;
    f->verbatim_min = conf->verbatim_min;
    /* a .info text is regenerated as things change: no stream over it */
    hpc_node_meta meta;
    hpc_mount_node_meta(m, ino, &meta);
    f->ra = meta.direct_io ? NULL : hpc_ra_stream_new(conf->ra, ino);
    *out = f;
    return HPC_OK;
}

int hpc_file_open_path(hpc_mount *m, const char *path, const hpc_file_conf *conf,
                       hpc_file **out)
{
    hpc_stat st;
    *out = NULL;
    int rc = hpc_mount_resolve_follow(m, path, TRUE, &st, NULL);
    return rc == HPC_OK ? hpc_file_open(m, st.ino, conf, out) : rc;
}

void hpc_file_close(hpc_file *f)
{
    if (!f)
        return;
    hpc_ra_stream_free(f->ra);
    hpc_mount_release(f->m, f->src);
    g_free(f);
}

const hpc_stat *hpc_file_stat(const hpc_file *f)
{
    return &f->st;
}

/* rc of a call to f->src; a change is told to the mount too, which then
 * opens a fresh container for the next open (a run directory: the held
 * one may be one its slot no longer uses). */
static int told(hpc_file *f, int rc)
{
    if (rc == HPC_E_CHANGED)
        (void)hpc_mount_sources_unchanged(f->m, f->ino);
    return rc;
}

static int src_map(hpc_file *f, uint64_t off, uint64_t len, hpc_extent *ext, unsigned max,
                   unsigned *n)
{
    return f->src->ops->map(f->src, f->inner, off, len, ext, max, n);
}

/* After the extents of src_map were read: their sources unchanged? */
static int src_extents_unchanged(hpc_file *f, const hpc_extent *ext, unsigned n)
{
    return told(f, f->src->ops->extents_unchanged(f->src, f->inner, ext, n));
}

/* ---- verbatim extents into a buffer ------------------------------------ */

/* Are extent e's bytes the source file's own?  A growing file's extent
 * is read through a snapshot of its size: only below that size. */
static gboolean in_source(const hpc_extent *e)
{
    uint64_t end = 0;
    return e->src && (e->space == 0 ||
                      (hpc_add_u64(e->off, e->len, &end) && end <= e->space_size));
}

/* Tell the kernel the span of each source holding ext[] is wanted, when
 * the span is not much more than the extents (GSD series: one extent per
 * frame, spread over the file, which sequential read-ahead does not see). */
static void advise_extents(const hpc_extent *ext, unsigned n)
{
    for (unsigned i = 0; i < n;) {
        uint64_t lo = ext[i].off, hi = ext[i].off + ext[i].len, want = 0;
        unsigned j = i;
        for (; j < n && ext[j].src == ext[i].src; j++) {
            lo = MIN(lo, ext[j].off);
            hi = MAX(hi, ext[j].off + ext[j].len);
            want += ext[j].len;
        }
        if (hi - lo <= want * SPREAD)
            (void)posix_fadvise(ext[i].src->fd, (off_t)lo, (off_t)(hi - lo), POSIX_FADV_WILLNEED);
        i = j;
    }
}

/* pread one map batch of [off, off+len) into buf; *got the bytes (0 at the
 * end of the file).  HPC_E_NOTSUP when the bytes are computed or lie in a
 * growing file's unsnapshotted tail: they are read through the core. */
static int direct_batch(hpc_file *f, char *buf, size_t len, uint64_t off, size_t *got)
{
    hpc_extent ext[MAP_BATCH];
    unsigned n = 0;
    size_t pos = 0;
    *got = 0;
    int rc = src_map(f, off, len, ext, MAP_BATCH, &n);
    if (rc != HPC_OK)
        return HPC_E_NOTSUP;     /* the core's read says what is wrong */
    for (unsigned i = 0; rc == HPC_OK && i < n; i++) {
        rc = ext[i].len <= len - pos && in_source(&ext[i]) ? HPC_OK : HPC_E_NOTSUP;
        pos += rc == HPC_OK ? ext[i].len : 0;
    }
    if (rc == HPC_OK)
        advise_extents(ext, n);
    pos = 0;
    for (unsigned i = 0; rc == HPC_OK && i < n; pos += ext[i].len, i++)
        rc = hpc_source_pread(ext[i].src, buf + pos, ext[i].len, ext[i].off);
    if (rc == HPC_OK)
        rc = src_extents_unchanged(f, ext, n);
    hpc_nodes_unmap(f->src, f->inner);
    *got = rc == HPC_OK ? pos : 0;
    return rc;
}

/* A bulk read of verbatim bytes: from the sources straight into buf, no
 * block cache (a bulk load would only evict it) and no copy through it.
 * *done the bytes read, also when a later part must go through the core
 * (HPC_E_NOTSUP). */
static int read_direct(hpc_file *f, char *buf, size_t len, uint64_t off, size_t *done)
{
    int rc = HPC_OK;
    *done = 0;
    while (rc == HPC_OK && *done < len) {
        size_t got = 0;
        rc = direct_batch(f, buf + *done, len - *done, off + *done, &got);
        if (rc == HPC_OK && got == 0)
            break;
        *done += got;
    }
    return rc;
}

/* [off, off+len) into buf: large reads from the extents, the rest (and
 * computed bytes) through the core and its block cache. */
static int read_buffer(hpc_file *f, char *buf, size_t len, uint64_t off, size_t *nread)
{
    size_t done = 0;
    int rc = f->verbatim_min && len >= f->verbatim_min
                 ? read_direct(f, buf, len, off, &done) : HPC_E_NOTSUP;
    if (rc == HPC_OK) {
        *nread = done;
        return HPC_OK;
    }
    rc = rc == HPC_E_NOTSUP ? HPC_OK : rc;
    while (rc == HPC_OK && done < len) {
        size_t want = MIN(len - done, (size_t)READ_PIECE), got = 0;
        rc = told(f, f->src->ops->read(f->src, f->inner, buf + done, want, off + done, &got));
        if (rc != HPC_OK || got == 0)
            break;
        done += got;
        if (got < want)
            break;
    }
    *nread = rc == HPC_OK ? done : 0;
    return rc;
}

/* ---- splice -------------------------------------------------------------- */

/* The leased extents staged by the sink's fill and checked: HPC_OK to
 * send them, HPC_E_NOTSUP when the copy must answer, or the error.  The
 * kernel copies spliced pages after every check here, so only sources
 * under a read lease are spliced: a write or truncate then waits for the
 * reply (hpc_source.h). */
static int splice_staged(hpc_file *f, hpc_sink *sink, hpc_extent *ext, unsigned n, uint64_t got)
{
    int rc = HPC_OK;
    for (unsigned i = 0; i < n && rc == HPC_OK; i++)
        if (!hpc_source_leased(ext[i].src))   /* broken since: changed, or live */
            rc = hpc_source_changed(ext[i].src) ? HPC_E_CHANGED : HPC_E_NOTSUP;
    if (rc == HPC_OK)
        rc = sink->splice->fill(sink->ctx, ext, n, got);
    if (rc == HPC_OK)
        return src_extents_unchanged(f, ext, n);
    if (rc == HPC_E_CHANGED)
        rc = told(f, f->src->ops->sources_unchanged(f->src, f->inner)) == HPC_E_CHANGED
                 ? HPC_E_CHANGED : HPC_E_IO;
    return rc;
}

/* Do the extents cover what is asked, all under a read lease? */
static gboolean spliceable(const hpc_file *f, uint64_t off, size_t len, const hpc_extent *ext,
                           unsigned n)
{
    uint64_t size = f->st.size, got = 0;
    uint64_t want = off >= size ? 0 : MIN((uint64_t)len, size - off);
    for (unsigned i = 0; i < n; i++)
        got += ext[i].len;
    if (got != want || n == 0)
        return FALSE;          /* a short reply would read as EOF: copy */
    for (unsigned i = 0; i < n; i++)
        if (!hpc_source_lease(ext[i].src))
            return FALSE;
    return TRUE;
}

/* The mapped extents of a splice read: staged, checked, let go (unmap),
 * then sent or dropped.  Once a reply is sent, the kernel may release the
 * file (and free f, and let go of what it holds) at any time: nothing
 * here touches f after a send. */
static int splice_extents(hpc_file *f, hpc_sink *sink, uint64_t off, size_t len,
                          hpc_extent *ext, unsigned n)
{
    if (!spliceable(f, off, len, ext, n)) {
        hpc_nodes_unmap(f->src, f->inner);
        return HPC_E_NOTSUP;
    }
    uint64_t got = 0;
    for (unsigned i = 0; i < n; i++)
        got += ext[i].len;
    hpc_source_replies_begin();
    int rc = splice_staged(f, sink, ext, n, got);
    hpc_nodes_unmap(f->src, f->inner);
    if (rc == HPC_OK)
        sink->splice->send(sink->ctx, got);
    else
        sink->splice->drop(sink->ctx);
    hpc_source_replies_end();
    return rc;
}

static int read_splice(hpc_file *f, hpc_sink *sink, uint64_t off, size_t len)
{
    hpc_extent ext[HPC_MAX_EXTENTS];
    unsigned n;
    int rc = HPC_E_NOTSUP;
    if (f->verbatim_min && len >= f->verbatim_min &&
        src_map(f, off, len, ext, HPC_MAX_EXTENTS, &n) == HPC_OK)
        rc = splice_extents(f, sink, off, len, ext, n);
    if (rc != HPC_E_NOTSUP)
        return rc;
    char *buf = g_malloc(len ? len : 1);
    size_t got = 0;
    rc = read_buffer(f, buf, len, off, &got);
    if (rc == HPC_OK)
        sink->splice->send_buf(sink->ctx, buf, got);
    g_free(buf);
    return rc;
}

/* ---- extents ------------------------------------------------------------- */

/* Hand the extents of [off, end) from one core map call to the sink; *done
 * the bytes they cover. */
static int extents_batch(hpc_file *f, hpc_sink *sink, uint64_t off, uint64_t end,
                         uint64_t *done)
{
    hpc_extent ext[MAP_BATCH];
    unsigned n = 0;
    *done = 0;
    int rc = src_map(f, off, end - off, ext, MAP_BATCH, &n);
    if (rc != HPC_OK)
        return rc;
    for (unsigned i = 0; rc == HPC_OK && i < n; i++) {
        if (!in_source(&ext[i]) || !ext[i].src->path || sink->extent(sink->ctx, &ext[i]))
            rc = HPC_E_NOTSUP;
        *done += ext[i].len;
    }
    if (rc == HPC_OK)
        rc = src_extents_unchanged(f, ext, n);
    hpc_nodes_unmap(f->src, f->inner);
    if (rc == HPC_OK && n == 0)
        rc = HPC_E_IO;           /* no progress: the map and the size disagree */
    return rc;
}

static int read_extents(hpc_file *f, hpc_sink *sink, uint64_t off, size_t len)
{
    uint64_t size = f->st.size;
    uint64_t end = off >= size ? off : off + MIN((uint64_t)len, size - off);
    int rc = S_ISREG(f->st.mode) ? HPC_OK : HPC_E_NOTSUP;
    for (uint64_t done = 0; rc == HPC_OK && off < end; off += done)
        rc = extents_batch(f, sink, off, end, &done);
    return rc;
}

int hpc_file_read(hpc_file *f, uint64_t off, size_t len, hpc_sink *sink)
{
    switch (sink->kind) {
    case HPC_SINK_BUFFER:
        sink->done = 0;
        hpc_ra_read(f->ra, off, len);   /* queued first: advised while this reads */
        return read_buffer(f, sink->buf, len, off, &sink->done);
    case HPC_SINK_SPLICE:
        hpc_ra_read(f->ra, off, len);
        return read_splice(f, sink, off, len);
    case HPC_SINK_EXTENTS:
        return read_extents(f, sink, off, len);
    }
    return HPC_E_INVAL;
}
