/* solver/ilp_search.h: the pieces the strategies "ilp" and "auto" share
 * (solver/ilp_strategy.c, solver/auto.c): one solve's clock, the searches
 * over the batch (solver/ilp_search.c) and the penalty bounds
 * (solver/ilp_bound.c). Internal to solver/. */
#ifndef RACKFIT_SOLVER_ILP_SEARCH_H
#define RACKFIT_SOLVER_ILP_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "ilp.h"
#include "rackfit/answer.h"
#include "rackfit/problem.h"
#include "rackfit/solve.h"

/* The shortest slice of GLPK time worth starting a program for. */
#define RF__ILP_MIN_SLICE_MS 5.0

/* One solve's clock: the deadline for work, and what steps cost so far. */
typedef struct {
    double deadline;    /* start + limit - margin (3 % of the limit, at least 2 ms) */
    double greedy_ms;   /* one greedy pass */
    double step_ms;     /* the most a program's build, decode and check took */
    rf_mip_backend mip; /* the solve's MIP backend */
} rf__ilp_clock_t;

void rf__ilp_clock_init(rf__ilp_clock_t *ck, const rf_solve_opts_t *opts);
double rf__ilp_left(const rf__ilp_clock_t *ck);
/* Is there time for a step expected to take `cost` ms, plus a useful slice? */
bool rf__ilp_time_for(const rf__ilp_clock_t *ck, double cost);
void rf__ilp_note_step(rf__ilp_clock_t *ck, const rf__ilp_stats_t *st);

/* One program for the whole batch, improving `ans` in place: two runs at
 * once (threads > 1). Small batches: the exact node-level program and the
 * program over units; larger: two programs over units with the two linking
 * formulations, from `ans` and from `other`. *bound gets the penalty bound
 * proven for `ans`'s values, *values_proven whether those values are proven
 * the most there is. */
rf_status rf__ilp_whole(const rf_problem_t *pb, rf__ilp_clock_t *ck, rf_answer_t *ans, const rf_answer_t *other,
                        int32_t threads, bool small, bool tight, double *bound, bool *values_proven, rf_error_t *err);
/* The neighbourhood search: regions of the cluster re-placed one program
 * at a time (`threads` at once) until `end`, improving `best` in place. */
rf_status rf__ilp_lns(const rf_problem_t *pb, rf__ilp_clock_t *ck, rf_answer_t *best, double end, int32_t threads,
                      rf_error_t *err);
/* A lower bound on the penalty of the gangs `ans` admits, valid for any
 * answer admitting the same gangs: each gang's own least penalty alone on
 * the cluster (a program per gang while time lasts), else gang_lb[g]. */
double rf__ilp_gang_bounds(const rf_problem_t *pb, rf__ilp_clock_t *ck, const rf_answer_t *ans, const double *gang_lb,
                           int32_t threads);

/* The ilp strategy's body into `ans`. `first` (or NULL) is a first greedy
 * pass already made (value order, polished), with its gang bounds
 * `first_lb` and its cost `first_ms`: the search starts from it instead of
 * running it again (auto). */
rf_status rf__ilp_run(const rf_solve_ctx_t *ctx, const rf_answer_t *first, const double *first_lb, double first_ms,
                      rf_answer_t *ans, rf_error_t *err);

#endif
