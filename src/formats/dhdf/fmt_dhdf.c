/* fmt_dhdf.c - distributed HDF4 sets ("HDF NOW"): a main file (MHF) whose
 * chunk tables describe arrays split into pieces stored in associated
 * files (AHFs).  See docs/dhdf-format.md for the convention and
 * docs/dhdf.md for the tree.
 *
 * open() reads every table through libhdf4, checks the whole set (set ids,
 * file ids, bounds, overlaps, holes, the pieces' types and sizes) and
 * builds a static hpc_tree.  read() goes through the block cache: a block
 * of an assembled array is a range of elements, split into boxes, each
 * intersected with the pieces it touches and read with SDreaddata
 * (start, edge) from that piece only.
 *
 * This file holds the container: its files kept open, the reads and
 * .info; dhdf_table.c the chunk-table logic, dhdf_h4.c the HDF4 helpers,
 * dhdf_set.c the open and check of a set (dhdf_int.h).
 *
 * libhdf4 is not thread-safe: every HDF4 call runs under dhdf_hdf_lock.
 */
#include "config.h"
#include "dhdf_int.h"
#include "hpc_boxes.h"
#include "hpc_bytes.h"
#include "hpc_json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPEN_FILES 16        /* AHFs kept open between reads (HDF4 allows 32) */
#define DIRECT_READ_MIN (128u << 10)  /* reads this large skip the block cache */

GMutex dhdf_hdf_lock;


/* ---- the container ---------------------------------------------------- */

/* End access to the SDSs selected in file k, then close it.  dhdf_hdf_lock held. */
static void close_file(dhdf *d, uint32_t k)
{
    dhdf_file *f = &d->files[k];
    if (f->sd == FAIL)
        return;
    for (guint i = 0; f->selected && i < f->selected->len; i++) {
        dhdf_piece *p = g_ptr_array_index(f->selected, i);
        SDendaccess(p->sds);
        p->sds = FAIL;
    }
    if (f->selected)
        g_ptr_array_set_size(f->selected, 0);
    SDend(f->sd);
    f->sd = FAIL;
    d->nopen--;
}

static void dhdf_free(dhdf *d)
{
    if (!d)
        return;
    g_mutex_lock(&dhdf_hdf_lock);
    for (uint32_t i = 0; i < d->nfiles; i++)
        close_file(d, i);
    g_mutex_unlock(&dhdf_hdf_lock);
    for (uint32_t i = 0; i < d->nfiles; i++) {
        if (d->files[i].selected)
            g_ptr_array_free(d->files[i].selected, TRUE);
        g_free(d->files[i].name);
        g_free(d->files[i].host);
        g_free(d->files[i].path);
    }
    for (uint32_t i = 0; i < d->narrays; i++) {
        dhdf_array *a = &d->arrays[i];
        for (size_t k = 0; k < a->npieces; k++) {
            g_free(a->pieces[k].name);
            g_free(a->pieces[k].why);
            g_free(a->pieces[k].ext_dir);
            g_strfreev(a->pieces[k].dimnames);
            if (a->pieces[k].whole)
                g_bytes_unref(a->pieces[k].whole);
        }
        g_free(a->pieces);
        g_strfreev(a->dimnames);
        g_free(a->boxes);
        g_free(a->piece_space);
        g_free(a->name);
        g_free(a->h4name);
    }
    g_free(d->arrays);
    g_free(d->files);
    g_free(d->setid);
    g_free(d->libversion);
    if (d->warnings)
        g_ptr_array_free(d->warnings, TRUE);
    if (d->notes)
        g_ptr_array_free(d->notes, TRUE);
    g_free(d);
}

static void dhdf_close(hpc_container *c)
{
    dhdf_free(c->priv);
    c->priv = NULL;
}

/* The magic bytes only: opening the file with libhdf4 here would run the
 * library on an untrusted file outside the helper process (hpc_remote.h). */
static int dhdf_probe(const char *path, const unsigned char *head, size_t len)
{
    static const unsigned char magic[4] = { 0x0e, 0x03, 0x13, 0x01 };
    (void)path;
    if (!head || len < 4 || memcmp(head, magic, 4) != 0)
        return 0;
    return 90;
}

