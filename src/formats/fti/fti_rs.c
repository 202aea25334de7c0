/* fti_rs.c - GF(2^16) arithmetic and the rebuild coefficients of FTI's
 * level-3 Reed-Solomon groups (see fti_rs.h).  Region products go through
 * gf-complete (the library FTI's own jerasure uses), whose default field
 * for w = 16 has FTI's polynomial 0x1100B; the log tables below serve
 * single products, matrix inversion, odd last bytes and buffers that
 * gf-complete cannot take (misaligned against each other). */
#include "fti_rs.h"

#include <gf_complete.h>
#include <glib.h>
#include <stdint.h>
#include <string.h>

#define GF_POLY 0x1100Bu
#define GF_ORDER 65535u

static uint16_t gf_exp[2 * 65536];
static uint16_t gf_log[65536];

static gsize gf_ready;

static void gf_init(void)
{
    if (g_once_init_enter(&gf_ready)) {
        uint32_t x = 1;
        for (uint32_t i = 0; i < GF_ORDER; i++) {
            gf_exp[i] = (uint16_t)x;
            gf_log[x] = (uint16_t)i;
            x <<= 1;
            if (x & 0x10000u)
                x ^= GF_POLY;
        }
        /* doubled table: exp[log a + log b] needs no modulo */
        for (uint32_t i = GF_ORDER; i < G_N_ELEMENTS(gf_exp); i++)
            gf_exp[i] = gf_exp[i - GF_ORDER];
        g_once_init_leave(&gf_ready, 1);
    }
}

/* gf-complete's GF(2^16), or NULL when it cannot be used. */
static gf_t gf16;
static gsize gf16_state;          /* 0: not tried, 1: unusable, 2: ready */

static gf_t *gf16_get(void)
{
    if (g_once_init_enter(&gf16_state)) {
        gsize st = 1;
        /* words are host order in gf-complete, little-endian in FTI */
        if (G_BYTE_ORDER == G_LITTLE_ENDIAN && gf_init_easy(&gf16, 16)) {
            /* the field must be FTI's: 2 * 0x8000 = 0x1100B mod x^16 */
            st = gf16.multiply.w32(&gf16, 2, 0x8000) == (GF_POLY & 0xFFFFu) ? 2 : 1;
        }
        g_once_init_leave(&gf16_state, st);
    }
    return gf16_state == 2 ? &gf16 : NULL;
}

uint16_t fti_gf_mul(uint16_t a, uint16_t b)
{
    gf_init();
    if (a == 0 || b == 0)
        return 0;
    return gf_exp[(uint32_t)gf_log[a] + gf_log[b]];
}

uint16_t fti_gf_inv(uint16_t a)
{
    gf_init();
    return a ? gf_exp[GF_ORDER - gf_log[a]] : 0;
}

uint16_t fti_rs_coef(unsigned g, unsigned i, unsigned j)
{
    return fti_gf_inv((uint16_t)(i ^ (g + j)));
}

/* The same through gf-complete for the even part (accumulated, or stored
 * when xor is 0); 0 when not possible. */
static int mul_region_gf(uint16_t *acc, const uint8_t *src, size_t nbytes, uint16_t c, int xor)
{
    gf_t *gf = gf16_get();
    size_t even = nbytes & ~(size_t)1;
    if (!gf || even < 64 || even > INT32_MAX || (uintptr_t)acc % 16 != (uintptr_t)src % 16)
        return 0;
    gf->multiply_region.w32(gf, (void *)src, acc, c, (int)even, xor);
    if (nbytes & 1) {
        uint16_t v = src[nbytes - 1];
        uint16_t p = v ? gf_exp[gf_log[v] + gf_log[c]] : 0;
        acc[nbytes / 2] = xor ? acc[nbytes / 2] ^ p : p;
    }
    return 1;
}

