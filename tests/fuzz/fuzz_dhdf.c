/* fuzz_dhdf.c - libFuzzer harness of the distributed HDF chunk-table logic.
 *
 * The input is a made-up chunk table: a header (rank, dims, field widths,
 * record count, a range of elements, a mode byte) followed by raw records
 * as VSread packs them.  Every record goes through hpc_dhdf_decode_record;
 * the accepted pieces through hpc_dhdf_check_pieces, whose verdict is
 * checked against brute force; and, when they are fine, a range of the
 * array is assembled with hpc_dhdf_map_range + hpc_dhdf_scatter from
 * pieces whose elements hold their own index, and compared element by
 * element (holes must stay untouched).  Any disagreement aborts.
 *
 * libhdf4 itself is not fuzzed (its parser is not ours).  Build and run:
 *   tests/fuzz/run.sh dhdf 60
 */
#include "fuzz_common.h"

#include <stdlib.h>

#include "fmt_dhdf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXD 12
#define MAXREC 24

typedef struct fz {
    unsigned rank;
    const uint64_t *dims;
    const hpc_dhdf_box *p;
    uint32_t *dst;
    uint64_t e0, e1;
} fz;

static uint64_t lin_of(unsigned rank, const uint64_t *dims, const uint64_t *x)
{
    uint64_t lin = 0;
    for (unsigned d = 0; d < rank; d++)
        lin = lin * dims[d] + x[d];
    return lin;
}

static int fz_box(void *ctx, size_t piece, const uint64_t *start, const uint64_t *edge)
{
    fz *f = ctx;
    uint64_t n = 1, idx[HPC_DHDF_MAX_RANK] = { 0 }, x[HPC_DHDF_MAX_RANK];
    for (unsigned d = 0; d < f->rank; d++) {
        if (edge[d] == 0 || start[d] < f->p[piece].origin[d] ||
            start[d] + edge[d] > f->p[piece].origin[d] + f->p[piece].size[d])
            abort();
        n *= edge[d];
    }
    uint32_t *src = malloc(n * 4);
    for (uint64_t e = 0; e < n; e++) {
        for (unsigned d = 0; d < f->rank; d++)
            x[d] = start[d] + idx[d];
        uint64_t lin = lin_of(f->rank, f->dims, x);
        if (lin < f->e0 || lin >= f->e1)
            abort();                    /* a box outside the asked range */
        src[e] = (uint32_t)lin;
        for (int d = (int)f->rank - 1; d >= 0; d--) {
            if (++idx[d] < edge[d])
                break;
            idx[d] = 0;
        }
    }
    hpc_dhdf_scatter(f->rank, f->dims, 4, start, edge, src, f->dst, f->e0);
    free(src);
    return 0;
}

static int inside(unsigned rank, const uint64_t *dims, const hpc_dhdf_box *b, uint64_t e)
{
    for (int d = (int)rank - 1; d >= 0; d--) {
        uint64_t x = e % dims[d];
        e /= dims[d];
        if (x < b->origin[d] || x >= b->origin[d] + b->size[d])
            return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    unsigned rank = 1 + data[0] % 4;
    uint64_t dims[HPC_DHDF_MAX_RANK] = { 0 }, total = 1;
    for (unsigned d = 0; d < rank; d++) {
        dims[d] = 1 + data[1 + d] % MAXD;
        total *= dims[d];
    }
    hpc_dhdf_layout l = { 1u + data[5] % 8, 1u + data[6] % (rank + 2), 1u + data[7] % (rank + 2) };
    unsigned nrec = data[8] % (MAXREC + 1);
    uint64_t e0 = (uint64_t)(data[9] | data[10] << 8) % total;
    uint64_t e1 = e0 + 1 + (uint64_t)(data[11] | data[12] << 8) % (total - e0);
    int tame = data[13] & 1;           /* fold ints into range: reach the mapping */
    size_t rs = hpc_dhdf_record_size(&l);
    const uint8_t *rec = data + 16;
    size_t left = size - 16;

    hpc_dhdf_box p[MAXREC];
    size_t n = 0;
    unsigned char *buf = malloc(rs);
    for (unsigned i = 0; i < nrec && left >= rs; i++, rec += rs, left -= rs) {
        memcpy(buf, rec, rs);
        if (tame) {
            for (unsigned d = 0; d < l.dims_order; d++) {
                unsigned char *q = buf + 4 + l.name_w + 4 * d;
                int32_t v;
                memcpy(&v, q, 4);
                v = (int32_t)((uint32_t)v % (MAXD + 2));
                memcpy(q, &v, 4);
            }
            for (unsigned d = 0; d < l.orig_order; d++) {
                unsigned char *q = buf + 4 + l.name_w + 4 * l.dims_order + 4 * d;
                int32_t v;
                memcpy(&v, q, 4);
                v = (int32_t)((uint32_t)v % (MAXD + 1));
                memcpy(q, &v, 4);
            }
        }
        int32_t fid;
        char name[HPC_DHDF_MAX_NAME + 1], why[256];
        const char *field = NULL;
        hpc_dhdf_box b;
        if (hpc_dhdf_decode_record(buf, &l, rank, dims, &fid, name, &b, &field, why,
                                   sizeof why) != HPC_OK) {
            if (!field || !why[0])
                abort();
            continue;
        }
        /* an accepted record is a valid piece */
        if (fid < 1 || !name[0] || strchr(name, '/'))
            abort();
        for (unsigned d = 0; d < rank; d++)
            if (b.size[d] < 1 || b.origin[d] + b.size[d] > dims[d])
                abort();
        p[n++] = b;
    }
    free(buf);

    uint64_t holes = 0;
    size_t a = 0, b = 0;
    hpc_dhdf_problem pr = hpc_dhdf_check_pieces(rank, dims, p, n, &holes, &a, &b);
    /* brute force: per element, how many pieces hold it */
    uint8_t *cnt = calloc(total, 1);
    int overlap = 0;
    for (size_t i = 0; i < n; i++)
        for (uint64_t e = 0; e < total; e++)
            if (inside(rank, dims, &p[i], e) && ++cnt[e] > 1)
                overlap = 1;
    if (pr == HPC_DHDF_OUTSIDE)
        abort();                        /* decode already refused those */
    if ((pr == HPC_DHDF_OVERLAP) != overlap)
        abort();
    if (pr == HPC_DHDF_OVERLAP) {
        int meet = 0;
        for (uint64_t e = 0; e < total && !meet; e++)
            meet = inside(rank, dims, &p[a], e) && inside(rank, dims, &p[b], e);
        if (a == b || !meet)
            abort();
    } else {
        uint64_t uncovered = 0;
        for (uint64_t e = 0; e < total; e++)
            uncovered += cnt[e] == 0;
        if (uncovered != holes)
            abort();
        uint32_t *dst = malloc((e1 - e0) * 4);
        for (uint64_t e = 0; e < e1 - e0; e++)
            dst[e] = 0xffffffffu;
        fz f = { rank, dims, p, dst, e0, e1 };
        hpc_dhdf_map_range(rank, dims, p, n, e0, e1, fz_box, &f);
        for (uint64_t e = e0; e < e1; e++)
            if (dst[e - e0] != (cnt[e] ? (uint32_t)e : 0xffffffffu))
                abort();
        free(dst);
    }
    free(cnt);
    return 0;
}
