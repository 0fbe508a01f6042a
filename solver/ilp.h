/* solver/ilp.h: improving an answer with the integer program (solver/ilp.c),
 * for the strategies "ilp" and "auto" (solver/ilp_strategy.c). */
#ifndef RACKFIT_SOLVER_ILP_H
#define RACKFIT_SOLVER_ILP_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/answer.h"
#include "rackfit/problem.h"
#include "rackfit/solve.h"
#include "rackfit/status.h"

typedef struct {
    double deadline_ms;          /* rf_now_ms() by which the solve must end */
    double mip_gap;              /* relative gap per stage */
    int64_t node_budget;         /* branch-and-bound nodes per stage, 0: none */
    int32_t mem_limit_mb;        /* GLPK memory limit, 0: none */
    bool aggregate;              /* merge identical nodes into units */
    bool tight;                  /* one linking row per (x, domain): tighter, larger */
    const bool *keep;            /* [n_gangs] gangs to keep as in the incumbent, or NULL */
    int32_t isolate;             /* >= 0: bound this gang's least penalty alone on the cluster, admitted
                                  * (the others absent; no answer is built); -1: normal. Always set. */
    const uint8_t *node_allowed; /* [n_nodes] nodes new pods of free gangs may use, or NULL: all.
                                  * Must be a union of deepest-z-level domains (racks). */
    const volatile int *stop;    /* another thread sets it to end this search early, or NULL */
    rf_mip_backend mip;          /* the MIP backend (0: GLPK) */
    int32_t mip_threads;         /* threads the backend may use itself (CBC; <= 1: one) */
} rf__ilp_opts_t;

typedef struct {
    bool improved;               /* *out holds a better answer than the incumbent */
    bool solved;                 /* the program ran (else: too large, no stages, ...) */
    bool values_proven;          /* every value stage proven optimal for the program: no answer has more
                                  * (the program over units is a relaxation), decoded or not */
    bool penalty_proven;         /* the penalty stage too, and the decoded answer reaches it */
    bool values_match_incumbent; /* the program's values are the incumbent's (so its bounds hold for it) */
    double penalty_bound;        /* valid lower bound on the penalty of the free gangs and of the running
                                  * gangs the run did not fix preempted (kept ones' constants included;
                                  * isolated: the gang's own), for answers with the program's values (-1: none) */
    int32_t n_cols, n_rows;
    int64_t nnz, nodes;
    int32_t n_units;
    double build_ms, solve_ms, decode_ms;
    bool glpk_failed;   /* GLPK failed inside (error hook): incumbent kept */
    bool decode_failed; /* units could not be packed onto nodes */
} rf__ilp_stats_t;

/* Does `allowed` ([n_nodes], as rf__ilp_opts_t.node_allowed) hold every pod
 * of the running gang? Then a run restricted to it decides the gang. */
bool rf__ilp_running_inside(const rf_running_t *run, const uint8_t *allowed);

/* Improve `incumbent` (finished, feasible). On success with a better answer,
 * *out is a new finished answer (caller destroys it) and stats->improved is
 * set; otherwise *out is NULL. Errors other than ENOMEM are reported in
 * stats (the incumbent stands), so the caller can always fall back. */
rf_status rf__ilp_improve(const rf_problem_t *pb, const rf_answer_t *incumbent, const rf__ilp_opts_t *opts,
                          rf_answer_t **out, rf__ilp_stats_t *stats, rf_error_t *err);

#endif
