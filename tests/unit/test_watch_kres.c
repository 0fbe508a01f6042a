/* tests/unit/test_watch_kres.c: resource lists (watcher/kres.c): sums,
 * maxima, absent names, unique names, and the list emptied by fini. */
#include <criterion/criterion.h>

#include "../support/leak.h"
#include "kres.h"

Test(watch_kres, add_max_get)
{
    rf__res_t r = {0};
    cr_assert_eq(rf__res_get(&r, "cpu"), 0);
    cr_assert_eq(rf__res_add(&r, "cpu", 500), RF_OK);
    cr_assert_eq(rf__res_add(&r, "cpu", 250), RF_OK);
    cr_assert_eq(rf__res_add(&r, "nvidia.com/gpu", 2), RF_OK);
    cr_assert_eq(rf__res_max(&r, "nvidia.com/gpu", 1), RF_OK);
    cr_assert_eq(rf__res_max(&r, "memory", 1024), RF_OK);
    cr_assert_eq(r.n, 3, "names stay unique");
    cr_assert_eq(rf__res_get(&r, "cpu"), 750);
    cr_assert_eq(rf__res_get(&r, "nvidia.com/gpu"), 2);
    cr_assert_eq(rf__res_get(&r, "memory"), 1024);
    cr_assert_eq(rf__res_max(&r, "cpu", 1000), RF_OK);
    cr_assert_eq(rf__res_get(&r, "cpu"), 1000);
    rf__res_fini(&r);
    cr_assert_eq(r.n, 0);
    cr_assert_null(r.names);
    rf_test_no_leaks();
}
