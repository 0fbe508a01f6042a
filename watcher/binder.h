/* watcher/binder.h: binding gangs whole, and the state every binder thread
 * shares (docs/watcher.md, "Binding a gang as one unit" and "The life of a
 * gang after it is bound").
 *
 * A gang is bound by one binder thread (pool.h) in one phase, its requests
 * in parallel (bounded concurrency, the process's shared token bucket):
 * POST pods/NAME/binding for every pod (its uid in metadata.uid, which v1.20 does not check), the Binding
 * carrying the intent as its annotation `rackfit.io/bind-intent`
 * ("ATTEMPT NODE SIZE"). The API server copies a Binding's annotations onto
 * the pod in the same write that sets spec.nodeName, so every bound pod
 * names its attempt and the attempt's size, and no pod is ever bound
 * without it: recover.h finds a half-bound attempt from the bound pods
 * alone (fewer bound than SIZE). One request per pod.
 * Requests are retried by krun.h; a 409 from a pod already bound to the same
 * node with this attempt's intent is a success (our earlier request did it).
 * A binding whose last answer was a timeout or a 5xx may have been applied:
 * the pod is read back (GET) and counts as bound only when bound to its
 * planned node with this attempt's intent (rf__bind_readback); bound any
 * other way it stays failed and is deleted by the rollback. If the gang still cannot be bound whole, every pod
 * bound by this attempt is deleted with a uid precondition (its controller
 * recreates it) and the gang is held for a capped exponential backoff.
 *
 * What happens after the last 201 (admission, readiness, eviction, requeue)
 * is follow.h's; telling people why is tell.h's; taking over from another
 * watcher is recover.h's.
 *
 * Threads and locks: `mu` guards holds, requeues, busy and the hand-over
 * list `bound`; it is a leaf lock (nothing else is locked while it is held,
 * in particular never the cache lock). `follows` and `told` belong to the
 * cycle thread alone. Counters are atomics (metrics read them). When *lost
 * or *stop becomes non-zero, or rf__now() passes *lease_until (the Lease may
 * be gone), no new request starts (checked before every request); the
 * successor rolls back what is partial. */
#ifndef RACKFIT_WATCHER_BINDER_H
#define RACKFIT_WATCHER_BINDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "decisions.h"
#include "gangs.h"
#include "krun.h"
#include "kube_http.h"

#define RF_ANN_READY_TIMEOUT "rackfit.io/ready-timeout"
#define RF_ANN_REQUEUE       "rackfit.io/requeue"

/* A gang bound and followed by the cycle thread (follow.h). */
typedef struct {
    char *gang;
    char *attempt;
    rf__bind_t *pods;
    int32_t n;
    double since;           /* rf__now() of the last binding */
    double ready_timeout_s; /* this gang's (annotation, else the setting); 0: not followed past admission */
    double admitted_at;     /* rf__now() once every pod was admitted, else 0 */
    double seen_at;         /* rf__now() when its last pod was seen pending (bind latency) */
} rf__follow_t;

/* A gang that failed to bind: it waits base * 2^(failures-1), capped. */
typedef struct {
    char *gang;
    double until;
    int failures;
} rf__hold_t;

/* A gang evicted for not becoming ready: its recreated pods wait
 * requeue_base * 2^(count-1), capped; past the limit it has failed. */
typedef struct {
    char *gang;
    int count;
    double until;      /* rf__now() */
    double until_wall; /* the same, wall clock (for annotations and Events) */
    bool failed;
    char *why; /* the last eviction's reason */
} rf__requeue_t;

/* A gang that preempted others: it waits, its pods nominated to its nodes,
 * until every victim pod is gone (cycle thread only). */
typedef struct {
    char *gang;
    rf__member_t *victims;
    int32_t n;
    double since;
    char *victim_gangs; /* ",a,b,": the victims' gang names (a refused one ends the wait) */
} rf__preempt_t;

