/* solver/eligible.h: which nodes may take new pods of which pod set, computed
 * once per solve for every eligibility class (pod sets with the same
 * node_selector and tolerations see the same nodes).
 *
 * Invariants of an rf__elig_t built for a problem and its tree:
 * - every pod set of the batch has a class: class_of[gang_ps0[g] + p];
 * - ok[c][n] == rf_node_admits(pb, n, rep[c]) for a node in the tree, and 0
 *   for nodes outside it (without every level label);
 * - n_ok[c] == the number of nodes with ok[c][n] set;
 * - classes are numbered in order of their first pod set (a pure function of
 *   the problem);
 * - built with a cluster cache, a class the cache keeps borrows its mask
 *   (cache_class[c] >= 0: the cache's class; the cache outlives the solve),
 *   others own theirs (cache_class[c] == -1). Read-only after the build. */
#ifndef RACKFIT_SOLVER_ELIGIBLE_H
#define RACKFIT_SOLVER_ELIGIBLE_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/problem.h"
#include "rackfit/status.h"
#include "tree.h"

typedef struct {
    int32_t n_classes;
    const rf_pod_set_t **rep; /* [n_classes] the first pod set of each class */
    uint8_t **ok;             /* [n_classes][n_nodes] */
    int32_t *n_ok;            /* [n_classes] */
    int32_t *class_of;        /* [pod sets of the batch, flattened] */
    int32_t *gang_ps0;        /* [n_gangs + 1] the first flattened pod set of gang g */
    int64_t n_pod_sets;       /* flattened pod sets of the batch */
    int32_t *cache_class;     /* [n_classes] the cluster cache's class, or -1: ok[c] is owned */
} rf__elig_t;

/* Build the classes of pb's batch on its tree. RF_ENOMEM (err says so). */
rf_status rf__elig_build(const rf_problem_t *pb, const rf__tree_t *tree, rf__elig_t *elig, rf_error_t *err);
/* The same, borrowing the masks of the classes `cache` keeps (or adds);
 * `cache` NULL: rf__elig_build. The cache must be synced to pb and its tree
 * must be `tree`. */
struct rf_cluster_cache;
rf_status rf__elig_build_cached(const rf_problem_t *pb, const rf__tree_t *tree, struct rf_cluster_cache *cache,
                                rf__elig_t *elig, rf_error_t *err);
/* NULL-safe on a zeroed or built rf__elig_t; leaves it zeroed. */
void rf__elig_fini(rf__elig_t *elig);

/* rf_node_admits for a node known to carry every level label (the tree
 * says so): the cordon, selector and taint rules only. */
bool rf__node_admits_labelled(const rf_problem_t *pb, int32_t n, const rf_pod_set_t *ps);
/* Same node_selector and tolerations: the same nodes are eligible. */
bool rf__same_eligibility(const rf_pod_set_t *a, const rf_pod_set_t *b);

#endif
