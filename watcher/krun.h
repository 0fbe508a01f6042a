/* watcher/krun.h: running a set of API requests to the end, with retries:
 * the generic part of every write the watcher makes (intents, bindings,
 * deletes, evictions, condition patches, Events, annotations). It decides
 * nothing about gangs; callers say what counts as success (`accept`).
 *
 * A request that fails for a passing reason (a transport error, a timeout,
 * a 5xx, a 429) is retried up to `max_retries` times with a short
 * exponential delay (50 ms doubling, at most 2 s); a 429 waits its
 * Retry-After and gets 10 more tries (the server asked us to slow down, not
 * to give up). Requests run on the caller's rf__kmulti_t (one per thread)
 * under a limiter that may be shared by every thread (kube_http.h). The stop
 * test is asked before every request starts; a request never started is
 * counted as failed ("not sent"). */
#ifndef RACKFIT_WATCHER_KRUN_H
#define RACKFIT_WATCHER_KRUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube_http.h"

/* One request's path and body (both malloc'ed, owned by the array). */
typedef struct {
    char *path;
    char *body;
} rf__kreq_t;

void rf__kreqs_free(rf__kreq_t *reqs, int n);

/* Does call `i`'s answer count as success? Only called with transport RF_OK. */
typedef bool (*rf__kaccept_fn)(void *ctx, int i, const rf__kcall_t *call);

typedef struct {
    rf__kmulti_t *multi;  /* the calling thread's own */
    rf__limiter_t *lim;   /* may be shared between threads; NULL: no limit */
    int max_retries;      /* per request, passing failures */
    long timeout_ms;      /* per request */
    bool (*stop)(void *); /* may be NULL */
    void *stop_ctx;
    atomic_long *retries;   /* may be NULL: counts every retry */
    atomic_long *throttled; /* may be NULL: counts every 429 */
} rf__krun_t;

/* Run `reqs` to the end. ok[i] (n entries) says which were accepted;
 * unsure[i] (may be NULL) that a failed one's last answer was a passing
 * failure, so the server may have applied it. `why` gets the first failure.
 * Returns how many were not accepted. */
int rf__krun(const rf__krun_t *run, const char *method, const char *ctype, const rf__kreq_t *reqs, int n, bool *ok,
             bool *unsure, rf__kaccept_fn accept, void *actx, char *why, size_t why_cap);

/* Accept any 2xx. */
bool rf__kaccept_2xx(void *ctx, int i, const rf__kcall_t *call);
/* Accept what leaves nothing of ours behind for a delete or an eviction:
 * 2xx, 404 (gone already), 409 (the uid precondition failed: replaced). */
bool rf__kaccept_gone(void *ctx, int i, const rf__kcall_t *call);

#endif
