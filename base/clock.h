/* base/clock.h: the clocks every room reads. Monotonic time for deadlines and
 * durations (never goes back, unaffected by NTP steps); wall time only for
 * what is shown to people or written into Kubernetes objects. */
#ifndef RACKFIT_BASE_CLOCK_H
#define RACKFIT_BASE_CLOCK_H

/* Monotonic milliseconds (CLOCK_MONOTONIC). Deadlines and solve_ms. */
double rf_now_ms(void);
/* Monotonic seconds (CLOCK_MONOTONIC). */
double rf__now(void);
/* Wall-clock seconds since the epoch (CLOCK_REALTIME). */
double rf__wall(void);

#endif
