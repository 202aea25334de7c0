/* gsd_write_tables.c - rank 0's tables of the parallel GSD writer: the
 * header, the name list (NUL-separated names, id = position, counted in
 * 64-byte units) and the index (32-byte entries sorted by frame and name
 * id, ended by the first entry whose location is 0).  Created as the GSD
 * library creates them, read back to append, and at the end of a frame
 * written in place or moved to the end of the file in a doubled block
 * (then the header points to the new block).
 */
#include "config.h"
#include "gsd_write_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GSD_INITIAL_ENTRIES 128
#define GSD_INITIAL_NAME_UNITS 16   /* 1024 bytes */
#define GSD_LAYER_2_0 HPC_GSD_VERSION(2, 0)
#define GSD_LAYER_2_1 HPC_GSD_VERSION(2, 1)
#define COPY_PIECE (1u << 20)       /* index copies go through 1 MiB */

/* Abort the job at a step of the frame's end (tests of killed writers):
 * HPC_GSD_TEST_ABORT=STEP:FRAME, STEP data, names or index. */
void gsdw_test_abort(const hpc_gsd_file *f, const char *step)
{
    const char *want = g_getenv("HPC_GSD_TEST_ABORT");
    if (!want || f->rank != 0)
        return;
    char here[64];
    g_snprintf(here, sizeof here, "%s:%" PRIu64, step, f->frame);
    if (strcmp(want, here) == 0) {
        fprintf(stderr, "hpc_gsd: test abort after the %s of frame %" PRIu64 "\n", step,
                f->frame);
        MPI_Abort(f->comm, 3);
    }
}

/* ---- header and a new file ---------------------------------------------- */

/* Rank 0: the header's table fields from f, then write it. */
static int write_header(hpc_gsd_file *f, GError **err)
{
    hpc_put_le64(f->header + GSD_OFF_INDEX_LOC, f->index_loc);
    hpc_put_le64(f->header + GSD_OFF_INDEX_ALLOC, f->index_alloc);
    hpc_put_le64(f->header + GSD_OFF_NAMES_LOC, f->names_loc);
    hpc_put_le64(f->header + GSD_OFF_NAMES_ALLOC, f->names_units);
    if (hpcw_pwrite(f->fd, f->header, GSD_HEADER_SIZE, 0) != 0)
        return hpcw_fail(err, HPC_E_IO, "%s: cannot write the header: %s", f->path,
                         g_strerror(errno));
    return HPC_OK;
}

int gsdw_create_file(hpc_gsd_file *f, const char *application, const char *schema,
                     uint32_t schema_version, GError **err)
{
    f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (f->fd < 0)
        return hpcw_fail(err, HPC_E_IO, "cannot create %s: %s", f->path, g_strerror(errno));
    hpc_put_le64(f->header, GSD_MAGIC);
    hpc_put_le32(f->header + GSD_OFF_SCHEMA_VERSION, schema_version);
    hpc_put_le32(f->header + GSD_OFF_GSD_VERSION, GSD_LAYER_2_0);
    memcpy(f->header + GSD_OFF_APPLICATION, application, strlen(application));
    memcpy(f->header + GSD_OFF_SCHEMA, schema, strlen(schema));
    f->index_loc = GSD_HEADER_SIZE;
    f->index_alloc = GSD_INITIAL_ENTRIES;
    f->names_loc = f->index_loc + GSD_ENTRY_SIZE * f->index_alloc;
    f->names_units = GSD_INITIAL_NAME_UNITS;
    f->end = f->names_loc + GSD_NAME_UNIT * f->names_units;
    /* the empty index and name list read as zeros */
    if (ftruncate(f->fd, (off_t)f->end) != 0)
        return hpcw_fail(err, HPC_E_IO, "%s: cannot set the file size: %s", f->path,
                         g_strerror(errno));
    return write_header(f, err);
}

/* ---- an existing file (open for appending) ------------------------------ */

/* The name list: NUL-separated names up to the first empty one; the block's
 * last byte must be NUL (the GSD library checks the same). */
