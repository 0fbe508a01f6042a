/* rackfit/cluster_cache.h: a solver cache for a cluster that many solves
 * read while only its nodes' `used` changes (rackfitd's stored clusters:
 * commits and releases).
 *
 * Built once from a cluster (a validated problem; its gangs are ignored),
 * it keeps what every solve on that cluster would otherwise build again:
 * the topology tree, the free capacity of every node, the eligibility mask
 * of each node_selector + tolerations class seen so far, and the capacity
 * roll-ups (pods that fit per node and per domain, by level) of each pod
 * shape (class + requests) seen so far. A solve adopts it through
 * rf_solve_opts_t.cache (rackfit/solve.h).
 *
 * Invariants:
 * - the cache BORROWS the node descriptions of the cluster it was built
 *   from (names, labels, taints, allocatable, the levels and the resource
 *   names): they must outlive it unchanged. It matches a problem
 *   (rf_cluster_cache_matches) that has the same levels, the same resources
 *   in the same order and the same nodes, described alike (names, labels,
 *   taints, cordons, allocatable; `used` may differ): a batch read against
 *   the stored cluster (rf_problem_from_doc_on), which lends the cluster's
 *   very node arrays (checked at once) or, with bound pods or running gangs,
 *   copies them (compared by content);
 * - after rf_cluster_cache_sync(cache, p), everything it holds is what a
 *   fresh solve of p would build: an answer with the cache is identical to
 *   one without it (tests/unit/test_cluster_cache.c checks it);
 * - a sync touches only the nodes whose `used` differ from what the cache
 *   last saw: their free capacity and the roll-ups on their paths are
 *   updated in place; nothing is rebuilt or copied whole;
 * - classes and shapes are added as solves meet them, up to the limits;
 *   past max_shapes the least recently used shape is dropped; past
 *   max_classes a solve builds its new classes for itself;
 * - not thread-safe: one solve at a time uses a cache (rackfitd keeps a
 *   small pool per stored cluster). */
#ifndef RACKFIT_CLUSTER_CACHE_H
#define RACKFIT_CLUSTER_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/problem.h"
#include "rackfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rf_cluster_cache rf_cluster_cache_t;

/* What a cache keeps at most; configurable (rackfitd's config file). */
typedef struct {
    int32_t max_classes; /* eligibility classes (node_selector + tolerations) */
    int32_t max_shapes;  /* capacity roll-ups (class + requests) */
} rf_cluster_cache_limits_t;

/* The defaults: 64 classes, 16 shapes. A cache of a 1,024-node cluster
 * holds about 180 KB plus 37 KB per shape (16 times that for 16,384 nodes). */
void rf_cluster_cache_limits_default(rf_cluster_cache_limits_t *limits);

/* Build a cache for `cluster` (validated; only its levels, resources and
 * nodes are read) with `limits` (NULL: the defaults). RF_ENOMEM, RF_EINVAL
 * (no nodes, or limits below 1). */
rf_status rf_cluster_cache_new(const rf_problem_t *cluster, const rf_cluster_cache_limits_t *limits,
                               rf_cluster_cache_t **out, rf_error_t *err);
/* NULL-safe; sets *cache to NULL. */
void rf_cluster_cache_destroy(rf_cluster_cache_t **cache);

/* Whether `problem` has the cluster the cache was built for (above). */
bool rf_cluster_cache_matches(const rf_cluster_cache_t *cache, const rf_problem_t *problem);

/* Bring the cache to `problem`'s `used`, in place (above). RF_EINVAL when
 * it does not match (the cache stays usable: it may have taken the `used` of
 * the nodes before the first that differs); *changed (may be NULL) the nodes
 * updated. A solve that adopts the cache calls it itself. */
rf_status rf_cluster_cache_sync(rf_cluster_cache_t *cache, const rf_problem_t *problem, int32_t *changed,
                                rf_error_t *err);

typedef struct {
    int32_t nodes;
    int32_t classes;      /* eligibility classes kept */
    int32_t shapes;       /* capacity roll-ups kept */
    int64_t syncs;        /* rf_cluster_cache_sync calls that matched */
    int64_t nodes_synced; /* nodes they updated, in all */
    int64_t shape_builds; /* roll-ups built (each once, until dropped) */
    int64_t shape_hits;   /* pod sets that found their roll-up kept */
} rf_cluster_cache_info_t;

void rf_cluster_cache_info(const rf_cluster_cache_t *cache, rf_cluster_cache_info_t *info);

#ifdef __cplusplus
}
#endif
#endif
