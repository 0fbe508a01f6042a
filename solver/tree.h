/* solver/tree.h: the cluster's topology as a tree of domains, for the search.
 *
 * Domains are numbered level by level (all level-0 domains first, then level
 * 1, ...), and within a level grouped by parent, so that
 * - the children of a domain are the contiguous ids
 *   [child_start[d], child_start[d] + n_children[d]);
 * - the descendants of a domain at any deeper level are a contiguous range
 *   (rf__tree_range);
 * - the nodes under a domain are the contiguous slice
 *   node_order[node_start[d] .. node_end[d]) (nodes sorted in tree order).
 * Only nodes with every level label are in the tree (they are the only ones
 * that can take new pods); node_dom[n * n_levels + l] is -1 for the others.
 * Ties in numbering follow the input order of the nodes, so the tree is a
 * pure function of the problem. Built once per solve, by the solve context
 * (solver/context.c), or lent by a cluster cache (solver/cluster_cache.h:
 * built once per stored cluster) or the problem's tree_hint; read-only
 * after. */
#ifndef RACKFIT_SOLVER_TREE_H
#define RACKFIT_SOLVER_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/problem.h"
#include "rackfit/status.h"

typedef struct {
    int32_t n_levels;
    int32_t n_nodes;                        /* all nodes of the problem */
    int32_t n_domains;                      /* over all levels */
    int32_t level_start[RF_MAX_LEVELS + 1]; /* level l: [level_start[l], level_start[l+1]) */
    int32_t *level;                         /* [n_domains] */
    int32_t *parent;                        /* [n_domains], -1 at level 0 */
    int32_t *child_start;                   /* [n_domains] */
    int32_t *n_children;                    /* [n_domains] */
    int32_t *node_start;                    /* [n_domains] */
    int32_t *node_end;                      /* [n_domains] */
    int32_t *node_order;                    /* [n_in_tree] node indices in tree order */
    int32_t n_in_tree;
    int32_t *node_dom; /* [n_nodes * n_levels], -1 when the node is not in the tree */
} rf__tree_t;

rf_status rf__tree_build(const rf_problem_t *problem, rf__tree_t *tree, rf_error_t *err);
void rf__tree_fini(rf__tree_t *tree);
/* The problem's tree: its tree_hint (borrowed: *owned = false, do not fini)
 * or a new one (*owned = true). */
rf_status rf__tree_of(const rf_problem_t *problem, rf__tree_t *tree, bool *owned, rf_error_t *err);

/* The domain of node n at level l, or -1. */
static inline int32_t rf__tree_node_dom(const rf__tree_t *tree, int32_t node, int32_t level)
{
    return tree->node_dom[(int64_t)node * tree->n_levels + level];
}

/* The descendants of domain d at level `level` (>= d's level) are the ids
 * [*first, *last). */
void rf__tree_range(const rf__tree_t *tree, int32_t d, int32_t level, int32_t *first, int32_t *last);

#endif
