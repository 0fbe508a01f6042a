/* solver/greedy.h: the greedy pass, for the strategies built on it (the
 * "greedy" strategy itself, and auto and ilp, which start from it). It runs
 * on the solve's context (solver/context.h): the tree and the eligibility
 * classes are the context's, never rebuilt here. */
#ifndef RACKFIT_SOLVER_GREEDY_H
#define RACKFIT_SOLVER_GREEDY_H

#include <stdbool.h>

#include "rackfit/answer.h"
#include "rackfit/problem.h"
#include "rackfit/solve.h"

typedef enum {
    RF__ORDER_VALUE = 0, /* within a priority, larger gangs first */
    RF__ORDER_QUEUE,     /* within a priority, problem order */
    RF__ORDER_KUEUE      /* problem order and Kueue's own choices (first fit at the lowest level, its
                          * descent): an answer no worse than Kueue's placer, for ilp and auto to start from */
} rf__greedy_order;

/* One greedy pass over the context's batch in the given order (`ordered`
 * admission always uses problem order). Fills and finishes `ans` (fresh from
 * rf_answer_new for the context's problem or the caller's); sets summary.penalty_bound (a
 * valid lower bound on the penalty of the admitted gangs), optimal and
 * mode_used = "greedy". Each gang's own penalty lower bound (its pods need at
 * least ceil(pods / most that fit) domains at each level, on the capacity
 * before anything is placed; 0 where it cannot say) goes into
 * gang_lb[n_gangs] when gang_lb is not NULL. With `polish`, a second pass
 * re-places each admitted gang alone (the others where they are, the same
 * pods) and keeps the lower penalty: the value never changes. On batches
 * of up to 2^21 node x pod-set cells, a pass in which two or more gangs were
 * admitted through the preemption search is run again with Kueue's victim rule
 * (solver/preempt.h), and the better of the two (the first on a tie) goes
 * on with the keep-back step (each victim, the most valuable first, kept
 * again when its preemptors placed again make a better answer; at most 16
 * tries: a count, not a clock) before the polish. */
rf_status rf__greedy_run(const rf_solve_ctx_t *ctx, rf__greedy_order order, bool polish, rf_answer_t *ans,
                         double *gang_lb, rf_error_t *err);
/* Fill: the gangs `ans` rejects, placed one at a time in value order
 * (preempting as the greedy does) around the pods `ans` places, which stay
 * where they are; then, unless one preempted, each elastic gang admitted
 * before, short of its count, in value order, re-placed alone with more pods where they fit (never fewer in
 * any pod set). Then `ans` is finished, its
 * penalty_bound 0 and not optimal (the caller bounds it). *added says whether any pod got in
 * (the rejected gangs left get the greedy's reasons). Does nothing with
 * ordered admission or when `ans` preempts (its freed room is not the
 * greedy's to reckon). Stops at `deadline` (rf_now_ms()) between gangs and
 * steps, keeping what is done. The caller checks the result. */
rf_status rf__greedy_fill(const rf_solve_ctx_t *ctx, rf_answer_t *ans, double deadline, bool *added, rf_error_t *err);
/* The order of the greedy strategy's first pass: value order, or on batches
 * above S_BOTH_CELLS nodes x pod sets Kueue's order, the only pass the
 * strategy runs there. ilp and auto start from a polished pass in this
 * order, so that they are never behind the greedy strategy, even when the
 * time allows no second pass. */
rf__greedy_order rf__greedy_first_order(const rf_solve_ctx_t *ctx);
/* rf__greedy_run without polish or bounds, on a context of its own (for
 * callers outside a solve, such as tests). */
rf_status rf__greedy_solve(const rf_problem_t *pb, rf__greedy_order order, rf_answer_t *ans, rf_error_t *err);

#endif