/* The SD id of file k, opening it (and closing the least recently used
 * one beyond MAX_OPEN_FILES).  dhdf_hdf_lock held. */
static int32 file_sd(dhdf *d, uint32_t k)
{
    dhdf_file *f = &d->files[k];
    f->last_use = ++d->clock;
    if (f->sd != FAIL)
        return f->sd;
    if (d->nopen >= MAX_OPEN_FILES) {
        uint32_t lru = UINT32_MAX;
        for (uint32_t i = 0; i < d->nfiles; i++)
            if (i != k && d->files[i].sd != FAIL &&
                (lru == UINT32_MAX || d->files[i].last_use < d->files[lru].last_use))
                lru = i;
        if (lru != UINT32_MAX)
            close_file(d, lru);
    }
    f->sd = SDstart(f->path, DFACC_READ);
    if (f->sd != FAIL)
        d->nopen++;
    return f->sd;
}

/* The SDS id of piece pc, selected once and kept while its file stays
 * open (SDselect and SDendaccess per read cost as much as a small read).
 * dhdf_hdf_lock held. */
static int32 piece_sds(dhdf *d, dhdf_piece *pc)
{
    dhdf_file *f = &d->files[pc->file];
    int32 sd = file_sd(d, pc->file);
    if (sd == FAIL)
        return FAIL;
    if (pc->sds != FAIL)
        return pc->sds;
    pc->sds = SDselect(sd, pc->sds_index);
    if (pc->sds != FAIL) {
        if (!f->selected)
            f->selected = g_ptr_array_new();
        g_ptr_array_add(f->selected, pc);
    }
    return pc->sds;
}

static int dhdf_open(hpc_container *c, GError **err)
{
    dhdf *d = g_new0(dhdf, 1);
    d->warnings = g_ptr_array_new_with_free_func(g_free);
    d->notes = g_ptr_array_new_with_free_func(g_free);
    unsigned char head[4];
    int rc = HPC_E_IO;
    hpc_source *src = c->host->add_source(c, c->path, err);
    if (src)
        rc = hpc_source_pread_field(src, head, 4, 0, "magic", err);
    if (rc == HPC_OK && memcmp(head, "\x0e\x03\x13\x01", 4) != 0)
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, "magic", 0, "not an HDF4 file");
    if (rc == HPC_OK) {
        g_mutex_lock(&dhdf_hdf_lock);
        rc = dhdf_open_set(c, d, src, err);
        g_mutex_unlock(&dhdf_hdf_lock);
    }
    if (rc != HPC_OK) {
        dhdf_free(d);
        return rc;
    }
    c->priv = d;
    return HPC_OK;
}

/* ---- data ------------------------------------------------------------- */

typedef struct fill_ctx {
    dhdf *d;
    const dhdf_array *a;
    unsigned rank;
    const uint64_t *dims;        /* of the view: the array, or one piece */
    const hpc_dhdf_box *boxes;
    dhdf_piece *pieces;
    size_t npieces;
    int zero;                    /* view has holes */
    uint64_t nbytes;
    uint32_t bs;
    void *dst;
    uint64_t e0;
} fill_ctx;

/* n elements of esize bytes, each a copy of one element. */
static void fill_pattern(void *buf, uint64_t n, const unsigned char *elem, uint32_t esize)
{
    size_t total = (size_t)n * esize, have = esize;
    if (total == 0)
        return;
    memcpy(buf, elem, esize);
    while (have < total) {           /* doubling copies */
        size_t k = MIN(have, total - have);
        memcpy((char *)buf + have, buf, k);
        have += k;
    }
}

/* SDreaddata of box (start, edge) of piece pc into buf (native order).
 * buf is set to the piece's fill value first, so that an element the
 * library does not write (an SDS with no data written: hdp's "No data
 * written") is never left as it was.  Where the library writes fill values
 * itself, its own win (a chunked SDS keeps the fill value it had when it
 * was made chunked).  dhdf_hdf_lock held. */
