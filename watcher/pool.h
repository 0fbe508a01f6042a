/* watcher/pool.h: the binder threads. Every API write about a gang (its
 * binding, a rollback, an eviction, telling its pods why) is a job run by
 * one of `workers` threads, so that a 1,024-pod gang bound at 50 requests/s
 * holds up neither the cycle thread (solving goes on) nor other gangs (they
 * are bound by the other threads at the same time). Each thread has its own
 * curl multi handle (`concurrency` requests in flight); the token bucket is
 * the binder's, shared by all, so the process's rate limit holds.
 *
 * Jobs about a gang (bind, rollback, evict) mark it busy in the binder from
 * submission to the end (rf__binder_holds holds it out of the plan), so a
 * gang is never in two such jobs at once. Jobs run in submission order.
 * rf__pool_destroy lets running jobs finish (they stop starting requests
 * once the binder is stopped) and drops queued ones. */
#ifndef RACKFIT_WATCHER_POOL_H
#define RACKFIT_WATCHER_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "binder.h"
#include "krun.h"

typedef enum { RF_JOB_BIND = 0, RF_JOB_ROLLBACK, RF_JOB_EVICT, RF_JOB_TELL } rf__job_kind;

typedef struct rf__job {
    rf__job_kind kind;
    char *gang;
    rf__decision_t bind; /* BIND */
    double seen_at;      /* BIND: when the gang's last pod was seen (bind latency) */
    rf__bind_t *pods;    /* ROLLBACK, EVICT */
    int32_t n;
    char *why;        /* ROLLBACK: for the log; EVICT: for the Events */
    rf__requeue_t rq; /* EVICT: the requeue state after it (gang and why not owned: NULL) */
    /* TELL: condition patches (strategic merge on pods/status), annotation patches (merge), Events */
    rf__kreq_t *status;
    int n_status;
    rf__kreq_t *meta;
    int n_meta;
    rf__kreq_t *events;
    int n_events;
    struct rf__job *next;
} rf__job_t;

/* A job of `kind` about `gang` (copied); NULL on OOM. */
rf__job_t *rf__job_new(rf__job_kind kind, const char *gang);
void rf__job_free(rf__job_t **job);

typedef struct rf__pool rf__pool_t;

/* `workers` threads (at least 1), each with `concurrency` requests in flight. NULL on failure. */
rf__pool_t *rf__pool_new(rf__binder_t *b, int workers, int concurrency);
void rf__pool_destroy(rf__pool_t **pool);
/* Queue a job (the pool owns it from here, also on failure). */
void rf__pool_submit(rf__pool_t *pool, rf__job_t *job);
/* Jobs queued or running. */
int rf__pool_inflight(rf__pool_t *pool);
/* Jobs of kind BIND queued or running, and the gangs being bound right now. */
int rf__pool_binding(rf__pool_t *pool);

#endif
