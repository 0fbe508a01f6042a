/* tests/support/leak.h: fail a Criterion test that leaked memory.
 *
 * Criterion under AddressSanitizer prints a leak report and still passes, so
 * each test that allocates ends with rf_test_no_leaks(): under ASan (gcc's
 * __SANITIZE_ADDRESS__ or clang's __has_feature) it runs LeakSanitizer now and
 * fails the test if anything unreachable is left; without ASan it does
 * nothing. Header-only: include it after <criterion/criterion.h>. */
#ifndef RF_TEST_LEAK_H
#define RF_TEST_LEAK_H

#include <criterion/criterion.h>

#if defined(__SANITIZE_ADDRESS__)
#define RF_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RF_TEST_ASAN 1
#endif
#endif

#if defined(RF_TEST_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

static inline void rf_test_no_leaks(void)
{
#if defined(RF_TEST_ASAN)
    cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leaked (LeakSanitizer's report is above)");
#endif
}

#endif