static int piece_read(dhdf *d, dhdf_piece *pc, uint32_t esize, unsigned rank,
                      const uint64_t *start, const uint64_t *edge, void *buf)
{
    int32 st[HPC_DHDF_MAX_RANK], ed[HPC_DHDF_MAX_RANK];
    if (pc->why) {
        hpc_log("%s", pc->why);
        return HPC_E_IO;
    }
    fill_pattern(buf, hpc_box_elements(rank, edge), pc->fill, esize);
    for (unsigned k = 0; k < rank; k++) {
        st[k] = (int32)start[k];
        ed[k] = (int32)edge[k];
    }
    int32 id = piece_sds(d, pc);
    d->files[pc->file].reads++;
    if (pc->ext_dir)             /* where libhdf4 opens the external file */
        HXsetdir(pc->ext_dir);
    if (id == FAIL || SDreaddata(id, st, NULL, ed, buf) == FAIL) {
        hpc_log("%s: SDS '%s': SDreaddata failed", d->files[pc->file].path, pc->name);
        return HPC_E_IO;
    }
    return HPC_OK;
}

/* The least recently used piece whose decoded bytes are held, or NULL. */
static dhdf_piece *whole_lru(dhdf *d)
{
    dhdf_piece *lru = NULL;
    for (uint32_t i = 0; i < d->narrays; i++)
        for (size_t k = 0; k < d->arrays[i].npieces; k++) {
            dhdf_piece *x = &d->arrays[i].pieces[k];
            if (x->whole && (!lru || x->whole_use < lru->whole_use))
                lru = x;
        }
    return lru;
}

/* Drop decoded stream pieces, least recently used first, until `need`
 * more bytes fit.  dhdf_hdf_lock held. */
static void whole_make_room(dhdf *d, uint64_t need)
{
    while (d->whole_bytes + need > d->whole_max) {
        dhdf_piece *lru = whole_lru(d);
        if (!lru)
            return;
        d->whole_bytes -= lru->nbytes;
        g_bytes_unref(lru->whole);
        lru->whole = NULL;
    }
}

/* The decoded bytes of stream piece pc (a new reference, little-endian),
 * decoding it if it is not held; NULL when it is larger than the limit or
 * cannot be read.  dhdf_hdf_lock held. */
static GBytes *piece_whole(dhdf *d, dhdf_piece *pc, uint32_t esize, unsigned rank,
                           const uint64_t *size)
{
    if (pc->whole) {
        pc->whole_use = ++d->clock;
        return g_bytes_ref(pc->whole);
    }
    if (pc->nbytes > d->whole_max)
        return NULL;
    uint64_t st[HPC_DHDF_MAX_RANK] = { 0 };
    void *buf = g_malloc(pc->nbytes);
    if (piece_read(d, pc, esize, rank, st, size, buf) != HPC_OK) {
        g_free(buf);
        return NULL;
    }
    dhdf_native_to_le(buf, pc->nbytes / esize, esize);
    whole_make_room(d, pc->nbytes);
    pc->whole = g_bytes_new_take(buf, pc->nbytes);
    pc->whole_use = ++d->clock;
    d->whole_bytes += pc->nbytes;
    return g_bytes_ref(pc->whole);
}

/* Whether the box with sizes edge is one run of elements in C order of an
 * array of dims: sizes 1 before some dimension, whole dimensions after it. */
static int box_contiguous(unsigned rank, const uint64_t *dims, const uint64_t *edge)
{
    unsigned j = 0;
    while (j + 1 < rank && edge[j] == 1)
        j++;
    for (unsigned d = j + 1; d < rank; d++)
        if (edge[d] != dims[d])
            return 0;
    return 1;
}

/* One box of one piece: read (start - origin, edge) into place: straight
 * into the destination when the box is contiguous there, else packed and
 * scattered. */