typedef struct rf__binder {
    /* wiring */
    rf__kube_t *kube;
    rf__kmulti_t *multi; /* the cycle thread's own (recovery, follow-ups); binder threads have theirs */
    rf__limiter_t lim;   /* shared by every thread that writes */
    rf__cache_t *cache;
    const atomic_int *lost;            /* non-zero: stop at once */
    const atomic_int *stop;            /* the process is stopping: no new request either */
    const _Atomic double *lease_until; /* > 0: the Lease may be gone after this rf__now() */
    _Atomic double *heartbeat;         /* may be NULL: set to rf__now() while requests run (/healthz) */
    const char *identity;              /* this watcher (the Lease holder identity) */
    const char *scheduler_name;
    /* settings */
    int max_retries;        /* per request, passing failures */
    long timeout_ms;        /* per request */
    double admit_timeout_s; /* from the last 201 to every pod admitted */
    double backoff_base_s;  /* a gang that failed to bind waits base * 2^(failures-1), capped */
    double backoff_cap_s;
    double ready_timeout_s; /* from the last 201 to every pod Ready (or Succeeded); 0: never evict */
    double requeue_base_s;  /* an evicted gang's pods wait base * 2^(count-1), capped */
    double requeue_cap_s;
    int requeue_limit; /* evictions before the gang has failed; 0: unlimited */
    double retell_s;   /* a gang's pods are told a changed reason at most this often (30) */
    /* learned from the server: set after the first 400/404 naming the Eviction kind on policy/v1 (a server
     * before 1.22); every later eviction is sent as policy/v1beta1 at once, for the rest of the process */
    atomic_int no_policy_v1;
    /* shared state, under mu */
    pthread_mutex_t mu;
    rf__hold_t *holds;
    int32_t n_holds, cap_holds;
    rf__requeue_t *requeues;
    int32_t n_requeues, cap_requeues;
    char **busy; /* gangs with a job queued or running in the pool */
    int32_t n_busy, cap_busy;
    rf__follow_t *bound; /* bound by a binder thread, not yet adopted by the cycle thread */
    int32_t n_bound, cap_bound;
    rf__hold_t *unevictable; /* victims whose first eviction was refused: not preemptible until `until` */
    int32_t n_unevictable, cap_unevictable;
    /* the cycle thread's own */
    rf__follow_t *follows;
    int32_t n_follows, cap_follows;
    rf__hold_t *told; /* gangs told unschedulable: `until` is when they may be told a new reason */
    int32_t n_told, cap_told;
    rf__preempt_t *preempts; /* preemptors waiting for their victims */
    int32_t n_preempts, cap_preempts;
    unsigned long released; /* follows and preempts ended: gangs released without a cluster change (cycle.c) */
    /* counters */
    atomic_long binds_ok, binds_failed, retries, throttled, rollbacks, gangs_bound, events, evictions, requeued,
        failed_gangs;
    atomic_ulong attempt_seq;
    void (*on_bound)(void *ctx, double seconds); /* may be NULL: bind latency (last pod seen -> last binding) */
    void *on_bound_ctx;
} rf__binder_t;

void rf__binder_init(rf__binder_t *b);
void rf__binder_fini(rf__binder_t *b);

/* Has the binder stopped starting requests (Lease lost or past its deadline, or the process stopping)? */
bool rf__binder_stopped(const rf__binder_t *b);
/* A request runner on `multi` with the binder's limits, stop test and counters. */
rf__krun_t rf__binder_krun(rf__binder_t *b, rf__kmulti_t *multi);

/* Bind one admitted gang on `multi` (the calling thread's). RF_OK: every pod
 * bound (handed to the cycle thread to follow); otherwise the gang was
 * rolled back (unless the lease was lost) and held, and `why` says what
 * failed. `seen_at` is when its last pod was seen (for the latency). */
rf_status rf__bind_gang(rf__binder_t *b, rf__kmulti_t *multi, rf__decision_t *d, double seen_at, char *why,
                        size_t why_cap);
/* Count a decided gang's capacity at once (each pod's assumed node), so the
 * cycles that run while a binder thread binds it never give it away. The
 * binder gives back what it does not bind. Takes the cache lock. */
void rf__binder_assume(rf__binder_t *b, const rf__decision_t *d);
/* Delete pods[i] where sel[i] (NULL: all) with their uid as precondition. Returns how many are left bound. */
int rf__binder_rollback(rf__binder_t *b, rf__kmulti_t *multi, const char *gang, const rf__bind_t *pods, int n,
                        const bool *sel);

/* Is the gang held (bind backoff, requeue backoff or failed, a job in the
 * pool, or followed)? For rf__plan_build's skip. Takes `mu`; callable with
 * the cache lock held. */
bool rf__binder_holds(void *binder, const char *gang);
/* Why a gang is held, for metrics: none, a bind or requeue backoff, a job
 * in the pool or a gang followed (binding), or failed past the requeue limit. */
typedef enum { RF_HELD_NONE = 0, RF_HELD_BACKOFF, RF_HELD_BINDING, RF_HELD_FAILED } rf__held_why;
rf__held_why rf__binder_held_why(rf__binder_t *b, const char *gang);

/* The earliest end of a hold or requeue backoff after `after`, or 0. */
double rf__binder_next_due(rf__binder_t *b, double after);

/* Bind backoff: hold a gang that failed; forget it once it is admitted. */
void rf__binder_hold(rf__binder_t *b, const char *gang);
void rf__binder_unhold(rf__binder_t *b, const char *gang);
/* Requeue: count one more eviction of `gang` for `why`; returns the state
 * after it (copied into *out; out->gang and out->why borrowed until the next
 * call). rf__binder_requeue_get: the state, false when none. forget: the
 * gang became ready. */
