/* service/store.h: named clusters kept by rackfitd, with versions, patches
 * and commits (docs/protocol.md, "Stored clusters").
 *
 * A stored cluster is a validated cluster-only problem (its "base": nodes as
 * the client last described them) plus the commits: pods that solves placed
 * and asked to keep (an assume, as kube-scheduler does), per solve, gang and node,
 * each with an expiry. The cluster solves see is the base with every live
 * commit added to `used`: a snapshot, built once per version and shared
 * (refcounted) by the solves that read it; when only commits change and no
 * solve holds it, it is brought to the new version in place rather than
 * built again.
 *
 * Versions: every change (put, patch, commit, release, an expiry) adds one.
 * `base_version` changes only with put and patch (the nodes themselves).
 * A caller that names a version gets RF_ESTALE unless it is the current one.
 * A solve's commit is applied when the cluster is still at the snapshot's
 * version, or when only commits changed since (same base_version) and every
 * placement still fits the free capacity left by them; else RF_ESTALE.
 *
 * Solver caches (include/rackfit/cluster_cache.h): each stored cluster's
 * base keeps a pool of caches built from its snapshots; a solve takes one
 * (rf__store_cache_take), hands it to rf_solve (which syncs it to the
 * snapshot's `used`, node by node), and gives it back. Commits and releases
 * change `used`, so the next solve's sync updates the few nodes they
 * touched in place; put and patch make a new base, whose caches start
 * empty.
 *
 * Thread-safe: one mutex guards everything; snapshots are read without it,
 * a taken cache is its solve's alone. */
#ifndef RACKFIT_SERVICE_STORE_H
#define RACKFIT_SERVICE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "doc.h"
#include "rackfit/answer.h"
#include "rackfit/cluster_cache.h"
#include "rackfit/problem.h"
#include "rackfit/status.h"

typedef struct rf__store rf__store_t;

/* A read-only view of one version of a stored cluster. `problem` has no
 * gangs; its nodes' `used` include the live commits. */
typedef struct rf__snapshot {
    const rf_problem_t *problem;
    int64_t version;
    int64_t base_version;
    const char *name; /* the cluster's name */
    /* the running gangs stored with the cluster, as the contract's documents
     * (validated against the base; borrowed from the snapshot) */
    const rf_doc_t *running;
    int32_t n_running;
} rf__snapshot_t;

/* `max_clusters` > 0; `max_commits` per cluster; RF__STORE_CACHES solver
 * caches kept per cluster with the default cache limits. NULL on ENOMEM. */
#define RF__STORE_CACHES 4
rf__store_t *rf__store_new(int32_t max_clusters, int32_t max_commits);
/* Solver caches kept per cluster (0: solves on stored clusters build
 * everything themselves) and each cache's limits (NULL: unchanged). */
void rf__store_set_caches(rf__store_t *store, int32_t max_caches, const rf_cluster_cache_limits_t *limits);
void rf__store_destroy(rf__store_t **store);

/* Store `cluster` (validated, no gangs; ownership passes to the store, also
 * on error) under `name`, with the running gangs `running` (an array of the
 * contract's running gangs, or NULL: none; copied, validated against the
 * cluster's nodes, errors at running[i]...). `version` >= 0: the current version it must
 * replace (0: the name must be new); < 0: unconditional. Live commits on
 * nodes that still exist are kept. */
rf_status rf__store_put(rf__store_t *store, const char *name, rf_problem_t *cluster, const rf_doc_t *running,
                        const rf_limits_t *limits, int64_t version, double now_ms, int64_t *new_version,
                        rf_error_t *err);

/* A change by nodes and running gangs. Applied in order: remove, upsert,
 * used, then the running gangs: running_remove, running_upsert (a gang of
 * an existing name replaces it), validated against the patched nodes. A
 * confirm (`includes`) that leaves no live commit of a gang whose solve
 * preempted stored running gangs removes those victims too, and their
 * pods from `used` on every node the patch's `used` does not set. */
