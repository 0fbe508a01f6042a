/* tests/unit/test_watch_ktime.c: the watcher's timestamps (watcher/ktime.c)
 * in exactly the two forms a real API server accepts (metav1.Time in whole
 * seconds, metav1.MicroTime with six fractional digits), and the durations
 * of the `rackfit.io/ready-timeout` annotation. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "ktime.h"

Test(watch_ktime, time_is_whole_seconds)
{
    char t[RF_KTIME_CAP];
    rf__ktime(1796150832.987654, t, sizeof t);
    cr_assert_str_eq(t, "2026-12-01T18:47:12Z");
    rf__ktime(0.5, t, sizeof t);
    cr_assert_str_eq(t, "1970-01-01T00:00:00Z");
    rf_test_no_leaks();
}

Test(watch_ktime, microtime_has_six_digits)
{
    char t[RF_KTIME_CAP];
    rf__microtime(0.5, t, sizeof t);
    cr_assert_str_eq(t, "1970-01-01T00:00:00.500000Z");
    rf__microtime(1796150832.0, t, sizeof t);
    cr_assert_str_eq(t, "2026-12-01T18:47:12.000000Z");
    /* never rounded up into the next second */
    rf__microtime(1796150832.9999996, t, sizeof t);
    cr_assert_eq(strncmp(t, "2026-12-01T18:47:12.", 20), 0, "%s", t);
    cr_assert_eq(strlen(t), 27);
    rf__microtime(-1, t, sizeof t); /* nonsense clamps to the epoch, never a malformed string */
    cr_assert_str_eq(t, "1970-01-01T00:00:00.000000Z");
    rf_test_no_leaks();
}

Test(watch_ktime, durations)
{
    double s = -1;
    cr_assert(rf__duration_parse("90s", &s));
    cr_assert_float_eq(s, 90, 1e-9);
    cr_assert(rf__duration_parse("5m", &s));
    cr_assert_float_eq(s, 300, 1e-9);
    cr_assert(rf__duration_parse("1h30m", &s));
    cr_assert_float_eq(s, 5400, 1e-9);
    cr_assert(rf__duration_parse("2.5m", &s));
    cr_assert_float_eq(s, 150, 1e-9);
    cr_assert(rf__duration_parse("1500ms", &s));
    cr_assert_float_eq(s, 1.5, 1e-9);
    cr_assert(rf__duration_parse("45", &s));
    cr_assert_float_eq(s, 45, 1e-9);
    const char *bad[] = {"", "m", "5x", "-5s", "5 m", "1e3", "0x10", "31d", "800h", "5m-", NULL};
    for (int i = 0; bad[i]; i++)
        cr_assert(!rf__duration_parse(bad[i], &s), "`%s` parsed", bad[i]);
    rf_test_no_leaks();
}
