/* solver/eligible.h: pod sets that are eligible on the same nodes, so the
 * search strategies compute eligibility once per class. Node eligibility
 * itself is rf_node_admits (include/rackfit/problem.h). */
#ifndef RACKFIT_SOLVER_ELIGIBLE_H
#define RACKFIT_SOLVER_ELIGIBLE_H

#include <stdbool.h>

#include "rackfit/problem.h"

/* rf_node_admits for a node known to carry every level label (the tree
 * says so): the cordon, selector and taint rules only. In problem.c. */
bool rf__node_admits_labelled(const rf_problem_t *pb, int32_t n, const rf_pod_set_t *ps);
/* Same node_selector and tolerations: the same nodes are eligible. */
bool rf__same_eligibility(const rf_pod_set_t *a, const rf_pod_set_t *b);

#endif
