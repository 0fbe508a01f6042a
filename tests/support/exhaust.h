/* tests/support/exhaust.h: the exhaustive solver, a reference for tiny
 * problems.
 *
 * Written from PLACEMENT-MODEL.md alone, on the public headers only: it
 * shares no code with the search (no topology tree, no greedy internals, no
 * rf_answer_finish), so that a misreading in one is not hidden by the same
 * misreading in the other. It enumerates, gang by gang, every placement of
 * each gang in isolation (rejected, or a vector of new-pod counts per node
 * for each pod set), keeps those that meet the gang's hard constraints, then
 * searches every combination of them that fits the nodes' free capacity
 * (branch and bound on the objective, which is exact: it only cuts what
 * cannot beat or tie the best answer found).
 *
 * Scope: at most RF_EXHAUST_MAX_NODES nodes, RF_EXHAUST_MAX_GANGS gangs,
 * RF_EXHAUST_MAX_POD_SETS pod sets per gang (and per running gang),
 * RF_EXHAUST_MAX_PODS `count` per pod set, RF_EXHAUST_MAX_RUNNING running
 * gangs, and no bound pods in a sliced pod set (their ranks decide slice
 * feasibility; rf_randprob's `slice_bound = false` avoids them).
 *
 * Running gangs (PLACEMENT-MODEL.md, "Running gangs and preemption"): every
 * subset of the preemptible running gangs is tried as the preempted set
 * (only the empty one under `preemption: never`). With a set chosen, node
 * capacity is per priority: for each priority p, the new pods of priority
 * <= p fit in max(0, allocatable - used + freed(p)), freed(p) being what the
 * chosen gangs of priority < p use there; an assignment counts only when
 * every chosen gang has a preemptor (an admitted gang of higher priority
 * with a new pod on one of its nodes); kept running gangs add their value
 * and penalty (D over their placements) to the objective.
 *
 * The objective (PLACEMENT-MODEL.md section 2): for each priority, highest
 * first, the value (units, then pods); then the total penalty, less is
 * better. With `admission: ordered`, admitted gangs form a prefix of each
 * priority's gangs in problem order, and each priority's stage first
 * maximises the number of gangs admitted (the longest prefix), then its
 * value: the key per priority is (admitted, units, pods), as docs/ilp.md
 * stages it. */
#ifndef RF_TEST_EXHAUST_H
#define RF_TEST_EXHAUST_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "rackfit/answer.h"
#include "rackfit/problem.h"
#include "rackfit/quantity.h"
#include "randprob.h"

#define RF_EXHAUST_MAX_NODES    5
#define RF_EXHAUST_MAX_GANGS    4
#define RF_EXHAUST_MAX_POD_SETS 2
#define RF_EXHAUST_MAX_PODS     4
#define RF_EXHAUST_MAX_RUNNING  4
/* distinct priorities: of gangs and running gangs */
#define RF_EXHAUST_MAX_PRIOS (RF_EXHAUST_MAX_GANGS + RF_EXHAUST_MAX_RUNNING)
/* rf_exhaust_compare's result for a problem out of scope (fails `== 0`). */
#define RF_EXHAUST_UNSUPPORTED INT_MIN

typedef struct {
    int64_t priority;
    int32_t admitted; /* gangs admitted at this priority */
    int64_t units;
    int64_t pods;
} rf_exhaust_value_t;

/* An assignment and its objective (the optimum, or an answer evaluated). */
typedef struct {
    bool ordered;                                   /* the problem's admission is `ordered` */
    int32_t n_value;                                /* distinct priorities */
    rf_exhaust_value_t value[RF_EXHAUST_MAX_PRIOS]; /* highest priority first; kept running gangs count */
    double penalty;                                 /* admitted and kept running gangs */
    bool admitted[RF_EXHAUST_MAX_GANGS];
    bool preempted[RF_EXHAUST_MAX_RUNNING]; /* running gangs preempted */
    /* new pods per gang, pod set and node (0 for rejected gangs) */
    int32_t count[RF_EXHAUST_MAX_GANGS][RF_EXHAUST_MAX_POD_SETS][RF_EXHAUST_MAX_NODES];
    int64_t options; /* gang placements enumerated (statistics) */
    int64_t visited; /* search nodes visited (statistics) */
} rf_exhaust_t;

/* Whether the problem is in scope; *why (may be NULL) says why not. */
bool rf_exhaust_supported(const rf_problem_t *problem, const char **why);
/* The optimum of a validated problem. RF_EUNSUPPORTED when out of scope,
 * RF_ENOMEM. */
rf_status rf_exhaust_solve(const rf_problem_t *problem, rf_exhaust_t *out);
/* The assignment as an answer (placements laid out slice domain by slice
 * domain, rejected gangs with a reason), NOT finished: the caller may
 * rf_answer_finish it. */
rf_status rf_exhaust_to_answer(const rf_problem_t *problem, const rf_exhaust_t *ex, rf_answer_t **out);
/* The objective of an answer's placements, recomputed by this module's own
 * rules (feasibility is rf_check's business, not this). */
rf_status rf_exhaust_evaluate(const rf_problem_t *problem, const rf_answer_t *answer, rf_exhaust_t *out);
/* < 0 when `a` is better, > 0 when `b` is, 0 when equal (penalties equal
 * within 1e-9, relative to the larger when it exceeds 1). */
int rf_exhaust_cmp(const rf_exhaust_t *a, const rf_exhaust_t *b);
/* The answer against the optimum, like rf_answer_compare(answer, optimum):
 * 0 when the answer is optimal, > 0 when worse, < 0 when it is "better"
 * (then it is infeasible, or one of the two is wrong). Recomputes the
 * answer's objective from its placements (rf_exhaust_evaluate), so the
 * answer need not be finished. RF_EXHAUST_UNSUPPORTED when the problem is
 * out of scope or memory ran out. */
int rf_exhaust_compare(const rf_problem_t *problem, const rf_answer_t *answer);

/* rf_randprob's defaults, cut to what the exhaustive search takes: its node,
 * gang, pod and pod-set limits, and no bound pods inside slices. */
void rf_exhaust_randprob_opts(rf_randprob_opts_t *o);

#endif
