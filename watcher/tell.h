/* watcher/tell.h: telling people why a gang waits, as kube-scheduler does:
 * the condition PodScheduled=False (reason Unschedulable, message "rackfit:
 * gang NAME: REASON", a strategic merge patch on pods/status) and a Warning
 * Event (core/v1, reportingComponent the scheduler name) on every pending
 * pod whose condition does not say so already, so a gang that stays
 * unschedulable is told once, not every cycle; a gang whose reason keeps
 * changing (fits 12 of 16, then 13...) at most every `retell_s`.
 *
 * The cycle thread decides and builds the requests (it reads the cache);
 * a binder thread sends them (pool.h), so telling a 1,024-pod gang at
 * 50 requests/s does not stop the cycle. */
#ifndef RACKFIT_WATCHER_TELL_H
#define RACKFIT_WATCHER_TELL_H

#include "binder.h"
#include "pool.h"

/* Tell `g`'s pending pods `reason` with an Event of `event_reason`
 * ("FailedScheduling" when NULL). `annotation` (may be NULL): also set
 * rackfit.io/requeue to it on every pending pod that lacks that value. The
 * cycle thread; takes the cache lock. */
void rf__binder_tell(rf__binder_t *b, rf__pool_t *pool, const rf__pgang_t *g, const char *reason,
                     const char *event_reason, const char *annotation);

/* A core/v1 Event body about pod NS/NAME (uid) of `type` (Normal/Warning). NULL on OOM. */
char *rf__event_body(const rf__binder_t *b, const char *ns, const char *name, const char *uid, const char *type,
                     const char *reason, const char *message);

/* Send a TELL job's requests (a binder thread). */
void rf__tell_run(rf__binder_t *b, rf__kmulti_t *multi, rf__job_t *job);

#endif
