/* watcher/cache.h: what the watcher knows of the cluster: nodes, pods,
 * PodGroups and PodDisruptionBudgets by key, kept up to date by the watch threads (watch.c) and read
 * by the cycle (gangs.c, binder.c).
 *
 * Invariants: one mutex guards everything; callers hold it (rf__cache_lock)
 * around every call below except new/destroy. Objects put in are owned by
 * the cache; a pointer read from it is valid until the lock is released.
 * `generation` grows on every change that can matter to a cycle; `synced`
 * has one bit per kind, set once that kind's first list is in. Iteration is
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
    unsigned synced; /* bit (1 << kind) */
    unsigned kinds;  /* the kinds being watched: synced == kinds means ready */
} rf__cache_t;

rf__cache_t *rf__cache_new(unsigned kinds);
void rf__cache_destroy(rf__cache_t **cache);
void rf__cache_lock(rf__cache_t *c);
void rf__cache_unlock(rf__cache_t *c);
/* Bump the generation and wake waiters. */
void rf__cache_touch(rf__cache_t *c);

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
