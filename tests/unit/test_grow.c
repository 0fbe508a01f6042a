/* tests/unit/test_grow.c: growing an array by doubling (base/grow.c,
 * rf__grow): the first capacity, doubling until `need` fits, the array kept
 * as it is when it has room, contents kept across growth, and refusals
 * (need above INT32_MAX, a size that overflows, zero sizes) that leave the
 * array and its capacity untouched. (The INT32_MAX ceiling itself would
 * take a 2 GiB allocation to show.) */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "../support/leak.h"
#include "grow.h"

Test(grow, first_capacity_then_doubling_and_contents_kept)
{
    int32_t cap = 0;
    int *a = rf__grow(NULL, &cap, 1, 4, sizeof *a);
    cr_assert_not_null(a);
    cr_assert_eq(cap, 4);
    for (int i = 0; i < 4; i++)
        a[i] = i * 7;
    int *same = rf__grow(a, &cap, 4, 4, sizeof *a);
    cr_assert_eq(same, a, "room enough: the same array");
    cr_assert_eq(cap, 4);
    a = rf__grow(a, &cap, 5, 4, sizeof *a);
    cr_assert_not_null(a);
    cr_assert_eq(cap, 8);
    a = rf__grow(a, &cap, 33, 4, sizeof *a); /* 8 -> 16 -> 32 -> 64 */
    cr_assert_eq(cap, 64);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(a[i], i * 7);
    a[63] = 1; /* the whole capacity is there (ASan would say otherwise) */
    free(a);
    rf_test_no_leaks();
}

Test(grow, a_first_capacity_below_need_doubles_too)
{
    int32_t cap = 0;
    char *a = rf__grow(NULL, &cap, 1000, 256, 1);
    cr_assert_not_null(a);
    cr_assert_eq(cap, 1024);
    free(a);
    rf_test_no_leaks();
}

Test(grow, limits_leave_the_array_untouched)
{
    int32_t cap = 0;
    int64_t *a = rf__grow(NULL, &cap, 2, 2, sizeof *a);
    cr_assert_not_null(a);
    a[0] = 42;
    cr_assert_null(rf__grow(a, &cap, (int64_t)INT32_MAX + 1, 2, sizeof *a));
    cr_assert_eq(cap, 2);
    cr_assert_null(rf__grow(a, &cap, 3, 2, SIZE_MAX / 2)); /* items too large to count */
    cr_assert_eq(cap, 2);
    cr_assert_eq(a[0], 42, "still the caller's");
    free(a);

    /* nothing of zero bytes, no first capacity below 1 */
    cap = 0;
    cr_assert_null(rf__grow(NULL, &cap, 1, 4, 0));
    cr_assert_null(rf__grow(NULL, &cap, 1, 0, sizeof *a));
    cr_assert_eq(cap, 0);
    rf_test_no_leaks();
}