static int read_names(hpc_gsd_file *f, GError **err)
{
    size_t len = (size_t)(f->names_units * GSD_NAME_UNIT);
    unsigned char *buf = g_malloc(len);
    int rc = HPC_OK;
    if (hpcw_pread(f->fd, buf, len, f->names_loc) != 0) {
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot read the name list at %" PRIu64 ": %s",
                       f->path, f->names_loc, g_strerror(errno));
        goto out;
    }
    if (buf[len - 1] != 0) {
        rc = hpcw_fail(err, HPC_E_CORRUPT, "%s: field namelist at offset %" PRIu64
                       ": the name list does not end with NUL", f->path, f->names_loc);
        goto out;
    }
    size_t i = 0;
    while (i < len && buf[i] != 0) {
        const char *name = (const char *)buf + i;
        size_t n = strlen(name);
        if (f->nids >= GSD_MAX_IDS) {
            rc = hpcw_fail(err, HPC_E_CORRUPT, "%s: more than %d names", f->path, GSD_MAX_IDS);
            goto out;
        }
        if (!g_hash_table_contains(f->ids, name))    /* a repeated name keeps its first id */
            g_hash_table_insert(f->ids, g_strdup(name), GUINT_TO_POINTER(f->nids + 1));
        f->nids++;
        i += n + 1;
    }
    g_byte_array_append(f->names, buf, (guint)i);
out:
    g_free(buf);
    return rc;
}

/* The number of valid index entries (the first with location 0 ends the
 * index: binary search, as the GSD library does) and the last frame. */
static int count_entries(hpc_gsd_file *f, GError **err)
{
    uint64_t lo = 0, hi = f->index_alloc;       /* entries [0, lo) are valid */
    unsigned char e[GSD_ENTRY_SIZE];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (hpcw_pread(f->fd, e, sizeof e, f->index_loc + GSD_ENTRY_SIZE * mid) != 0)
            return hpcw_fail(err, HPC_E_IO, "%s: cannot read the index: %s", f->path,
                             g_strerror(errno));
        if (hpc_le64(e + GSD_ENT_LOCATION) != 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    f->index_count = lo;
    f->frame = 0;
    if (lo > 0) {
        if (hpcw_pread(f->fd, e, sizeof e, f->index_loc + GSD_ENTRY_SIZE * (lo - 1)) != 0)
            return hpcw_fail(err, HPC_E_IO, "%s: cannot read the index: %s", f->path,
                             g_strerror(errno));
        uint64_t last = hpc_le64(e + GSD_ENT_FRAME);
        if (last >= UINT64_MAX / 2)
            return hpcw_fail(err, HPC_E_CORRUPT, "%s: field frame at offset %" PRIu64
                             ": frame %" PRIu64, f->path,
                             f->index_loc + GSD_ENTRY_SIZE * (lo - 1), last);
        f->frame = last + 1;
    }
    return HPC_OK;
}

int gsdw_read_tables(hpc_gsd_file *f, GError **err)
{
    struct stat st;
    f->fd = open(f->path, O_RDWR | O_CLOEXEC);
    if (f->fd < 0)
        return hpcw_fail(err, HPC_E_IO, "cannot open %s: %s", f->path, g_strerror(errno));
    if (fstat(f->fd, &st) != 0 || hpcw_pread(f->fd, f->header, GSD_HEADER_SIZE, 0) != 0)
        return hpcw_fail(err, HPC_E_CORRUPT, "%s: no GSD header (%s)", f->path,
                         g_strerror(errno));
    uint64_t size = (uint64_t)st.st_size;
    if (hpc_le64(f->header) != GSD_MAGIC)
        return hpcw_fail(err, HPC_E_CORRUPT, "%s: field magic at offset 0: not a GSD file",
                         f->path);
    uint32_t v = hpc_le32(f->header + GSD_OFF_GSD_VERSION);
    if (v != GSD_LAYER_2_0 && v != GSD_LAYER_2_1)
        return hpcw_fail(err, HPC_E_UNSUPPORTED, "%s: field gsd_version at offset %d: layer "
                         "%u.%u cannot be appended to (2.0 and 2.1 can)", f->path,
                         GSD_OFF_GSD_VERSION, v >> 16, v & 0xffff);
    f->index_loc = hpc_le64(f->header + GSD_OFF_INDEX_LOC);
    f->index_alloc = hpc_le64(f->header + GSD_OFF_INDEX_ALLOC);
    f->names_loc = hpc_le64(f->header + GSD_OFF_NAMES_LOC);
    f->names_units = hpc_le64(f->header + GSD_OFF_NAMES_ALLOC);
    if (f->index_alloc == 0 || f->index_alloc > size / GSD_ENTRY_SIZE ||
        f->index_loc > size - GSD_ENTRY_SIZE * f->index_alloc)
        return hpcw_fail(err, HPC_E_CORRUPT, "%s: field index_location at offset %d: %" PRIu64
                         " entries at %" PRIu64 " do not fit in %" PRIu64 " bytes", f->path,
                         GSD_OFF_INDEX_LOC, f->index_alloc, f->index_loc, size);
    if (f->names_units == 0 || f->names_units > MIN(size, UINT32_MAX) / GSD_NAME_UNIT ||
        f->names_loc > size - GSD_NAME_UNIT * f->names_units)
        return hpcw_fail(err, HPC_E_CORRUPT, "%s: field namelist_location at offset %d: %"
                         PRIu64 " x 64 bytes at %" PRIu64 " do not fit in %" PRIu64 " bytes",
                         f->path, GSD_OFF_NAMES_LOC, f->names_units, f->names_loc, size);
    f->end = size;
    int rc = read_names(f, err);
    return rc == HPC_OK ? count_entries(f, err) : rc;
}

/* ---- end of a frame ------------------------------------------------------ */

/* Rank 0: copy the old index into a block of new_alloc entries at the end
 * of the file (the rest reads as zeros). */
static int grow_index(hpc_gsd_file *f, uint64_t new_alloc, GError **err)
{
    uint64_t to = f->end, len = GSD_ENTRY_SIZE * f->index_count;
    unsigned char *buf = g_malloc(COPY_PIECE);
    int rc = HPC_OK;
    for (uint64_t done = 0; done < len && rc == HPC_OK;) {
        size_t take = (size_t)MIN(len - done, COPY_PIECE);
        if (hpcw_pread(f->fd, buf, take, f->index_loc + done) != 0 ||
            hpcw_pwrite(f->fd, buf, take, to + done) != 0)
            rc = hpcw_fail(err, HPC_E_IO, "%s: cannot copy the index: %s", f->path,
                           g_strerror(errno));
        done += take;
    }
    g_free(buf);
    if (rc == HPC_OK && ftruncate(f->fd, (off_t)(to + GSD_ENTRY_SIZE * new_alloc)) != 0)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot extend the file: %s", f->path,
                       g_strerror(errno));
    if (rc == HPC_OK) {
        f->index_loc = to;
        f->index_alloc = new_alloc;
        f->end = to + GSD_ENTRY_SIZE * new_alloc;
    }
    return rc;
}

