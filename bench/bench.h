/* bench/bench.h: rackfit-bench's own strategies and what they report beside
 * an answer.
 *
 * The two baselines are rf_strategy_t's like the library's own: rackfit-bench
 * runs every strategy through one call (rf_solve_with) and checks every
 * answer with rf_check.
 * - "kueue": one gang at a time in queue order, Kueue TAS-style best fit
 *   (bench/baseline_kueue.c); it never preempts;
 * - "kueue-preempt": the same, with Kueue's preemption within a
 *   ClusterQueue of lower-priority running gangs (bench/baseline_kueue.c);
 * - "kube": pod by pod, least allocated, no gang semantics and no topology
 *   (bench/baseline_kube.c). Its answer admits only gangs whose every pod set
 *   got at least min_count pods and that keep their hard constraints; what
 *   kube-scheduler would have left behind (gangs partly placed, GPUs held idle
 *   by them) it reports in the bench_extra_t that rackfit-bench hands every
 *   strategy as opts.user (rf_solve_ctx_user; the library's strategies ignore
 *   it, and a NULL user is fine). */
#ifndef RACKFIT_BENCH_BENCH_H
#define RACKFIT_BENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/rackfit.h"

extern const rf_strategy_t bench_strategy_kueue;
extern const rf_strategy_t bench_strategy_kueue_preempt;
extern const rf_strategy_t bench_strategy_kube;

/* What the kube-scheduler-style placer did, beyond its answer. */
typedef struct {
    int32_t complete;           /* gangs with every pod set at >= min_count pods */
    int32_t partial;            /* gangs with some new pods placed but not complete */
    int64_t partial_pods;       /* pods those partial gangs hold */
    int64_t partial_idle_units; /* value_resource units (GPUs) those pods hold idle */
    int32_t broken;             /* complete gangs whose placement breaks a required topology or slice */
    int32_t unplaced;           /* gangs that got no new pod at all (and needed some) */
} bench_kube_stats_t;

/* What a strategy reports beside its answer, through rf_solve_ctx_user. */
typedef struct {
    bool have_kube; /* the kube baseline filled `kube` */
    bench_kube_stats_t kube;
} bench_extra_t;

/* A key and the index it belongs to; bench_ranked_cmp (for qsort) orders
 * them key descending, then index ascending (ties by index, never by
 * chance). */
typedef struct {
    int64_t key;
    int32_t index;
} bench_ranked_t;
int bench_ranked_cmp(const void *a, const void *b);

/* The gangs' indices in queue order (priority descending, then problem
 * order), malloc'ed; NULL on ENOMEM. Both baselines take gangs this way. */
int32_t *bench_queue_order(const rf_problem_t *problem);

/* The cluster as the baselines start from it: val[n * n_levels + l] the
 * value of node n's level-l label (NULL when it has none; borrowed from the
 * problem), free_cap[n * n_resources + r] its free capacity (allocatable -
 * used, at least 0; RF_QTY_UNLIMITED stays). Returns how many nodes have
 * every level label. */
int32_t bench_node_view(const rf_problem_t *problem, const char **val, int64_t *free_cap);
/* Has node n every level label, by a view from bench_node_view? */
bool bench_node_labelled(const rf_problem_t *problem, const char *const *val, int32_t n);

#endif
