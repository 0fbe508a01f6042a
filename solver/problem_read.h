/* solver/problem_read.h: the one schema reader that turns a decoded document
 * (from JSON or MessagePack) into an rf_problem_t, strictly: unknown keys,
 * wrong types and broken rules are errors with the field's contract path. */
#ifndef RACKFIT_SOLVER_PROBLEM_READ_H
#define RACKFIT_SOLVER_PROBLEM_READ_H

#include "doc.h"
#include "rackfit/problem.h"
#include "rackfit/status.h"

/* `root` is the problem map. Keys other than cluster, gangs, running,
 * options are errors unless `extra_keys` lists them (rackfitd passes "v",
 * "op", "id", ...); extra_keys is NULL-terminated or NULL. */
rf_status rf__problem_from_doc(const rf_doc_t *root, const char *const *extra_keys, const rf_limits_t *limits,
                               rf_problem_t **out, rf_error_t *err);

/* The same for a batch against a stored, already validated cluster: `root`
 * holds `gangs`, `running` and `options` (and `extra_keys`), not `cluster`. The new
 * problem BORROWS the cluster's levels, level costs, nodes (names, labels,
 * quantities, taints) and name index: `cluster` must stay alive and
 * unchanged until the problem is destroyed. It is not touched (several
 * threads may read batches against one cluster at once); only batches with
 * bound pods or with resources the cluster does not know copy the nodes and
 * validate the whole problem again. */
rf_status rf__problem_from_doc_on(const rf_doc_t *root, const char *const *extra_keys, const rf_problem_t *cluster,
                                  const rf_limits_t *limits, rf_problem_t **out, rf_error_t *err);

#endif
