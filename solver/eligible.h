/* solver/eligible.h: can a node take new pods of a pod set? (Kubernetes'
 * rules: every level label present, not cordoned, node_selector matched
 * exactly, every NoSchedule/NoExecute taint tolerated.) Shared by the
 * search strategies; the checker (solver/check.c) has its own, written
 * apart on purpose. */
#ifndef RACKFIT_SOLVER_ELIGIBLE_H
#define RACKFIT_SOLVER_ELIGIBLE_H

#include <stdbool.h>

#include "rackfit/problem.h"
#include "tree.h"

/* The value of label `key` on a node (labels sorted by key), or NULL. */
const char *rf__node_label(const rf_node_t *node, const char *key);
bool rf__node_eligible(const rf_problem_t *pb, const rf__tree_t *tree, int32_t n, const rf_pod_set_t *ps);
/* Same node_selector and tolerations: the same nodes are eligible. */
bool rf__same_eligibility(const rf_pod_set_t *a, const rf_pod_set_t *b);

#endif
