/* solver/ilp_classes.h: classes of identical nodes, for the penalty bounds
 * (solver/ilp_bound.c, the contention LP; solver/ilp_lagrange.c, the
 * Lagrangian bound). Internal to solver/.
 *
 * A class ("unit") is a set of nodes of one deepest non-host domain that no
 * bound can tell apart: the same free capacity (allocatable less used, per
 * resource) and the same eligibility for every pod set. A node holding
 * bound pods is a class of its own. `coarse` classes ignore the free
 * capacity (the nodes of one leaf domain with the same eligibility). The
 * classes are numbered in tree order, so the classes of any domain are
 * contiguous. */
#ifndef RACKFIT_SOLVER_ILP_CLASSES_H
#define RACKFIT_SOLVER_ILP_CLASSES_H

#include <stdbool.h>
#include <stdint.h>

#include "eligible.h"
#include "rackfit/problem.h"
#include "tree.h"

typedef struct {
    const rf_problem_t *pb;
    rf__tree_t tree;
    bool tree_owned;
    rf__elig_t elig;
    int32_t N, R, L;
    int32_t zl;    /* domain levels above the host: [0, zl) */
    bool host;     /* the last level is kubernetes.io/hostname */
    bool coarse;   /* classes ignore the free capacity */
    int64_t *free; /* [N * R] allocatable less used, clamped at 0; RF_QTY_UNLIMITED kept */
    bool *bnode;   /* [N] holds bound pods */
    int32_t n_units;
    int32_t *u_node, *u_count; /* first node, node count */
    int32_t *u_first, *unodes; /* the nodes of unit u: unodes[u_first[u] .. + u_count[u]) */
    int32_t *node_unit;        /* [N], -1 outside the tree */
} rf__ilp_classes_t;

/* Build them (tree, eligibility, free capacity, classes); false when out of
 * memory or the tree cannot be built. Finish with rf__ilp_classes_fini
 * either way (on a zeroed struct). */
bool rf__ilp_classes_build(rf__ilp_classes_t *c, const rf_problem_t *pb, bool coarse);
void rf__ilp_classes_fini(rf__ilp_classes_t *c);

/* Pods of ps that fit on one node n (at most cap). */
int64_t rf__ilp_classes_fit(const rf__ilp_classes_t *c, const rf_pod_set_t *ps, int32_t n, int64_t cap);

#endif