static int fill_box(void *p, size_t pi, const uint64_t *start, const uint64_t *edge)
{
    fill_ctx *f = p;
    dhdf_piece *pc = &f->pieces[pi];
    uint32_t es = f->a->esize;
    uint64_t st[HPC_DHDF_MAX_RANK], n = hpc_box_elements(f->rank, edge);
    uint64_t lin = 0;
    for (unsigned d = 0; d < f->rank; d++) {
        st[d] = start[d] - f->boxes[pi].origin[d];
        lin = lin * f->dims[d] + start[d];
    }
    int direct = box_contiguous(f->rank, f->dims, edge);
    unsigned char *out = direct ? (unsigned char *)f->dst + (lin - f->e0) * es
                                : g_malloc(n * es);
    int rc = HPC_OK;
    g_mutex_lock(&dhdf_hdf_lock);
    GBytes *whole = pc->stream ? piece_whole(f->d, pc, es, f->rank, f->boxes[pi].size) : NULL;
    if (!whole)
        rc = piece_read(f->d, pc, es, f->rank, st, edge, out);
    g_mutex_unlock(&dhdf_hdf_lock);
    if (whole) {
        hpc_boxes_gather(f->rank, f->boxes[pi].size, es, st, edge,
                         g_bytes_get_data(whole, NULL), out);
        g_bytes_unref(whole);
    } else if (rc == HPC_OK) {
        dhdf_native_to_le(out, n, es);
    }
    if (rc == HPC_OK && !direct)
        hpc_boxes_scatter(f->rank, f->dims, es, start, edge, out, f->dst, f->e0);
    if (!direct)
        g_free(out);
    return rc;
}

/* Bytes [off, off+n) of the view into dst.  Elements cut by either end are
 * assembled whole in a bounce buffer (block sizes need not be multiples of
 * the element size). */
static int fill_range(fill_ctx *f, void *dst, uint64_t off, size_t n)
{
    uint32_t es = f->a->esize;
    uint64_t e0 = off / es, e1 = (off + n + es - 1) / es;
    int aligned = off % es == 0 && n % es == 0;
    void *buf = aligned ? dst : g_malloc((size_t)(e1 - e0) * es);
    if (f->zero)
        memset(buf, 0, (size_t)(e1 - e0) * es);
    f->dst = buf;
    f->e0 = e0;
    int rc = hpc_dhdf_map_range(f->rank, f->dims, f->boxes, f->npieces, e0, e1, fill_box, f);
    if (!aligned) {
        if (rc == HPC_OK)
            memcpy(dst, (char *)buf + (off - e0 * es), n);
        g_free(buf);
    }
    return rc;
}

static int fill_block(void *p, uint64_t block, void *buf, size_t *len)
{
    fill_ctx *f = p;
    uint64_t off = block * f->bs;
    if (off >= f->nbytes)
        return HPC_E_CORRUPT;
    size_t n = (size_t)MIN((uint64_t)f->bs, f->nbytes - off);
    *len = n;
    return fill_range(f, buf, off, n);
}

static int dhdf_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                     size_t *nread)
{
    dhdf *d = c->priv;
    uint64_t data;
    int rc = hpc_tree_data(c->tree, ino, &data);
    *nread = 0;
    if (rc != HPC_OK)
        return rc;
    uint32_t ai = (uint32_t)(data >> 32), pi = (uint32_t)data;
    if (ai >= d->narrays)
        return HPC_E_ISDIR;
    dhdf_array *a = &d->arrays[ai];
    hpc_dhdf_box whole = { { 0 }, { 0 } };
    fill_ctx f = { .d = d, .a = a, .rank = a->rank };
    uint64_t space;
    if (pi == 0) {
        f.dims = a->dims;
        f.boxes = a->boxes;
        f.pieces = a->pieces;
        f.npieces = a->npieces;
        f.zero = a->holes > 0;
        f.nbytes = a->nbytes;
        space = a->space;
    } else {
        if (pi > a->npieces || !a->distributed)
            return HPC_E_NOENT;
        memcpy(whole.size, a->boxes[pi - 1].size, sizeof whole.size);
        f.dims = whole.size;
        f.boxes = &whole;
        f.pieces = &a->pieces[pi - 1];
        f.npieces = 1;
        f.nbytes = a->esize * hpc_box_elements(a->rank, whole.size);
        space = a->piece_space[pi - 1];
    }
    if (off >= f.nbytes)
        return HPC_OK;
    len = (size_t)MIN((uint64_t)len, f.nbytes - off);
    hpc_cache *cache = c->host->cache(c);
    f.bs = hpc_cache_block_size(cache);
    /* large reads (sequential readers, the kernel's read-ahead) go straight
     * into the caller's buffer: the kernel's page cache keeps them, and a
     * copy through the block cache would cost as much as the read */
    if (len >= DIRECT_READ_MIN && len >= f.bs)
        rc = fill_range(&f, buf, off, len);
    else
        rc = hpc_cache_read(cache, space, buf, len, off, fill_block, &f);
    if (rc == HPC_OK)
        *nread = len;
    return rc;
}

