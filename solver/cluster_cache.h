/* solver/cluster_cache.h: the inside of rf_cluster_cache_t
 * (include/rackfit/cluster_cache.h), for the solve context and the greedy
 * search.
 *
 * Invariants, after rf_cluster_cache_sync to a problem p (between syncs the
 * one solve that holds the cache only adds classes and shapes):
 * - used[n * R + r] == p's nodes[n].used[r]; free[n * R + r] ==
 *   rf__cap_free(allocatable, used); unlimited[r] == some node's free of r is
 *   RF_QTY_UNLIMITED (a function of allocatable alone);
 * - `tree` is rf__tree_build of the cluster (labels and levels never change
 *   for a cache), `cap` its roll-up context over `free`;
 * - classes[c].ok[n] == rf__elig_t's mask for that class on p (a function of
 *   labels, taints and cordons alone: built once), n_ok its count;
 * - shapes[s].sh is what rf__shape_build computes on `free` for its class
 *   mask and requests, buckets laid out canonically (rf__shape_index); so a
 *   greedy search that copies it starts from exactly what it would build;
 * - the arrays `classes` and `shapes` are allocated at their limits once:
 *   pointers into them stay valid; a shape used by the current solve
 *   (last_use == tick) is never dropped during it. */
#ifndef RACKFIT_SOLVER_CLUSTER_CACHE_H
#define RACKFIT_SOLVER_CLUSTER_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "capacity.h"
#include "rackfit/cluster_cache.h"
#include "tree.h"

typedef struct {
    rf_pod_set_t rep; /* its node_selector and tolerations, copied into the arena */
    uint8_t *ok;      /* [N] */
    int32_t n_ok;
} rf__cache_class_t;

typedef struct {
    rf__shape_t sh; /* sh.req points at req, sh.ok at its class's mask */
    int32_t cls;
    int64_t *req;      /* [R] */
    uint64_t last_use; /* the cache's tick when a solve last used it */
} rf__cache_shape_t;

struct rf_cluster_cache {
    rf_cluster_cache_limits_t lim;
    int32_t N, R, L;
    const char **levels;    /* borrowed from the cluster */
    const char **resources; /* borrowed */
    rf_node_t *nodes;       /* [N] the cluster's node descriptions (their `used` left NULL) */
    int64_t *used;          /* [N * R] the `used` last synced */
    int64_t *free;          /* [N * R] */
    bool *unlimited;        /* [R] */
    rf__tree_t tree;
    rf__cap_t cap;
    rf__arena_t *arena; /* the classes' copies */
    rf__cache_class_t *classes;
    int32_t n_classes;
    rf__cache_shape_t *shapes;
    int32_t n_shapes;
    uint64_t tick; /* one per sync */
    rf_cluster_cache_info_t stats;
};

/* The cache's class of pod set `ps` (same node_selector and tolerations),
 * added when new and there is room; -1 when there is none (or ENOMEM). */
int32_t rf__cache_class(rf_cluster_cache_t *cache, const rf_pod_set_t *ps);
/* The roll-ups of class `cls` with requests `req` [R], built when new
 * (dropping the least recently used shape no solve since the last sync
 * uses when full); NULL when no room is left or out of memory: the caller
 * builds its own. */
const rf__shape_t *rf__cache_shape(rf_cluster_cache_t *cache, int32_t cls, const int64_t *req);

#endif
