/* watcher/binder.h: binding gangs whole, and saying why not.
 *
 * A gang is bound in two phases, each in parallel (bounded concurrency, a
 * client-side token bucket):
 * 1. intent: every pod gets the annotation `rackfit.io/bind-intent`
 *    ("ATTEMPT NODE SIZE", a JSON merge patch that also names the pod's uid);
 * 2. bind: POST pods/NAME/binding for every pod (uid precondition).
 * A request that fails for a passing reason (5xx, 429 after its Retry-After,
 * a timeout) is retried up to `max_retries` times; a 409 from a pod already
 * bound to the same node is a success (our earlier request did it). If the
 * gang still cannot be bound whole, every pod bound by this attempt is
 * deleted with a uid precondition (its controller recreates it) and the gang
 * is held for a capped exponential backoff. After the last 201 the gang is
 * followed until the kubelet has admitted every pod (status.startTime); a
 * pod that fails first (OutOfcpu...) or vanishes rolls the gang back the same
 * way, and so does `admit_timeout_s` passing.
 *
 * A binding whose last answer was a timeout or a 5xx may have been applied:
 * the pod is read back (GET), and one still of that uid with a node counts as
 * bound (towards the gang, or the rollback). A rollback's failed delete
 * leaves the pod's capacity assumed taken.
 *
 * A watcher that takes over reads the intents (rf__binder_recover): an
 * attempt with pods bound and pods still pending, or with fewer bound (or
 * ended) than its SIZE, is rolled back; one with every pod bound is followed. When *lost or *stop becomes non-zero, or
 * rf__now() passes *lease_until (the Lease may be gone), no new request
 * starts (checked before every request); the successor rolls back what is
 * partial. */
#ifndef RACKFIT_WATCHER_BINDER_H
#define RACKFIT_WATCHER_BINDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "gangs.h"
#include "kube_http.h"

typedef struct {
    char *ns;
    char *name;
    char *uid;
    char *node;
} rf__bind_t;

/* What the answer says about one sent gang. */
typedef struct {
    char *gang;
    bool admitted;
    char *reason;      /* rejected: the solver's sentence */
    rf__bind_t *binds; /* admitted: pod -> node, rank order within each pod set */
    int32_t n_binds;
    int32_t plan_gang; /* index in plan->gangs */
} rf__decision_t;

/* Map an answer (contract JSON) onto the plan's pods: placements are handed
 * to each pod set's pending pods in rank order (ranks held by bound pods are
 * not in `pending`, so the k-th new pod is the k-th pending one). */
rf_status rf__decisions_from_answer(const rf__plan_t *plan, const char *answer, size_t len, rf__decision_t **out,
                                    int32_t *n, rf_error_t *err);
void rf__decisions_free(rf__decision_t **d, int32_t n);

typedef struct {
    char *gang;
    char *attempt;
    rf__bind_t *pods;
    int32_t n;
    double since;
} rf__follow_t;

typedef struct {
    char *gang;
    double until;
    int failures;
} rf__hold_t;

typedef struct {
    rf__kube_t *kube;
    rf__kmulti_t *multi;
    rf__limiter_t lim;
    rf__cache_t *cache;
    const atomic_int *lost;            /* non-zero: stop at once */
    const atomic_int *stop;            /* the process is stopping: no new request either */
    const _Atomic double *lease_until; /* > 0: the Lease may be gone after this rf__now() */
    _Atomic double *heartbeat;         /* may be NULL: set to rf__now() while requests run (/healthz) */
    const char *identity;              /* this watcher (the Lease holder identity) */
    const char *scheduler_name;
    int max_retries;        /* per request, passing failures */
    long timeout_ms;        /* per request */
    double admit_timeout_s; /* from the last 201 to every pod admitted */
    double backoff_base_s;  /* a failed gang waits base * 2^(failures-1), capped */
    double backoff_cap_s;
    rf__follow_t *follows;
    int32_t n_follows, cap_follows;
    rf__hold_t *holds;
    int32_t n_holds, cap_holds;
    rf__hold_t *told; /* gangs told unschedulable: `until` is when they may be told a new reason */
    int32_t n_told, cap_told;
    double retell_s; /* a gang's pods are told a changed reason at most this often (30) */
    /* counters */
    long binds_ok, binds_failed, retries, rollbacks, gangs_bound, events;
    unsigned long attempt_seq;
} rf__binder_t;

void rf__binder_init(rf__binder_t *b);
void rf__binder_fini(rf__binder_t *b);

/* Has the binder stopped starting requests (Lease lost or past its deadline, or the process stopping)? */
bool rf__binder_stopped(const rf__binder_t *b);

/* Bind one admitted gang. RF_OK: every pod bound (the gang is followed);
 * otherwise the gang was rolled back (unless the lease was lost) and held,
 * and `why` says what failed. */
rf_status rf__bind_gang(rf__binder_t *b, const rf__decision_t *d, char *why, size_t why_cap);

/* Check followed gangs against the cache: finished ones are dropped, failed
 * ones rolled back. Call without the cache lock held. */
void rf__binder_follow(rf__binder_t *b);
/* Is the gang held (backoff, or followed)? For rf__plan_build's skip. */
bool rf__binder_holds(void *binder, const char *gang);
/* Recover from the intents on the pods (after taking the lease and syncing). */
void rf__binder_recover(rf__binder_t *b);

/* PodScheduled=False/Unschedulable, and a FailedScheduling Event, with the
 * message "rackfit: gang NAME: REASON", on every pending pod of the gang
 * whose condition does not say so already (so a gang that stays
 * unschedulable is told once, not every cycle), and a gang whose reason
 * keeps changing (fits 12 of 16, then 13...) at most every `retell_s`. */
void rf__binder_tell(rf__binder_t *b, const rf__pgang_t *g, const char *reason);

#endif
