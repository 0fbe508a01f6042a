/* base/clock.c: see clock.h. */
#include "clock.h"

#include <time.h>

static double s_read(clockid_t id, double scale)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * scale + (double)ts.tv_nsec * (scale / 1e9);
}

double rf_now_ms(void)
{
    return s_read(CLOCK_MONOTONIC, 1e3);
}

double rf__now(void)
{
    return s_read(CLOCK_MONOTONIC, 1.0);
}

double rf__wall(void)
{
    return s_read(CLOCK_REALTIME, 1.0);
}