/** For tests: SDreaddata calls made on file k of the set (0 = the MHF). */
uint64_t hpc_dhdf_file_reads(hpc_container *c, uint32_t k);

uint64_t hpc_dhdf_file_reads(hpc_container *c, uint32_t k)
{
    dhdf *d = c->priv;
    g_mutex_lock(&dhdf_hdf_lock);
    uint64_t n = k < d->nfiles ? d->files[k].reads : 0;
    g_mutex_unlock(&dhdf_hdf_lock);
    return n;
}

/* ---- references (hpc_format.chunks) ------------------------------------ */

/* Where piece pc's elements lie: one uncompressed block of its file in the
 * stored byte order, else a reason.  dhdf_hdf_lock held. */
static const char *piece_block(dhdf *d, dhdf_piece *pc, int32 *off, int32 *len, int *be)
{
    int32 id = piece_sds(d, pc), rank, nt, nattrs, dims[H4_MAX_VAR_DIMS];
    if (pc->why)
        return "its reads fail (.info says why)";
    if (pc->ext_dir)
        return "its data are in an external file";
    if (id == FAIL || SDgetinfo(id, NULL, &rank, dims, &nt, &nattrs) == FAIL)
        return "libhdf4 cannot select the SDS";
    if (pc->stream || SDgetdatainfo(id, NULL, 0, 0, NULL, NULL) != 1 ||
        SDgetdatainfo(id, NULL, 0, 1, off, len) != 1)
        return "its data are compressed, chunked, split in linked blocks or never written";
    if ((uint64_t)*len != pc->nbytes)
        return "its stored size differs from its shape";
    *be = !(nt & DFNT_LITEND);
    return NULL;
}

/* "dim LEN NAME" per axis of the array (pi 0) or of piece pi - 1: the
 * names libhdf4 gives its SDS's dimensions, as xarray's netCDF names them. */
static void dim_lines(const dhdf_array *a, uint32_t pi, GString *out)
{
    char **names = pi ? a->pieces[pi - 1].dimnames : a->dimnames;
    const uint64_t *len = pi ? a->boxes[pi - 1].size : a->dims;
    for (unsigned k = 0; names && k < a->rank && names[k]; k++) {
        g_string_append_printf(out, "dim %" PRIu64 " ", len[k]);
        hpc_json_str(out, names[k]);
        g_string_append_c(out, '\n');
    }
}

/* The typed attributes of the array (pi 0: its SDS in the main file) or
 * of piece pi - 1 (its own SDS), and a _FillValue of its type as
 * "ncfill", in the byte order of the "order" line (be).  hdf_lock held. */
static void attr_lines(dhdf *d, dhdf_array *a, uint32_t pi, int be, GString *out)
{
    dhdf_piece *pc = pi ? &a->pieces[pi - 1] : NULL;
    uint32_t k = pc ? pc->file : 0;
    int32 sd = file_sd(d, k), rank, nt, nattrs, dims[H4_MAX_VAR_DIMS];
    int32 id = pc ? piece_sds(d, pc) : sd == FAIL ? FAIL : SDselect(sd, a->sds_index);
    unsigned char fill[8];
    if (id != FAIL && SDgetinfo(id, NULL, &rank, dims, &nt, &nattrs) != FAIL &&
        dhdf_attr_lines(id, nattrs, d->files[k].size, a->nt, fill, out)) {
        dhdf_native_to_le(fill, 1, a->esize);
        g_string_append(out, "ncfill ");
        for (uint32_t i = 0; i < a->esize; i++)
            g_string_append_printf(out, "%02x", fill[be ? a->esize - 1 - i : i]);
        g_string_append_c(out, '\n');
    }
    if (!pc && id != FAIL)
        SDendaccess(id);
}