typedef struct {
    const char **gangs;
    int32_t n;
} rf__includes_t;

typedef struct {
    const char *const *remove; /* node names */
    int32_t n_remove;
    const rf_problem_t *upsert;        /* its nodes replace or join the cluster's; NULL: none */
    const rf_problem_t *used;          /* its nodes' names and `used` (the whole map); NULL: none */
    const rf__includes_t *includes;    /* [used->n_nodes]: gangs whose pods that `used` holds */
    const char *const *running_remove; /* running gang names */
    int32_t n_running_remove;
    const rf_doc_t *running_upsert; /* array of running gangs, or NULL */
} rf__patch_t;

/* Errors name the patch's fields: remove[i], used[i].node. */
rf_status rf__store_patch(rf__store_t *store, const char *name, int64_t version, const rf__patch_t *patch,
                          const rf_limits_t *limits, double now_ms, int64_t *new_version, rf_error_t *err);

/* The snapshot of `name` at its current version; `version` >= 0 must be the
 * current one. Release it with rf__store_unref. */
rf_status rf__store_acquire(rf__store_t *store, const char *name, int64_t version, double now_ms, rf__snapshot_t **snap,
                            rf_error_t *err);
void rf__store_unref(rf__store_t *store, rf__snapshot_t **snap);

/* A solver cache for `snap`'s cluster, the caller's alone until it gives
 * it back: one the pool keeps, or a new one built from the snapshot; NULL
 * when caches are off or out of memory (the solve builds its own tables). */
rf_cluster_cache_t *rf__store_cache_take(rf__store_t *store, const rf__snapshot_t *snap);
/* Give a taken cache back (before unref'ing `snap`): kept in the pool, or
 * destroyed when the pool is full. NULL-safe; sets *cache to NULL. */
void rf__store_cache_give(rf__store_t *store, const rf__snapshot_t *snap, rf_cluster_cache_t **cache);

/* Commit the admitted gangs of `answer` (to `problem`, read on `snap`) with
 * expiry now + ttl_ms. Each stored running gang the answer preempts is
 * remembered with its preemptors, to be removed when one of them is
 * confirmed (rf__patch_t); release or expiry forgets it. */
rf_status rf__store_commit(rf__store_t *store, const rf__snapshot_t *snap, const rf_problem_t *problem,
                           const rf_answer_t *answer, int64_t ttl_ms, double now_ms, int64_t *new_version,
                           rf_error_t *err);

/* Drop the commits of these gangs (unknown ones are no error). */
rf_status rf__store_release(rf__store_t *store, const char *name, int64_t version, const char *const *gangs, int32_t n,
                            double now_ms, int64_t *new_version, int32_t *released, rf_error_t *err);

rf_status rf__store_delete(rf__store_t *store, const char *name, int64_t version, rf_error_t *err);

typedef struct {
    int64_t version;
    int64_t base_version;
    int32_t nodes;
    int32_t commits;     /* (solve, gang, node) entries */
    int64_t commit_pods; /* pods they hold */
    int32_t clusters;    /* in the whole store */
    int32_t running;     /* running gangs stored */
    int32_t preempting;  /* (preemptor, victim) pairs awaiting confirm */
} rf__store_info_t;

rf_status rf__store_info(rf__store_t *store, const char *name, double now_ms, rf__store_info_t *info, rf_error_t *err);
int32_t rf__store_count(rf__store_t *store);
/* Every stored cluster's info (expired commits dropped first), `fn` called
 * under the store's lock (it must not call the store); returns the number
 * of clusters, and *expired the commit entries expired since the store was
 * made. */
int32_t rf__store_each(rf__store_t *store, double now_ms,
                       void (*fn)(void *arg, const char *name, const rf__store_info_t *info), void *arg,
                       int64_t *expired);

/* Deep equality of two documents (maps: the same keys, any order). */
bool rf__doc_same(const rf_doc_t *a, const rf_doc_t *b);

#endif
