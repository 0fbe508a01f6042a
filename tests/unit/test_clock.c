/* tests/unit/test_clock.c: the clocks (base/clock.c): monotonic time never
 * goes back, rf_now_ms and rf__now agree on the unit (ms vs s), a 50 ms
 * sleep is measured as at least 50 ms, and rf__wall matches time(). */
#include <criterion/criterion.h>
#include <time.h>

#include "../support/leak.h"
#include "clock.h"

Test(clock, monotonic_never_goes_back)
{
    double prev = rf_now_ms();
    for (int i = 0; i < 100000; i++) {
        double t = rf_now_ms();
        cr_assert(t >= prev, "went back: %f < %f", t, prev);
        prev = t;
    }
    rf_test_no_leaks();
}

Test(clock, units_and_sleep)
{
    double ms0 = rf_now_ms(), s0 = rf__now();
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double ms1 = rf_now_ms(), s1 = rf__now();
    cr_assert(ms1 - ms0 >= 49.9, "slept %f ms", ms1 - ms0);
    cr_assert(ms1 - ms0 < 5000, "slept %f ms", ms1 - ms0);
    /* the same clock in seconds: the two differences agree within 20 ms (a preemption between the reads) */
    cr_assert((s1 - s0) * 1000.0 - (ms1 - ms0) < 20.0 && (ms1 - ms0) - (s1 - s0) * 1000.0 < 20.0);
    cr_assert(s0 * 1000.0 - ms0 < 20.0 && ms0 - s0 * 1000.0 < 20.0, "rf__now %f vs rf_now_ms %f", s0, ms0);
    rf_test_no_leaks();
}

Test(clock, wall_is_epoch_seconds)
{
    double w = rf__wall();
    time_t t = time(NULL);
    cr_assert(w - (double)t < 2.0 && (double)t - w < 2.0, "wall %f vs time %ld", w, (long)t);
    rf_test_no_leaks();
}
