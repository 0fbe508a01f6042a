/* service/stats.h: what rackfitd counts, for the `stats` op (counters and
 * latency percentiles per request class) and for GET /metrics (a
 * base/metrics.h registry: every family is listed, with its meaning, in
 * docs/operating-rackfitd.md, "Metrics").
 *
 * Invariants: counters only grow; every request is counted once, in one
 * class, with one outcome (its reply's error code, or "ok"); updates are
 * atomics, never a lock on the request path (the registry's mutex is taken
 * only to find a series whose handle is not cached, and to render). */
#ifndef RACKFIT_SERVICE_STATS_H
#define RACKFIT_SERVICE_STATS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "metrics.h"
#include "rackfit/answer.h"
#include "rackfit/problem.h"
#include "rackfit/status.h"

/* Request classes, for lanes and statistics. */
typedef enum { RF__CLASS_GREEDY = 0, RF__CLASS_SOLVER, RF__CLASS_OTHER, RF__CLASS_COUNT } rf__class_t;

/* The ops served, in the order `ping` lists them; the op table (ops.c) is
 * indexed by it. */
typedef enum {
    RF__OP_SOLVE = 0,
    RF__OP_PING,
    RF__OP_STATS,
    RF__OP_CLUSTER_PUT,
    RF__OP_CLUSTER_PATCH,
    RF__OP_CLUSTER_INFO,
    RF__OP_CLUSTER_RELEASE,
    RF__OP_CLUSTER_DELETE,
    RF__OP_COUNT,
    RF__OP_UNKNOWN = RF__OP_COUNT /* a request that named no op we serve, or could not be read */
} rf__op_id_t;

extern const char *const rf__op_names[RF__OP_COUNT];
extern const char *const rf__class_names[RF__CLASS_COUNT];

/* Latency histogram of one class: 8 buckets per power of two of microseconds. */
#define RF__HIST_SUB 8
#define RF__HIST_N   (40 * RF__HIST_SUB)

typedef struct {
    atomic_uint_least64_t count;
    atomic_uint_least64_t errors;
    atomic_uint_least64_t hist[RF__HIST_N];
    atomic_uint_least64_t max_us;
} rf__class_stats_t;

/* The status codes, as outcome labels: index -code (0 is "ok"). */
#define RF__N_OUTCOMES 15
/* Placement quality is computed at most once per interval per cluster: it
 * walks every node, which a one-gang solve must not pay each time. */
#define RF__FRAG_INTERVAL_MS 1000.0
#define RF__FRAG_SLOTS       64

typedef struct {
    atomic_uint_least64_t requests, errors, busy, commits, commit_retries;
    rf__class_stats_t cls[RF__CLASS_COUNT];
    rf__metrics_t *m;
    /* cached series, so the request path never looks one up */
    rf__series_t *by_op[RF__OP_COUNT + 1][RF__N_OUTCOMES]; /* rackfit_requests_total{op,outcome} */
    rf__series_t *latency[RF__CLASS_COUNT];                /* rackfit_request_duration_seconds{class} */
    rf__series_t *solve_seconds[3];                        /* rackfit_solve_duration_seconds{mode}, by rf_mode */
    rf__series_t *gap[3], *time_used[3];                   /* rackfit_solve_gap_ratio, ..._time_used_ratio */
    rf__series_t *busy_lane[2];                            /* rackfit_busy_total{lane}: fast, solver */
    rf__series_t *commit_out[3];               /* rackfit_commits_total{outcome}: committed, retried, stale */
    rf__series_t *gang_domains[RF_MAX_LEVELS]; /* filled on first use by level name */
    rf__metric_t *f_gang_domains, *f_gang_penalty, *f_gangs, *f_cluster;
    rf__metric_t *f_queue_depth, *f_queue_bytes, *f_lane_workers, *f_queue_cap, *f_queue_cap_bytes;
    rf__metric_t *f_clusters, *f_commits_open, *f_commits_expired, *f_version, *f_nodes;
    rf__metric_t *f_free_gpus, *f_stranded_gpus, *f_free_hosts, *f_free_domains;
    rf__metric_t *f_budget, *f_budget_used, *f_uptime;
    /* when each cluster's placement quality was last computed (by name hash) */
    pthread_mutex_t frag_mu;
    uint32_t frag_hash[RF__FRAG_SLOTS];
    double frag_ms[RF__FRAG_SLOTS];
} rf__stats_t;

/* 0, or -1 on ENOMEM (every family registered, every hot series cached). */
int rf__stats_init(rf__stats_t *s);
void rf__stats_fini(rf__stats_t *s);

/* One request done: its op, class, outcome and latency (ms, queueing included). */
void rf__stats_request(rf__stats_t *s, rf__op_id_t op, rf__class_t cls, rf_status outcome, double ms);
/* A request answered `busy` on lane 0 (fast) or 1 (solver). */
void rf__stats_busy(rf__stats_t *s, int lane);
/* A request refused before an op was known (bad frames). */
void rf__stats_refused(rf__stats_t *s, rf_status outcome);
/* One solve that succeeded, in `mode` (the requested rf_mode), with its
 * answer: solve time, gap and time used, and per admitted gang the domains
 * used per level and its penalty. */
void rf__stats_solve(rf__stats_t *s, const rf_problem_t *p, const rf_answer_t *a, double solve_s);
/* commit: 0 committed, 1 retried (raced, solved again), 2 stale (given up). */
void rf__stats_commit(rf__stats_t *s, int outcome);
/* Placement quality of a stored cluster after a solve on it: free GPUs,
 * those no rejected gang of that solve can use, whole free hosts and whole
 * free domains per level (problem = the batch on the snapshot; answer's
 * placements counted as used). */
void rf__stats_fragmentation(rf__stats_t *s, const char *cluster, const rf_problem_t *p, const rf_answer_t *a);

/* After a solve on stored cluster `cluster`: rf__stats_fragmentation, at
 * most once per RF__FRAG_INTERVAL_MS per cluster (never blocks: a solve
 * that finds another computing skips it). */
void rf__stats_cluster_solved(rf__stats_t *s, const char *cluster, const rf_problem_t *p, const rf_answer_t *a);

/* A percentile of a class's latency (ms), never above its max. */
double rf__stats_percentile(rf__class_stats_t *c, double q);

#endif
