/* service/budget.h: rackfitd's one budget of solver threads for the whole
 * server. A solve takes its threads before it starts (at least one, at most
 * what it asks and what is free) and gives them back after, so OpenMP teams
 * never add up to more threads than the budget. Solver-lane solves (ilp,
 * auto) together hold at most budget - 1 when the budget is 2 or more, so a
 * greedy solve always finds a thread.
 *
 * Thread-safe: a mutex and a condition variable; rf__budget_take blocks
 * until a thread is free. */
#ifndef RACKFIT_SERVICE_BUDGET_H
#define RACKFIT_SERVICE_BUDGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int32_t total;       /* the budget, >= 1 */
    int32_t free;        /* threads not held */
    int32_t solver_used; /* held by solver-lane solves */
} rf__budget_t;

/* `threads` >= 1. -1 when the mutex or condition cannot be made. */
int rf__budget_init(rf__budget_t *b, int32_t threads);
void rf__budget_fini(rf__budget_t *b);
/* Take at least one thread, at most `want` (< 1 counts as 1); blocks. */
int32_t rf__budget_take(rf__budget_t *b, int32_t want, bool solver_lane);
void rf__budget_give(rf__budget_t *b, int32_t n, bool solver_lane);
/* Threads held right now (for the metrics). */
int32_t rf__budget_in_use(rf__budget_t *b);

#endif
