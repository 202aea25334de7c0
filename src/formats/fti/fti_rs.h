/* fti_rs.h - the GF(2^16) Reed-Solomon code of FTI's level 3 (private to
 * the FTI reader and its benchmark writer).
 *
 * A group of G ranks: data piece j (j = 0..G-1) is member j's Rank file
 * zero-extended to maxFs bytes with its real size in the last 8 bytes;
 * parity piece i is RSed_i = sum_j M[i][j] * data_j over GF(2^16)
 * (polynomial 0x1100B, little-endian 16-bit words, an odd last byte padded
 * with a zero high byte), M[i][j] = 1 / (i XOR (G + j)).
 */
#ifndef FTI_RS_H
#define FTI_RS_H

#include <stddef.h>
#include <stdint.h>

#define FTI_RS_MAX_GROUP 32

/** Product of a and b in GF(2^16). */
uint16_t fti_gf_mul(uint16_t a, uint16_t b);

/** Inverse of a != 0 in GF(2^16). */
uint16_t fti_gf_inv(uint16_t a);

/** The encoding matrix entry M[i][j] of a group of g. */
uint16_t fti_rs_coef(unsigned g, unsigned i, unsigned j);

/**
 * acc[w] ^= c * word w of src, for the nbytes bytes of src (an odd last
 * byte is the low byte of a word whose high byte is 0); acc holds
 * (nbytes + 1) / 2 words.
 */
void fti_gf_mul_acc(uint16_t *acc, const uint8_t *src, size_t nbytes, uint16_t c);

/** dst[w] = c * word w of src: fti_gf_mul_acc on a zeroed dst, in one pass. */
void fti_gf_mul_set(uint16_t *dst, const uint8_t *src, size_t nbytes, uint16_t c);

/**
 * Coefficients that rebuild data piece `target` of a group of g from the
 * pieces present: have_data[j] / have_parity[i] non-zero for pieces that
 * exist.  On success data_j = sum cd[j] * data_j + sum cp[i] * parity_i
 * (coefficients of unused pieces are 0).  Returns 0, or -1 when fewer than
 * g pieces are present.
 */
int fti_rs_coeffs(unsigned g, const int *have_data, const int *have_parity,
                  unsigned target, uint16_t *cd, uint16_t *cp);

#endif
