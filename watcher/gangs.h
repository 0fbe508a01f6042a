/* watcher/gangs.h: gang assembly. Turns the cache's nodes, pods and
 * PodGroups into a contract problem (PLACEMENT-MODEL.md) as JSON text, and
 * remembers which pods each gang's placements go to.
 *
 * What it builds (docs/watcher.md has the user's view):
 * - nodes: every node, with its labels, allocatable, taints; `unschedulable`
 *   when cordoned or not Ready; `used` summed from every pod bound to it
 *   (or assumed bound by the binder) that is not Succeeded/Failed, deleting
 *   ones included, and from pods of other schedulers nominated to it;
 * - gangs: pending pods (no node) of our scheduler, grouped by the
 *   `scheduling.x-k8s.io/pod-group` label (size: the PodGroup's minMember),
 *   or Kueue's `kueue.x-k8s.io/pod-group-name` label (size: the
 *   `kueue.x-k8s.io/pod-group-total-count` annotation), or alone. Members
 *   are the group's pods that are not terminal, not deleting and not gated;
 *   bound members become `bound` with their ranks. A gang whose members are
 *   fewer than its size waits; one with something the contract cannot express
 *   is refused. Pods with equal scheduling-relevant spec (kobj.h `sig`) form
 *   a pod set; ranks come from index labels, then names.
 * - required node affinity becomes a synthetic node label
 *   (`rackfit.io/affinity-N: "true"` on the nodes that match) and a node
 *   selector on it, so the contract's exact-match selector expresses it.
 *
 * Before returning, the problem is read back with librackfit's own reader;
 * a gang the reader rejects is refused with the reader's message and the
 * problem rebuilt without it, so one bad gang never stops the others. */
#ifndef RACKFIT_WATCHER_GANGS_H
#define RACKFIT_WATCHER_GANGS_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"

#define RF_LABEL_POD_GROUP       "scheduling.x-k8s.io/pod-group"
#define RF_LABEL_KUEUE_GROUP     "kueue.x-k8s.io/pod-group-name"
#define RF_ANN_KUEUE_TOTAL       "kueue.x-k8s.io/pod-group-total-count"
#define RF_ANN_REQUIRED          "kueue.x-k8s.io/podset-required-topology"
#define RF_ANN_PREFERRED         "kueue.x-k8s.io/podset-preferred-topology"
#define RF_ANN_SLICE_REQUIRED    "kueue.x-k8s.io/podset-slice-required-topology"
#define RF_ANN_SLICE_SIZE        "kueue.x-k8s.io/podset-slice-size"
#define RF_ANN_BANDWIDTH         "rackfit.io/bandwidth"
#define RF_ANN_INTENT            "rackfit.io/bind-intent"
#define RF_AFFINITY_LABEL_PREFIX "rackfit.io/affinity-"

typedef struct {
    const char *scheduler_name;
    const char *const *levels;
    int32_t n_levels;
    const double *level_costs; /* NULL: the contract's default */
    const char *mode;          /* "auto", "greedy", "ilp" */
    int64_t time_limit_ms;
    const char *value_resource; /* NULL: the contract's default */
    bool preemption;            /* send our running gangs (options.preemption lower_priority), else `never` */
    bool preempt_others;        /* other schedulers' running pods may be victims too (grouped as ours are) */
    bool (*unevictable)(void *ctx, const char *gang); /* may be NULL: a running gang sent as not preemptible */
    void *unevictable_ctx;
} rf__gang_opts_t;

typedef enum {
    RF_GANG_SENT = 0, /* in the problem */
    RF_GANG_WAITING,  /* not all its pods exist (or are members) yet */
    RF_GANG_REFUSED,  /* uses what the contract cannot express */
    RF_GANG_HELD      /* the caller's skip() said so (backoff, in flight) */
} rf__gang_state;

typedef struct {
    char *ns;
    char *name;
    char *uid;
    int64_t rank;
} rf__member_t;

typedef struct {
    char *name;
    rf__member_t *pending; /* the pod set's pods without a node, in rank order */
    int32_t n_pending;
    int64_t count;
    int64_t slice; /* slice size, 0: none */
} rf__gset_t;

typedef struct {
    char *name; /* the contract's gang name: "ns/group", or "ns/pod:NAME" alone */
    char *ns;
    rf__gang_state state;
    char *why; /* WAITING and REFUSED: a sentence for people */
    rf__gset_t *sets;
    int32_t n_sets;
    int64_t n_pending;
} rf__pgang_t;

/* A gang of ours running whole, sent as a `running` gang the solver may
 * preempt (its pods are what an eviction takes). */
typedef struct {
    char *name;
    int64_t priority;
    rf__member_t *pods;
    int32_t n_pods;
} rf__prun_t;

#define RF_ANN_PREEMPTIBLE "rackfit.io/preemptible"

typedef struct {
    char *json; /* the problem; NULL when no gang was sent */
    size_t len;
    rf__pgang_t *gangs;
    int32_t n_gangs;
    int32_t *sent; /* sent[j]: index in `gangs` of the problem's gang j */
    int32_t n_sent;
    rf__prun_t *running; /* the problem's running gangs, in its order (preemption only) */
    int32_t n_running;
} rf__plan_t;

/* `skip` (may be NULL) holds a gang by name (backoff, binding in flight).
 * The cache must be locked by the caller. */
rf_status rf__plan_build(rf__cache_t *cache, const rf__gang_opts_t *opts, bool (*skip)(void *ctx, const char *gang),
                         void *ctx, rf__plan_t *out, rf_error_t *err);
void rf__plan_fini(rf__plan_t *plan);

/* The gang a pod belongs to (its contract name) into buf; false when it is
 * not one of ours. */
bool rf__pod_gang_name(const rf__kpod_t *pod, char *buf, size_t cap);
/* Compare two pods by rank: index labels, then names (natural order). */
int rf__pod_rank_cmp(const rf__kpod_t *a, const rf__kpod_t *b);

#endif
