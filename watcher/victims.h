/* watcher/victims.h: the watcher's part of topology-aware preemption
 * (issue 14; the solver picks the victims, PLACEMENT-MODEL.md "Running
 * gangs and preemption").
 *
 * Our gangs that run whole are sent as `running` gangs (gangs.c; a gang
 * whose pods carry `rackfit.io/preemptible: "false"`, or whose eviction was
 * refused lately (binder.h rf__binder_unevictable), is not preemptible;
 * pods of other schedulers are victims only with preempt_others). When the
 * answer preempts some:
 * - every pod of each victim is evicted (follow.h's eviction: the Eviction
 *   API, so PodDisruptionBudgets are honoured and a 429 retried), with a
 *   `Preempted` Event naming the gangs it made room for;
 * - each admitted gang that preempted (the answer's `by`) is not bound now:
 *   its pods get `status.nominatedNodeName` (their decided nodes, as
 *   kube-scheduler does, so the capacity stays counted for them: gangs.c
 *   charges a held gang's nominated pods) and it waits until every victim
 *   pod is gone — terminating pods still hold their capacity — or
 *   admit_timeout_s passes, or the eviction of one of its victims is
 *   refused (follow.c evicts a victim's first pod alone: refused, the rest
 *   stays); then it is solved again with everything else and bound whole
 *   where the room now is.
 * The cycle thread; requests go through binder threads (pool.h). */
#ifndef RACKFIT_WATCHER_VICTIMS_H
#define RACKFIT_WATCHER_VICTIMS_H

#include "binder.h"
#include "decisions.h"
#include "pool.h"

/* Act on the answer's victims. waits[i] (nd entries) is set for the
 * decisions that must not be bound now (their gang preempted). */
void rf__preempt_start(rf__binder_t *b, rf__pool_t *pool, const rf__plan_t *plan, const rf__victim_t *v, int32_t nv,
                       const rf__decision_t *d, int32_t nd, bool *waits);
/* Drop the waits whose victims are all gone (or that waited too long). Takes the cache lock. */
void rf__preempt_check(rf__binder_t *b);

#endif