/* Rank 0: names new since old_len, in place or in a doubled block at the
 * end of the file (then the header points to it before any entry uses
 * the new ids). */
static int write_names(hpc_gsd_file *f, guint old_len, GError **err)
{
    uint64_t cap = f->names_units * GSD_NAME_UNIT;
    if (f->names->len == old_len)
        return HPC_OK;
    if (f->names->len < cap) {      /* the block's last byte stays NUL */
        if (hpcw_pwrite(f->fd, f->names->data + old_len, f->names->len - old_len,
                        f->names_loc + old_len) != 0)
            return hpcw_fail(err, HPC_E_IO, "%s: cannot write the name list: %s", f->path,
                             g_strerror(errno));
        return HPC_OK;
    }
    uint64_t units = f->names_units;
    while (units * GSD_NAME_UNIT <= f->names->len)
        units *= 2;
    unsigned char *block = g_malloc0((size_t)(units * GSD_NAME_UNIT));
    memcpy(block, f->names->data, f->names->len);
    int rc = HPC_OK;
    if (hpcw_pwrite(f->fd, block, (size_t)(units * GSD_NAME_UNIT), f->end) != 0)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot write the name list: %s", f->path,
                       g_strerror(errno));
    g_free(block);
    if (rc != HPC_OK)
        return rc;
    f->names_loc = f->end;
    f->names_units = units;
    f->end += units * GSD_NAME_UNIT;
    return write_header(f, err);
}

