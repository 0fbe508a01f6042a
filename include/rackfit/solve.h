/* rackfit/solve.h: solving a problem, and the placement strategies.
 *
 * Every way of placing gangs (the greedy fast path, the ILP, the baselines in
 * bench/) is an rf_strategy_t: a name and one solve callback with one
 * signature, so that `auto`, the service and the benchmarks pick and compare
 * them on equal terms. */
#ifndef RACKFIT_SOLVE_H
#define RACKFIT_SOLVE_H

#include <stdint.h>

#include "rackfit/answer.h"
#include "rackfit/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-call settings that override the problem's options when set. */
typedef struct {
    int64_t time_limit_ms; /* < 0: the problem's */
    int32_t threads;       /* < 0: the problem's; 0: all cores */
    int32_t mode;          /* < 0: the problem's; else an rf_mode */
    double start_ms;       /* monotonic ms when the problem was received (0: now) */
} rf_solve_opts_t;

void rf_solve_opts_default(rf_solve_opts_t *opts);

typedef struct rf_strategy {
    const char *name;
    const char *description;
    /* Fill `answer` (fresh from rf_answer_new) with a feasible answer and
     * finish it (rf_answer_finish). */
    rf_status (*solve)(const rf_problem_t *problem, const rf_solve_opts_t *opts, rf_answer_t *answer, rf_error_t *err);
} rf_strategy_t;

/* The built-in strategies ("greedy", later "ilp"), NULL-terminated. */
const rf_strategy_t *const *rf_strategies(void);
/* A built-in strategy by name, or NULL. */
const rf_strategy_t *rf_strategy_find(const char *name);

/* Solve by the problem's mode (or opts->mode) and return a new answer with
 * summary.mode_used and summary.solve_ms set. */
rf_status rf_solve(const rf_problem_t *problem, const rf_solve_opts_t *opts, rf_answer_t **out, rf_error_t *err);

/* Monotonic clock in milliseconds. */
double rf_now_ms(void);

#ifdef __cplusplus
}
#endif
#endif
