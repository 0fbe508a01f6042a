/* solver/context.h: one solve's context (struct rf_solve_ctx of
 * include/rackfit/solve.h), built once by rf_solve_with and handed to the
 * strategy and through it to every kernel (greedy, integer program).
 *
 * Invariants, for the whole solve (read-only after rf__ctx_init):
 * - `problem` is the caller's problem seen through `view`: a shallow copy
 *   whose tree_hint is `tree`, so a kernel that asks for the problem's tree
 *   (rf__tree_of) borrows this one and never builds another;
 * - `cache` is opts->cache when it matched the problem, synced to its `used`
 *   (include/rackfit/cluster_cache.h), else NULL; the solve holds it alone;
 * - `tree` is the cache's (borrowed), or the caller's tree_hint (borrowed),
 *   or built here (tree_owned);
 * - `elig` holds the eligibility classes of the batch on `tree` (the masks
 *   of classes the cache keeps borrowed from it);
 * - cshape[k], with a cache, is the cache's capacity roll-up of flattened
 *   pod set k's shape (its class and requests), or NULL when the cache has
 *   no room for it; NULL without a cache;
 * - opts are resolved: time_limit_ms >= 0, threads >= 1, start_ms > 0;
 *   deadline_ms == start_ms + time_limit_ms. */
#ifndef RACKFIT_SOLVER_CONTEXT_H
#define RACKFIT_SOLVER_CONTEXT_H

#include <stdbool.h>

#include "capacity.h"
#include "eligible.h"
#include "rackfit/solve.h"
#include "tree.h"

struct rf_solve_ctx {
    const rf_problem_t *problem; /* == &view */
    const rf_problem_t *caller;  /* the problem as the caller gave it */
    rf_problem_t view;
    rf__tree_t tree;
    bool tree_owned;
    rf__elig_t elig;
    rf_cluster_cache_t *cache;
    const rf__shape_t **cshape; /* [flattened pod sets], with a cache */
    rf_solve_opts_t opts;
    double deadline_ms;
};

/* Build the context of a solve of `pb` with `opts` (NULL: defaults). On
 * error nothing is left to free. */
rf_status rf__ctx_init(rf_solve_ctx_t *ctx, const rf_problem_t *pb, const rf_solve_opts_t *opts, rf_error_t *err);
/* Free what the context owns (NULL-safe on a zeroed context). */
void rf__ctx_fini(rf_solve_ctx_t *ctx);

#endif
