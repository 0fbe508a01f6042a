/* bench/sim.h: the trace-driven cluster simulator behind `rackfit-bench sim`
 * (docs/simulator.md).
 *
 * An event-driven replay: job arrivals from a trace (trace.h), completions
 * from each job's remaining work at its current stretch (comm.h). After the
 * events of one instant, one scheduling round hands the waiting jobs and the
 * cluster to the policy as a contract problem (rf_problem_t), as the watcher
 * would, checks the answer with rf_check and applies it:
 * - kube: no gangs; every waiting pod is its own single-pod gang, in
 *   kube-scheduler's queue order (priority, then the time the pod last
 *   entered the queue: pods that failed go behind, pods of jobs queued at the
 *   same instant interleave). A job runs once all its pods are bound; the
 *   pods of a partly placed job hold their GPUs idle meanwhile, and a state
 *   where nothing runs, partial jobs hold GPUs and the round binds nothing
 *   is a deadlock (it lasts until an arrival makes progress, or forever);
 * - kueue: bench_strategy_kueue (one gang at a time, TAS best fit);
 * - greedy, ilp, auto: rf_solve in that mode (ilp and auto within
 *   round_ms per round, one thread).
 * When the jobs' priorities differ, the running jobs go to every round as
 * the problem's running gangs (preemption lower_priority): a preempted job
 * frees its GPUs and waits again, keeping the work it has done (the kube and
 * kueue baselines never preempt).
 * Invariants: the same cluster, trace, options and seed give the same
 * result for kube, kueue and greedy; ilp and auto too whenever their rounds
 * end before the time limit (otherwise the best answer at the limit). */
#ifndef RACKFIT_BENCH_SIM_H
#define RACKFIT_BENCH_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "comm.h"
#include "rackfit/rackfit.h"
#include "trace.h"

typedef enum { SIM_KUBE = 0, SIM_KUEUE, SIM_GREEDY, SIM_ILP, SIM_AUTO, SIM_N_POLICIES } sim_policy_id;

/* A policy by name ("kube", "kueue", "greedy", "ilp", "auto"), or -1. */
int32_t sim_policy_find(const char *name);
const char *sim_policy_name(sim_policy_id p);

/* The cluster: nodes with GPUs, their level labels and domain ids. */
typedef struct {
    int32_t L;
    char *levels[RF_MAX_LEVELS];
    int32_t n_nodes;
    char **names;  /* [n_nodes] */
    char **vals;   /* [n_nodes * L] level label values */
    int64_t *gpus; /* [n_nodes] */
    int32_t *dom;  /* [L * n_nodes] domain id per level */
    int32_t n_dom[RF_MAX_LEVELS];
    int64_t *dom_gpus[RF_MAX_LEVELS];
    int32_t g_host; /* the most GPUs on one node */
    int64_t total_gpus;
    int32_t dropped; /* nodes of the source left out (no GPU, cordoned, a level label missing) */
    char desc[200];
} sim_cluster_t;

/* Load a cluster: a contract JSON file (its nodes; `used`, taints and gangs
 * are ignored, cordoned nodes dropped), `fabric:BxRxH[xG]` (B blocks of R
 * racks of H hosts of G GPUs, default 8), or `tiresias:FILE` (a Tiresias
 * cluster spec: switches x nodes x GPUs). */
rf_status sim_cluster_load(const char *spec, sim_cluster_t *c, rf_error_t *err);
void sim_cluster_fini(sim_cluster_t *c);
/* The cluster as the communication model sees it (borrows c). */
void sim_cluster_topo(const sim_cluster_t *c, comm_topo_t *t);

typedef struct {
    sim_policy_id policy;
    int64_t round_ms;  /* time limit of one ilp/auto round */
    int32_t max_queue; /* waiting jobs handed to a round (kube: pods), in queue order */
    int32_t pod_gpus;  /* GPUs per pod (0: the host size) */
    rf_admission admission;
    double max_time; /* stop the replay at this simulated second (0: when every job is done) */
    bool preempt;    /* when the jobs' priorities differ, running jobs go to every round as running gangs
                      * and may be preempted (default true) */
    void (*progress)(void *ctx, double now, int32_t done, int32_t total);
    void *progress_ctx;
} sim_opts_t;

void sim_opts_default(sim_opts_t *o);

typedef struct {
    double submit, start, end; /* start: every pod bound; -1 when never */
    double first_pod;          /* the first pod bound (kube), else start */
    int32_t gpus, pods, hosts, racks, blocks;
    comm_family_id family;
    double sigma;      /* time run (all runs) / duration */
    int32_t preempted; /* times preempted (start is the first start) */
    bool finished;
} sim_job_result_t;

/* One change point: the state from t until the next sample. */
typedef struct {
    double t;
    double alloc; /* GPUs bound to pods */
    double eff;   /* sum over running jobs of gpus / sigma */
    double idle;  /* GPUs held by partly placed jobs (kube) */
    double frag;  /* free GPUs on hosts where no waiting pod fits */
    int32_t waiting;
} sim_sample_t;

typedef struct {
    sim_job_result_t *jobs; /* [n_jobs], trace order */
    int32_t n_jobs;
    sim_sample_t *samples;
    int32_t n_samples, cap_samples;
    int32_t finished, unfinished, too_big;
    double makespan;                   /* last completion - first submission */
    double jct_mean, jct_p50, jct_p99; /* finished jobs */
    double wait_mean, wait_p50, wait_p99;
    double u_alloc, u_eff, frag_mean; /* time averages over the makespan (fractions of all GPUs; frag in GPUs) */
    double sigma_mean;                /* over finished multi-host jobs (1 when none) */
    int32_t multi_host, span_racks, span_blocks; /* finished jobs on > 1 host, rack, block */
    int32_t partial_jobs, partial_peak;          /* kube: jobs ever partly placed after a round; most at once */
    double idle_gpu_h;                           /* kube: GPU-hours held idle by partial jobs */
    int32_t deadlocks;                           /* kube: deadlock episodes */
    double deadlock_s;                           /* time spent deadlocked (until progress or the end of the replay) */
    bool deadlocked_at_end;
    int32_t preemptions; /* running jobs preempted (they resume where they stopped) */
    int32_t rounds;
    double solve_ms, solve_ms_max; /* policy time, total and worst round */
    double wall_ms;
} sim_result_t;

rf_status sim_run(const sim_cluster_t *c, const sim_trace_t *t, const comm_profile_t *comm, const sim_opts_t *o,
                  sim_result_t *out, rf_error_t *err);
void sim_result_fini(sim_result_t *r);

#endif
