/* rackfit/solve.h: solving a problem, and the placement strategies.
 *
 * Every way of placing gangs (the library's greedy, ilp and auto; the
 * Kueue-style and kube-scheduler-style baselines of bench/) is an
 * rf_strategy_t: a name, a description and one solve callback. A solve builds
 * one context (rf_solve_ctx_t: the problem, the resolved options, the clock
 * and deadline, the thread count, and inside the library the topology tree
 * and node eligibility, each built once) and hands it to the strategy, so
 * every strategy runs through the same call (rf_solve_with) on equal terms.
 * rf_solve picks the library's strategy by mode from rf_strategies(). */
#ifndef RACKFIT_SOLVE_H
#define RACKFIT_SOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/answer.h"
#include "rackfit/cluster_cache.h"
#include "rackfit/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The MIP solvers behind the ilp strategy's integer programs (docs/ilp.md,
 * "Backends"): GLPK, and CBC when rackfit is built with it (RF_CBC, on
 * wherever Debian's coinor-libcbc-dev is installed). RF_MIP_AUTO, the
 * default: GLPK, and CBC besides GLPK on the exact program of small batches
 * when there are two threads; RF_MIP_GLPK: GLPK only; RF_MIP_CBC: CBC for
 * every integer program. */
typedef enum { RF_MIP_AUTO = 0, RF_MIP_GLPK = 1, RF_MIP_CBC = 2 } rf_mip_backend;
/* "auto", "glpk" or "cbc". */
const char *rf_mip_backend_name(rf_mip_backend b);
/* 0 and *out set for "auto", "glpk" or "cbc"; -1 for any other name. */
int rf_mip_backend_parse(const char *name, rf_mip_backend *out);
/* Is the backend built into this rackfit? */
bool rf_mip_backend_available(rf_mip_backend b);

/* Per-call settings that override the problem's options when set. */
typedef struct {
    int64_t time_limit_ms; /* < 0: the problem's */
    int32_t threads;       /* < 0: the problem's; 0: all usable cores */
    int32_t mode;          /* < 0: the problem's; else an rf_mode (rf_solve only) */
    int32_t mip;           /* an rf_mip_backend: RF_MIP_AUTO (0) by default */
    double start_ms;       /* monotonic ms when the problem was received (<= 0: now) */
    void *user;            /* handed to the strategy as rf_solve_ctx_user (NULL: none) */
    /* A cache for the problem's cluster (rackfit/cluster_cache.h), or NULL.
     * When it matches the problem the solve syncs it to the problem's `used`
     * and takes the tree, eligibility and capacity roll-ups from it (adding
     * the classes and shapes it meets); otherwise the solve builds its own
     * tables (the cache stays usable, but may have taken the `used` of the
     * nodes before the first that differs: rf_cluster_cache_sync). The
     * answer is the same either way. The solve uses it alone while it runs. */
    rf_cluster_cache_t *cache;
} rf_solve_opts_t;

/* Every field "the problem's" / now / NULL (no cache). */
void rf_solve_opts_default(rf_solve_opts_t *opts);

/* One solve's context, built by rf_solve_with before the strategy runs and
 * destroyed after it; a strategy borrows it for the call only. */
typedef struct rf_solve_ctx rf_solve_ctx_t;

/* The problem being solved (borrowed for the solve). */
const rf_problem_t *rf_solve_ctx_problem(const rf_solve_ctx_t *ctx);
/* The options resolved: time_limit_ms and threads as the solve uses them
 * (threads after rf_machine_threads), start_ms set, mode the strategy's. */
const rf_solve_opts_t *rf_solve_ctx_opts(const rf_solve_ctx_t *ctx);
/* start_ms + time_limit_ms: when the answer is due (monotonic ms). */
double rf_solve_ctx_deadline_ms(const rf_solve_ctx_t *ctx);
/* Solver threads this solve may use (>= 1). */
int32_t rf_solve_ctx_threads(const rf_solve_ctx_t *ctx);
/* opts->user of the call. */
void *rf_solve_ctx_user(const rf_solve_ctx_t *ctx);

typedef struct rf_strategy {
    const char *name;
    const char *description;
    /* Fill `answer` (fresh from rf_answer_new for the context's problem) with
     * a feasible answer and finish it (rf_answer_finish). */
    rf_status (*solve)(const rf_solve_ctx_t *ctx, rf_answer_t *answer, rf_error_t *err);
} rf_strategy_t;

/* The library's strategies, indexed by rf_mode ("auto", "greedy", "ilp"),
 * NULL-terminated. */
const rf_strategy_t *const *rf_strategies(void);
/* A library strategy by name, or NULL. */
const rf_strategy_t *rf_strategy_find(const char *name);

/* Solve with `strategy`: build the context, run it, and return a new answer
 * with summary.solve_ms set (the whole solve: context, search and the
 * finished answer). The strategy sets summary.mode_used. */
rf_status rf_solve_with(const rf_strategy_t *strategy, const rf_problem_t *problem, const rf_solve_opts_t *opts,
                        rf_answer_t **out, rf_error_t *err);
/* rf_solve_with the library strategy of the problem's mode (or opts->mode). */
rf_status rf_solve(const rf_problem_t *problem, const rf_solve_opts_t *opts, rf_answer_t **out, rf_error_t *err);

/* Monotonic clock in milliseconds (base/clock.c). */
double rf_now_ms(void);

#ifdef __cplusplus
}
#endif
#endif
