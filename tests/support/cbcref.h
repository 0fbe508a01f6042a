/* tests/support/cbcref.h: an independent exact reference for mid-sized
 * problems (up to 64 nodes, 12 gangs): a node-level integer program of the
 * contract (PLACEMENT-MODEL.md sections 1-2) written as a CPLEX-LP file and
 * solved by Debian's `cbc` binary (package coinor-cbc).
 *
 * It shares no code with the solver (solver/ilp*, mip*, the tree, the
 * greedy): only the public model (rackfit/problem.h) is read. Variables:
 * x[g,p,n] new pods of pod set p of gang g on node n (integer, only on
 * eligible nodes), y[g] admitted (binary), u[g,l,d] gang g uses domain d of
 * level l (binary; for the penalty and the gang's required level), v[g,p,d]
 * pod set p uses domain d of its own required level (binary).
 * Lexicographic, as the contract: per priority, highest first, maximise
 * (units, pods) as one integer objective units * M + pods (M above every
 * possible pod total, so exact), fixed as a constraint for the next stages;
 * then minimise the penalty.
 *
 * Bound pods count toward counts, domains and value (they are in `used`);
 * slices: every domain of the slice level holds a multiple of the slice
 * size; `admission: ordered`: a prefix stage per priority before its value;
 * running gangs: q[r] preempted (binary), capacity per priority with what
 * the preempted lower-priority gangs free, a preemptor required, kept
 * gangs' value and penalty counted (cbcref.c lists the rows).
 *
 * Scope (rf_cbcref_supported): everything in the contract but bound pods in
 * a sliced pod set (their ranks decide which pods share a slice), and at
 * most RF_CBCREF_MAX_PRIOS priorities. Problems outside it are refused,
 * never solved wrongly. RF_CBCREF_KEEP=1 in the environment keeps the LP
 * files (their directory is in the error message on failure). */
#ifndef RF_TEST_CBCREF_H
#define RF_TEST_CBCREF_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/answer.h"
#include "rackfit/problem.h"

#define RF_CBCREF_MAX_PRIOS 64
#define RF_CBCREF_MAX_GANGS 64 /* recorded in admitted[] / preempted[] */

typedef struct {
    int32_t n_value;
    rf_value_t value[RF_CBCREF_MAX_PRIOS]; /* per distinct priority, highest first */
    double penalty;                        /* the optimum penalty given those values */
    int32_t cbc_runs;                      /* cbc invocations (statistics) */
    bool admitted[RF_CBCREF_MAX_GANGS];    /* the optimum's decisions (the first 64 gangs) */
    bool preempted[RF_CBCREF_MAX_GANGS];   /* and running gangs */
} rf_cbcref_t;

/* Whether `cbc` is on PATH. */
bool rf_cbcref_available(void);
/* Whether the problem is in scope; *why (may be NULL) says why not. */
bool rf_cbcref_supported(const rf_problem_t *problem, const char **why);
/* The optimum of a validated problem. Returns false with a message in
 * err[errlen] when out of scope, when cbc fails or does not prove
 * optimality, or when a temporary file cannot be written. */
bool rf_cbcref_solve(const rf_problem_t *problem, rf_cbcref_t *out, char *err, size_t errlen);
/* The same, and the optimum as an answer in *answer (caller destroys it;
 * NULL on failure): placements laid out slice domain by slice domain,
 * rejected gangs with a reason, preemptions; not finished, so that
 * rf_answer_finish and rf_check judge it on their own. */
bool rf_cbcref_solve_answer(const rf_problem_t *problem, rf_cbcref_t *out, rf_answer_t **answer, char *err,
                            size_t errlen);

#endif
