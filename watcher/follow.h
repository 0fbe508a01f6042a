/* watcher/follow.h: the life of a gang after its last binding (docs/watcher.md,
 * "The life of a gang after it is bound").
 *
 * The cycle thread follows every bound gang against the cache:
 * - admission: until the kubelets have admitted every pod (status.startTime,
 *   or phase Running/Succeeded). A pod that fails first (OutOfcpu...), goes
 *   away, or is not admitted within `admit_timeout_s` rolls the gang back
 *   (its pods deleted, uid precondition) and holds it (bind backoff);
 * - readiness: until every pod is Ready or Succeeded (a pod that finished is
 *   not "not ready"). A gang not ready within its ready timeout (the
 *   annotation `rackfit.io/ready-timeout` on its PodGroup or pods, a
 *   duration like `90s` or `5m`, else `ready_timeout_s`; 0 turns it off), or
 *   one that loses a pod meanwhile (evicted, deleted or failed by others),
 *   is evicted whole through the Eviction API, with an Event on every pod
 *   saying why, and requeued: its recreated pods wait requeue_base_s *
 *   2^(count-1), capped at requeue_cap_s; past `requeue_limit` evictions the
 *   gang has failed and is left pending. The count and the next try are
 *   written on the PodGroup (annotation `rackfit.io/requeue`, "COUNT
 *   NEXT-TRY" or "COUNT failed"), so a successor watcher knows them.
 * Every request is made by a binder thread (pool.h), never by the cycle. */
#ifndef RACKFIT_WATCHER_FOLLOW_H
#define RACKFIT_WATCHER_FOLLOW_H

#include "binder.h"
#include "pool.h"

/* Follow a bound gang (copies `pods`). The cycle thread only; takes the cache lock. */
void rf__follow_add(rf__binder_t *b, const char *gang, const char *attempt, const rf__bind_t *pods, int32_t n,
                    double since);
/* Adopt what the binder threads bound, and check every followed gang:
 * finished ones are dropped, failed ones submitted to `pool` (rollback or
 * eviction). Call without the cache lock held. */
void rf__binder_follow(rf__binder_t *b, rf__pool_t *pool);

/* The ready timeout of `gang` (annotation on its PodGroup, else on one of its
 * pods, else the setting). The cache must be locked. */
/* Is `p` (a pod whose uid is not the followed one's) bound by `attempt`
 * all the same: bound, not deleting, its intent "ATTEMPT NODE SIZE" naming
 * that attempt? A pod recreated under the same name mid-bind is: servers
 * that ignore a Binding's metadata.uid (v1.20 does) bind whatever pod holds
 * the name. The follower deletes it with its own uid (the gang is rolled
 * back, or evicted once admitted). */
bool rf__follow_recreated_ours(const char *attempt, const rf__kpod_t *p);
double rf__gang_ready_timeout(rf__binder_t *b, const char *gang, const rf__bind_t *pods, int32_t n);

/* Evict pods whole (policy/v1 Eviction, policy/v1beta1 on servers without
 * it), post an Event on each saying `why` and the requeue state `rq`, and
 * write the requeue annotation on the gang's PodGroup when it has one. A
 * preemption passes rq->count 0: the Event is `Preempted`, no annotation.
 * Returns how many evictions failed. A binder thread. */
int rf__binder_evict(rf__binder_t *b, rf__kmulti_t *multi, const char *gang, const rf__bind_t *pods, int32_t n,
                     const char *why, const rf__requeue_t *rq);

#endif
