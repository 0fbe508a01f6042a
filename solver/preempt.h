/* solver/preempt.h: topology-aware preemption for the greedy
 * (PLACEMENT-MODEL.md, "Running gangs and preemption"; docs/preemption.md).
 *
 * The greedy calls rf__preempt_try for a gang it could not place. The call
 * is stateless: it reads what it needs from the answer so far (the admitted
 * gangs' placements, the running gangs already preempted), so the greedy
 * keeps no preemption state. It returns quickly (O(running gangs)) when no
 * running gang of lower priority is preemptible or already preempted.
 *
 * Contract with the caller:
 * - on *placed, the gang has its placements in `ans` (rf_answer_add, new
 *   pods only; never for a sliced pod set with bound pods) and its victims
 *   are marked (rf_answer_preempt); the caller takes the placements out of
 *   its own capacity view. That view never includes freed room, so it may
 *   go below zero on a victim's nodes and stays safe for every later gang:
 *   a later gang that only fits in freed room fails in the greedy and comes
 *   back here, where the freed room is counted exactly, per priority;
 * - rf__preempt_settle keeps again every preempted gang that no admitted gang
 *   of higher priority still preempts (after a pass that moved gangs, such
 *   as the greedy's polish): always feasible, since only gangs above it
 *   could use its room. */
#ifndef RACKFIT_SOLVER_PREEMPT_H
#define RACKFIT_SOLVER_PREEMPT_H

#include <stdbool.h>

#include "eligible.h"
#include "rackfit/answer.h"
#include "rackfit/problem.h"
#include "tree.h"

/* The order in which a domain's candidate victims are taken (the shortest
 * prefix that makes the gang fit, then pruned): */
typedef enum {
    RF__VICTIMS_CHEAPEST = 0, /* lowest priority, fewest units, fewest pods, most spread */
    RF__VICTIMS_RECENT        /* lowest priority, most recently admitted first (Kueue's CandidatesOrdering) */
} rf__victim_rule;

/* Try to admit gang `gang` (not admitted in `ans`) by preempting whole,
 * preemptible running gangs of lower priority: in every candidate domain
 * (at or below the gang's deepest required or slice level; the whole cluster
 * too when it has none) the shortest prefix of the candidates in `rule`'s
 * order that makes the gang fit, pruned; the best domain wins (least value
 * lost, priority by priority from the highest, then the least penalty of
 * what is kept and placed). Every pod set at `count`, or at `min_count`
 * with `at_min` (the greedy asks for count before it places an elastic gang
 * smaller without preemption, and for min_count when that failed too).
 * `elig` is the solve's eligibility (solver/eligible.h) of pb's batch on
 * `tree`. *placed false: nothing changed. RF_ENOMEM on allocation failure
 * (the answer is then unchanged). */
rf_status rf__preempt_try(const rf_problem_t *pb, const rf__tree_t *tree, const rf__elig_t *elig, int32_t gang,
                          bool at_min, rf__victim_rule rule, rf_answer_t *ans, bool *placed);

/* Keep every preempted running gang that has no preemptor left in `ans`. */
rf_status rf__preempt_settle(rf_answer_t *ans);

#endif