void rf__binder_requeue(rf__binder_t *b, const char *gang, const char *why, rf__requeue_t *out);
bool rf__binder_requeue_get(rf__binder_t *b, const char *gang, rf__requeue_t *out, char *why, size_t why_cap);
void rf__binder_requeue_forget(rf__binder_t *b, const char *gang);
/* Restore a requeue state read from an annotation (after a restart). */
void rf__binder_requeue_restore(rf__binder_t *b, const char *gang, int count, double until_wall, bool failed);
/* Mark a gang as having a job in the pool (+1) or done (-1). */
void rf__binder_busy(rf__binder_t *b, const char *gang, int delta);
/* Take the gangs bound since the last call (the caller owns them). */
rf__follow_t *rf__binder_take_bound(rf__binder_t *b, int32_t *n);
void rf__follow_fini(rf__follow_t *f);
void rf__preempt_fini(rf__preempt_t *p);
/* A victim whose eviction was refused (a PodDisruptionBudget's 429 past the
 * retries): it is sent as not preemptible for admit_timeout_s, so the round
 * is solved again without it. rf__binder_unevictable: is it still? (for
 * rf__gang_opts_t.unevictable). Both take `mu`. */
void rf__binder_unevictable_add(rf__binder_t *b, const char *gang);
bool rf__binder_unevictable(void *binder, const char *gang);

/* "/api/v1/namespaces/NS/pods/NAME", and "/SUB" when sub is not NULL; malloc'ed, NULL on OOM. */
char *rf__pod_path(const char *ns, const char *name, const char *sub);
/* A JSON merge patch setting one annotation, with the object's uid as a
 * precondition when uid is not NULL (a recreated object is not touched);
 * malloc'ed, NULL on OOM. */
char *rf__annotation_patch(const char *uid, const char *key, const char *value);

/* Sizes: a node name is at most 253 characters (a DNS subdomain), the
 * identity at most RF_IDENTITY_MAX (config.c refuses longer ones and ones
 * with whitespace). An attempt is "IDENTITY.MILLISECONDS.SEQ", an intent
 * "ATTEMPT NODE SIZE"; each cap holds its maximum with its NUL. */
#define RF_IDENTITY_MAX  253
#define RF_NODE_NAME_CAP 256
#define RF_ATTEMPT_CAP   (RF_IDENTITY_MAX + 48)
#define RF_INTENT_CAP    (RF_ATTEMPT_CAP + RF_NODE_NAME_CAP + 16)

/* The intent value "ATTEMPT NODE SIZE" of one pod of an attempt. */
void rf__bind_intent_value(const char *attempt, const char *node, int size, char *buf, size_t cap);
/* Read one back: exactly three fields separated by single spaces, ATTEMPT
 * shorter than RF_ATTEMPT_CAP, NODE than RF_NODE_NAME_CAP, SIZE >= 1;
 * false (nothing truncated, nothing guessed) when it is not one. */
bool rf__bind_intent_parse(const char *v, char attempt[RF_ATTEMPT_CAP], char node[RF_NODE_NAME_CAP], int *size);

/* How a pod read back (cache or GET: uid, spec.nodeName, the intent
 * annotation; NULL when absent) stands against the planned pod `p` and the
 * intent this attempt gave it: RF_RB_OURS only when it is that pod (uid),
 * bound to p->node with exactly that intent. RF_RB_OTHER: that pod, bound
 * otherwise (another node, or another attempt's or no intent: e.g. the late
 * write of an attempt rolled back before), so not this attempt's success.
 * RF_RB_UNBOUND: not bound, or not that pod (and not bound by this attempt).
 * RF_RB_RECREATED: another uid under that name, bound with exactly this
 * attempt's intent: the pod was recreated mid-bind and a server that ignores
 * the Binding's metadata.uid (v1.20 does) bound the new one; it is deleted
 * with its own uid and the gang rolled back. */
typedef enum { RF_RB_UNBOUND = 0, RF_RB_OURS = 1, RF_RB_OTHER = 2, RF_RB_RECREATED = 3 } rf__readback_t;
rf__readback_t rf__bind_readback(const char *uid, const char *node, const char *intent, const rf__bind_t *p,
                                 const char *want_intent);

/* The requeue annotation's value: "COUNT NEXT-TRY" (RFC 3339), or "COUNT failed". */
void rf__requeue_format(const rf__requeue_t *r, char *buf, size_t cap);
/* Parse it back; false when it is not one. */
bool rf__requeue_parse(const char *v, int *count, double *until_wall, bool *failed);

#endif