void fti_gf_mul_acc(uint16_t *acc, const uint8_t *src, size_t nbytes, uint16_t c)
{
    gf_init();
    if (c == 0 || mul_region_gf(acc, src, nbytes, c, 1))
        return;
    uint32_t lc = gf_log[c];
    size_t nw = nbytes / 2;
    if (nw >= 1024) {
        /* multiplication by c is linear over GF(2): c*(h<<8 | l) =
         * c*(h<<8) ^ c*l, two lookups in 1 KiB of tables per word */
        uint16_t lo[256], hi[256];
        lo[0] = hi[0] = 0;
        for (uint32_t b = 1; b < 256; b++) {
            lo[b] = gf_exp[gf_log[b] + lc];
            hi[b] = gf_exp[gf_log[b << 8] + lc];
        }
        for (size_t w = 0; w < nw; w++)
            acc[w] ^= lo[src[2 * w]] ^ hi[src[2 * w + 1]];
    } else {
        for (size_t w = 0; w < nw; w++) {
            uint16_t v = (uint16_t)(src[2 * w] | (src[2 * w + 1] << 8));
            if (v)
                acc[w] ^= gf_exp[gf_log[v] + lc];
        }
    }
    if (nbytes & 1) {
        uint16_t v = src[nbytes - 1];
        if (v)
            acc[nw] ^= gf_exp[gf_log[v] + lc];
    }
}

void fti_gf_mul_set(uint16_t *dst, const uint8_t *src, size_t nbytes, uint16_t c)
{
    gf_init();
    if (c != 0 && mul_region_gf(dst, src, nbytes, c, 0))
        return;
    memset(dst, 0, (nbytes + 1) / 2 * sizeof *dst);
    fti_gf_mul_acc(dst, src, nbytes, c);
}

/* Invert the n x n matrix a (row-major) in place into inv; -1 if singular
 * (never for a Cauchy submatrix, but the input is checked anyway). */
static int gf_invert(uint16_t *a, uint16_t *inv, unsigned n)
{
    for (unsigned r = 0; r < n; r++)
        for (unsigned k = 0; k < n; k++)
            inv[r * n + k] = r == k;
    for (unsigned col = 0; col < n; col++) {
        unsigned p = col;
        while (p < n && a[p * n + col] == 0)
            p++;
        if (p == n)
            return -1;
        for (unsigned k = 0; k < n; k++) {
            uint16_t t = a[col * n + k]; a[col * n + k] = a[p * n + k]; a[p * n + k] = t;
            t = inv[col * n + k]; inv[col * n + k] = inv[p * n + k]; inv[p * n + k] = t;
        }
        uint16_t f = fti_gf_inv(a[col * n + col]);
        for (unsigned k = 0; k < n; k++) {
            a[col * n + k] = fti_gf_mul(a[col * n + k], f);
            inv[col * n + k] = fti_gf_mul(inv[col * n + k], f);
        }
        for (unsigned r = 0; r < n; r++) {
            uint16_t m = a[r * n + col];
            if (r == col || m == 0)
                continue;
            for (unsigned k = 0; k < n; k++) {
                a[r * n + k] ^= fti_gf_mul(m, a[col * n + k]);
                inv[r * n + k] ^= fti_gf_mul(m, inv[col * n + k]);
            }
        }
    }
    return 0;
}

int fti_rs_coeffs(unsigned g, const int *have_data, const int *have_parity,
                  unsigned target, uint16_t *cd, uint16_t *cp)
{
    unsigned miss[FTI_RS_MAX_GROUP], rows[FTI_RS_MAX_GROUP], e = 0, np = 0;
    uint16_t a[FTI_RS_MAX_GROUP * FTI_RS_MAX_GROUP], inv[FTI_RS_MAX_GROUP * FTI_RS_MAX_GROUP];
    if (g == 0 || g > FTI_RS_MAX_GROUP || target >= g)
        return -1;
    memset(cd, 0, g * sizeof *cd);
    memset(cp, 0, g * sizeof *cp);
    if (have_data[target]) {
        cd[target] = 1;
        return 0;
    }
    for (unsigned j = 0; j < g; j++)
        if (!have_data[j])
            miss[e++] = j;
    for (unsigned i = 0; i < g && np < e; i++)
        if (have_parity[i])
            rows[np++] = i;
    if (np < e)
        return -1;
    /* parity_i + sum_{j present} M[i][j] data_j = sum_{j missing} M[i][j] data_j */
    for (unsigned r = 0; r < e; r++)
        for (unsigned k = 0; k < e; k++)
            a[r * e + k] = fti_rs_coef(g, rows[r], miss[k]);
    if (gf_invert(a, inv, e) != 0)
        return -1;
    unsigned t = 0;
    while (miss[t] != target)
        t++;
    for (unsigned r = 0; r < e; r++) {
        uint16_t x = inv[t * e + r];
        cp[rows[r]] = x;
        for (unsigned j = 0; j < g; j++)
            if (have_data[j])
                cd[j] ^= fti_gf_mul(x, fti_rs_coef(g, rows[r], j));
    }
    return 0;
}
