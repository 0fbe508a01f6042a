/* watcher/plan.h: what gang assembly (gangs.c) decides before anything is
 * written, and the one place that writes it as the contract's JSON
 * (plan_json.c, through base/jw.h).
 *
 * gangs.c decides, per gang: its state, size, members, pod sets, ranks,
 * priority, bandwidth, and per pod set: the pod whose spec it shares, the
 * validated topology levels and slice, the bound members (node and rank)
 * and min_count. plan_json.c only writes: the cluster (nodes, usage, the
 * synthetic affinity labels, numbered in the order the sent gangs need
 * them), the sent gangs, the options. Nothing is patched in afterwards and
 * nothing is parsed back but by librackfit's reader (gangs.h).
 *
 * Everything here borrows from the cache: valid while its lock is held. */
#ifndef RACKFIT_WATCHER_PLAN_H
#define RACKFIT_WATCHER_PLAN_H

#include <stdint.h>

#include "cache.h"
#include "gangs.h"

typedef struct {
    const char *node;
    int64_t rank;
} rf__pbound_t;

/* A pod set's spec, parallel to rf__pgang_t.sets. */
typedef struct {
    const rf__kpod_t *pod;                          /* its first member: requests, selector, tolerations, affinity */
    const char *required, *preferred, *slice_level; /* levels (validated), NULL: none */
    int64_t slice;                                  /* slice size, 0: none */
    int64_t min_count;
    rf__pbound_t *bound; /* bound members, by node then rank */
    int32_t n_bound;
} rf__pset_spec_t;

/* A gang's spec, parallel to rf__plan_t.gangs. */
typedef struct {
    int64_t priority;
    double bandwidth;
    rf__pset_spec_t *sets;
} rf__pgang_spec_t;

/* A running gang's pod set: its spec and where its pods are (node, count). */
typedef struct {
    const char *name;
    const rf__kpod_t *pod;
    rf__pbound_t *at; /* `rank` holds the count */
    int32_t n_at;
} rf__prun_set_t;

/* A running gang's spec, parallel to rf__plan_t.running. */
typedef struct {
    double bandwidth;
    bool preemptible; /* not annotated rackfit.io/preemptible: "false", no eviction of it refused lately */
    rf__prun_set_t *sets;
    int32_t n_sets;
} rf__prun_spec_t;

typedef struct {
    const rf__gang_opts_t *opts;
    rf__knode_t **nodes; /* by name */
    int32_t n_nodes;
    rf__res_t *used; /* per node, without `pods` */
    int64_t *used_pods;
    rf__pgang_spec_t *gangs;  /* per plan gang */
    rf__prun_spec_t *running; /* per plan running gang */
} rf__plan_spec_t;

/* Write the problem of the plan's sent gangs into plan->json (plan->len). RF_ENOMEM. */
rf_status rf__plan_write(const rf__plan_spec_t *spec, rf__plan_t *plan, rf_error_t *err);

#endif
