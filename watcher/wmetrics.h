/* watcher/wmetrics.h: what rackfit-watch shows its operators, on
 * `--metrics-listen HOST:PORT` (base/metrics.h, served by base/httpd.h;
 * docs/watcher.md lists every family):
 *
 *   rackfit_watch_pending_gangs{state}            gauge: waiting_for_members, waiting_for_capacity,
 *                                                  binding, backoff, refused, failed
 *   rackfit_watch_gangs_bound_total               counter
 *   rackfit_watch_gangs_rolled_back_total         counter
 *   rackfit_watch_gangs_evicted_total             counter (not ready in time, or broken while starting)
 *   rackfit_watch_gangs_failed_total              counter (past the requeue limit)
 *   rackfit_watch_bind_latency_seconds            histogram: last pod seen -> last binding
 *   rackfit_watch_api_requests_total{verb,code}   counter (code "0": no answer)
 *   rackfit_watch_api_throttled_total             counter: 429s
 *   rackfit_watch_api_retries_total               counter
 *   rackfit_watch_watch_restarts_total{kind}      counter: watch streams started again
 *   rackfit_watch_relists_total{kind}             counter: lists after the first (410 Gone, errors)
 *   rackfit_watch_lease_held                      gauge: 1 while this watcher leads
 *   rackfit_watch_cycles_total, rackfit_watch_solves_total, rackfit_watch_solve_seconds (histogram)
 *
 * Counters kept elsewhere as atomics (the binder's, the watch threads') are
 * carried over at each scrape by a collect callback (the difference since
 * the last scrape is added), so the hot paths touch no registry. */
#ifndef RACKFIT_WATCHER_WMETRICS_H
#define RACKFIT_WATCHER_WMETRICS_H

#include <stdatomic.h>

#include "binder.h"
#include "leader.h"
#include "metrics.h"
#include "watch.h"

typedef enum {
    RF_PENDING_MEMBERS = 0,
    RF_PENDING_CAPACITY,
    RF_PENDING_BINDING,
    RF_PENDING_BACKOFF,
    RF_PENDING_REFUSED,
    RF_PENDING_FAILED,
    RF_PENDING_COUNT
} rf__pending_state;

typedef struct rf__wmetrics rf__wmetrics_t;

/* The registry and its families; the binder, watches and leader are read at
 * each scrape (all borrowed, outliving the metrics). NULL on OOM. */
rf__wmetrics_t *rf__wmetrics_new(rf__binder_t *b, rf__watch_t *watches, int n_watches, rf__leader_t *leader);
void rf__wmetrics_destroy(rf__wmetrics_t **m);
rf__metrics_t *rf__wmetrics_registry(rf__wmetrics_t *m);

/* For rf__kube_observe (ctx: the rf__wmetrics_t). */
void rf__wmetrics_api(void *ctx, const char *verb, long status);
/* For the binder's on_bound (ctx: the rf__wmetrics_t). */
void rf__wmetrics_bound(void *ctx, double seconds);
/* A cycle's pending gangs by state (every state set). */
void rf__wmetrics_pending(rf__wmetrics_t *m, const long counts[RF_PENDING_COUNT]);
void rf__wmetrics_cycle(rf__wmetrics_t *m, bool solved, double solve_s);

#endif