static int by_id(const void *a, const void *b)
{
    const gsd_rec *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Rank 0: ids for the frame's chunks (new names appended to the list);
 * checked first, so that a refused frame leaves the tables as they were. */
static int assign_ids(hpc_gsd_file *f, GArray *recs, GError **err)
{
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    guint fresh = 0;
    int rc = HPC_OK;
    for (guint i = 0; i < recs->len && rc == HPC_OK; i++) {
        gsd_rec *r = &g_array_index(recs, gsd_rec, i);
        if (!g_hash_table_add(seen, r->name))
            rc = hpcw_fail(err, HPC_E_INVAL, "chunk '%s' is passed twice in frame %" PRIu64
                           " (by two ranks)", r->name, f->frame);
        else if (!g_hash_table_contains(f->ids, r->name))
            fresh++;
    }
    g_hash_table_destroy(seen);
    if (rc == HPC_OK && f->nids + fresh > GSD_MAX_IDS)
        rc = hpcw_fail(err, HPC_E_INVAL, "%s: more than %d chunk names", f->path, GSD_MAX_IDS);
    for (guint i = 0; i < recs->len && rc == HPC_OK; i++) {
        gsd_rec *r = &g_array_index(recs, gsd_rec, i);
        guint id1 = GPOINTER_TO_UINT(g_hash_table_lookup(f->ids, r->name));
        if (id1 == 0) {
            id1 = ++f->nids;
            g_hash_table_insert(f->ids, g_strdup(r->name), GUINT_TO_POINTER(id1));
            g_byte_array_append(f->names, (const guint8 *)r->name, (guint)strlen(r->name) + 1);
        }
        r->id = (uint16_t)(id1 - 1);
    }
    return rc;
}

/* Rank 0: the frame's entries after the valid ones, in place or in a
 * doubled index at the end of the file (then the header points to it). */
static int write_entries(hpc_gsd_file *f, GArray *recs, GError **err)
{
    uint64_t k = recs->len, alloc = f->index_alloc;
    while (f->index_count + k > alloc)
        alloc *= 2;
    int moved = alloc != f->index_alloc;
    if (moved) {
        int rc = grow_index(f, alloc, err);
        if (rc != HPC_OK)
            return rc;
    }
    unsigned char *e = g_malloc0(GSD_ENTRY_SIZE * k + 1);
    for (uint64_t i = 0; i < k; i++) {
        gsd_rec *r = &g_array_index(recs, gsd_rec, i);
        unsigned char *p = e + GSD_ENTRY_SIZE * i;
        hpc_put_le64(p + GSD_ENT_FRAME, f->frame);
        hpc_put_le64(p + GSD_ENT_N, r->n);
        hpc_put_le64(p + GSD_ENT_LOCATION, r->location);
        hpc_put_le32(p + GSD_ENT_M, r->m);
        hpc_put_le16(p + GSD_ENT_ID, r->id);
        p[GSD_ENT_TYPE] = r->type;
    }
    int rc = HPC_OK;
    if (hpcw_pwrite(f->fd, e, GSD_ENTRY_SIZE * k,
                    f->index_loc + GSD_ENTRY_SIZE * f->index_count) != 0)
        rc = hpcw_fail(err, HPC_E_IO, "%s: cannot write the index: %s", f->path,
                       g_strerror(errno));
    g_free(e);
    if (rc != HPC_OK)
        return rc;
    f->index_count += k;
    gsdw_test_abort(f, "index");
    return moved ? write_header(f, err) : HPC_OK;
}

int gsdw_index_frame(hpc_gsd_file *f, GArray *locals, GError **err)
{
    GArray *recs = g_array_new(FALSE, TRUE, sizeof(gsd_rec));
    for (guint i = 0; i < f->chunks->len; i++)
        g_array_append_val(recs, g_array_index(f->chunks, gsd_rec, i));
    for (guint i = 0; i < locals->len; i++)
        g_array_append_val(recs, g_array_index(locals, gsd_rec, i));
    guint old_len = f->names->len;
    int rc = assign_ids(f, recs, err);
    if (rc == HPC_OK)
        rc = write_names(f, old_len, err);
    if (rc == HPC_OK)
        gsdw_test_abort(f, "names");
    if (rc == HPC_OK && recs->len > 0) {
        qsort(recs->data, recs->len, sizeof(gsd_rec), by_id);
        rc = write_entries(f, recs, err);
    }
    g_array_free(recs, TRUE);   /* shallow copies: the records own nothing here */
    return rc;
}