/* The root's typed attributes: the main file's.  hdf_lock held. */
static int root_attrs(dhdf *d, GString *out)
{
    int32 sd = file_sd(d, 0), nds, ngattr;
    if (sd == FAIL || SDfileinfo(sd, &nds, &ngattr) == FAIL)
        return HPC_E_IO;
    dhdf_attr_lines(sd, ngattr, d->files[0].size, 0, NULL, out);
    return HPC_OK;
}

/* The lines of hdf5_refs.c's format: one piece (or a plain SDS) as
 * contiguous data; an assembled array as chunks when its pieces form a
 * regular grid of equal boxes. */
static int dhdf_chunks(hpc_container *c, hpc_ino ino, GString *out)
{
    dhdf *d = c->priv;
    uint64_t data = 0;
    hpc_stat st;
    int rc = hpc_tree_getattr(c->tree, ino, &st);
    if (rc == HPC_OK && S_ISDIR(st.mode) && ino == HPC_INO_ROOT) {
        g_mutex_lock(&dhdf_hdf_lock);
        rc = root_attrs(d, out);
        g_mutex_unlock(&dhdf_hdf_lock);
        return rc;
    }
    if (rc == HPC_OK && S_ISDIR(st.mode))      /* NAME.pieces: no attributes */
        return HPC_E_NOTSUP;
    if (rc == HPC_OK)
        rc = hpc_tree_data(c->tree, ino, &data);
    uint32_t ai = (uint32_t)(data >> 32), pi = (uint32_t)data;
    if (rc != HPC_OK || ai >= d->narrays)
        return rc != HPC_OK ? rc : HPC_E_NOTSUP;
    dhdf_array *a = &d->arrays[ai];
    size_t first = pi ? pi - 1 : 0, n = pi || !a->distributed ? 1 : a->npieces;
    if (first + n > a->npieces)
        return HPC_E_NOENT;
    const char *why = a->holes && !pi ? "elements no piece holds (holes)" : NULL, *grid = NULL;
    for (unsigned k = 0; !why && n > 1 && k < a->rank; k++)
        for (size_t i = 0; !why && i < n; i++)
            if (a->boxes[i].size[k] != a->boxes[0].size[k] || a->dims[k] % a->boxes[0].size[k] ||
                a->boxes[i].origin[k] % a->boxes[0].size[k])
                why = grid = "its pieces form no regular grid of equal boxes: they are the arrays of";
    dim_lines(a, pi, out);
    g_string_append_printf(out, "layout %s\n", n > 1 ? "chunked" : "contiguous");
    g_mutex_lock(&dhdf_hdf_lock);
    int order_be = 0;           /* no "order" line: the served, little-endian bytes */
    for (size_t i = first; !why && i < first + n; i++) {
        int32 off = 0, len = 0;
        int be = 1;
        dhdf_piece *pc = &a->pieces[i];
        if ((why = piece_block(d, pc, &off, &len, &be)))
            break;
        if (i == first)
            g_string_append_printf(out, "order %s\nfill none\n", a->esize == 1 ? "none"
                                   : be ? "be" : "le");
        order_be |= i == first && be;
        if (n == 1) {
            g_string_append_printf(out, "file %s\naddr %" PRId32 " %" PRId32 "\n",
                                   d->files[pc->file].path, off, len);
            continue;
        }
        if (i == first) {
            g_string_append(out, "chunk ");
            for (unsigned k = 0; k < a->rank; k++)
                g_string_append_printf(out, "%s%" PRIu64, k ? "," : "", a->boxes[0].size[k]);
            g_string_append_c(out, '\n');
        }
        g_string_append_printf(out, "c %" PRId32 " %" PRId32 " 0 ", off, len);
        for (unsigned k = 0; k < a->rank; k++)
            g_string_append_printf(out, "%s%" PRIu64, k ? "," : "", a->boxes[i].origin[k]);
        g_string_append_printf(out, " %s\n", d->files[pc->file].path);
    }
    attr_lines(d, a, pi, order_be, out);
    g_mutex_unlock(&dhdf_hdf_lock);
    if (why)
        g_string_append_printf(out, "unsup %s%s%s%s\n", why, why == grid ? " " : "",
                               why == grid ? a->name : "", why == grid ? ".pieces" : "");
    return HPC_OK;
}

