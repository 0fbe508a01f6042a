/* watcher/cycle.h: the cycle thread (docs/watcher.md, "Cycles"): wait for a
 * change, let a burst settle (`debounce_ms` of quiet, at most
 * `batch_max_ms`), build the problem (gangs.h), solve it with rackfitd, hand
 * each admitted gang to a binder thread (pool.h) and tell the others why
 * (tell.h); between cycles, follow bound gangs (follow.h). A change that
 * only touched pods of held gangs quietly (cache.h: their capacity where it
 * was) builds no plan: the plan skips held gangs, so it would be the last
 * one; a gang bound slowly no longer has every pod event rebuild it. Only this thread
 * talks to rackfitd; it makes no API request of its own after the takeover
 * check (recover.h), so a large gang being bound slowly never stops it. */
#ifndef RACKFIT_WATCHER_CYCLE_H
#define RACKFIT_WATCHER_CYCLE_H

#include <stdatomic.h>

#include "binder.h"
#include "cache.h"
#include "gangs.h"
#include "leader.h"
#include "pool.h"
#include "rackfit/client.h"
#include "wmetrics.h"

typedef struct {
    rf__cache_t *cache;
    rf__binder_t *binder;
    rf__pool_t *pool;
    rf_client_t *client;
    rf__gang_opts_t gopts;
    rf__leader_t *leader;    /* its `leading`, `lost` and `recover_after` are read */
    rf__wmetrics_t *metrics; /* may be NULL */
    const atomic_int *stop;
    _Atomic double *heartbeat; /* the loop's last turn (/healthz) */
    atomic_int *ready;         /* synced (/readyz) */
    long debounce_ms, batch_max_ms;
    double replan_s; /* a plan at least this often while a gang is pending (0: only on changes) */
    bool pending;    /* the last plan left some gang pending */
    long cycles, solves;
    unsigned long plans_skipped; /* changes that made no plan: only held gangs' pods changed, quietly (cache.h) */
} rf__cycle_t;

/* One cycle: build, solve, bind, tell. */
void rf__cycle_once(rf__cycle_t *c);
/* The loop, until *stop or the Lease is lost. */
void rf__cycle_run(rf__cycle_t *c);

#endif
