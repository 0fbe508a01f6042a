/* solver/preempt_problem.h: validation of a problem's running gangs
 * (PLACEMENT-MODEL.md, "Running gangs and preemption"), called by
 * rf_problem_validate after the gangs and options are valid. */
#ifndef RACKFIT_SOLVER_PREEMPT_PROBLEM_H
#define RACKFIT_SOLVER_PREEMPT_PROBLEM_H

#include "rackfit/problem.h"
#include "rackfit/status.h"

/* Check every running gang (limits, pod sets, placements, requests) and
 * that, node by node, the bound pods and the running gangs in problem order
 * fit in `used`; then fill each running gang's constants (units, pods,
 * domains, penalty). Names unique together with the gangs' are checked with
 * the gangs' own, in solver/problem.c. Errors name the field by its contract
 * path (`running[2].pod_sets[0].placements[1].node`). */
rf_status rf__problem_validate_running(rf_problem_t *problem, const rf_limits_t *limits, rf_error_t *err);

#endif
