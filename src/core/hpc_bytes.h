/* hpc_bytes.h - loads of little- and big-endian integers from byte buffers,
 * and checked arithmetic on sizes and offsets read from files.
 *
 * Every reader decodes on-disk integers and computes offsets from them; these
 * helpers are the one place that does it, so no reader keeps its own copy.
 * Loads go through memcpy: no alignment is assumed.  The checked operations
 * return TRUE when the result fits, and then store it; on overflow they
 * return FALSE and leave *out alone, so a caller turns an overflow into a
 * one-line "field F at offset O" error instead of a wrapped size.
 */
#ifndef HPC_BYTES_H
#define HPC_BYTES_H

#include <glib.h>
#include <stdint.h>
#include <string.h>

/* ---- loads ------------------------------------------------------------- */

static inline uint16_t hpc_le16(const void *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return GUINT16_FROM_LE(v);
}

static inline uint32_t hpc_le32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return GUINT32_FROM_LE(v);
}

static inline uint64_t hpc_le64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return GUINT64_FROM_LE(v);
}

static inline uint16_t hpc_be16(const void *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return GUINT16_FROM_BE(v);
}

static inline uint32_t hpc_be32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return GUINT32_FROM_BE(v);
}

static inline uint64_t hpc_be64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return GUINT64_FROM_BE(v);
}

/** An unsigned integer of size bytes (1, 2, 4 or 8) in the byte order big
 *  (TRUE) or little; 0 for other sizes. */
static inline uint64_t hpc_load_uint(const void *p, unsigned size, gboolean big)
{
    switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: return big ? hpc_be16(p) : hpc_le16(p);
    case 4: return big ? hpc_be32(p) : hpc_le32(p);
    case 8: return big ? hpc_be64(p) : hpc_le64(p);
    default: return 0;
    }
}

/* ---- stores ------------------------------------------------------------ */

static inline void hpc_put_le16(void *p, uint16_t v)
{
    v = GUINT16_TO_LE(v);
    memcpy(p, &v, sizeof v);
}

static inline void hpc_put_le32(void *p, uint32_t v)
{
    v = GUINT32_TO_LE(v);
    memcpy(p, &v, sizeof v);
}

static inline void hpc_put_le64(void *p, uint64_t v)
{
    v = GUINT64_TO_LE(v);
    memcpy(p, &v, sizeof v);
}

/* ---- checked arithmetic ------------------------------------------------ */

/** *out = a + b if it fits in 64 bits. */
static inline gboolean hpc_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return FALSE;
    *out = r;
    return TRUE;
}

/** *out = a * b if it fits in 64 bits. */
static inline gboolean hpc_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return FALSE;
    *out = r;
    return TRUE;
}

/** a * b, or UINT64_MAX when it does not fit (sizes that are only compared
 *  with limits). */
static inline uint64_t hpc_mul_u64_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return hpc_mul_u64(a, b, &r) ? r : UINT64_MAX;
}

/** *out = a * b + c if it fits in 64 bits (element offsets: index * size + base). */
static inline gboolean hpc_muladd_u64(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    uint64_t r;
    if (!hpc_mul_u64(a, b, &r) || !hpc_add_u64(r, c, &r))
        return FALSE;
    *out = r;
    return TRUE;
}

/** *out = a * b if it fits in a size_t (sizes of buffers to allocate). */
static inline gboolean hpc_mul_size(size_t a, size_t b, size_t *out)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return FALSE;
    *out = r;
    return TRUE;
}

/** A signed 64-bit value read from a file is a valid size or offset. */
static inline gboolean hpc_i64_to_u64(int64_t v, uint64_t *out)
{
    if (v < 0)
        return FALSE;
    *out = (uint64_t)v;
    return TRUE;
}

/** [off, off+len) lies inside [0, size), without overflow. */
static inline gboolean hpc_range_inside(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

#endif
