/* dhdf_table.c - the pure logic of distributed HDF chunk tables
 * (fmt_dhdf.h): record layout and decoding, the check that pieces lie
 * inside their array without overlapping, and the pieces a range of
 * elements touches.  No libhdf4 here: unit tests and the fuzz harness call
 * it directly.
 */
#include "config.h"
#include "fmt_dhdf.h"
#include "dhdf_layout.h"
#include "hpc_boxes.h"
#include "hpc_error.h"

#include <glib.h>
#include <inttypes.h>
#include <string.h>

#define MAX_STR_W 4096           /* widest FileName/ChunkName field accepted */

size_t hpc_dhdf_record_size(const hpc_dhdf_layout *l)
{
    if (l->name_w < 1 || l->name_w > MAX_STR_W || l->dims_order < 1 ||
        l->dims_order > HPC_DHDF_MAX_RANK || l->orig_order < 1 ||
        l->orig_order > HPC_DHDF_MAX_RANK)
        return 0;
    return 4 + (size_t)l->name_w + 4 * (size_t)l->dims_order + 4 * (size_t)l->orig_order;
}

int32_t hpc_dhdf_get_i32(const unsigned char *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Copy a NUL-padded string field of width w into out (max+1 bytes). */
static size_t copy_str(const unsigned char *p, size_t w, char *out, size_t max)
{
    size_t n = 0;
    while (n < w && p[n])
        n++;
    size_t k = MIN(n, max);
    memcpy(out, p, k);
    out[k] = '\0';
    return n;
}

/* A name usable as one path component. */
int hpc_dhdf_name_ok(const char *s)
{
    return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int hpc_dhdf_decode_record(const unsigned char *rec, const hpc_dhdf_layout *l,
                           unsigned rank, const uint64_t *dims, int32_t *fileid,
                           char *name, hpc_dhdf_box *box, const char **field,
                           char *why, size_t whylen)
{
    const unsigned char *pd = rec + 4 + l->name_w, *po = pd + 4 * (size_t)l->dims_order;
    memset(box, 0, sizeof *box);
    *fileid = hpc_dhdf_get_i32(rec);
    if (*fileid < 1) {
        *field = DHDF_FIELD_FILEID;
        g_snprintf(why, whylen, "%" PRId32 " cannot hold a piece (AHF ids are >= 1)", *fileid);
        return HPC_E_CORRUPT;
    }
    size_t n = copy_str(rec + 4, l->name_w, name, HPC_DHDF_MAX_NAME);
    if (n > HPC_DHDF_MAX_NAME || !hpc_dhdf_name_ok(name)) {
        *field = DHDF_FIELD_CHUNKNAME;
        g_snprintf(why, whylen, "'%s' is not a valid piece name (1 to %d bytes, no '/', "
                   "not '.' or '..')", name, HPC_DHDF_MAX_NAME);
        return HPC_E_CORRUPT;
    }
    if (rank < 1 || rank > l->dims_order || rank > l->orig_order) {
        *field = rank > l->dims_order ? DHDF_FIELD_DIMSIZES : DHDF_FIELD_ORIGINS;
        g_snprintf(why, whylen, "order %u/%u is less than the array's rank %u",
                   l->dims_order, l->orig_order, rank);
        return HPC_E_CORRUPT;
    }
    for (unsigned d = 0; d < rank; d++) {
        int32_t s = hpc_dhdf_get_i32(pd + 4 * d), o = hpc_dhdf_get_i32(po + 4 * d);
        if (s < 1 || (uint64_t)s > dims[d]) {
            *field = DHDF_FIELD_DIMSIZES;
            g_snprintf(why, whylen, "piece '%s': size %" PRId32 " in dimension %u "
                       "(the array has %" PRIu64 ")", name, s, d, dims[d]);
            return HPC_E_CORRUPT;
        }
        if (o < 0 || (uint64_t)o > dims[d] - (uint64_t)s) {
            *field = DHDF_FIELD_ORIGINS;
            g_snprintf(why, whylen, "piece '%s': origin %" PRId32 " + size %" PRId32
                       " in dimension %u exceeds the array's %" PRIu64,
                       name, o, s, d, dims[d]);
            return HPC_E_CORRUPT;
        }
        box->size[d] = (uint64_t)s;
        box->origin[d] = (uint64_t)o;
    }
    return HPC_OK;
}

static int boxes_meet(unsigned rank, const hpc_dhdf_box *x, const hpc_dhdf_box *y)
{
    for (unsigned d = 0; d < rank; d++)
        if (x->origin[d] >= y->origin[d] + y->size[d] || y->origin[d] >= x->origin[d] + x->size[d])
            return 0;
    return 1;
}

static int cmp_origin0(const void *a, const void *b, void *p)
{
    const hpc_dhdf_box *bx = p;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (bx[i].origin[0] != bx[j].origin[0])
        return bx[i].origin[0] < bx[j].origin[0] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Box p is not empty and lies inside the array; *vol gets its elements. */
static gboolean box_inside(unsigned rank, const uint64_t *dims, const hpc_dhdf_box *p,
                           uint64_t *vol)
{
    *vol = 1;
    for (unsigned d = 0; d < rank; d++) {
        if (p->size[d] == 0 || p->origin[d] > dims[d] || p->size[d] > dims[d] - p->origin[d])
            return FALSE;
        *vol *= p->size[d];
    }
    return TRUE;
}

hpc_dhdf_problem hpc_dhdf_check_pieces(unsigned rank, const uint64_t *dims,
                                       const hpc_dhdf_box *p, size_t n,
                                       uint64_t *holes, size_t *a, size_t *b)
{
    uint64_t total = 1, covered = 0;
    *holes = 0;
    for (unsigned d = 0; d < rank; d++)
        total *= dims[d];          /* the caller checked that it fits */
    for (size_t i = 0; i < n; i++) {
        uint64_t vol;
        if (!box_inside(rank, dims, &p[i], &vol)) {
            *a = i;
            return HPC_DHDF_OUTSIDE;
        }
        covered += vol;            /* <= total as long as nothing overlaps */
    }
    /* sweep in order of dimension-0 origin: only pieces whose dimension-0
     * ranges meet need the full test */
    size_t *ord = g_new(size_t, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    if (n > 1)
        g_qsort_with_data(ord, (gint)n, sizeof *ord, cmp_origin0, (void *)p);
    hpc_dhdf_problem res = HPC_DHDF_FINE;
    for (size_t i = 0; i < n && res == HPC_DHDF_FINE; i++) {
        const hpc_dhdf_box *x = &p[ord[i]];
        for (size_t j = i + 1; j < n; j++) {
            const hpc_dhdf_box *y = &p[ord[j]];
            if (y->origin[0] >= x->origin[0] + x->size[0])
                break;
            if (boxes_meet(rank, x, y)) {
                *a = MIN(ord[i], ord[j]);
                *b = MAX(ord[i], ord[j]);
                res = HPC_DHDF_OVERLAP;
                break;
            }
        }
    }
    g_free(ord);
    if (res == HPC_DHDF_FINE)
        *holes = total - covered;
    return res;
}

/* The part of box [lo, lo+cnt) in piece p: start s, edge e; FALSE if none. */
static gboolean box_meet_piece(unsigned rank, const uint64_t *lo, const uint64_t *cnt,
                               const hpc_dhdf_box *p, uint64_t *s, uint64_t *e)
{
    for (unsigned d = 0; d < rank; d++) {
        uint64_t a = MAX(lo[d], p->origin[d]);
        uint64_t b = MIN(lo[d] + cnt[d], p->origin[d] + p->size[d]);
        if (a >= b)
            return FALSE;
        s[d] = a;
        e[d] = b - a;
    }
    return TRUE;
}

int hpc_dhdf_map_range(unsigned rank, const uint64_t *dims, const hpc_dhdf_box *p,
                       size_t n, uint64_t e0, uint64_t e1, hpc_dhdf_box_fn fn,
                       void *ctx)
{
    hpc_box box[HPC_BOXES_MAX];
    unsigned nb = hpc_boxes_split(rank, dims, e0, e1, box);
    for (unsigned bi = 0; bi < nb; bi++) {
        for (size_t i = 0; i < n; i++) {
            uint64_t s[HPC_DHDF_MAX_RANK], e[HPC_DHDF_MAX_RANK];
            int rc = box_meet_piece(rank, box[bi].start, box[bi].count, &p[i], s, e)
                         ? fn(ctx, i, s, e) : 0;
            if (rc)
                return rc;
        }
    }
    return 0;
}

void hpc_dhdf_scatter(unsigned rank, const uint64_t *dims, size_t esize,
                      const uint64_t *start, const uint64_t *edge,
                      const void *src, void *dst, uint64_t e0)
{
    hpc_boxes_scatter(rank, dims, esize, start, edge, src, dst, e0);
}