/* ---- .info ------------------------------------------------------------ */

static int dhdf_info(hpc_container *c, GString *o)
{
    const dhdf *d = c->priv;
    static const char *const roles[] = { "plain HDF4 file (no DHDF_SetId)", "main file",
                                         "associated file mounted alone (pieces shown as "
                                         "plain arrays; mount the main file to assemble)" };
    uint32_t ndist = 0;
    uint64_t holes = 0;
    for (uint32_t i = 0; i < d->narrays; i++) {
        ndist += (uint32_t)d->arrays[i].distributed;
        holes += d->arrays[i].holes;
    }
    g_string_append_printf(o, "hdf4_library: %s\nrole: %s\nset_id: %s\nfile_id: %" PRId32 "\n"
                           "files: %u\narrays: %u\ndistributed: %u\n",
                           d->libversion, roles[d->role], d->setid ? d->setid : "",
                           d->fileid < 0 ? 0 : d->fileid, d->nfiles, d->narrays, ndist);
    if (holes)
        g_string_append_printf(o, "holes: %" PRIu64 " elements uncovered, served as zeros "
                               "(-o allowholes)\n", holes);
    else
        g_string_append(o, "holes: none\n");
    for (guint i = 0; i < d->warnings->len; i++)
        g_string_append_printf(o, "warning: %s\n", (char *)g_ptr_array_index(d->warnings, i));
    for (guint i = 0; i < d->notes->len; i++)
        g_string_append_printf(o, "note: %s\n", (char *)g_ptr_array_index(d->notes, i));
    g_string_append(o, "\narray\tkind\tdtype\tshape\tbytes\tpieces\tholes\n");
    for (uint32_t i = 0; i < d->narrays; i++) {
        const dhdf_array *a = &d->arrays[i];
        const char *dt;
        dhdf_nt_info(a->nt, &dt);
        char *shape = dhdf_shape_text(a->scalar ? 0 : a->rank, a->dims);
        g_string_append_printf(o, "%s\t%s\t%s\t%s\t%" PRIu64 "\t%zu\t%" PRIu64 "\n", a->name,
                               a->distributed ? "distributed" : a->coord ? "coordinate"
                               : "plain", dt, shape, a->nbytes,
                               a->distributed ? a->npieces : 0, a->holes);
        g_free(shape);
    }
    if (d->role == ROLE_MAIN) {
        g_string_append(o, "\nFile_Info\nDHDF_FileId\tFileName\tHostName\tpath\tsize\n");
        for (uint32_t k = 0; k < d->nfiles; k++) {
            const dhdf_file *f = &d->files[k];
            g_string_append_printf(o, "%" PRId32 "\t%s\t%s\t%s\t%" PRIu64 "\n", f->id,
                                   f->name ? f->name : "", f->host ? f->host : "", f->path,
                                   f->size);
        }
    }
    for (uint32_t i = 0; i < d->narrays; i++) {
        const dhdf_array *a = &d->arrays[i];
        if (!a->distributed)
            continue;
        g_string_append_printf(o, "\nchunk table %s (class " CLASS_CHUNKS ", ChunkName width %u, "
                               "DimSizes order %u, Origins order %u)\n"
                               "piece\tDHDF_FileId\tChunkName\tDimSizes\tOrigins\n",
                               a->name, a->layout.name_w, a->layout.dims_order,
                               a->layout.orig_order);
        for (size_t k = 0; k < a->npieces; k++) {
            char *s = dhdf_shape_text(a->rank, a->boxes[k].size), *og = dhdf_shape_text(a->rank, a->boxes[k].origin);
            g_string_append_printf(o, "%zu\t%" PRId32 "\t%s\t%s\t%s\n", k,
                                   d->files[a->pieces[k].file].id, a->pieces[k].name, s, og);
            g_free(s);
            g_free(og);
        }
    }
    return HPC_OK;
}

const hpc_format hpc_format_dhdf = {
    .name = "dhdf",
    .sandbox_lib = "libhdf4",
    .probe = dhdf_probe,
    .open = dhdf_open,
    .close = dhdf_close,
    .read = dhdf_read,
    .info = dhdf_info,
    .chunks = dhdf_chunks,
};
