/* watcher/cache.h: what the watcher knows of the cluster: nodes, pods,
 * PodGroups and PodDisruptionBudgets by key, kept up to date by the watch threads (watch.c) and read
 * by the cycle (gangs.c, binder.c).
 *
 * Invariants: one mutex guards everything; callers hold it (rf__cache_lock)
 * around every call below except new/destroy. Objects put in are owned by
 * the cache; a pointer read from it is valid until the lock is released.
 * `generation` grows on every change that can matter to a cycle; `synced`
 * has one bit per kind, set once that kind's first list is in.
 *
 * Plans (cycle.c): `loud` is set by every change that may change a plan
 * (rf__cache_touch). A change of one of our pods that leaves everything a
 * plan reads of it for other gangs as it was (rf__cache_pod_quiet: the same
 * pod, on the same node or assumed node, the same nomination, requests,
 * labels, terminal and deleting state) is touched quietly instead: its gang
 * is recorded in `quiet`, not `loud`. A plan skips held gangs (being bound,
 * followed, backing off), so while every gang in `quiet` is held and nothing
 * was loud, a new plan would be the last one: the cycle does not build it.
 * The cycle clears both when it builds one. Iteration is
 * over dense arrays (`items`, `n`), in no particular order. */
#ifndef RACKFIT_WATCHER_CACHE_H
#define RACKFIT_WATCHER_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kobj.h"

typedef enum { RF_KIND_NODE = 0, RF_KIND_POD, RF_KIND_PODGROUP, RF_KIND_PDB, RF_KIND_COUNT } rf__kind;

typedef struct {
    char *key;
    void *obj;
    bool mark; /* relist: seen in the new list */
} rf__kentry_t;

typedef struct {
    rf__kentry_t *items;
    int32_t n;
    int32_t cap;
    int32_t *slots; /* open addressing over items: -1 empty, -2 deleted */
    int32_t n_slots;
    int32_t n_used_slots; /* live + deleted */
} rf__kmap_t;

typedef struct rf__cache {
    pthread_mutex_t mu;
    pthread_cond_t changed;
    rf__kmap_t maps[RF_KIND_COUNT];
    uint64_t generation;
    bool loud;    /* a change that may change a plan, since the last one (set at creation) */
    char **quiet; /* gangs with a quiet change since the last plan (rf__cache_touch_quiet) */
    int32_t n_quiet, cap_quiet;
    char *ours;      /* spec.schedulerName of our pods: only their changes can be quiet (NULL: none is) */
    unsigned synced; /* bit (1 << kind) */
    unsigned kinds;  /* the kinds being watched: synced == kinds means ready */
} rf__cache_t;

rf__cache_t *rf__cache_new(unsigned kinds);
void rf__cache_destroy(rf__cache_t **cache);
void rf__cache_lock(rf__cache_t *c);
void rf__cache_unlock(rf__cache_t *c);
/* Bump the generation and wake waiters; a plan is due (`loud`). */
void rf__cache_touch(rf__cache_t *c);
/* The same for a quiet change of a pod of `gang`: recorded in `quiet`
 * (loud instead when out of memory). */
void rf__cache_touch_quiet(rf__cache_t *c, const char *gang);
/* Forget `loud` and `quiet`: the cycle is about to build a plan. */
void rf__cache_plan_taken(rf__cache_t *c);
/* Would replacing `old` by `new` (the next version of the same key) change
 * nothing a plan reads of it for any gang but its own? Both ours (c->ours),
 * the same uid, the same node (spec.nodeName, else the binder's assumed
 * node, which rf__cache_put carries over), nomination, requests and
 * scheduling spec, priority, labels (hence gang), terminal, deleting and
 * gated state. Phase, readiness, conditions and annotations may differ:
 * only the pod's own gang reads them. Call before rf__cache_put. */
bool rf__cache_pod_quiet(const rf__cache_t *c, const rf__kpod_t *old, const rf__kpod_t *new);

/* Insert or replace (the old object is destroyed; a pod keeps the binder's
 * assumed node while the new version has no node). Takes ownership of `obj`
 * even on failure. RF_ENOMEM. */
rf_status rf__cache_put(rf__cache_t *c, rf__kind kind, void *obj);
/* Remove by key (`ns/name`, or `name` for nodes); no-op when absent. */
void rf__cache_del(rf__cache_t *c, rf__kind kind, const char *key);
void *rf__cache_get(rf__cache_t *c, rf__kind kind, const char *key);
/* Relist: clear every mark; then rf__cache_put marks what it stores; then
 * sweep removes what is unmarked. */
void rf__cache_mark_begin(rf__cache_t *c, rf__kind kind);
void rf__cache_sweep(rf__cache_t *c, rf__kind kind);
/* Remove every object of `kind` (a kind no longer served, or no longer readable). */
void rf__cache_clear(rf__cache_t *c, rf__kind kind);
/* The key of an object of `kind` into buf. */
void rf__cache_key(rf__kind kind, const void *obj, char *buf, size_t cap);
/* Destroy an object of `kind` (NULL-safe): what the cache does with what it drops. */
void rf__kobj_destroy(rf__kind kind, void *obj);

#endif
