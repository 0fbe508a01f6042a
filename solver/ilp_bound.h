/* solver/ilp_bound.h: the penalty bound that sees contention (issue 10),
 * solver/ilp_bound.c: the LP relaxation of the whole batch with its values
 * fixed at an answer's. Internal to solver/. */
#ifndef RACKFIT_SOLVER_ILP_BOUND_H
#define RACKFIT_SOLVER_ILP_BOUND_H

#include <stdbool.h>
#include <stdint.h>

#include "ilp_search.h"
#include "rackfit/answer.h"
#include "rackfit/problem.h"

/* Does ans preempt a running gang? The two bounds of the batch (the LP's and
 * the Lagrangian's) speak only of answers that preempt nothing. */
static inline bool rf__ilp_preempts(const rf_answer_t *ans)
{
    if (ans->summary.preempted > 0)
        return true;
    for (int32_t i = 0; i < ans->n_running; i++)
        if (ans->running[i].preempted)
            return true;
    return false;
}

/* What the LP bound did (for tests and the bench). */
typedef struct {
    bool solved;     /* the LP was built and solved to optimality */
    int32_t n_units; /* node classes (identical nodes merged) */
    int32_t n_cols;  /* LP columns */
    int32_t n_rows;  /* LP rows */
    double lp;       /* the LP's optimum (the free gangs' penalty), before rounding */
    double build_ms; /* building the LP */
    double solve_ms; /* GLPK's simplex */
} rf__ilp_lp_stats_t;

/* A lower bound on the penalty of every feasible answer whose value at every
 * priority (units, then pods, of the gangs and the kept running gangs) is
 * `ans`'s, and which preempts nothing when `ans` preempts nothing: the LP
 * relaxation of the batch over classes of identical nodes (docs/ilp.md,
 * "The contention bound"), solved by GLPK's simplex through solver/mip.h
 * before `deadline_ms` (rf_now_ms() scale). Kept running gangs' penalty is
 * included. `coarse`: units merge the nodes of a leaf domain with the same
 * eligibility whatever their free capacity (a smaller, weaker LP). Returns -1 when no bound was proven (no time, too
 * large, `ans` preempts, out of memory). `st` may be NULL. */
double rf__ilp_lp_bound(const rf_problem_t *pb, const rf_answer_t *ans, bool coarse, double deadline_ms,
                        rf__ilp_lp_stats_t *st);

/* What the Lagrangian bound did (for tests and the bench). */
typedef struct {
    int32_t n_units;    /* node classes */
    int32_t n_rows;     /* multipliers: capacity rows that can bind, and two value rows per priority */
    int32_t iterations; /* subgradient steps (each a pass over every gang) */
    double lagrangian;  /* the best L(lambda, mu) (the free gangs' penalty), before rounding */
    double setup_ms, ms;
} rf__ilp_lagr_stats_t;

/* The same kind of bound as rf__ilp_lp_bound (every feasible answer with
 * ans's values that preempts nothing), from the Lagrangian of the capacity
 * and value rows, each gang's part solved exactly by a dynamic program over
 * the tree (solver/ilp_lagrange.c; docs/ilp.md, "The Lagrangian bound"),
 * improved by subgradient steps on `threads` threads until deadline_ms, or
 * until it meets ans's penalty. Kept running gangs' penalty included.
 * Returns -1 when none (ans preempts, no time, out of memory). */
double rf__ilp_lagrange_bound(const rf_problem_t *pb, const rf_answer_t *ans, double deadline_ms, int32_t threads,
                              rf__ilp_lagr_stats_t *st);

/* In the strategy: the bound depends on the answer's values only, so it is
 * computed early (for the start's values, before the search, with
 * RF__ILP_LP_SHARE of the time left) and reused after the search when the
 * values did not change; then the finer LP with half the time left. */
#define RF__ILP_LP_MAX_VALUES 64
#define RF__ILP_LP_SHARE      0.5
/* Clusters above this many nodes get the coarse units first. */
#define RF__ILP_LP_FINE_NODES 256

typedef struct {
    double bound; /* -1: none */
    bool coarse;  /* it came from the coarse units */
    bool failed;  /* its simplex ran out of time: no second LP (the per-gang bounds get the time) */
    int32_t n_value;
    rf_value_t value[RF__ILP_LP_MAX_VALUES]; /* the values it holds for */
} rf__ilp_lp_memo_t;

void rf__ilp_lp_early(const rf_problem_t *pb, const rf_answer_t *ans, const rf__ilp_clock_t *ck,
                      rf__ilp_lp_memo_t *memo);
/* The contention bound for `ans` (-1: none). */
double rf__ilp_lp_late(const rf__ilp_lp_memo_t *memo, const rf_problem_t *pb, const rf_answer_t *ans,
                       const rf__ilp_clock_t *ck);

/* Does the program model every decision of pb? Not a pod set whose bound
 * pods hold ranks inside slices, nor a gang with bound pods on a node that
 * lacks a level label: those keep the incumbent's decision (solver/ilp.c,
 * whose batch program then proves nothing either). A proof of the values
 * would cover only answers that keep those decisions, and `optimal` cannot
 * be claimed (bench/RESULTS.md, CBC section: seed 89). Preemption is
 * modelled (docs/ilp.md rows 8 and 9). */
bool rf__ilp_models_all(const rf_problem_t *pb);

#endif
