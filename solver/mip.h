/* solver/mip.h: a mixed-integer program in our own terms, and its solve.
 *
 * The ILP strategy (solver/ilp.c) builds an rf__mip_t: columns with bounds,
 * kinds and objective coefficients, rows with bounds, and coefficients as
 * triplets, all 0-based (solver/mip.c). The options name the backend that
 * solves it: solver/mip_glpk.c, the only file that includes <glpk.h> (the
 * default), or solver/mip_cbc.c, the only one that includes CBC's C
 * interface (when rackfit is built with it). Each converts its solver's
 * statuses and failures back into ours: a GLPK error inside the solve (it
 * would abort the process) becomes RF_ESOLVER.
 *
 * Stages: a lexicographic objective is solved one objective at a time; after
 * stage k, a row `obj_k . x >= best_k - tol` (maximising) keeps its value
 * for the later stages. Every stage starts from the best solution known (the
 * caller's incumbent first), so a stage never ends worse than it began. */
#ifndef RACKFIT_SOLVER_MIP_H
#define RACKFIT_SOLVER_MIP_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/solve.h"
#include "rackfit/status.h"

#define RF_MIP_INF 1e300
/* The most stages a lexicographic objective may have. */
#define RF_MIP_MAX_STAGES 24

typedef struct {
    int32_t n_cols, cap_cols;
    double *lb, *ub;
    uint8_t *is_int;
    uint8_t *prio; /* branching priority of an integer column: fractional columns of the highest
                    * priority are branched upon first (0, the default: GLPK's own choice) */
    int32_t n_rows, cap_rows;
    double *row_lo, *row_hi; /* -RF_MIP_INF / RF_MIP_INF for no bound */
    int64_t nnz, cap_nnz;
    int32_t *ti, *tj; /* row, column */
    double *tv;
    bool failed; /* an allocation failed while building */
} rf__mip_t;

void rf__mip_init(rf__mip_t *mip);
void rf__mip_fini(rf__mip_t *mip);
/* Add a column; returns its index, or -1 (and mip->failed) on ENOMEM. */
int32_t rf__mip_col(rf__mip_t *mip, double lb, double ub, bool is_int);
/* Branch on column `col` (integer) before columns of a lower priority. */
void rf__mip_prio(rf__mip_t *mip, int32_t col, uint8_t prio);
int32_t rf__mip_row(rf__mip_t *mip, double lo, double hi);
void rf__mip_coef(rf__mip_t *mip, int32_t row, int32_t col, double val);

/* One stage of a lexicographic objective: a sparse linear form. */
typedef struct {
    bool maximize;
    int32_t n;
    const int32_t *cols;
    const double *vals;
    double keep_tol; /* slack kept when the stage's value is fixed for later stages */
} rf__mip_stage_t;

typedef struct {
    double time_limit_ms;     /* for all stages together; each stage gets what is left */
    double mip_gap;           /* relative gap at which a stage stops */
    int64_t node_budget;      /* branch-and-bound nodes per stage (work, not time): 0 none */
    int32_t mem_limit_mb;     /* GLPK's memory limit (glp_mem_limit), 0: none */
    const double *incumbent;  /* [n_cols] a feasible integer solution, or NULL */
    const volatile int *stop; /* set (non-zero) by another thread: end the search now, or NULL */
    rf_mip_backend backend;   /* RF_MIP_CBC: CBC; else GLPK */
    int32_t threads;          /* CBC's own threads for this solve (<= 1: one) */
} rf__mip_opts_t;

typedef enum {
    RF_MIP_OPTIMAL = 0, /* every stage proven optimal (within mip_gap) */
    RF_MIP_FEASIBLE,    /* a solution, not proven optimal (time or work ran out) */
    RF_MIP_NOSOLUTION,  /* no integer solution found (nor given) */
    RF_MIP_INFEASIBLE   /* proven infeasible */
} rf__mip_status;

typedef struct {
    rf__mip_status status;
    double *x;                       /* [n_cols] the best solution (malloc'ed), or NULL */
    double obj[RF_MIP_MAX_STAGES];   /* each stage's value at x */
    double bound[RF_MIP_MAX_STAGES]; /* each stage's proven bound (best possible value) */
    bool proven[RF_MIP_MAX_STAGES];  /* stage proven optimal */
    int32_t n_stages_done;
    int64_t nodes; /* branch-and-bound nodes over all stages */
} rf__mip_result_t;

void rf__mip_result_fini(rf__mip_result_t *res);

/* Solve with up to RF_MIP_MAX_STAGES stages. RF_ESOLVER when GLPK failed (the process
 * survives; `res` keeps the best solution found before, if any); RF_EINVAL
 * when the backend is not built in. */
rf_status rf__mip_solve(const rf__mip_t *mip, const rf__mip_stage_t *stages, int32_t n_stages,
                        const rf__mip_opts_t *opts, rf__mip_result_t *res, rf_error_t *err);

/* True when the backend lets each thread solve its own problem at the same
 * time: GLPK when built thread-safe (glp_config("TLS")); never CBC (its
 * command-line layer keeps global state). Otherwise rf__mip_solve serialises
 * calls with a lock. */
bool rf__mip_thread_safe(rf_mip_backend backend);

#endif
