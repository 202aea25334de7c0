/* check_boxes.c - unit tests of hpc_boxes: splitting element ranges of
 * C-order arrays into boxes, against a brute-force oracle on random shapes
 * of rank 1 to 6 and every range of small arrays; scatter and gather
 * against element-by-element copies.
 */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <string.h>

#include "hpc_boxes.h"
#include "check_util.h"

/* Linear index of the element of box b numbered i (C order in the box). */
static uint64_t box_elem(unsigned rank, const uint64_t *dims, const hpc_box *b, uint64_t i)
{
    uint64_t lin = 0;
    uint64_t rest = i, idx[HPC_BOXES_MAX_RANK];
    for (int d = (int)rank - 1; d >= 0; d--) {
        idx[d] = rest % b->count[d];
        rest /= b->count[d];
    }
    for (unsigned d = 0; d < rank; d++)
        lin = lin * dims[d] + b->start[d] + idx[d];
    return lin;
}

/* The boxes of [e0, e1) are inside dims, and their elements, in order,
 * are exactly e0, e0+1, ..., e1-1. */
static void check_split(unsigned rank, const uint64_t *dims, uint64_t e0, uint64_t e1)
{
    hpc_box box[HPC_BOXES_MAX];
    unsigned n = hpc_boxes_split(rank, dims, e0, e1, box);
    ck_assert_uint_le(n, 2 * rank - 1);
    if (e0 >= e1) {
        ck_assert_uint_eq(n, 0);
        return;
    }
    uint64_t next = e0;
    for (unsigned i = 0; i < n; i++) {
        for (unsigned d = 0; d < rank; d++) {
            ck_assert_uint_ge(box[i].count[d], 1);
            ck_assert_uint_le(box[i].start[d] + box[i].count[d], dims[d]);
        }
        uint64_t m = hpc_box_elements(rank, box[i].count);
        for (uint64_t k = 0; k < m; k++)
            ck_assert_uint_eq(box_elem(rank, dims, &box[i], k), next++);
    }
    ck_assert_uint_eq(next, e1);
}

START_TEST(test_split_every_range)
{
    /* every range of a few small shapes */
    static const uint64_t shapes[][3] = { { 7, 1, 1 }, { 3, 5, 1 }, { 2, 3, 4 }, { 1, 1, 6 }, { 4, 1, 3 } };
    static const unsigned ranks[] = { 1, 2, 3, 3, 3 };
    for (size_t s = 0; s < G_N_ELEMENTS(ranks); s++) {
        uint64_t total = hpc_box_elements(ranks[s], shapes[s]);
        for (uint64_t a = 0; a <= total; a++)
            for (uint64_t b = a; b <= total; b++)
                check_split(ranks[s], shapes[s], a, b);
    }
}
END_TEST

START_TEST(test_split_random)
{
    GRand *r = g_rand_new_with_seed(42);
    for (int t = 0; t < 3000; t++) {
        unsigned rank = (unsigned)g_rand_int_range(r, 1, 7);
        uint64_t dims[HPC_BOXES_MAX_RANK], total = 1;
        for (unsigned d = 0; d < rank; d++) {
            dims[d] = (uint64_t)g_rand_int_range(r, 1, 6);
            total *= dims[d];
        }
        uint64_t a = (uint64_t)g_rand_int_range(r, 0, (gint32)total + 1);
        uint64_t b = (uint64_t)g_rand_int_range(r, (gint32)a, (gint32)total + 1);
        check_split(rank, dims, a, b);
    }
    g_rand_free(r);
}
END_TEST

START_TEST(test_split_limits)
{
    uint64_t dims[HPC_BOXES_MAX_RANK];
    hpc_box box[HPC_BOXES_MAX];
    for (unsigned d = 0; d < HPC_BOXES_MAX_RANK; d++)
        dims[d] = 2;
    dims[0] = 3;
    /* rank 32: one element short at both ends needs every box */
    uint64_t total = UINT64_C(3) << 31;
    ck_assert_uint_eq(hpc_boxes_split(32, dims, 1, total - 1, box), 2 * 32 - 1);
    ck_assert_uint_eq(hpc_boxes_split(32, dims, 0, total, box), 1);
    ck_assert_uint_eq(box[0].count[0], 3);
    ck_assert_uint_eq(hpc_boxes_split(0, dims, 0, 1, box), 0);
    ck_assert_uint_eq(hpc_boxes_split(33, dims, 0, 1, box), 0);
    ck_assert_uint_eq(hpc_boxes_split(2, dims, 3, 3, box), 0);
}
END_TEST

START_TEST(test_scatter_gather)
{
    GRand *r = g_rand_new_with_seed(7);
    for (int t = 0; t < 500; t++) {
        unsigned rank = (unsigned)g_rand_int_range(r, 1, 5);
        uint64_t dims[HPC_BOXES_MAX_RANK], total = 1;
        for (unsigned d = 0; d < rank; d++) {
            dims[d] = (uint64_t)g_rand_int_range(r, 1, 7);
            total *= dims[d];
        }
        /* the array holds its own linear indices (esize 4) */
        guint32 *whole = g_new(guint32, total);
        for (uint64_t i = 0; i < total; i++)
            whole[i] = (guint32)i;
        uint64_t e0 = (uint64_t)g_rand_int_range(r, 0, (gint32)total);
        uint64_t e1 = (uint64_t)g_rand_int_range(r, (gint32)e0 + 1, (gint32)total + 1);
        hpc_box box[HPC_BOXES_MAX];
        unsigned n = hpc_boxes_split(rank, dims, e0, e1, box);
        guint32 *range = g_new0(guint32, e1 - e0);
        for (unsigned i = 0; i < n; i++) {
            uint64_t m = hpc_box_elements(rank, box[i].count);
            guint32 *packed = g_new0(guint32, m);
            hpc_boxes_gather(rank, dims, 4, box[i].start, box[i].count, whole, packed);
            for (uint64_t k = 0; k < m; k++)
                ck_assert_uint_eq(packed[k], box_elem(rank, dims, &box[i], k));
            hpc_boxes_scatter(rank, dims, 4, box[i].start, box[i].count, packed, range, e0);
            g_free(packed);
        }
        for (uint64_t i = e0; i < e1; i++)
            ck_assert_uint_eq(range[i - e0], i);
        g_free(range);
        g_free(whole);
    }
    g_rand_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("boxes");
    TCase *t = tcase_create("boxes");
    tcase_add_test(t, test_split_every_range);
    tcase_add_test(t, test_split_random);
    tcase_add_test(t, test_split_limits);
    tcase_add_test(t, test_scatter_gather);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
